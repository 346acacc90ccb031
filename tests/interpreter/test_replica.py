"""InterpretReplica, ReviseReplica and the Job completions split (semantics §2.7, §9.2)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karmactl.interpreter import (InterpreterError, has_revise_replica, interpret_replica, revise_replica,
                                  split_job_completions)
from karmactl.interpreter.replica import format_binary_si, format_decimal_si


def workload(kind, api="apps/v1", spec=None, pod_spec=None):
    spec = dict(spec or {})
    if kind == "Pod":
        spec = dict(pod_spec or {})
    else:
        spec["template"] = {"spec": pod_spec or {"containers": [{"name": "c", "image": "nginx"}]}}
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "w", "namespace": "default"}, "spec": spec}


def res(requests=None, limits=None, name="c"):
    resources = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "nginx", "resources": resources}


REPLICA_CASES = [
    ("deployment", workload("Deployment", spec={"replicas": 3}), 3),
    ("deployment-replicas-omitted", workload("Deployment"), 0),
    ("replicaset", workload("ReplicaSet", spec={"replicas": 2}), 2),
    ("statefulset", workload("StatefulSet", spec={"replicas": 5}), 5),
    ("job-parallelism-lt-completions", workload("Job", "batch/v1", {"parallelism": 2, "completions": 5}), 2),
    ("job-parallelism-gt-completions", workload("Job", "batch/v1", {"parallelism": 8, "completions": 5}), 5),
    ("job-no-completions", workload("Job", "batch/v1", {"parallelism": 4}), 4),
    ("job-no-parallelism", workload("Job", "batch/v1", {"completions": 4}), 0),
    ("pod-always-1", workload("Pod", "v1", pod_spec={"containers": [{"name": "c"}]}), 1),
    ("deployment-wrong-version", workload("Deployment", "apps/v1beta1", {"replicas": 3}), 0),
    ("daemonset-non-workload", workload("DaemonSet", spec={"replicas": 3}), 0),
    ("service-non-workload", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                              "spec": {"ports": [{"port": 80}]}}, 0),
    ("configmap-non-workload", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, 0),
]


@pytest.mark.parametrize("obj,expected", [c[1:] for c in REPLICA_CASES], ids=[c[0] for c in REPLICA_CASES])
def test_replicas_per_kind(obj, expected):
    replicas, _ = interpret_replica(obj)
    assert replicas == expected


def test_non_workload_has_no_requirements():
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {}}
    assert interpret_replica(svc) == (0, None)
    ds = workload("DaemonSet", pod_spec={"containers": [res({"cpu": "1"})]})
    assert interpret_replica(ds) == (0, None)


REQUEST_CASES = [
    ("no-resources", {"containers": [{"name": "c"}]}, None),
    ("requests-sum-over-containers",
     {"containers": [res({"cpu": "100m", "memory": "128Mi"}), res({"cpu": "250m", "memory": "64Mi"}, name="d")]},
     {"cpu": "350m", "memory": "192Mi"}),
    ("whole-cpu-stays-integer", {"containers": [res({"cpu": "500m"}), res({"cpu": "0.5"}, name="d")]},
     {"cpu": "1"}),
    ("limits-used-when-requests-missing", {"containers": [res(limits={"cpu": "2", "memory": "1Gi"})]},
     {"cpu": "2", "memory": "1Gi"}),
    ("limits-only-fill-missing-requests",
     {"containers": [res({"cpu": "100m"}, {"cpu": "4", "memory": "256Mi"})]},
     {"cpu": "100m", "memory": "256Mi"}),
    ("init-container-max-wins",
     {"containers": [res({"cpu": "100m", "memory": "100Mi"}), res({"cpu": "100m"}, name="d")],
      "initContainers": [res({"cpu": "1", "memory": "50Mi"}, name="i1"), res({"cpu": "500m"}, name="i2")]},
     {"cpu": "1", "memory": "100Mi"}),
    ("init-container-smaller-ignored",
     {"containers": [res({"cpu": "2"})], "initContainers": [res({"cpu": "1"}, name="i")]}, {"cpu": "2"}),
    ("overhead-added",
     {"containers": [res({"cpu": "100m", "memory": "128Mi"})], "overhead": {"cpu": "10m", "memory": "2Mi"}},
     {"cpu": "110m", "memory": "130Mi"}),
    ("zero-dropped", {"containers": [res({"cpu": "0", "memory": "64Mi"})]}, {"memory": "64Mi"}),
    ("memory-decimal-suffix-not-binary-multiple", {"containers": [res({"memory": "1G"})]},
     {"memory": "1000000000"}),
    ("memory-below-1024-prints-decimal", {"containers": [res({"memory": "1000"})]}, {"memory": "1k"}),
    ("cpu-thousands-use-k", {"containers": [res({"cpu": "2000"})]}, {"cpu": "2k"}),
    ("cpu-rounded-up-to-milli", {"containers": [res({"cpu": "100.5m"})]}, {"cpu": "101m"}),
    ("ephemeral-storage-and-extended",
     {"containers": [res({"ephemeral-storage": "2Gi", "nvidia.com/gpu": "1", "hugepages-2Mi": "4Mi"})]},
     {"ephemeral-storage": "2Gi", "hugepages-2Mi": "4Mi", "nvidia.com/gpu": "1"}),
    ("unknown-native-name-ignored", {"containers": [res({"storage": "1Gi", "cpu": "1"})]}, {"cpu": "1"}),
]


@pytest.mark.parametrize("pod_spec,expected", [c[1:] for c in REQUEST_CASES], ids=[c[0] for c in REQUEST_CASES])
def test_resource_request(pod_spec, expected):
    _, req = interpret_replica(workload("Deployment", spec={"replicas": 1}, pod_spec=pod_spec))
    assert (req or {}).get("resourceRequest") == expected


def test_pod_requirements_come_from_spec():
    pod = workload("Pod", "v1", pod_spec={"containers": [res({"cpu": "300m"})], "nodeSelector": {"disk": "ssd"}})
    assert interpret_replica(pod) == (1, {"nodeClaim": {"nodeSelector": {"disk": "ssd"}},
                                          "resourceRequest": {"cpu": "300m"}})


def test_job_requirements_from_template():
    job = workload("Job", "batch/v1", {"parallelism": 2}, {"containers": [res({"memory": "1Gi"})]})
    assert interpret_replica(job) == (2, {"resourceRequest": {"memory": "1Gi"}})


NODE_CLAIM_CASES = [
    ("none", {}, None),
    ("node-selector", {"nodeSelector": {"a": "b"}}, {"nodeSelector": {"a": "b"}}),
    ("empty-node-selector-still-a-claim", {"nodeSelector": {}}, {}),
    ("tolerations", {"tolerations": [{"key": "k", "operator": "Exists"}]},
     {"tolerations": [{"key": "k", "operator": "Exists"}]}),
    ("empty-tolerations-no-claim", {"tolerations": []}, None),
    ("hard-affinity",
     {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []},
                                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}}},
     {"hardNodeAffinity": {"nodeSelectorTerms": []}}),
    ("soft-affinity-only", {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}},
     None),
]


@pytest.mark.parametrize("extra,expected", [c[1:] for c in NODE_CLAIM_CASES], ids=[c[0] for c in NODE_CLAIM_CASES])
def test_node_claim(extra, expected):
    pod_spec = {"containers": [{"name": "c"}], **extra}
    _, req = interpret_replica(workload("Deployment", spec={"replicas": 1}, pod_spec=pod_spec))
    assert (None if req is None else req.get("nodeClaim")) == expected


def test_priority_class_only_with_gate():
    d = workload("Deployment", spec={"replicas": 1},
                 pod_spec={"containers": [res({"cpu": "1"})], "priorityClassName": "high"})
    assert "priorityClassName" not in interpret_replica(d)[1]
    assert interpret_replica(d, resource_quota_estimate=True)[1]["priorityClassName"] == "high"


@pytest.mark.parametrize("obj", [
    workload("Deployment", spec={"replicas": "3"}),
    workload("Deployment", spec={"replicas": 1}, pod_spec={"containers": [res({"cpu": "lots"})]}),
], ids=["replicas-string", "bad-quantity"])
def test_malformed_raises(obj):
    with pytest.raises(InterpreterError):
        interpret_replica(obj)


@pytest.mark.parametrize("value,scale,text", [
    (100, -3, "100m"), (1000, -3, "1"), (1500, -3, "1500m"), (2_000_000, -3, "2k"), (1_500_000, -3, "1500"),
    (0, -3, "0"), (5, 0, "5"), (3000, 0, "3k"),
])
def test_format_decimal_si(value, scale, text):
    assert format_decimal_si(value, scale) == text


@pytest.mark.parametrize("value,text", [
    (134217728, "128Mi"), (1024, "1Ki"), (1536, "1536"), (1000, "1k"), (512, "512"), (2**30 * 3, "3Gi"),
])
def test_format_binary_si(value, text):
    assert format_binary_si(value) == text


# --- revise ----------------------------------------------------------------------------------

REVISE_CASES = [
    ("deployment", workload("Deployment", spec={"replicas": 3}), ("spec", "replicas"), 7),
    ("replicaset", workload("ReplicaSet", spec={"replicas": 3}), ("spec", "replicas"), 7),
    ("statefulset", workload("StatefulSet", spec={"replicas": 3}), ("spec", "replicas"), 7),
    ("job-parallelism", workload("Job", "batch/v1", {"parallelism": 3, "completions": 9}), ("spec", "parallelism"), 7),
]


@pytest.mark.parametrize("obj,path,expected", [c[1:] for c in REVISE_CASES], ids=[c[0] for c in REVISE_CASES])
def test_revise_sets_field(obj, path, expected):
    assert has_revise_replica(obj)
    out = revise_replica(obj, expected)
    assert out[path[0]][path[1]] == expected
    assert obj[path[0]][path[1]] == 3  # input untouched


def test_revise_only_when_field_exists():
    d = workload("Deployment")
    assert revise_replica(d, 4) == d
    job = workload("Job", "batch/v1", {"completions": 4})
    assert "parallelism" not in revise_replica(job, 2)["spec"]


@pytest.mark.parametrize("obj", [
    workload("DaemonSet", spec={"replicas": 3}),
    workload("Pod", "v1", pod_spec={"containers": []}),
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
], ids=["daemonset", "pod", "configmap"])
def test_revise_no_hook(obj):
    assert not has_revise_replica(obj)
    assert revise_replica(obj, 9) == obj


# --- Job completions -------------------------------------------------------------------------

def job(completions=None):
    spec = {"parallelism": 4}
    if completions is not None:
        spec["completions"] = completions
    return workload("Job", "batch/v1", spec)


COMPLETION_CASES = [
    ("proportional", 8, [("m1", 1), ("m2", 3)], "", {"m1": 2, "m2": 6}),
    ("tie-fewer-seats-wins", 10, [("m1", 1), ("m2", 3)], "", {"m1": 3, "m2": 7}),
    ("semantics-example-9-1-3", 9, [("A", 1), ("B", 3)], "", {"A": 2, "B": 7}),
    ("even", 6, [("a", 2), ("b", 2)], "", {"a": 3, "b": 3}),
    ("tie-smaller-name", 4, [("a", 1), ("b", 1), ("c", 1)], "", {"a": 2, "b": 1, "c": 1}),
    ("zero-weight-gets-nothing", 5, [("a", 1), ("b", 0)], "", {"a": 5, "b": 0}),
    ("semantics-example-9", 9, [("A", 1), ("B", 2)], "", {"A": 3, "B": 6}),
    ("semantics-example-10", 10, [("A", 8), ("B", 6)], "", {"A": 6, "B": 4}),
]


@pytest.mark.parametrize("completions,targets,uid,expected", [c[1:] for c in COMPLETION_CASES],
                         ids=[c[0] for c in COMPLETION_CASES])
def test_split_job_completions(completions, targets, uid, expected):
    targets = [{"name": n, "replicas": r} for n, r in targets]
    assert split_job_completions(job(completions), targets, uid) == expected


def test_split_odd_hash_uid_favours_larger_name():
    from karmactl.interpreter.replica import _fnv1a_32
    uid = next(u for u in (f"uid-{i}" for i in range(100)) if _fnv1a_32(u) & 1)
    targets = [{"name": n, "replicas": 1} for n in "abc"]
    assert split_job_completions(job(4), targets, uid) == {"a": 1, "b": 1, "c": 2}


def test_fnv1a_known_value():
    from karmactl.interpreter.replica import _fnv1a_32
    assert _fnv1a_32("") == 0x811C9DC5
    assert _fnv1a_32("a") == 0xE40C292C


@pytest.mark.parametrize("template,targets", [
    (job(None), [{"name": "a", "replicas": 1}]),
    (job(5), [{"name": "a", "replicas": 0}]),
    (job(5), []),
], ids=["no-completions", "zero-weights", "no-targets"])
def test_split_nothing(template, targets):
    assert split_job_completions(template, targets) == {}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 200), st.lists(st.integers(0, 20), min_size=1, max_size=6))
def test_split_preserves_total(completions, weights):
    targets = [{"name": f"c{i}", "replicas": w} for i, w in enumerate(weights)]
    out = split_job_completions(job(completions), targets)
    if sum(weights) == 0:
        assert out == {}
    else:
        assert sum(out.values()) == completions
        assert set(out) == {t["name"] for t in targets}
