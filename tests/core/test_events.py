"""Events (``events.k8s.io/v1``) as Karmada records them: derived from what a run changed, stored
deduplicated and bounded under ``computed/events/``, shown by ``get events`` and ``describe``."""
from __future__ import annotations

import json
import re

import pytest

from karmactl.api.kinds import KindRegistry
from karmactl.api.snapshot import Snapshot
from karmactl.pipeline.events import derive_events, make_event, merge_events
from karmactl.store.events import object_rel

from tests.conftest import write
from tests.core.test_offline_run import NGINX, STATIC_PP
from tests.failover.helpers import T0, at, binding, cluster, taint
from tests.failover.test_walkthrough_offline import WORK, walk  # noqa: F401  (fixture)

SCHEDULED_NGINX = "Binding has been scheduled successfully. Result: {member1:1, member2:2}"


def event_files(state) -> dict:
    base = state / "computed" / "events"
    return {str(p.relative_to(base)): p.read_text() for p in sorted(base.rglob("*.json"))}


def events_table(text: str) -> list[list[str]]:
    """The rows of describe's ``Events:`` table as [type, reason, age, from, message]."""
    lines = text.split("Events:", 1)[1].splitlines()[3:]
    return [re.split(r"\s{2,}", ln.strip(), maxsplit=4) for ln in lines if ln.strip()]


def reasons(text: str) -> list[str]:
    return [row[1] for row in events_table(text)]


# ---------------------------------------------------------------------------- a run on real files


def test_first_run_records_policy_scheduling_and_sync(walk):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)

    deploy = walk.cli.ok("--now", at(30), "describe", "deploy", "nginx")
    assert reasons(deploy) == ["ApplyPolicySucceed", "ScheduleBindingSucceed", "SyncWorkSucceed"]
    rows = events_table(deploy)
    assert rows[0] == ["Normal", "ApplyPolicySucceed", "30s", "resource-detector",
                       "Apply policy(default/nginx-propagation) succeed"]
    assert rows[1][3:] == ["default-scheduler", SCHEDULED_NGINX]

    rb = walk.cli.ok("--now", at(30), "describe", "rb", "nginx-deployment")
    assert reasons(rb) == ["ScheduleBindingSucceed", "SyncWorkSucceed", "AggregateStatusSucceed"]
    assert events_table(rb)[1][3:] == ["binding-controller",
                                       "Sync work of ResourceBinding(default/nginx-deployment) successful."]
    # offline nothing was applied to a member: no sync on the Work; a healthy Cluster got no taint
    work_text = walk.cli.ok("describe", "work", WORK, "-n", "karmada-es-member1")
    assert "SyncSucceed" not in work_text and "SyncFailed" not in work_text
    assert walk.cli.ok("describe", "cluster", "member1").rstrip().endswith("Events:       <none>")


