"""ReflectStatus (semantics §10.3)."""
import pytest

from karmactl.interpreter import InterpreterError, reflect_status

GEN = "resourcetemplate.karmada.io/generation"


def member(api, kind, status=None, spec=None, generation=3, template_generation="2"):
    md = {"name": "x", "namespace": "ns", "generation": generation}
    if template_generation is not None:
        md["annotations"] = {GEN: template_generation}
    out = {"apiVersion": api, "kind": kind, "metadata": md, "spec": spec or {}}
    if status is not None:
        out["status"] = status
    return out


CASES = [
    ("deployment",
     member("apps/v1", "Deployment", {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2,
                                      "unavailableReplicas": 1, "observedGeneration": 3,
                                      "conditions": [{"type": "Available"}]}),
     {"generation": 3, "resourceTemplateGeneration": 2, "observedGeneration": 3, "replicas": 3,
      "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 2, "unavailableReplicas": 1}),
    ("deployment-zero-counters-dropped",
     member("apps/v1", "Deployment", {"observedGeneration": 3}),
     {"generation": 3, "resourceTemplateGeneration": 2, "observedGeneration": 3}),
    ("deployment-all-zero-is-none",
     member("apps/v1", "Deployment", {}, generation=0, template_generation="0"), None),
    ("deployment-no-status", member("apps/v1", "Deployment", None, template_generation=None), None),
    ("replicaset-replicas-always",
     member("apps/v1", "ReplicaSet", {"readyReplicas": 1}),
     {"generation": 3, "resourceTemplateGeneration": 2, "replicas": 0, "readyReplicas": 1}),
    ("statefulset",
     member("apps/v1", "StatefulSet", {"replicas": 2, "currentReplicas": 2, "observedGeneration": 3}),
     {"generation": 3, "resourceTemplateGeneration": 2, "replicas": 2, "currentReplicas": 2, "availableReplicas": 0}),
    ("daemonset",
     member("apps/v1", "DaemonSet", {"desiredNumberScheduled": 2, "numberReady": 2, "observedGeneration": 3,
                                     "numberAvailable": 2}),
     {"generation": 3, "resourceTemplateGeneration": 2, "currentNumberScheduled": 0, "numberMisscheduled": 0,
      "desiredNumberScheduled": 2, "numberReady": 2, "observedGeneration": 3, "numberAvailable": 2}),
    ("job",
     member("batch/v1", "Job", {"active": 1, "succeeded": 2, "startTime": "2026-01-01T00:00:00Z",
                                "conditions": [{"type": "Complete", "status": "True"}], "ready": 1}),
     {"conditions": [{"type": "Complete", "status": "True"}], "startTime": "2026-01-01T00:00:00Z",
      "active": 1, "succeeded": 2}),
    ("job-empty-status", member("batch/v1", "Job", {}), {}),
    ("service-lb", member("v1", "Service", {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}, "conditions": []},
                          {"type": "LoadBalancer"}),
     {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}),
    ("service-lb-pending", member("v1", "Service", {"loadBalancer": {}}, {"type": "LoadBalancer"}),
     {"loadBalancer": {}}),
    ("service-clusterip", member("v1", "Service", {"loadBalancer": {}}, {"type": "ClusterIP"}), None),
    ("service-no-type", member("v1", "Service", {"loadBalancer": {}}), None),
    ("pdb", member("policy/v1", "PodDisruptionBudget", {"currentHealthy": 2, "desiredHealthy": 1,
                                                        "observedGeneration": 4}),
     {"disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 0}),
    ("hpa", member("autoscaling/v2", "HorizontalPodAutoscaler", {"currentReplicas": 2, "desiredReplicas": 4,
                                                                 "currentMetrics": []}),
     {"currentReplicas": 2, "desiredReplicas": 4}),
    ("ingress-whole-status", member("networking.k8s.io/v1", "Ingress", {"loadBalancer": {"ingress": [{"ip": "a"}]}}),
     {"loadBalancer": {"ingress": [{"ip": "a"}]}}),
    ("pod-whole-status", member("v1", "Pod", {"phase": "Running", "podIP": "10.0.0.1"}),
     {"phase": "Running", "podIP": "10.0.0.1"}),
    ("configmap-no-status", member("v1", "ConfigMap"), None),
    ("crd-whole-status", member("example.io/v1", "Widget", {"ready": True}), {"ready": True}),
]


@pytest.mark.parametrize("obj,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reflect(obj, expected):
    assert reflect_status(obj) == expected


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"])
@pytest.mark.parametrize("annotation", [None, "", "abc", "1.5"], ids=["missing", "empty", "text", "float"])
def test_generation_annotation_failure(kind, annotation):
    with pytest.raises(InterpreterError, match="generation from annotation"):
        reflect_status(member("apps/v1", kind, {"replicas": 1}, template_generation=annotation))


def test_status_not_object_raises():
    with pytest.raises(InterpreterError):
        reflect_status(member("apps/v1", "Deployment", "broken"))


def test_input_not_modified():
    m = member("v1", "Pod", {"phase": "Running"})
    out = reflect_status(m)
    out["phase"] = "Failed"
    assert m["status"]["phase"] == "Running"
