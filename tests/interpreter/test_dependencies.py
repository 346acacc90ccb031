"""Dependency interpretation (semantics §10.5)."""
import pytest

from karmactl.interpreter import InterpreterError, get_dependencies, has_dependencies_hook

POD_SPEC = {
    "serviceAccountName": "robot",
    "imagePullSecrets": [{"name": "regcred"}],
    "containers": [{
        "name": "c",
        "envFrom": [{"configMapRef": {"name": "cm-envfrom"}}, {"secretRef": {"name": "s-envfrom"}}],
        "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm-key", "key": "k"}}},
                {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s-key", "key": "k"}}},
                {"name": "C", "value": "plain"}],
    }],
    "initContainers": [{"name": "i", "envFrom": [{"configMapRef": {"name": "cm-init"}}]}],
    "volumes": [
        {"name": "v1", "configMap": {"name": "cm-vol"}},
        {"name": "v2", "secret": {"secretName": "s-vol"}},
        {"name": "v3", "projected": {"sources": [{"configMap": {"name": "cm-proj"}}, {"secret": {"name": "s-proj"}}]}},
        {"name": "v4", "persistentVolumeClaim": {"claimName": "data"}},
        {"name": "v5", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "s-csi"}}},
        {"name": "v6", "emptyDir": {}},
    ],
}


def ref(kind, name, ns="ns", api="v1"):
    return {"apiVersion": api, "kind": kind, "namespace": ns, "name": name}


EXPECTED = sorted(
    [ref("ConfigMap", n) for n in ("cm-envfrom", "cm-key", "cm-init", "cm-vol", "cm-proj")]
    + [ref("Secret", n) for n in ("regcred", "s-envfrom", "s-key", "s-vol", "s-proj", "s-csi")]
    + [ref("ServiceAccount", "robot"), ref("PersistentVolumeClaim", "data")],
    key=lambda r: (r["kind"], r["name"]))


def wrap(api, kind, pod_spec, extra_spec=None):
    if kind == "Pod":
        spec = pod_spec
    elif kind == "CronJob":
        spec = {"jobTemplate": {"spec": {"template": {"spec": pod_spec}}}}
    else:
        spec = {"template": {"spec": pod_spec}, **(extra_spec or {})}
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "w", "namespace": "ns"}, "spec": spec}


@pytest.mark.parametrize("api,kind", [
    ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("apps/v1", "DaemonSet"), ("apps/v1", "StatefulSet"),
    ("batch/v1", "Job"), ("batch/v1", "CronJob"), ("v1", "Pod"),
])
def test_pod_template_kinds(api, kind):
    assert has_dependencies_hook(api, kind)
    assert get_dependencies(wrap(api, kind, POD_SPEC)) == EXPECTED


def test_default_service_account_skipped_and_dedup():
    spec = {"serviceAccountName": "default",
            "containers": [{"name": "a", "envFrom": [{"configMapRef": {"name": "cm"}}]},
                           {"name": "b", "envFrom": [{"configMapRef": {"name": "cm"}}]}]}
    assert get_dependencies(wrap("apps/v1", "Deployment", spec)) == [ref("ConfigMap", "cm")]


def test_statefulset_claim_templates_excluded():
    spec = {"containers": [{"name": "c"}],
            "volumes": [{"name": "a", "persistentVolumeClaim": {"claimName": "www"}},
                        {"name": "b", "persistentVolumeClaim": {"claimName": "shared"}}]}
    sts = wrap("apps/v1", "StatefulSet", spec, {"volumeClaimTemplates": [{"metadata": {"name": "www"}}]})
    assert get_dependencies(sts) == [ref("PersistentVolumeClaim", "shared")]


def test_ingress_tls_secrets():
    ing = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i", "namespace": "ns"},
           "spec": {"tls": [{"secretName": "tls-b"}, {"secretName": "tls-a", "hosts": ["x"]}]}}
    assert get_dependencies(ing) == [ref("Secret", "tls-a"), ref("Secret", "tls-b")]


def test_ingress_tls_without_secret_is_an_error():
    ing = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i", "namespace": "ns"},
           "spec": {"tls": [{"hosts": ["x"]}]}}
    with pytest.raises(InterpreterError, match="name and labelSelector"):
        get_dependencies(ing)


def test_service_import():
    si = {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
          "metadata": {"name": "web", "namespace": "ns"}, "spec": {}}
    # sorted by apiVersion first: "discovery.k8s.io/v1" < "v1"
    assert get_dependencies(si) == [
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "namespace": "ns",
         "labelSelector": {"matchLabels": {"kubernetes.io/service-name": "derived-web"}}},
        ref("Service", "derived-web"),
    ]


@pytest.mark.parametrize("api,kind", [("v1", "ConfigMap"), ("v1", "Service"), ("apps/v1beta1", "Deployment")])
def test_no_hook(api, kind):
    assert not has_dependencies_hook(api, kind)
    assert get_dependencies(wrap(api, kind, POD_SPEC)) == []