def test_an_override_only_syncs_works_and_a_template_change_reapplies_the_policy(walk, state):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    write(walk.inputs / "op.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: OverridePolicy
        metadata: {name: nginx-op}
        spec:
          resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]
          overrideRules:
          - targetCluster: {clusterNames: [member1]}
            overriders:
              labelsOverrider: [{operator: add, value: {env: dev}}]
        """)
    walk.cli.ok("apply", "-f", str(walk.inputs / "op.yaml"))
    walk.reconcile(at(60))
    rows = events_table(walk.cli.ok("--now", at(60), "describe", "deploy", "nginx"))
    assert [r[1:3] for r in rows] == [["ApplyPolicySucceed", "60s"], ["ScheduleBindingSucceed", "60s"],
                                      ["SyncWorkSucceed", "0s (x2 over 60s)"]]

    walk.cli.ok("apply", "-f", str(write(walk.inputs / "nginx.yaml", NGINX.replace("replicas: 3", "replicas: 6"))))
    walk.reconcile(at(120))
    rows = events_table(walk.cli.ok("--now", at(120), "describe", "deploy", "nginx"))
    assert [r[1:3] for r in rows] == [  # oldest last seen first, as kubectl describe sorts
        ["ScheduleBindingSucceed", "2m"], ["ApplyPolicySucceed", "0s (x2 over 2m)"],
        ["ScheduleBindingSucceed", "0s"], ["SyncWorkSucceed", "0s (x3 over 2m)"]]
    assert rows[2][4] == "Binding has been scheduled successfully. Result: {member1:2, member2:4}"


def test_an_unchanged_run_writes_no_event(walk, state):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    before = event_files(state)
    # the bucket files of the regarded objects: the template, the binding and its two Works
    regarded = [("apps", "Deployment", "default", "nginx"),
                ("work.karmada.io", "ResourceBinding", "default", "nginx-deployment"),
                ("work.karmada.io", "Work", "karmada-es-member1", "nginx-687f7fb96f"),
                ("work.karmada.io", "Work", "karmada-es-member2", "nginx-687f7fb96f")]
    assert sorted(before) == sorted(object_rel(o)[len("computed/events/"):] for o in regarded)
    assert sorted(before)[0].startswith("default/deployment.apps.")
    err = walk.reconcile(at(600))
    assert "reconciled: 0 file(s) changed" in err
    assert event_files(state) == before


def test_event_objects_are_events_k8s_io_v1(walk, state):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    out = json.loads(walk.cli.ok("get", "events", "--field-selector", "regarding.kind=Deployment,reason=ApplyPolicySucceed",
                                 "-o", "json"))
    (ev,) = out["items"]
    name = ev["metadata"]["name"]
    assert name.startswith("nginx.") and len(name) == len("nginx.") + 16
    assert ev == {"apiVersion": "events.k8s.io/v1", "kind": "Event",
                  "metadata": {"name": name, "namespace": "default", "creationTimestamp": T0},
                  "eventTime": "2026-01-01T00:00:00.000000Z",
                  "reportingController": "resource-detector", "reportingInstance": "karmactl",
                  "action": "ApplyPolicy", "reason": "ApplyPolicySucceed",
                  "regarding": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx",
                                "uid": ev["regarding"]["uid"]},
                  "note": "Apply policy(default/nginx-propagation) succeed", "type": "Normal"}
    stored = json.loads((state / object_rel(("apps", "Deployment", "default", "nginx"))).read_text())
    assert stored["kind"] == "EventList" and name in [e["metadata"]["name"] for e in stored["items"]]
    # the file layout is deterministic for a pinned clock
    assert json.loads(walk.cli.ok("get", "ev", name, "-o", "json"))["metadata"]["name"] == name


def test_get_events_table_namespaces_and_field_selector(walk):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    out = walk.cli.ok("--now", at(120), "get", "events", "--field-selector", "regarding.name=nginx-deployment")
    lines = out.splitlines()
    assert lines[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert [ln.split()[:4] for ln in lines[1:]] == [
        ["2m", "Normal", "ScheduleBindingSucceed", "resourcebinding/nginx-deployment"],
        ["2m", "Normal", "SyncWorkSucceed", "resourcebinding/nginx-deployment"],
        ["2m", "Normal", "AggregateStatusSucceed", "resourcebinding/nginx-deployment"]]
    assert walk.cli.ok("get", "ev", "-A").splitlines()[0].split()[:3] == ["NAMESPACE", "LAST", "SEEN"]
    code, _out, err = walk.cli("get", "ev", "-n", "kube-system")
    assert code == 0 and "No resources found in kube-system namespace." in err
    code, _out, err = walk.cli("get", "events", "--field-selector", "spec.foo=bar")
    assert code == 2 and "field label not supported: spec.foo" in err
    # involvedObject.* (core/v1 Events' spelling) selects the same
    assert walk.cli.ok("get", "ev", "--field-selector", "involvedObject.name!=nginx-deployment", "-o", "name").splitlines() \
        == [f"event.events.k8s.io/{e}" for e in json_names(walk, "regarding.name=nginx")]


def test_describe_an_event(walk):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    (name,) = json_names(walk, "reason=ApplyPolicySucceed")
    text = walk.cli.ok("describe", "ev", name)
    assert f"Name:         {name}\n" in text
    assert "Reason:  ApplyPolicySucceed\n" in text and "Note:  Apply policy(default/nginx-propagation) succeed\n" in text
    code, _out, err = walk.cli("describe", "ev", "nginx.0000000000000000")
    assert code == 1 and 'events.events.k8s.io "nginx.0000000000000000" not found' in err


def json_names(walk, selector: str) -> list[str]:
    out = json.loads(walk.cli.ok("get", "ev", "--field-selector", selector, "-o", "json"))
    return [e["metadata"]["name"] for e in out["items"]]


def test_events_cannot_be_written_by_hand(cli, tmp_path):
    path = write(tmp_path / "ev.yaml", """
        apiVersion: events.k8s.io/v1
        kind: Event
        metadata: {name: x, namespace: default}
        reason: Faked
        """)
    code, _out, err = cli("apply", "-f", str(path))
    assert code == 2
    assert "ev.yaml:1: Event default/x: kind: " in err and "recorded by karmactl runs" in err


def test_an_unreadable_event_file_fails_the_run_and_nothing_is_written(walk, state):
    walk.setup(STATIC_PP)
    before = {p: p.read_bytes() for p in (state / "computed").rglob("*") if p.is_file()}  # creation times
    rel = object_rel(("apps", "Deployment", "default", "nginx"))
    assert rel.startswith("computed/events/default/deployment.apps.") and rel.endswith(".json")
    bad = state / rel
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json")
    code, _out, err = walk.cli("reconcile", "--offline", "--now", T0)
    assert code == 2 and rel in err
    after = {p: p.read_bytes() for p in (state / "computed").rglob("*") if p.is_file() and p != bad}
    assert after == before  # no binding, Work, status or Event


# ---------------------------------------------------------------------------- failover, offline


def test_cluster_failover_records_taint_eviction_and_reschedule(walk):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    walk.member_status("member1", "Healthy")
    walk.member_status("member2", "Healthy")
    walk.reconcile(at(10))

    walk.condition("member1", "Ready=False", at(60))
    walk.reconcile(at(60))
    rows = events_table(walk.cli.ok("--now", at(90), "describe", "cluster", "member1"))
    assert rows == [["Normal", "TaintClusterSucceed", "30s", "cluster-controller",
                     "Taint cluster succeed: cluster now has taints([{Key:cluster.karmada.io/not-ready,Effect:NoSchedule},"
                     "{Key:cluster.karmada.io/not-ready,Effect:NoExecute}])."]]

    evict = ["Normal", "EvictWorkloadFromClusterSucceed", "30s", "taint-manager",
             "Evict from cluster member1 succeed. Reason: TaintUntolerated."]
    replacement = "Binding has been scheduled successfully. Result: {member2:3}"
    for kind, name in (("rb", "nginx-deployment"), ("deploy", "nginx")):
        rows = events_table(walk.cli.ok("--now", at(90), "describe", kind, name))
        assert evict in rows
        # the eviction comes before the replacement's scheduling
        assert rows.index(evict) < [r[4] for r in rows].index(replacement)

    # the substitutes are healthy: the graceful eviction controller drops the task
    walk.member_status("member2", "Healthy")
    walk.reconcile(at(180))
    rows = events_table(walk.cli.ok("--now", at(180), "describe", "rb", "nginx-deployment"))
    assert ["Normal", "EvictWorkloadFromClusterSucceed", "0s", "resource-binding-graceful-eviction-controller",
            "Evict from cluster member1 succeed."] in rows

    # Ready again: the taints go, and that is recorded as well
    walk.condition("member1", "Ready=True", at(300))
    walk.reconcile(at(300))
    rows = events_table(walk.cli.ok("--now", at(300), "describe", "cluster", "member1"))
    assert rows[-1] == ["Normal", "TaintClusterSucceed", "0s", "cluster-controller",
                        "Taint cluster succeed: cluster now does not have taints."]


def test_a_repeat_counts_up_instead_of_adding_an_event(walk, state):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    walk.condition("member1", "Ready=False", at(60))
    walk.reconcile(at(60))  # member1 evicted: the Works change again
    files = len(event_files(state))
    text = walk.cli.ok("--now", at(120), "describe", "rb", "nginx-deployment")
    (sync,) = [r for r in events_table(text) if r[1] == "SyncWorkSucceed"]
    assert sync == ["Normal", "SyncWorkSucceed", "60s (x2 over 2m)", "binding-controller",
                    "Sync work of ResourceBinding(default/nginx-deployment) successful."]
    (ev,) = [e for e in json.loads(walk.cli.ok("get", "ev", "-o", "json"))["items"]
             if e["reason"] == "SyncWorkSucceed" and e["regarding"]["kind"] == "ResourceBinding"]
    assert ev["series"] == {"count": 2, "lastObservedTime": ev["series"]["lastObservedTime"]}
    assert ev["series"]["lastObservedTime"].startswith("2026-01-01T00:01:00.")
    assert ev["eventTime"].startswith("2026-01-01T00:00:00.")
    assert files == len(event_files(state))


# ---------------------------------------------------------------------------- derived from snapshots

NOW = "2026-01-01T00:10:00Z"


def snap(bindings=(), works=(), user=(), overlays=None) -> Snapshot:
    s = Snapshot(KindRegistry.default())
    for b in bindings:
        m = b["metadata"]
        s.bindings[("work.karmada.io", b["kind"], m.get("namespace") or "", m["name"])] = b
    for w in works:
        s.works[("work.karmada.io", "Work", w["metadata"]["namespace"], w["metadata"]["name"])] = w
    for k, v in user:
        s.user[k] = v
    s.overlays.update(overlays or {})
    return s


def work(conditions=(), deleting=None, replicas=1) -> dict:
    md = {"name": WORK, "namespace": "karmada-es-member1",
          "annotations": {"resourcebinding.karmada.io/name": "nginx-deployment",
                          "resourcebinding.karmada.io/namespace": "default"}}
    if deleting:
        md["deletionTimestamp"] = deleting
    w = {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work", "metadata": md,
         "spec": {"workload": {"manifests": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                              "metadata": {"name": "nginx", "namespace": "default"},
                                              "spec": {"replicas": replicas}}]}}}
    if conditions:
        w["status"] = {"conditions": [{"type": t, "status": st, "reason": r, "message": msg, "lastTransitionTime": T0}
                                      for t, st, r, msg in conditions]}
    return w


def brief(events) -> list[tuple]:
    return [(e["regarding"]["kind"], e["type"], e["reason"], e["reportingController"], e["note"]) for e in events]


APPLIED = ("Applied", "True", "AppliedSuccessful", "Manifest has been successfully applied")
APPLY_FAILED = ("Applied", "False", "AppliedFailed", "Failed to apply all manifests (0/1): quota exceeded")


@pytest.mark.parametrize("old_conditions, new_conditions, expected", [
    pytest.param((), (APPLIED,), [
        ("Work", "Normal", "SyncSucceed", "execution-controller",
         f"Sync work(karmada-es-member1/{WORK}) to cluster(member1) successful."),
        ("Deployment", "Normal", "SyncSucceed", "execution-controller",
         "Successfully applied resource(default/nginx) to cluster member1")], id="applied"),
    pytest.param((APPLIED,), (APPLY_FAILED,), [
        ("Work", "Warning", "SyncFailed", "execution-controller",
         f"Failed to sync work(karmada-es-member1/{WORK}) to cluster(member1), err: {APPLY_FAILED[3]}"),
        ("Deployment", "Warning", "SyncFailed", "execution-controller",
         f"Failed to create or update resource(default/nginx) in member cluster(member1): {APPLY_FAILED[3]}")],
        id="apply failed"),
    pytest.param((APPLIED,), (APPLIED,), [], id="unchanged"),
    pytest.param((("Dispatching", "True", "Dispatching", "Work is being dispatched to member clusters."),),
                 (("Dispatching", "False", "SuspendDispatching", "Work dispatching is in a suspended state."),), [
        ("Work", "Normal", "WorkDispatching", "execution-controller", "Work dispatching is in a suspended state.")],
        id="dispatching suspended"),
])
def test_work_conditions(old_conditions, new_conditions, expected):
    before = snap(works=[work(old_conditions)])
    after = snap(works=[work(new_conditions)])
    assert brief(derive_events(before, after, NOW)) == expected


def test_a_terminating_work_dropped_is_not_a_binding_sync():
    b = binding(clusters=[("member2", 3)])
    b["status"]["conditions"] = []
    gone = derive_events(snap([b], [work(deleting=T0)]), snap([b]), NOW)
    assert gone == []
    deleted = derive_events(snap([b], [work()]), snap([b], [work(deleting=NOW)]), NOW)
    assert [(e["regarding"]["kind"], e["reason"]) for e in deleted] == [("ResourceBinding", "SyncWorkSucceed"),
                                                                        ("Deployment", "SyncWorkSucceed")]


def test_schedule_failure_and_cluster_policy():
    b = binding(clusters=[])
    b["metadata"]["annotations"]["clusterpropagationpolicy.karmada.io/name"] = "spread"
    b["status"]["conditions"] = [{"type": "Scheduled", "status": "False", "reason": "NoClusterFit",
                                  "message": "0/3 clusters are available: 3 cluster(s) had untolerated taint.",
                                  "lastTransitionTime": T0}]
    events = brief(derive_events(snap(), snap([b]), NOW))
    assert events == [
        ("Deployment", "Normal", "ApplyPolicySucceed", "resource-detector", "Apply cluster policy(spread) succeed"),
        ("ResourceBinding", "Warning", "ScheduleBindingFailed", "default-scheduler",
         "0/3 clusters are available: 3 cluster(s) had untolerated taint."),
        ("Deployment", "Warning", "ScheduleBindingFailed", "default-scheduler",
         "0/3 clusters are available: 3 cluster(s) had untolerated taint.")]
    # the condition's time alone changing is no new scheduling
    later = json.loads(json.dumps(b))
    later["status"]["conditions"][0]["lastTransitionTime"] = NOW
    assert derive_events(snap([b]), snap([later]), NOW) == []


def test_cluster_taint_policy_taints_are_the_policy_controllers():
    key = ("cluster.karmada.io", "Cluster", "", "member1")
    user = [(key, cluster("member1"))]
    overlay = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"},
               "spec": {"taints": [taint("maintenance", "NoSchedule", NOW, value="db")]}}
    events = brief(derive_events(snap(user=user), snap(user=user, overlays={key: overlay}), NOW))
    assert events == [("Cluster", "Normal", "TaintClusterSucceed", "cluster-taint-policy-controller",
                       "Update Cluster(member1) with taints(cluster now has taints([{Key:maintenance,Value:db,"
                       "Effect:NoSchedule}])) succeed")]


def test_only_what_keep_allows_is_looked_at():
    before, after = snap(works=[work()]), snap(works=[work((APPLIED,))])
    assert derive_events(before, after, NOW, keep=lambda which, key, obj: which != "works") == []


# ---------------------------------------------------------------------------- dedup and bound


def deploy_ref():
    return {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"}


def test_merge_counts_repeats_and_keeps_the_newest_per_object():
    first = make_event(deploy_ref(), "Normal", "SyncSucceed", "same", "execution-controller", "Sync", T0)
    again = make_event(deploy_ref(), "Normal", "SyncSucceed", "same", "execution-controller", "Sync", at(60))
    assert again["metadata"]["name"] == first["metadata"]["name"]
    (write_, ), drop = merge_events([first], [again], at(60))
    assert drop == []
    assert write_["eventTime"] == first["eventTime"]
    assert write_["series"] == {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}
    (third, ), _ = merge_events([write_], [again], at(60))
    assert third["series"]["count"] == 3

    stored = [make_event(deploy_ref(), "Normal", "R", f"old {i}", "c", "a", at(i)) for i in range(20)]
    other = make_event(dict(deploy_ref(), name="other"), "Normal", "R", "old", "c", "a", T0)
    new = [make_event(deploy_ref(), "Normal", "R", f"new {i}", "c", "a", at(100 + i)) for i in range(3)]
    write_, drop = merge_events(stored + [other], new, at(200), limit=20)
    assert [e["note"] for e in write_] == ["new 2", "new 1", "new 0"]
    assert sorted(e["note"] for e in drop) == ["old 0", "old 1", "old 2"]  # the oldest go; other objects keep theirs


def test_the_bound_holds_on_disk(walk, state, monkeypatch):
    from karmactl.pipeline import events as events_mod

    monkeypatch.setattr(events_mod, "EVENTS_PER_OBJECT", 2)
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    assert [r[1] for r in events_table(walk.cli.ok("describe", "deploy", "nginx"))] == [
        "ScheduleBindingSucceed", "SyncWorkSucceed"]  # ApplyPolicySucceed, the oldest, dropped
    stored = json.loads((state / object_rel(("apps", "Deployment", "default", "nginx"))).read_text())["items"]
    assert len([e for e in stored if e["regarding"]["kind"] == "Deployment" and e["regarding"]["name"] == "nginx"]) == 2


# ---------------------------------------------------------------------------- online, emulated members

from tests.members.conftest import members, nginx, policy, reconcile, someone_elses_nginx  # noqa: E402,F401  (fixture)
from tests.members.test_propagation import CONFLICT_MSG  # noqa: E402


def test_online_apply_dispatch_and_conflict_are_recorded_on_works_and_template(cli, state, members):  # noqa: F811
    someone_elses_nginx(members["member1"])
    nginx(state)
    policy(state)
    reconcile(cli)
    w1 = events_table(cli.ok("--now", T0, "describe", "work", WORK, "-n", "karmada-es-member1"))
    assert w1 == [["Normal", "WorkDispatching", "0s", "execution-controller", "Work is being dispatched to member clusters."],
                  ["Warning", "SyncFailed", "0s", "execution-controller",
                   f"Failed to sync work(karmada-es-member1/{WORK}) to cluster(member1), err: {CONFLICT_MSG}"]]
    w2 = events_table(cli.ok("--now", T0, "describe", "work", WORK, "-n", "karmada-es-member2"))
    assert [r[1] for r in w2] == ["WorkDispatching", "SyncSucceed"]
    assert w2[1][4] == f"Sync work(karmada-es-member2/{WORK}) to cluster(member2) successful."
    deploy = events_table(cli.ok("--now", T0, "describe", "deploy", "nginx"))
    assert ["Normal", "SyncSucceed", "0s", "execution-controller",
            "Successfully applied resource(default/nginx) to cluster member2"] in deploy
    assert ["Warning", "SyncFailed", "0s", "execution-controller",
            f"Failed to create or update resource(default/nginx) in member cluster(member1): {CONFLICT_MSG}"] in deploy

    # suspending dispatching to member2 is recorded on its Work
    policy(state, extra="\n  suspension:\n    dispatchingOnClusters:\n      clusterNames: [member2]")
    reconcile(cli, 10)
    w2 = events_table(cli.ok("--now", at(10), "describe", "work", WORK, "-n", "karmada-es-member2"))
    assert w2[-1] == ["Normal", "WorkDispatching", "0s", "execution-controller", "Work dispatching is in a suspended state."]


# ---------------------------------------------------------------------------- a real kube-apiserver


def test_a_real_kube_apiserver_accepts_the_events(walk, state, tmp_path):
    """The Events of an offline failover (repeats with ``series`` included) pass the API server's
    events.k8s.io/v1 validation and read back through the real kubectl as written.

    Events about cluster-scoped objects are left out: Kubernetes records them in ``default`` and
    validates that since 1.21, while the v1.20.2 referee here still demands ``kube-system``."""
    from tests.kube_apiserver import require_or_skip, start_member

    require_or_skip()
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    walk.condition("member1", "Ready=False", at(60))
    walk.reconcile(at(60))
    stored = json.loads(walk.cli.ok("get", "ev", "-A", "-o", "json"))["items"]
    assert any(e.get("series") for e in stored) and any(e["regarding"]["kind"] == "Cluster" for e in stored)
    stored = [e for e in stored if e["regarding"].get("namespace")]
    real = start_member("events", tmp_path / "apiserver")
    try:
        namespaces = sorted({e["metadata"]["namespace"] for e in stored} - {"default"})
        for ns in namespaces:  # the execution namespaces the Works' Events live in
            real.kubectl("create", "namespace", ns)
        real.kubectl("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": stored}))
        got = json.loads(real.kubectl("get", "events.v1.events.k8s.io", "-A", "-o", "json").stdout)["items"]
    finally:
        real.stop()
    fields = ("reason", "note", "type", "action", "reportingController", "reportingInstance", "regarding", "series")
    assert sorted((e["metadata"]["name"], [e.get(f) for f in fields]) for e in got) == \
        sorted((e["metadata"]["name"], [e.get(f) for f in fields]) for e in stored)


WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
"""


