"""What members *do*, on whole real clusters: status is written by their own deployment controller,
scheduler and kubelets (never by the test), and karmactl acts on it with the real clock.

Each test propagates into namespaces of its own (``cluster_ns``) on the shared clusters; the test that
kills a node and stops an API server starts a cluster of its own. Waits poll with a deadline (a hang
guard, not a speed target).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import yaml

from kube_cluster import start_cluster

from real.conftest import MANIFESTS, sample, settings, write_yaml

DEADLINE = 150  # seconds a member may take to do what is awaited (2 busy cores, hollow kubelets)


def _until(what: str, probe, deadline: float = DEADLINE, every: float = 2.0):
    """Call ``probe()`` until it returns a truthy value; fail naming ``what`` after ``deadline`` s."""
    end = time.monotonic() + deadline
    last = None
    while time.monotonic() < end:
        last = probe()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {deadline} s waiting for {what}; last: {last!r}")


def _reconcile(cli, allowed=(0, 3, 4)) -> str:
    code, _out, err = cli("reconcile")
    assert code in allowed, f"reconcile exited {code}: {err}"
    return err


def _get(cli, *args) -> dict:
    return json.loads(cli.ok("get", *args, "-o", "json"))


def _deployment(name: str, ns: str, replicas: int, **pod_spec) -> dict:
    container = {"name": "web", "image": "nginx:1.25",
                 "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container], **pod_spec}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _policy(name: str, ns: str, clusters: list[str], divided: bool = False, failover: dict | None = None) -> dict:
    placement: dict = {"clusterAffinity": {"clusterNames": clusters}}
    if divided:
        placement["replicaScheduling"] = {
            "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": [c]}, "weight": 1} for c in clusters]}}
    spec: dict = {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
                  "placement": placement}
    if failover:
        spec["failover"] = failover
        spec["propagateDeps"] = True  # Karmada requires it with failover
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _member_deploy(cluster, ns: str, name: str) -> dict | None:
    res = cluster.kubectl("get", "deploy", name, "-n", ns, "-o", "json", check=False)
    return json.loads(res.stdout) if res.returncode == 0 else None


def _health(cli, ns: str, name: str) -> dict:
    """``{cluster: health}`` from the binding's aggregated status, as karmactl judged it."""
    rb = _get(cli, "rb", f"{name}-deployment", "-n", ns)
    return {i["clusterName"]: i.get("health") for i in rb.get("status", {}).get("aggregatedStatus") or []}


def test_nginx_sample_is_reported_ready_by_the_members_own_controllers(cli, cluster_joined, cluster_ns, tmp_path):
    src = sample(MANIFESTS / "nginx", cluster_ns, tmp_path / "in")
    cli.ok("apply", "-f", str(src))

    def ready():
        _reconcile(cli)
        status = _get(cli, "deploy", "nginx", "-n", cluster_ns).get("status") or {}
        return status.get("readyReplicas") == 3 and status.get("availableReplicas") == 3

    _until("the nginx sample's 3 replicas to be ready on the members", ready)
    for name, want in (("member1", 1), ("member2", 2)):
        dep = _member_deploy(cluster_joined[name], cluster_ns, "nginx")
        assert dep["status"]["readyReplicas"] == want  # written by that member's deployment controller
        pods = json.loads(cluster_joined[name].kubectl("get", "pods", "-n", cluster_ns, "-o", "json").stdout)["items"]
        assert sum(p["status"].get("phase") == "Running" for p in pods) == want
    assert _health(cli, cluster_ns, "nginx") == {"member1": "Healthy", "member2": "Healthy"}


