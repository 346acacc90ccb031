"""Every case Karmada leaves undone without a word gets a warning from ``reconcile`` and ``plan``
(issue 27, item 7): each test fails on a run that says nothing."""
from __future__ import annotations

import pytest

from tests.conftest import NOW, cluster_yaml, write

DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
"""


def _policy(placement: str, extra: str = "", selector: str = "{apiVersion: apps/v1, kind: Deployment, name: web}") -> str:
    return f"""
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: web, namespace: default}}
spec:
  resourceSelectors: [{selector}]
  placement: {placement}
{extra}"""


CASES = {
    "scheduler-name": (_policy("{clusterAffinity: {clusterNames: [member1]}}", "  schedulerName: my-scheduler\n"),
                       'spec.schedulerName is "my-scheduler"'),
    "spread-by-zone": (_policy("{clusterAffinity: {clusterNames: [member1, member2]}, spreadConstraints: "
                               "[{spreadByField: cluster, maxGroups: 2, minGroups: 1}, "
                               "{spreadByField: zone, maxGroups: 1, minGroups: 1}]}"),
                       "spreadConstraints by zone are not acted on"),
    "spread-by-label": (_policy("{clusterAffinity: {clusterNames: [member1, member2]}, spreadConstraints: "
                                "[{spreadByField: cluster, maxGroups: 2, minGroups: 1}, "
                                "{spreadByLabel: tier, maxGroups: 1, minGroups: 1}]}"),
                        "spreadConstraints by spreadByLabel are not acted on"),
    "static-beside-dynamic": (_policy("{clusterAffinity: {clusterNames: [member1, member2]}, replicaScheduling: "
                                      "{replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, "
                                      "weightPreference: {dynamicWeight: AvailableReplicas, staticWeightList: "
                                      "[{targetCluster: {clusterNames: [member1]}, weight: 1}]}}}"),
                              "staticWeightList is not acted on beside dynamicWeight"),
    "unknown-cluster": (_policy("{clusterAffinity: {clusterNames: [member1, member9]}}"),
                        "clusterNames names no Cluster: member9"),
    "selects-nothing": (_policy("{clusterAffinity: {clusterNames: [member1]}}",
                                selector="{apiVersion: apps/v1, kind: Deployment, name: nothing}"),
                        "PropagationPolicy default/web selects no resource template: it propagates nothing"),
    "association": (_policy("{clusterAffinity: {clusterNames: [member1]}}", "  association: true\n"),
                    "spec.association is not acted on"),
    "no-policy": ("", "Deployment default/web: selected by no PropagationPolicy or ClusterPropagationPolicy"),
    "field-overrider-beside-rules": (_policy("{clusterAffinity: {clusterNames: [member1]}}") + """---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - overriders: {labelsOverrider: [{operator: add, value: {a: b}}]}
  overriders:
    fieldOverrider: [{fieldPath: /data/x, yaml: [{subPath: /a, operator: add, value: b}]}]
""", "spec.overriders.fieldOverrider is not acted on beside overrideRules"),
    "image-on-configmap": (_policy("{clusterAffinity: {clusterNames: [member1]}}") + """---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: cm, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: conf}]
  overrideRules:
  - overriders: {imageOverrider: [{component: Registry, operator: replace, value: example.io}]}
""", "imageOverrider leave ConfigMap unchanged"),
    "ingress-rules": (_policy("{clusterAffinity: {clusterNames: [member1]}}") + """---
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: web, namespace: default}
spec:
  rules:
  - host: web.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
""", "make no Ingress on any member"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_reconcile_and_plan_warn(cli, state, case):
    objects, warning = CASES[case]
    write(state / "clusters.yaml", cluster_yaml("member1") + "---" + cluster_yaml("member2"))
    write(state / "apps.yaml", DEPLOY)
    if objects:
        write(state / "policy.yaml", objects)
    code, _out, err = cli("plan", "--offline", "--now", NOW)
    assert warning in err, err
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and warning in err, err


def test_a_policy_that_selects_its_templates_has_no_selection_warning(cli, state):
    write(state / "clusters.yaml", cluster_yaml("member1"))
    write(state / "apps.yaml", DEPLOY)
    write(state / "policy.yaml", _policy("{clusterAffinity: {clusterNames: [member1]}}"))
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and "warning" not in err, err


WIDGETS = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.io}
spec:
  group: example.io
  scope: Cluster
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""
WIDGET = """
apiVersion: example.io/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {a: 1}
"""


def test_a_cluster_scoped_custom_object_with_a_namespace_is_accepted_with_it_cleared(cli, state, tmp_path):
    write(state / "crd.yaml", WIDGETS)
    write(state / "widget.yaml", WIDGET)
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0, err
    assert cli.ok("get", "widgets", "w1", "-o", "jsonpath={.metadata.namespace}") == ""
    (state / "widget.yaml").unlink()
    write(tmp_path / "in.yaml", WIDGET)
    code, _out, err = cli("apply", "-f", str(tmp_path / "in.yaml"))
    assert code == 0, err
    assert 'Widget w1: metadata.namespace "default" cleared: the kind is cluster-scoped' in err
    stored = [p.read_text() for p in state.rglob("*.yaml") if "kind: Widget\n" in p.read_text()]
    assert len(stored) == 1 and "namespace" not in stored[0], stored
    assert "w1" in cli.ok("get", "widgets")


def test_a_policy_selecting_only_a_crd_selects_something(cli, state):
    write(state / "clusters.yaml", cluster_yaml("member1"))
    write(state / "crd.yaml", WIDGETS)
    write(state / "policy.yaml", """
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: crds}
spec:
  resourceSelectors: [{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: widgets.example.io}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
""")
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and "warning" not in err, err
