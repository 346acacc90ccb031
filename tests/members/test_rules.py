"""Pure rules of the member layer: apply decisions, containment, thresholds, summaries, binding status."""
from __future__ import annotations

import pytest

from karmactl import interpreter
from karmactl.controllers import binding_status as bs
from karmactl.controllers import execution as X
from karmactl.members.clients import TokenBucket
from karmactl.members.kubeconfig import AccessError, resolve_access
from karmactl.members.layer import knobs_of
from karmactl.members.probing import ProbeResult, resource_summary, status_overlay

KEY = ("cluster.karmada.io", "Cluster", "", "m1")
CLUSTER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m1"},
           "spec": {"syncMode": "Push"}}


@pytest.mark.parametrize("actual,desired,want", [
    ({"a": 1, "b": 2}, {"a": 1}, True),
    ({"a": 1}, {"a": 2}, False),
    ({"a": 1}, {"a": 1, "b": {}}, True),                                   # empty desired value, server dropped it
    ({"a": [1, 2]}, {"a": [1]}, False),                                    # lists compare item by item
    ({"x": [{"n": "a", "d": 1}]}, {"x": [{"n": "a"}]}, True),              # server defaults inside items
    ({"r": {"requests": {"cpu": "500m"}}}, {"r": {"requests": {"cpu": "0.5"}}}, True),
    ({"image": "500m"}, {"image": "0.5"}, False),                          # only quantities compare by value
    ({"metadata": {}}, {"apiVersion": "v1", "kind": "X", "metadata": {}}, True),
    ({"a": True}, {"a": 1}, False),
], ids=["subset", "differs", "empty-missing", "list-length", "list-items", "quantity", "not-quantity",
        "apiVersion-skipped", "bool-vs-int"])
def test_contains(actual, desired, want):
    assert X.contains(actual, desired) is want


def _manifest(replicas=1, overwrite=False):
    ann = {"work.karmada.io/conflict-resolution": "overwrite" if overwrite else "abort"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": {"karmada.io/managed": "true"},
                         "annotations": ann},
            "spec": {"replicas": replicas}}


def _member(manifest, managed=True, **md):
    obj = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7", "uid": "u",
                        "labels": dict((manifest["metadata"]["labels"] if managed else {}), other="x"),
                        "annotations": dict(manifest["metadata"]["annotations"],
                                            **{X.APPLIED_HASH_ANNOTATION: X.manifest_hash(manifest)}), **md},
           "spec": dict(manifest["spec"], strategy={"type": "RollingUpdate"}), "status": {"replicas": 1}}
    return obj


