"""One reconcile is one control loop over fresh member state, tested across runs with the clock
advancing and members changing between them: application failover decides on this run's
observations, status is as fresh as the run, drift is corrected as Karmada's object watcher does."""
from __future__ import annotations

import json
import time

import pytest
import yaml

from karmactl.controllers.application_failover import read_bookkeeping

from tests.conftest import app_failover_policy, write

from .conftest import at, computed, files, kubectl, nginx, reconcile

DEPLOY = ("apps/v1", "Deployment")


def failover_policy(state, toleration: int, purge: str = "Immediately") -> None:
    write(state / "policies" / "nginx.yaml", app_failover_policy(toleration, purge))


def rollout_done(obj: dict | None) -> bool:
    if obj is None:
        return False
    st, spec = obj.get("status") or {}, obj.get("spec") or {}
    return (st.get("observedGeneration") == obj["metadata"].get("generation")
            and st.get("availableReplicas") == st.get("updatedReplicas") == spec.get("replicas"))


def wait_members(members, names=("member1", "member2"), obj: str = "nginx", timeout: float = 10.0) -> None:
    """Wait until the members' own controllers have rolled the copy out (what time does between runs)."""
    deadline = time.monotonic() + timeout
    while not all(rollout_done(members.deploy(n, obj)) for n in names):
        assert time.monotonic() < deadline, {n: (members.deploy(n, obj) or {}).get("status") for n in names}
        time.sleep(0.02)


def binding(state) -> dict:
    return computed(state, "resourcebindings", "default", "nginx-deployment.json")


def evicted(state) -> list[str]:
    return [t["fromCluster"] for t in binding(state)["spec"].get("gracefulEvictionTasks") or []]


@pytest.mark.parametrize("toleration", [2, 300])
def test_application_failover_evicts_only_a_workload_that_stays_unhealthy(cli, state, members, toleration):
    nginx(state)
    failover_policy(state, toleration)
    # twenty runs over ten minutes of healthy members, with an image rollout half-way: nothing is evicted
    for i in range(20):
        if i == 10:
            write(state / "apps" / "nginx.yaml",
                  (state / "apps" / "nginx.yaml").read_text().replace("nginx:1.25", "nginx:1.26"))
        reconcile(cli, i * 30)
        assert evicted(state) == [], f"run {i}"
        wait_members(members)
    assert members.deploy("member1")["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"

    # member1's copy turns unhealthy (its controller stops making it available) and stays so
    members["member1"].set_fake_controller(False)
    copy = members.deploy("member1")
    members["member1"].set_status(*DEPLOY, "default", "nginx", dict(copy["status"], availableReplicas=0, readyReplicas=0))
    t = 20 * 30
    reconcile(cli, t)              # first observation: the toleration window starts
    reconcile(cli, t + toleration / 2)
    assert evicted(state) == []
    reconcile(cli, t + toleration + 1)
    assert evicted(state) == ["member1"]
    assert [c["name"] for c in binding(state)["spec"]["clusters"]] == ["member2"]
    assert members.deploy("member1") is None          # purgeMode Immediately: removed at once
    assert rollout_done(members.deploy("member2"))    # the healthy cluster is untouched


def test_an_unreachable_member_is_no_evidence_for_application_failover(cli, state, members):
    nginx(state)
    failover_policy(state, 60)
    reconcile(cli, 0)
    wait_members(members)
    reconcile(cli, 10)
    members["member1"].set_fake_controller(False)
    copy = members.deploy("member1")
    members["member1"].set_status(*DEPLOY, "default", "nginx", dict(copy["status"], availableReplicas=0))
    reconcile(cli, 20)  # Unhealthy seen: the window starts
    members["member1"].set_health("broken")
    # the member cannot be read: its last status is from an earlier run and decides nothing
    reconcile(cli, 200, expect=3)
    assert evicted(state) == []
    assert read_bookkeeping(binding(state)) == {"member1": {"unhealthySince": at(20)}}  # the window is kept
    members["member1"].set_health("ok")
    members["member1"].set_fake_controller(True)
    members["member1"].set_status(*DEPLOY, "default", "nginx", copy["status"])
    wait_members(members)
    reconcile(cli, 210)  # reachable again and healthy: the window is closed
    assert evicted(state) == []
    assert read_bookkeeping(binding(state)) == {}


def many(state, n: int) -> None:
    docs = []
    for i in range(n):
        docs.append(f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: web{i}, namespace: web, labels: {{app: web}}}}
