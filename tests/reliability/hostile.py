"""Hostile inputs shared by the reliability tests and the fuzz suite: name -> YAML bytes, each of
which karmactl must refuse with exit 2 (never exit 70, a signal, a hang or a crash)."""
from __future__ import annotations

def policy_for(*clusters: str) -> bytes:
    """A PropagationPolicy dividing every Deployment's replicas over ``clusters``."""
    return f"""apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: all, namespace: default}}
spec:
  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment}}]
  placement:
    clusterAffinity: {{clusterNames: [{", ".join(clusters)}]}}
    replicaScheduling: {{replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}}
""".encode()


POLICY = policy_for("m1", "m2")


def deployment(name: str = "nginx", replicas: str = "1", extra: str = "", containers: str | None = None) -> bytes:
    """A Deployment as YAML bytes, with parts replaced by hostile text."""
    if containers is None:
        containers = "      - name: nginx\n        image: nginx\n" + extra
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: default\n"
            f"spec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: nginx}}}}\n  template:\n"
            f"    metadata: {{labels: {{app: nginx}}}}\n    spec:\n      containers:\n{containers}").encode()


def _alias_bomb() -> bytes:
    text = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    prev = "a"
    for i in range(1, 12):
        text += f"a{i}: &a{i} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        prev = f"a{i}"
    return (text + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb, namespace: default}\n").encode()


def _cm(body: str) -> bytes:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n" + body).encode()


HOSTILE: dict[str, tuple[bytes, str]] = {
    # name: (input, a phrase the error must contain)
    "alias bomb": (_alias_bomb(), "aliases expand"),
    "nesting 254": (_cm("data: {x: " + "[" * 254 + "]" * 254 + "}\n"), "nesting"),
    "nesting 100000": (_cm("x: " + "[" * 100000 + "]" * 100000 + "\n"), "nesting"),
    "block nesting": (_cm("x:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 150)) + "  " * 150 + "v: 1\n"),
                      "nesting"),
    "integer over 2**64": (deployment(replicas="18446744073709551616"), "64-bit"),
    "integer in data over 2**63": (_cm("x: -9223372036854775809\n"), "64-bit"),
    "replicas 2**63-1": (deployment(replicas="9223372036854775807"), "int32"),
    "replicas 2**31": (deployment(replicas="2147483648"), "int32"),
    "replicas negative": (deployment(replicas="-1"), "spec.replicas"),
    "replicas 1.5": (deployment(replicas="1.5"), "spec.replicas"),
    "replicas string": (deployment(replicas='"3"'), "spec.replicas"),
    "container as string": (deployment(containers="      - nginx\n"), "containers[0]"),
    "containers as mapping": (deployment(containers="        name: nginx\n"), "containers"),
    "container name integer": (deployment(containers="      - name: 1\n"), "containers[0].name"),
    "limits true": (deployment(extra="        resources: {limits: true}\n"), "resources.limits"),
    "requests bad quantity": (deployment(extra="        resources: {requests: {cpu: lots}}\n"), "requests.cpu"),
    "resources list": (deployment(extra="        resources: [1]\n"), "resources"),
    "binary": (_cm("data: {x: !!binary aGVsbG8=}\n"), "binary"),
    "set": (_cm("data: !!set {a, b}\n"), "set"),
    "integer key": (_cm("data: {1: x}\n"), "not a string"),
    "null key": (_cm("data: {~: x}\n"), "not a string"),
    "nan": (_cm("x: .nan\n"), "not a number"),
    "duplicate key": (deployment().replace(b"  replicas: 1\n", b"  replicas: 1\n  replicas: 2\n"), "duplicate key"),
    "duplicate metadata": (_cm("metadata: {name: d}\n"), "duplicate key"),
    "invalid utf-8": (_cm('data: {x: "\xff"}\n').replace("\xff".encode(), b"\xff\xfe"), "UTF-8"),
    "name with slash": (deployment(name='"../../x"'), "metadata.name"),
    "name too long": (deployment(name="a" * 254), "metadata.name"),
    "namespace dotdot": (deployment().replace(b"namespace: default", b'namespace: ".."'), "metadata.namespace"),
    "not a mapping": (b"- 1\n- 2\n", "mapping"),
    "spec a string": (deployment().split(b"spec:")[0] + b"spec: oops\n", "spec"),
    "ingress path a list": (b"""apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: demo, namespace: default}
spec:
  rules:
  - host: demo.localdev.me
    http:
      paths:
      - path: [null]
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
""", "path"),
    "crd plural escaping": (b"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: xs.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: X, plural: ../../../x, singular: x, listKind: XList}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
---
apiVersion: example.com/v1
kind: X
metadata: {name: x1, namespace: default}
""", "plural"),
}

_CLUSTER = ("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m9}\n"
            "spec: {syncMode: Push, apiEndpoint: 'https://m9.example:6443'}\n")
_CRD = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: xs.example.com}\n")


def _settings(body: str) -> bytes:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: karmactl-config, namespace: karmada-system}\n"
            "data: {" + body + "}\n").encode()


HOSTILE.update({
    "crd spec a list": ((_CRD + "spec: [1]\n").encode(), "spec"),
    "crd names a list": ((_CRD + "spec: {group: example.com, names: [a], scope: Namespaced, versions: "
                                 "[{name: v1, served: true, storage: true}]}\n").encode(), "spec.names"),
    "crd group a list": ((_CRD + "spec: {group: [1], names: {kind: X, plural: xs}, scope: Namespaced, versions: "
                                 "[{name: v1, served: true, storage: true}]}\n").encode(), "spec.group"),
    "crd versions a number": ((_CRD + "spec: {group: example.com, names: {kind: X, plural: xs}, scope: Namespaced, "
                                      "versions: 3}\n").encode(), "spec.versions"),
    "crd scope unknown": ((_CRD + "spec: {group: example.com, names: {kind: X, plural: xs}, scope: Sideways, "
                                  "versions: [{name: v1, served: true, storage: true}]}\n").encode(), "spec.scope"),
    "cluster status true": ((_CLUSTER + "status: true\n").encode(), "status"),
    "cluster apiEnablements strings": ((_CLUSTER + "status: {apiEnablements: [str]}\n").encode(),
                                       "status.apiEnablements[0]"),
    "cluster condition time 0001": ((_CLUSTER + "status: {conditions: [{type: Ready, status: 'False', "
                                                "lastTransitionTime: '0001-01-01T00:00:00Z'}]}\n").encode(),
                                    "status.conditions[0].lastTransitionTime"),
    "cluster condition time 9999": ((_CLUSTER + "status: {conditions: [{type: Ready, status: 'False', "
                                                "lastTransitionTime: '9999-12-31T23:59:59Z'}]}\n").encode(),
                                    "status.conditions[0].lastTransitionTime"),
    "cluster allocatable digits": ((_CLUSTER + "status: {resourceSummary: {allocatable: {cpu: '" + "1" * 50000
                                    + "x'}}}\n").encode(), "status.resourceSummary.allocatable[cpu]"),
    "settings backreference": (_settings("skippedPropagatingNamespaces: '(a)\\1'"),
                               "data.skippedPropagatingNamespaces"),
    "settings lookahead": (_settings("skippedPropagatingNamespaces: 'kube-(?=x)'"), "data.skippedPropagatingNamespaces"),
    "settings timeout nan": (_settings("gracefulEvictionTimeout: 'nan'"), "data.gracefulEvictionTimeout"),
})