@pytest.mark.parametrize("case,member,manifest,recorded,action,reason", [
    ("absent", None, _manifest(), None, "create", ""),
    ("unchanged", _member(_manifest()), _manifest(), None, "skip", ""),
    ("unchanged, version recorded", _member(_manifest(), generation=3), _manifest(), "gen:3", "skip", ""),
    ("changed", _member(_manifest()), _manifest(replicas=2), None, "update", "manifest changed"),
    ("edited on the member", _member(_manifest(), generation=4), _manifest(), "gen:3", "update", "member copy changed"),
    ("not managed, abort", _member(_manifest(), managed=False), _manifest(), None, "conflict", ""),
    ("not managed, overwrite", _member(_manifest(overwrite=True), managed=False), _manifest(overwrite=True), None,
     "update", "manifest changed"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_plan_apply(case, member, manifest, recorded, action, reason):
    plan = X.plan_apply(manifest, member, "member1", interpreter.retain, recorded)
    assert (plan.action, plan.reason) == (action, reason)
    if action == "create":
        assert "resourceVersion" not in plan.body["metadata"]
    if action == "update":
        md = plan.body["metadata"]
        # a replace of the member copy: its resourceVersion, member-side labels kept (retain), and
        # only the manifest's spec (the member's strategy, a server default here, is not sent)
        assert md["resourceVersion"] == "7" and md["labels"]["other"] == "x"
        assert plan.body["spec"] == manifest["spec"] and plan.body["status"] == member["status"]
    if action in ("create", "update"):
        assert plan.body["metadata"]["annotations"][X.APPLIED_HASH_ANNOTATION] == X.manifest_hash(manifest)
    if action == "conflict":
        assert plan.error.startswith("resource(kind=Deployment, default/web) already exists in the cluster member1")


def test_object_version_is_generation_else_resource_version():
    assert X.object_version({"metadata": {"generation": 2, "resourceVersion": "9"}}) == "gen:2"
    assert X.object_version({"metadata": {"resourceVersion": "9"}}) == "rv:9"


def test_applied_hash_catches_a_dropped_field():
    old = dict(_manifest(), spec={"replicas": 1, "paused": True})
    member = _member(old)
    new = _manifest()  # spec.paused dropped: the member copy still contains everything new wants
    assert X.contains(member, new)
    assert X.plan_apply(new, member, "m", interpreter.retain).action == "update"


def test_strip_patch_removes_karmada_metadata_only():
    member = _member(_manifest())
    patch = X.strip_patch(member)
    assert patch["metadata"]["labels"] == {"karmada.io/managed": None}
    assert set(patch["metadata"]["annotations"]) == {"work.karmada.io/conflict-resolution", X.APPLIED_HASH_ANNOTATION}
    assert X.strip_patch({"metadata": {"labels": {"app": "x"}}}) is None


def test_knobs_from_configmap_and_environment():
    k = knobs_of({"memberRequestTimeout": "2s", "memberQPS": "10", "memberBurst": "15"},
                 {"KARMACTL_MEMBER_CONCURRENCY": "3", "KARMACTL_MEMBER_WORKERS": "2"})
    assert (k.timeout, k.qps, k.burst, k.workers, k.concurrency) == (2.0, 10.0, 15, 2, 3)
    warnings: list = []
    k = knobs_of({"memberRequestTimeout": "2s", "memberWorkers": "4"},
                 {"KARMACTL_MEMBER_TIMEOUT": "0.5", "KARMACTL_MEMBER_QPS": "x", "KARMACTL_MEMBER_WORKERS": "0"},
                 warnings)
    assert (k.timeout, k.qps, k.burst, k.workers, k.concurrency) == (0.5, 0.0, 60, 4, 8)  # defaults: Karmada's burst
    assert warnings == ['environment variable KARMACTL_MEMBER_QPS: "x" is not a number of requests per second '
                        '(0: no limit); using 0',
                        'environment variable KARMACTL_MEMBER_WORKERS: "0" is not a whole number >= 1; using 4']


def test_token_bucket_waits_once_the_burst_is_spent():
    clock = [0.0]
    slept = []
    bucket = TokenBucket(10, burst=2, clock=lambda: clock[0], sleep=slept.append)
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, pytest.approx(0.1)]
    clock[0] = 10.0
    assert bucket.take() == 0.0


def _admitted_by(bucket_args: tuple, callers: int, seconds: list[float], threads: int = 1) -> list[int]:
    """How many of ``callers`` takes at t=0 the bucket admits by each of ``seconds`` (fake clock:
    a take is admitted when the wait it is given has passed)."""
    from concurrent.futures import ThreadPoolExecutor

    bucket = TokenBucket(*bucket_args, clock=lambda: 0.0, sleep=lambda s: None)
    with ThreadPoolExecutor(threads) as pool:
        waits = list(pool.map(lambda _: bucket.take(), range(callers)))
    return [sum(1 for w in waits if w <= t + 1e-9) for t in seconds]


def test_token_bucket_admits_the_burst_then_the_rate():
    # Karmada's --cluster-api-qps 40 / --cluster-api-burst 60: 60 at once, then 40 a second
    assert _admitted_by((40, 60), 200, [0, 0.5, 1, 2, 3.5, 10]) == [60, 80, 100, 140, 200, 200]
    # the same from eight threads at once: reservations never hand out a token twice
    assert _admitted_by((40, 60), 200, [0, 1, 2], threads=8) == [60, 100, 140]
    # no limit (the default, as kubectl): everything at once; a burst below 1 still admits one
    assert _admitted_by((0, 60), 500, [0]) == [500]
    assert _admitted_by((5, 0), 3, [0, 0.2, 0.4]) == [1, 2, 3]


def test_token_bucket_saves_up_at_most_the_burst():
    clock = [0.0]
    bucket = TokenBucket(10, burst=3, clock=lambda: clock[0], sleep=lambda s: None)
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    clock[0] = 100.0  # idle for 100 s: 1,000 tokens earned, 3 kept
    waits = [bucket.take() for _ in range(5)]
    assert [w == 0.0 for w in waits] == [True, True, True, False, False]


@pytest.mark.parametrize("status,header,want", [
    (429, "1", 1), (503, "0", 0), (500, " 7 ", 7),
    (429, None, None), (429, "Wed, 21 Oct 2015 07:28:00 GMT", None), (429, "-1", None),
    (200, "1", None), (409, "1", None),
])
def test_retry_after_as_client_go_reads_it(status, header, want):
    from karmactl.members.clients import _retry_after

    assert _retry_after(status, header) == want


def test_resolve_access(tmp_path):
    (tmp_path / "kc").write_text("{}")
    c = {"metadata": {"name": "m1", "annotations": {"karmactl.io/kubeconfig": "kc"}}}
    with pytest.raises(AccessError, match=r"Cluster m1 \(annotation karmactl.io/kubeconfig: kc\).*outside the kubeconfig "
                                          r"directory .*\.karmactl"):
        resolve_access(c, tmp_path, environ={})  # the default kubeconfig directory: <state>/.karmactl
    here = {"KARMACTL_KUBECONFIG_DIR": str(tmp_path)}
    a = resolve_access(c, tmp_path, environ=here)
    assert (a.paths, a.context, a.confined_to) == ((str(tmp_path / "kc"),), "m1", str(tmp_path.resolve()))
    with pytest.raises(AccessError, match="does not exist"):
        resolve_access({"metadata": {"name": "m1", "annotations": {"karmactl.io/kubeconfig": "nope"}}}, tmp_path, environ=here)
    a = resolve_access({"metadata": {"name": "m2"}}, tmp_path, environ={"KUBECONFIG": f"{tmp_path}/x:{tmp_path}/kc"})
    assert (a.paths, a.context) == ((f"{tmp_path}/kc",), "m2")
    with pytest.raises(AccessError, match="no kubeconfig"):
        resolve_access({"metadata": {"name": "m2"}}, tmp_path, environ={"HOME": str(tmp_path)})


def test_resource_summary_counts_pending_and_running_pods():
    node = {"status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
    pod = lambda node_name, phase, cpu: {"spec": {"nodeName": node_name, "containers": [  # noqa: E731
        {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]}, "status": {"phase": phase}}
    got = resource_summary([node, node], [pod("", "Pending", "250m"), pod("n1", "Running", "500m"),
                                          pod("n1", "Running", "1"), pod("n1", "Succeeded", "4")])
    assert got == {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "220"},
                   "allocating": {"cpu": "250m", "memory": "128Mi", "pods": "1"},
                   "allocated": {"cpu": "1500m", "memory": "256Mi", "pods": "2"}}


def test_status_overlay_holds_ready_until_the_failure_threshold():
    healthy = ProbeResult(online=True, healthy=True, version="v1.31.0", api_enablements=[], node_summary={})
    down = ProbeResult(error="x")
    o = status_overlay(KEY, CLUSTER, None, healthy, "2026-01-01T00:00:00Z", 30, 30)
    assert o["status"]["conditions"][1]["status"] == "True"
    assert o["status"]["conditions"][0]["reason"] == "Empty"  # CompleteAPIEnablements with no APIs
    o1 = status_overlay(KEY, CLUSTER, o, down, "2026-01-01T00:00:10Z", 30, 30)
    ready = [c for c in o1["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["status"] == "True" and o1["observed"]["readyThreshold"]["since"] == "2026-01-01T00:00:10Z"
    assert status_overlay(KEY, CLUSTER, o1, down, "2026-01-01T00:00:20Z", 30, 30) is o1  # nothing changed
    o2 = status_overlay(KEY, CLUSTER, o1, down, "2026-01-01T00:00:40Z", 30, 30)
    ready = [c for c in o2["status"]["conditions"] if c["type"] == "Ready"][0]
    assert (ready["status"], ready["reason"]) == ("False", "ClusterNotReachable")
    assert o2["status"]["kubernetesVersion"] == "v1.31.0"  # the rest stays while unreachable


def _work(cluster, applied=None, health=None, status=None):
    w = {"metadata": {"name": "web-x", "namespace": f"karmada-es-{cluster}"},
         "spec": {"workload": {"manifests": [_manifest()]}}, "status": {"conditions": []}}
    if applied is not None:
        w["status"]["conditions"].append({"type": "Applied", "status": "True" if applied is True else "False",
                                          "message": applied if isinstance(applied, str) else "ok"})
    if health:
        entry = {"identifier": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                                "resource": "", "namespace": "default", "name": "web"}, "health": health}
        if status:
            entry["status"] = status
        w["status"]["manifestStatuses"] = [entry]
    return w


def test_binding_status_items_and_fully_applied():
    binding = {"kind": "ResourceBinding", "metadata": {"name": "web-deployment", "namespace": "default"},
               "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web"},
                        "clusters": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
               "status": {"lastScheduledTime": "2026-01-01T00:00:00Z"}}
    works = [("a", _work("a", True, "Healthy", {"readyReplicas": 1})), ("b", _work("b", "boom")), ("c", _work("c", True))]
    new, errors = bs.binding_status(binding, works, "2026-01-01T00:00:05Z")
    assert not errors
    t5 = "2026-01-01T00:00:05Z"
    assert new["status"]["aggregatedStatus"] == [
        {"clusterName": "a", "status": {"readyReplicas": 1}, "applied": True, "health": "Healthy", "settled": True,
         "creationTimestamp": t5},
        {"clusterName": "b", "applied": False, "appliedMessage": "boom", "health": "Unknown", "creationTimestamp": t5},
        {"clusterName": "c", "applied": True, "health": "Unknown", "creationTimestamp": t5}]
    cond = new["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("FullyApplied", "False", "FullyAppliedFailed")
    works[1] = ("b", _work("b", True))
    works[0] = ("a", _work("a", True, "Unhealthy", {"readyReplicas": 0}))
    new, _ = bs.binding_status(new, works, "2026-01-01T00:00:06Z")
    assert new["status"]["conditions"][0]["message"] == "All works have been successfully applied"
    # an item keeps when it was first recorded, and settled once its workload was Healthy
    assert [(i["clusterName"], i["creationTimestamp"], i.get("settled")) for i in new["status"]["aggregatedStatus"]] == [
        ("a", t5, True), ("b", t5, None), ("c", t5, None)]
    again, _ = bs.binding_status(new, works, "2026-01-01T00:00:07Z")
    assert again is new
    # a cluster whose item went away starts again: new creationTimestamp, not settled
    gone, _ = bs.binding_status(new, works[1:], "2026-01-01T00:00:08Z")
    back, _ = bs.binding_status(gone, works, "2026-01-01T00:00:09Z")
    assert back["status"]["aggregatedStatus"][0] == {"clusterName": "a", "status": {"readyReplicas": 0}, "applied": True,
                                                     "health": "Unhealthy", "creationTimestamp": "2026-01-01T00:00:09Z"}