spec:
  replicas: 4
  selector: {{matchLabels: {{app: web{i}}}}}
  template:
    metadata: {{labels: {{app: web{i}}}}}
    spec: {{containers: [{{name: web, image: nginx:1.25}}]}}
""")
    write(state / "web.yaml", "---\n".join(docs))
    write(state / "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n")
    write(state / "web-policy.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: web, namespace: web}
        spec:
          resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
          placement:
            clusterAffinity: {clusterNames: [member1, member2]}
            replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted,
              weightPreference: {staticWeightList: [{targetCluster: {clusterNames: [member1]}, weight: 1},
                                                    {targetCluster: {clusterNames: [member2]}, weight: 1}]}}
        """)


def test_status_is_as_fresh_as_the_run_and_a_settled_fleet_costs_nothing(cli, state, members):
    n = 30
    many(state, n)
    # the members' controllers have not acted yet: the run reports the rollout as it is
    for name in ("member1", "member2"):
        members[name].set_fake_controller(False)
    reconcile(cli, 0)
    got = json.loads(cli.ok("get", "deploy", "-n", "web", "-o", "json"))["items"]
    assert len(got) == n
    assert all((d.get("status") or {}).get("readyReplicas", 0) == 0 for d in got)   # honest: not ready yet
    rb = computed(state, "resourcebindings", "web", "web0-deployment.json")
    assert [i["health"] for i in rb["status"]["aggregatedStatus"]] == ["Unhealthy", "Unhealthy"]
    # the members' controllers finish the rollout; one run brings every status to final...
    for name in ("member1", "member2"):
        for i in range(n):
            obj = members.deploy(name, f"web{i}", "web")
            r = obj["spec"]["replicas"]
            members[name].set_status(*DEPLOY, "web", f"web{i}", {
                "observedGeneration": obj["metadata"]["generation"], "replicas": r, "updatedReplicas": r,
                "readyReplicas": r, "availableReplicas": r})
    reconcile(cli, 30)
    got = json.loads(cli.ok("get", "deploy", "-n", "web", "-o", "json"))["items"]
    assert [d["status"].get("readyReplicas") for d in got] == [4] * n
    # ...and the next one writes no file and sends no member write
    before = files(state)
    members.clear_logs()
    err = reconcile(cli, 60)
    assert "reconciled: 0 file(s) changed" in err
    assert files(state) == before
    assert members.writes() == {"member1": [], "member2": [], "member3": []}


def test_reconcile_wait_returns_once_members_have_settled(cli, state, members):
    many(state, 5)
    code, _out, err = cli("reconcile", "--wait", "--timeout", "30s")
    assert code == 0, err
    got = json.loads(cli.ok("get", "deploy", "-n", "web", "-o", "json"))["items"]
    assert [d["status"].get("readyReplicas") for d in got] == [4] * 5
    before = files(state)
    members.clear_logs()
    code, _out, err = cli("reconcile")
    assert code == 0 and "reconciled: 0 file(s) changed" in err
    assert files(state) == before
    assert members.writes() == {"member1": [], "member2": [], "member3": []}