def test_objects_sharing_an_event_file_keep_their_own_events(walk, state, monkeypatch):
    from karmactl.store import events as stored_events

    monkeypatch.setattr(stored_events, "EVENT_BUCKETS", 1)  # every Deployment's Events in one file
    walk.setup(STATIC_PP, extra=WEB)
    walk.reconcile(T0)
    path = state / "computed" / "events" / "default" / "deployment.apps.00.json"

    def regarding(name):
        return [e for e in json.loads(path.read_text())["items"] if e["regarding"]["name"] == name]

    web = regarding("web")
    assert {e["reason"] for e in web} >= {"ApplyPolicySucceed", "ScheduleBindingSucceed"}
    assert regarding("nginx")
    write(walk.inputs / "nginx.yaml", NGINX.replace("replicas: 3", "replicas: 6"))
    walk.cli.ok("apply", "-f", str(walk.inputs / "nginx.yaml"))
    walk.reconcile(at(600))
    assert regarding("web") == web  # the run changed nothing about web: its Events stay as they were
    assert any(e["note"].endswith("Result: {member1:2, member2:4}") for e in regarding("nginx"))
    assert set(reasons(walk.cli.ok("describe", "deploy", "web"))) == {e["reason"] for e in web}


def two_events(other: str, note: str) -> tuple:
    """A later Normal Event regarding Deployment nginx and an earlier Warning regarding Deployment
    ``other`` with ``note``."""
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx", "uid": "u1"}
    late = make_event(ref, "Normal", "SyncWorkSucceed", "Sync work of resourceBinding(default/nginx) successful.",
                      "binding-controller", "SyncWork", "2026-01-01T00:05:00Z")
    early = make_event(dict(ref, name=other), "Warning", "ScheduleBindingFailed", note, "karmada-scheduler",
                       "Schedule", "2026-01-01T00:00:00Z")
    return late, early


