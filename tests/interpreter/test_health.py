"""InterpretHealth on member objects (semantics §10.1)."""
import pytest

from karmactl.interpreter import InterpreterError, has_health_hook, interpret_health


def obj(api, kind, spec=None, status=None, generation=None):
    md = {"name": "x", "namespace": "default"}
    if generation is not None:
        md["generation"] = generation
    out = {"apiVersion": api, "kind": kind, "metadata": md}
    if spec is not None:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


def deploy(kind="Deployment", replicas=3, generation=2, **status):
    spec = {} if replicas is None else {"replicas": replicas}
    return obj("apps/v1", kind, spec, status, generation)


H, U = "Healthy", "Unhealthy"

CASES = [
    ("deploy-healthy", deploy(observedGeneration=2, updatedReplicas=3, availableReplicas=3), H),
    ("deploy-old-generation", deploy(observedGeneration=1, updatedReplicas=3, availableReplicas=3), U),
    ("deploy-not-all-updated", deploy(observedGeneration=2, updatedReplicas=2, availableReplicas=2), U),
    ("deploy-updated-not-available", deploy(observedGeneration=2, updatedReplicas=3, availableReplicas=2), U),
    ("deploy-replicas-nil", deploy(replicas=None, observedGeneration=2, updatedReplicas=0, availableReplicas=0), H),
    ("deploy-fresh-no-status", deploy(), U),
    ("deploy-no-generation-no-status-zero-replicas", obj("apps/v1", "Deployment", {"replicas": 0}), H),
    ("sts-healthy", deploy("StatefulSet", observedGeneration=2, updatedReplicas=3, availableReplicas=3), H),
    ("sts-unhealthy", deploy("StatefulSet", observedGeneration=2, updatedReplicas=3, availableReplicas=1), U),
    ("rs-healthy", deploy("ReplicaSet", observedGeneration=2, availableReplicas=3), H),
    ("rs-not-available", deploy("ReplicaSet", observedGeneration=2, availableReplicas=2), U),
    ("rs-replicas-nil", deploy("ReplicaSet", replicas=None, observedGeneration=2), H),
    ("ds-healthy", obj("apps/v1", "DaemonSet", {}, {"observedGeneration": 1, "desiredNumberScheduled": 2,
                                                    "updatedNumberScheduled": 2, "numberAvailable": 2}, 1), H),
    ("ds-not-updated", obj("apps/v1", "DaemonSet", {}, {"observedGeneration": 1, "desiredNumberScheduled": 2,
                                                        "updatedNumberScheduled": 1, "numberAvailable": 1}, 1), U),
    ("ds-not-available", obj("apps/v1", "DaemonSet", {}, {"observedGeneration": 1, "desiredNumberScheduled": 2,
                                                          "updatedNumberScheduled": 2, "numberAvailable": 1}, 1), U),
    ("svc-clusterip", obj("v1", "Service", {"type": "ClusterIP"}), H),
    ("svc-no-type", obj("v1", "Service", {}), H),
    ("svc-lb-no-ingress", obj("v1", "Service", {"type": "LoadBalancer"}, {"loadBalancer": {}}), U),
    ("svc-lb-ip", obj("v1", "Service", {"type": "LoadBalancer"}, {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}), H),
    ("svc-lb-hostname", obj("v1", "Service", {"type": "LoadBalancer"},
                            {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}}), H),
    ("svc-lb-empty-entry", obj("v1", "Service", {"type": "LoadBalancer"}, {"loadBalancer": {"ingress": [{}]}}), U),
    ("ingress-address", obj("networking.k8s.io/v1", "Ingress", {}, {"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}]}}), H),
    ("ingress-no-status", obj("networking.k8s.io/v1", "Ingress", {}), U),
    ("pvc-bound", obj("v1", "PersistentVolumeClaim", {}, {"phase": "Bound"}), H),
    ("pvc-pending", obj("v1", "PersistentVolumeClaim", {}, {"phase": "Pending"}), U),
    ("pod-succeeded", obj("v1", "Pod", {}, {"phase": "Succeeded"}), H),
    ("pod-running-ready", obj("v1", "Pod", {}, {"phase": "Running",
                                                "conditions": [{"type": "Ready", "status": "True"}]}), H),
    ("pod-running-not-ready", obj("v1", "Pod", {}, {"phase": "Running",
                                                    "conditions": [{"type": "Ready", "status": "False"}]}), U),
    ("pod-running-no-conditions", obj("v1", "Pod", {}, {"phase": "Running"}), U),
    ("pod-pending", obj("v1", "Pod", {}, {"phase": "Pending"}), U),
    ("pdb-healthy", obj("policy/v1", "PodDisruptionBudget", {}, {"currentHealthy": 3, "desiredHealthy": 2}), H),
    ("pdb-unhealthy", obj("policy/v1", "PodDisruptionBudget", {}, {"currentHealthy": 1, "desiredHealthy": 2}), U),
    ("pdb-no-status", obj("policy/v1", "PodDisruptionBudget", {}), H),
]


@pytest.mark.parametrize("member,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_health(member, expected):
    assert interpret_health(member) == expected


@pytest.mark.parametrize("api,kind", [
    ("batch/v1", "Job"), ("batch/v1", "CronJob"), ("v1", "ConfigMap"), ("v1", "Secret"),
    ("apps/v1beta2", "Deployment"), ("example.io/v1", "Widget"),
])
def test_no_hook(api, kind):
    assert not has_health_hook(api, kind)
    assert interpret_health(obj(api, kind, {}, {})) is None


def test_hook_table():
    assert has_health_hook("apps/v1", "Deployment")
    assert has_health_hook("policy/v1", "PodDisruptionBudget")
    assert not has_health_hook("policy/v1beta1", "PodDisruptionBudget")


def test_wrong_type_raises():
    with pytest.raises(InterpreterError, match="Deployment default/x"):
        interpret_health(deploy(observedGeneration="two"))