def drift_policy(state) -> None:
    write(state / "policies" / "nginx.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: nginx, namespace: default}
        spec:
          resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]
          placement:
            clusterAffinity: {clusterNames: [member1]}
        """)


def test_changes_made_on_a_member_are_undone_and_retained_fields_kept(cli, state, members, tmp_path):
    nginx(state, replicas=3)
    drift_policy(state)
    reconcile(cli, 0)
    wait_members(members, ("member1",))
    reconcile(cli, 10)
    kc, cache = members.kubeconfig("member1"), tmp_path / "kubectl-cache"
    # a member user scales the copy and adds an env var and a field karmactl never set
    kubectl(kc, cache, "scale", "deploy", "nginx", "-n", "default", "--replicas=7")
    kubectl(kc, cache, "set", "env", "deploy/nginx", "-n", "default", "EXTRA=1")
    kubectl(kc, cache, "patch", "deploy", "nginx", "-n", "default", "--type=merge", "-p", '{"spec":{"minReadySeconds":5}}')
    copy = members.deploy("member1")
    assert copy["spec"]["replicas"] == 7 and copy["spec"]["minReadySeconds"] == 5

    # plan says so beforehand, and changes nothing
    code, out, err = cli("plan", "--online", "--now", at(15))
    assert code == 1, err
    member = out[out.index("--- member1/apps/v1, Kind=Deployment default/nginx"):]
    assert "-  replicas: 7\n+  replicas: 3\n" in member
    assert "-        - name: EXTRA\n" in member and "-  minReadySeconds: 5\n" in member
    assert members.deploy("member1")["spec"]["replicas"] == 7

    members.clear_logs()
    reconcile(cli, 20)
    copy = members.deploy("member1")
    assert copy["spec"]["replicas"] == 3
    assert "minReadySeconds" not in copy["spec"] or copy["spec"]["minReadySeconds"] == 0
    assert "env" not in copy["spec"]["template"]["spec"]["containers"][0]
    assert [w.split()[0] for w in members.writes()["member1"]] == ["PUT"]
    wait_members(members, ("member1",))
    reconcile(cli, 30)
    members.clear_logs()
    reconcile(cli, 40)
    assert members.writes()["member1"] == []   # corrected once, then left alone

    # with the retain-replicas label (a member-side HPA owns replicas), a member's scale is kept
    path = state / "apps" / "nginx.yaml"
    path.write_text(path.read_text().replace("labels: {app: nginx}\n",
                                             "labels: {app: nginx, resourcetemplate.karmada.io/retain-replicas: 'true'}\n", 1))
    reconcile(cli, 50)
    kubectl(kc, cache, "scale", "deploy", "nginx", "-n", "default", "--replicas=5")
    reconcile(cli, 60)
    assert members.deploy("member1")["spec"]["replicas"] == 5
    assert yaml.safe_load(kubectl(kc, cache, "get", "deploy", "nginx", "-n", "default", "-o", "yaml"))[
        "metadata"]["labels"]["resourcetemplate.karmada.io/retain-replicas"] == "true"


def test_a_replace_that_meets_a_newer_member_copy_is_planned_again(cli, state, members):
    """A member controller writes between this run's observation and its replace (a stale
    resourceVersion, 409): the copy is read again and the replace succeeds in the same run."""
    from karmactl.members.layer import MemberLayer
    from karmactl.reconcile import RunReport, compute, load
    from karmactl.store.state import StateStore

    nginx(state, replicas=3)
    drift_policy(state)
    reconcile(cli, 0)
    wait_members(members, ("member1",))
    reconcile(cli, 10)
    nginx(state, replicas=5)
    layer, report = MemberLayer(state), RunReport()
    snap = layer.observe(layer.probe(load(StateStore(state)), at(20), report), at(20), report)
    after = compute(snap, at(20), report, layer.observed_clusters())
    copy = members.deploy("member1")   # the member's controller writes status after we read it
    members["member1"].set_status(*DEPLOY, "default", "nginx", dict(copy["status"], replicas=4))
    members.clear_logs()
    acted = layer.act(after, at(20), report)
    layer.close()
    assert members.deploy("member1")["spec"]["replicas"] == 5
    puts = [w for w in members.writes()["member1"] if w.startswith("PUT")]
    assert len(puts) == 2  # the first met the newer copy (409), the second carried its resourceVersion
    w = acted.works[("work.karmada.io", "Work", "karmada-es-member1", "nginx-687f7fb96f")]
    assert next(c for c in w["status"]["conditions"] if c["type"] == "Applied")["status"] == "True"


def test_a_secret_written_with_string_data_is_applied_once(cli, state, members):
    """The API server folds stringData into data; so does karmactl's template, and a settled
    Secret is not sent again on every run."""
    write(state / "secret.yaml", """
        apiVersion: v1
        kind: Secret
        metadata: {name: creds, namespace: default}
        stringData: {password: s3cret}
        """)
    write(state / "policies" / "secret.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: creds, namespace: default}
        spec:
          resourceSelectors: [{apiVersion: v1, kind: Secret, name: creds}]
          placement: {clusterAffinity: {clusterNames: [member1]}}
        """)
    reconcile(cli, 0)
    assert members["member1"].get_object("v1", "Secret", "default", "creds")["data"] == {"password": "czNjcmV0"}
    members.clear_logs()
    reconcile(cli, 10)
    assert members.writes()["member1"] == []