def test_event_files_are_joined_from_bytes_exactly_as_the_list_would_be_written():
    # store.events joins a file from each Event's own bytes (event_items); a shard process keeps
    # them compressed until the parent stages them (EventBuffer): the file must be what writing
    # the EventList whole gives, in the stored order (oldest last seen first, then by name)
    from karmactl.store.events import EventBuffer, event_items, event_list_bytes, unpack_events
    from karmactl.store.state import dump_computed

    late, early = two_events("déjà-vu", "0/2 clusters: \"quoted\"\n")
    repeated = dict(early, metadata=dict(early["metadata"], name="déjà-vu.2"),
                    series={"count": 3, "lastObservedTime": "2026-01-01T00:03:00.000000Z"})
    whole = dump_computed({"apiVersion": "events.k8s.io/v1", "kind": "EventList", "items": [early, repeated, late]})
    buffer = EventBuffer()
    buffer.add({"computed/events/default/deployment.apps.01.json": ({("apps", "Deployment", "default", "nginx")},
                                                                     event_items([late, repeated]))})
    buffer.add({"computed/events/default/deployment.apps.01.json": (set(), event_items([early]))})
    objs, items = unpack_events(buffer.packed())["computed/events/default/deployment.apps.01.json"]
    assert objs == {("apps", "Deployment", "default", "nginx")}
    assert event_list_bytes(sorted(items, key=lambda item: item[0])) == whole