def test_a_rollout_is_seen_in_progress_and_then_complete_across_runs(cli, cluster_joined, cluster_ns, tmp_path):
    dep = _deployment("roll", cluster_ns, 2)
    path = write_yaml(tmp_path / "in" / "roll.yaml", dep, _policy("roll", cluster_ns, ["member1", "member2"], True))
    cli.ok("apply", "-f", str(path))
    _until("the first revision to be available", lambda: _reconcile(cli) is not None
           and _health(cli, cluster_ns, "roll") == {"member1": "Healthy", "member2": "Healthy"}, deadline=DEADLINE + 60)

    dep["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    dep["spec"]["minReadySeconds"] = 12  # new Pods count as available only after 12 s: a visible rollout
    write_yaml(path, dep, _policy("roll", cluster_ns, ["member1", "member2"], True))
    cli.ok("apply", "-f", str(path))
    _reconcile(cli)  # applies the new revision to both members

    def reflected():
        _reconcile(cli)
        rb = _get(cli, "rb", "roll-deployment", "-n", cluster_ns)
        return {i["clusterName"]: i.get("status") or {} for i in rb.get("status", {}).get("aggregatedStatus") or []}

    # The surge Pod of the new revision is Ready but not yet available (minReadySeconds): the
    # members' deployment controllers report an unavailable replica, and karmactl reflects it.
    seen = _until("the new revision in progress on a member", lambda: {
        c: st for c, st in reflected().items() if st.get("unavailableReplicas")}, deadline=60, every=1)
    assert all(st["updatedReplicas"] == 1 for st in seen.values()), seen
    template = _get(cli, "deploy", "roll", "-n", cluster_ns)["status"]
    assert template.get("unavailableReplicas", 0) >= 1  # the aggregated status shows the rollout too

    def complete():
        items = reflected()
        return len(items) == 2 and all(st.get("updatedReplicas") == st.get("availableReplicas") == st.get("replicas") == 1
                                       and not st.get("unavailableReplicas") for st in items.values())

    _until("the rollout to complete on both members", complete, deadline=DEADLINE)
    assert _health(cli, cluster_ns, "roll") == {"member1": "Healthy", "member2": "Healthy"}
    for name in ("member1", "member2"):
        got = _member_deploy(cluster_joined[name], cluster_ns, "roll")
        assert got["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
        assert got["status"]["updatedReplicas"] == got["status"]["availableReplicas"] == 1


def test_a_deployment_that_cannot_be_scheduled_on_one_member_is_moved_by_application_failover(
        cli, cluster_joined, cluster_ns, tmp_path):
    # The Pods may only run in zone-a: member1's nodes. On member2 they stay Pending (scheduler: node
    # affinity), so member2's copy never becomes available and is judged Unhealthy.
    dep = _deployment("zonal", cluster_ns, 2, nodeSelector={"topology.kubernetes.io/zone": "zone-a"})
    failover = {"application": {"decisionConditions": {"tolerationSeconds": 15}, "purgeMode": "Directly"}}
    path = write_yaml(tmp_path / "in" / "zonal.yaml", dep,
                      _policy("zonal", cluster_ns, ["member1", "member2"], failover=failover))
    cli.ok("apply", "-f", str(path))
    m2 = cluster_joined["member2"]

    def pending_on_member2():
        _reconcile(cli)
        pods = json.loads(m2.kubectl("get", "pods", "-n", cluster_ns, "-o", "json").stdout)["items"]
        return pods and all(p["status"].get("phase") == "Pending" for p in pods) and \
            _health(cli, cluster_ns, "zonal").get("member2") == "Unhealthy"

    _until("member2's Pods to stay Pending and its copy to be judged Unhealthy", pending_on_member2)
    rb = _get(cli, "rb", "zonal-deployment", "-n", cluster_ns)
    assert {c["name"] for c in rb["spec"]["clusters"]} == {"member1", "member2"}  # toleration not over yet

    def moved():
        _reconcile(cli)
        clusters = {c["name"] for c in _get(cli, "rb", "zonal-deployment", "-n", cluster_ns)["spec"]["clusters"]}
        return clusters == {"member1"} and _member_deploy(m2, cluster_ns, "zonal") is None

    _until("application failover to take member2 out after tolerationSeconds", moved, deadline=90)
    dep1 = _member_deploy(cluster_joined["member1"], cluster_ns, "zonal")
    assert dep1["status"].get("availableReplicas") == 2


def test_resource_summary_and_models_match_the_nodes_and_pods_kubectl_lists(cli, cluster_joined, cluster_ns, tmp_path):
    path = write_yaml(tmp_path / "in" / "sized.yaml", _deployment("sized", cluster_ns, 3),
                      _policy("sized", cluster_ns, ["member1"]))
    cli.ok("apply", "-f", str(path))
    m1 = cluster_joined["member1"]

    def running():
        _reconcile(cli)
        pods = json.loads(m1.kubectl("get", "pods", "-n", cluster_ns, "-o", "json").stdout)["items"]
        return len(pods) == 3 and all(p["status"].get("phase") == "Running" for p in pods)

    _until("3 Pods running on member1", running)
    _reconcile(cli)
    summary = _get(cli, "cluster", "member1")["status"]["resourceSummary"]
    nodes = json.loads(m1.kubectl("get", "nodes", "-o", "json").stdout)["items"]
    pods = [p for p in json.loads(m1.kubectl("get", "pods", "-A", "-o", "json").stdout)["items"]
            if p["spec"].get("nodeName") and p["status"].get("phase") not in ("Succeeded", "Failed")]
    assert summary["allocatable"]["cpu"] == str(8 * len(nodes))
    assert summary["allocatable"]["pods"] == str(110 * len(nodes))
    assert summary["allocated"]["pods"] == str(len(pods))
    mcpu = sum(int(c["resources"]["requests"]["cpu"].rstrip("m")) for p in pods for c in p["spec"]["containers"]
               if "cpu" in (c.get("resources") or {}).get("requests", {}))
    assert summary["allocated"]["cpu"] == (f"{mcpu}m" if mcpu % 1000 else str(mcpu // 1000))
    # Karmada's default resource models: a node with 8 CPU and 32Gi free is grade 3 (cpu [4, 8),
    # memory [32Gi, 64Gi)); a node with Pods of 500m/256Mi on it falls to grade 2 (memory < 32Gi).
    per_node = {n["metadata"]["name"]: 0 for n in nodes}
    for p in pods:
        per_node[p["spec"]["nodeName"]] += 1
    want = {2: sum(1 for k in per_node.values() if k), 3: sum(1 for k in per_node.values() if not k)}
    counts = {m["grade"]: m["count"] for m in summary["allocatableModelings"]}
    assert {g: c for g, c in counts.items() if c} == {g: c for g, c in want.items() if c}
    assert summary.get("allocating") is None  # nothing Pending


def test_a_dead_node_moves_pods_inside_the_member_and_a_dead_api_server_moves_the_workload(
        cli, cluster_joined, cluster_ns, tmp_path, tmp_path_factory, monkeypatch):
    own = start_cluster("member3", tmp_path_factory.mktemp("member3") / "member3", nodes=2,
                        env={"KUBE_CLUSTER_NODE_MONITOR_GRACE_PERIOD": "20s"})
    try:
        import os
        dirs = {os.path.dirname(os.path.realpath(c.kubeconfig)) for c in (*cluster_joined.values(), own)}
        monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", os.path.commonpath(sorted(dirs)))
        cli.ok("join", "member3", "--kubeconfig", str(own.kubeconfig))
        tolerations = [{"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}
                       for k in ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")]
        dep = _deployment("moving", cluster_ns, 2, tolerations=tolerations)
        failover = {"cluster": {"purgeMode": "Directly"}}
        path = write_yaml(tmp_path / "in" / "moving.yaml", dep,
                          _policy("moving", cluster_ns, ["member1", "member3"], divided=True, failover=failover),
                          )
        settings(tmp_path / "in" / "settings.yaml", clusterFailureThreshold="10s", memberRequestTimeout="3s")
        cli.ok("apply", "-f", str(tmp_path / "in"))

        def pods_on_member3():
            _reconcile(cli)
            pods = json.loads(own.kubectl("get", "pods", "-n", cluster_ns, "-o", "json").stdout)["items"]
            running = [p for p in pods if p["status"].get("phase") == "Running"]
            return running and {p["spec"]["nodeName"] for p in running}

        nodes = _until("the Pod on member3 to run", pods_on_member3)
        victim = sorted(nodes)[0]
        own.kill_node(int(victim.rsplit("-", 1)[1]))

        def moved_inside():
            pods = json.loads(own.kubectl("get", "pods", "-n", cluster_ns, "-o", "json").stdout)["items"]
            running = [p for p in pods if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]
            return running and all(p["spec"]["nodeName"] != victim for p in running)

        _until(f"the Pod to leave the dead node {victim} inside member3", moved_inside, deadline=DEADLINE)
        _reconcile(cli)
        rb = _get(cli, "rb", "moving-deployment", "-n", cluster_ns)
        assert {c["name"]: c["replicas"] for c in rb["spec"]["clusters"]} == {"member1": 1, "member3": 1}
        ready = {c["type"]: c["status"] for c in _get(cli, "cluster", "member3")["status"]["conditions"]}
        assert ready["Ready"] == "True"  # one node gone: the member is still a healthy cluster

        own.pause()  # the API server stops answering: cluster failover

        def failed_over():
            _reconcile(cli)
            rb = _get(cli, "rb", "moving-deployment", "-n", cluster_ns)
            return {c["name"]: c["replicas"] for c in rb["spec"]["clusters"]} == {"member1": 2}

        _until("member3 to be tainted and its replica moved to member1", failed_over, deadline=90)
        taints = {t["key"] for t in _get(cli, "cluster", "member3")["spec"].get("taints") or []}
        assert "cluster.karmada.io/not-ready" in taints or "cluster.karmada.io/unreachable" in taints
        _until("member1 to be given both replicas", lambda: _reconcile(cli) is not None and (
            _member_deploy(cluster_joined["member1"], cluster_ns, "moving") or {}).get("spec", {}).get("replicas") == 2,
            deadline=60)
    finally:
        own.unpause()
        own.stop()