def test_stored_events_kept_as_their_bytes_equal_them_written_again(tmp_path):
    # a run rewriting an Event file keeps the other objects' Events as the bytes it read
    # (store.events._kept_items): they must be what encoding them again gives, for a file as
    # karmactl writes it (cut between items) and for any other JSON form of it (encoded again)
    from karmactl.store.events import _kept_items, event_items
    from karmactl.store.state import dump_computed

    late, early = two_events("web", "0/2 clusters:\n    {")
    nested = dict(early, metadata=dict(early["metadata"], name="web.2"),
                  annotations={"x": [{"a": [{"b": 1}], "c": {"d": [{}, {"e": "f"}]}}]})
    rel = "computed/events/default/deployment.apps.01.json"
    path = tmp_path / rel
    path.parent.mkdir(parents=True)
    body = {"apiVersion": "events.k8s.io/v1", "kind": "EventList", "items": [early, nested, late]}
    nginx = {("apps", "Deployment", "default", "nginx")}
    for text in (dump_computed(body), json.dumps(body).encode()):
        path.write_bytes(text)
        assert _kept_items(tmp_path, rel, nginx) == event_items([early, nested])
        assert _kept_items(tmp_path, rel, set()) == event_items([early, nested, late])
    assert _kept_items(tmp_path, "computed/events/default/none.json", nginx) == []
