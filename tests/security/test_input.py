"""Hostile merge requests against karmactl's input handling (issue 23): regular expressions from
the state directory run on RE2 (no catastrophic backtracking, Go's syntax), and content of the
wrong shape or with times karmactl cannot compute with is bad input (exit 2, naming the file, the
object and the field), never an internal error (exit 70) or a hang."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.security.mr import assert_refused, run

NOW = ("--now", "2026-01-01T00:00:00Z")
LIMIT = 30.0


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))


def _settings(state: Path, value: str) -> None:
    _write(state / "settings.yaml", f"""
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: karmactl-config, namespace: karmada-system}}
        data:
          skippedPropagatingNamespaces: '{value}'
        """)


def _namespace_with_configmap(state: Path, ns: str) -> None:
    _write(state / f"{ns}.yaml", f"""
        apiVersion: v1
        kind: Namespace
        metadata: {{name: {ns}}}
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: c, namespace: {ns}}}
        data: {{k: v}}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: all, namespace: {ns}}}
        spec:
          resourceSelectors: [{{apiVersion: v1, kind: ConfigMap}}]
          placement: {{clusterAffinity: {{clusterNames: [m1]}}}}
        """)


@pytest.fixture
def state(tmp_path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    _write(path / "clusters" / "m1.yaml", """
        apiVersion: cluster.karmada.io/v1alpha1
        kind: Cluster
        metadata: {name: m1}
        spec: {syncMode: Push, apiEndpoint: "https://m1.example:6443"}
        status:
          conditions:
          - {type: Ready, status: "True", reason: ClusterReady, message: ok, lastTransitionTime: "2025-12-31T00:00:00Z"}
          apiEnablements:
          - groupVersion: v1
            resources: [{name: configmaps, kind: ConfigMap}, {name: namespaces, kind: Namespace}]
        """)
    return path


def _bindings(state: Path) -> list[str]:
    root = state / "computed" / "resourcebindings"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.json")) if root.exists() else []


# --------------------------------------------------------------------------- regular expressions

def test_catastrophic_namespace_pattern_ends_quickly(state):
    """``(a+)+$`` against a 42-character namespace took over 60 s on Python's backtracking ``re``;
    on RE2 the run ends at once, with the pattern's meaning kept (the namespace does not match,
    so its ConfigMap is propagated)."""
    _settings(state, "(a+)+$")
    ns = "a" * 41 + "b"
    _namespace_with_configmap(state, ns)
    result = run(state, *NOW, "reconcile", "--offline", timeout=LIMIT)
    assert result.code == 0, result.err
    assert _bindings(state) == [f"{ns}/c-configmap.json"]


def test_ordinary_patterns_keep_go_semantics(state):
    """The default ``kube-.*`` still skips kube-system; a configured pattern is anchored at both
    ends (``team-.*`` skips team-a, not my-team-a), as Karmada's ``^pattern$``."""
    for ns in ("kube-system", "team-a", "my-team-a"):
        _namespace_with_configmap(state, ns)
    assert run(state, *NOW, "reconcile", "--offline").code == 0
    assert _bindings(state) == ["my-team-a/c-configmap.json", "team-a/c-configmap.json"]
    _settings(state, "kube-.*, team-.*")
    assert run(state, *NOW, "reconcile", "--offline").code == 0
    assert _bindings(state) == ["my-team-a/c-configmap.json"]


@pytest.mark.parametrize("pattern, reason", [
    ("(a)\\1", "invalid escape sequence"),      # a backreference: Go's regexp has none
    ("kube-(?=x)", "invalid perl operator"),     # lookahead
    ("a)|(.*", "unexpected )"),                  # would escape the anchoring group
    ("[", "missing ]"),
])
def test_invalid_pattern_is_bad_input(state, tmp_path, pattern, reason):
    _settings(state, pattern)
    result = run(state, *NOW, "reconcile", "--offline")
    assert_refused(result, "settings.yaml", "karmactl-config", "data.skippedPropagatingNamespaces", reason)
    # apply refuses it too, before anything is written
    (state / "settings.yaml").rename(tmp_path / "in.yaml")
    result = run(state, "apply", "-f", str(tmp_path / "in.yaml"))
    assert_refused(result, "data.skippedPropagatingNamespaces", reason)
    assert not (state / "configmaps").exists() and not list(state.rglob("karmactl-config*"))


# --------------------------------------------------------------------------- CRD shapes

_CRD_OK = {"group": "example.com", "names": "{kind: X, plural: xs}", "scope": "Namespaced",
           "versions": "[{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]"}


@pytest.mark.parametrize("field, value, phrase", [
    ("spec", "[1]", "spec"),
    ("names", "[a]", "spec.names"),
    ("names", "{kind: [X], plural: xs}", "spec.names.kind"),
    ("versions", "3", "spec.versions"),
    ("versions", "[1]", "spec.versions[0]"),
    ("versions", "[]", "spec.versions"),
    ("versions", "[{name: v1, served: true, storage: true, schema: {openAPIV3Schema: [1]}}]",
     "spec.versions[0].schema.openAPIV3Schema"),
    ("scope", "[1]", "spec.scope"),
    ("scope", "Sideways", "spec.scope"),
    ("group", "[1]", "spec.group"),
])
def test_crd_of_the_wrong_shape_is_bad_input(state, field, value, phrase):
    if field == "spec":
        spec = f"spec: {value}"
    else:
        spec = "spec: {" + ", ".join(f"{k}: {value if k == field else v}" for k, v in _CRD_OK.items()) + "}"
    _write(state / "crd.yaml", f"""
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {{name: xs.example.com}}
        {spec}
        """)
    for args in (("reconcile", "--offline"), ("get", "crd")):
        result = run(state, *NOW, *args)
        assert_refused(result, "crd.yaml", "CustomResourceDefinition xs.example.com", f"{phrase}:")


# --------------------------------------------------------------------------- Cluster status

@pytest.mark.parametrize("status, phrase", [
    ("status: true", "status:"),
    ("status: {apiEnablements: [str]}", "status.apiEnablements[0]:"),
    ("status: {apiEnablements: [{groupVersion: apps/v1, resources: 1}]}", "status.apiEnablements[0].resources:"),
    ("status: {apiEnablements: [{groupVersion: apps/v1, resources: [x]}]}",
     "status.apiEnablements[0].resources[0]:"),
    ("status: {conditions: [x]}", "status.conditions[0]:"),
    ("status: {conditions: [{type: Ready, status: Maybe}]}", "status.conditions[0].status:"),
    ("status: {resourceSummary: {allocatable: {cpu: lots}}}", "status.resourceSummary.allocatable[cpu]:"),
    ("status: {resourceSummary: {allocatableModelings: [{grade: x, count: 1}]}}",
     "status.resourceSummary.allocatableModelings[0].grade:"),
    ("status: {nodeSummary: {totalNum: -1}}", "status.nodeSummary.totalNum:"),
    ("status: {kubernetesVersion: [1]}", "status.kubernetesVersion:"),
    ("status: {remedyActions: 1}", "status.remedyActions:"),
    ("status: {conditions: [{type: Ready, status: 'False', lastTransitionTime: '0001-01-01T00:00:00Z'}]}",
     "status.conditions[0].lastTransitionTime:"),
    ("status: {conditions: [{type: Ready, status: 'False', lastTransitionTime: '9999-12-31T23:59:59Z'}]}",
     "status.conditions[0].lastTransitionTime:"),
    ("status: {conditions: [{type: Ready, status: 'False', lastTransitionTime: garbage}]}",
     "status.conditions[0].lastTransitionTime:"),
])
def test_cluster_status_of_the_wrong_shape_is_bad_input(state, tmp_path, status, phrase):
    text = (state / "clusters" / "m1.yaml").read_text()
    bad = text[:text.index("status:")] + status + "\n"
    (state / "clusters" / "m1.yaml").write_text(bad)
    result = run(state, *NOW, "reconcile", "--offline")
    assert_refused(result, "clusters/m1.yaml", "Cluster m1", phrase)
    # apply refuses what reconcile would refuse (it used to accept it, then reconcile exited 70)
    (state / "clusters" / "m1.yaml").unlink()
    (tmp_path / "in.yaml").write_text(bad)
    assert_refused(run(state, *NOW, "apply", "-f", str(tmp_path / "in.yaml")), "Cluster m1", phrase)


@pytest.mark.parametrize("field, value", [
    ("spec.taints[0].timeAdded", "0001-01-01T00:00:00Z"),
    ("spec.taints[0].timeAdded", "9999-12-31T23:59:59Z"),
    ("spec.taints[0].timeAdded", "soon"),
])
def test_cluster_times_out_of_range_are_bad_input(state, field, value):
    text = (state / "clusters" / "m1.yaml").read_text().replace(
        "spec: {syncMode: Push,", f'spec: {{taints: [{{key: k, effect: NoSchedule, timeAdded: "{value}"}}], '
                                  "syncMode: Push,")
    (state / "clusters" / "m1.yaml").write_text(text)
    assert_refused(run(state, *NOW, "reconcile", "--offline"), "clusters/m1.yaml", f"{field}:")


# --------------------------------------------------------------------------- the clock

@pytest.mark.parametrize("now", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00+01:00",
                                 "1969-12-31T23:59:59Z", "tomorrow"])
def test_now_karmactl_cannot_compute_with_is_refused(state, now):
    result = run(state, "--now", now, "reconcile", "--offline")
    assert_refused(result, "--now", "RFC 3339" if now in ("tomorrow", "0001-01-01T00:00:00+01:00")
                   else "1970-01-01T00:00:00Z")


def test_now_at_the_edges_of_the_range_works(state):
    for now in ("1970-01-01T00:00:00Z", "9998-12-31T23:59:59Z"):
        assert run(state, "--now", now, "reconcile", "--offline").code == 0


def test_huge_durations_saturate(state):
    """A timeout no date can hold (1e300 seconds) means never, not an overflow."""
    _write(state / "settings.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: karmactl-config, namespace: karmada-system}
        data: {gracefulEvictionTimeout: "1e300", clusterFailureThreshold: "1e300"}
        """)
    text = (state / "clusters" / "m1.yaml").read_text().replace('status: "True"', 'status: "False"')
    (state / "clusters" / "m1.yaml").write_text(text)
    _namespace_with_configmap(state, "team-a")
    for now in ("2026-01-01T00:00:00Z", "9998-12-31T23:59:59Z"):
        assert run(state, "--now", now, "reconcile", "--offline").code in (0, 4)


@pytest.mark.parametrize("key, value", [("gracefulEvictionTimeout", "nan"), ("clusterFailureThreshold", "inf"),
                                        ("detectSuccessThreshold", "-5"), ("memberQPS", "nan"),
                                        ("memberRequestTimeout", "inf")])
def test_settings_numbers_must_be_finite(state, key, value):
    _write(state / "settings.yaml", f"""
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: karmactl-config, namespace: karmada-system}}
        data: {{{key}: "{value}"}}
        """)
    assert_refused(run(state, *NOW, "reconcile", "--offline"), "settings.yaml", f"data.{key}:")


def test_long_digit_runs_in_quantities_end_quickly(state):
    """A request of 50,000 digits and a letter: Python's ``re`` took minutes (quadratic), RE2 is linear."""
    _namespace_with_configmap(state, "team-a")
    text = (state / "clusters" / "m1.yaml").read_text().replace(
        "  apiEnablements:", "  resourceSummary: {allocatable: {cpu: '" + "1" * 50000 + "x'}}\n  apiEnablements:")
    (state / "clusters" / "m1.yaml").write_text(text)
    assert_refused(run(state, *NOW, "reconcile", "--offline", timeout=LIMIT), "status.resourceSummary.allocatable[cpu]")


def test_huge_exponent_quantity_is_capped_not_computed(state):
    """``1e99999999`` is capped at 2^63-1 as Kubernetes caps quantities (computing the power of ten
    took minutes): the estimator divides replicas by the cluster's available resources."""
    _write(state / "app.yaml", """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d, namespace: default}
        spec:
          replicas: 3
          selector: {matchLabels: {app: a}}
          template:
            metadata: {labels: {app: a}}
            spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: d, namespace: default}
        spec:
          resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
          placement:
            clusterAffinity: {clusterNames: [m1]}
            replicaScheduling:
              replicaSchedulingType: Divided
              replicaDivisionPreference: Weighted
              weightPreference: {dynamicWeight: AvailableReplicas}
        """)
    text = (state / "clusters" / "m1.yaml").read_text().replace(
        "  apiEnablements:", "  resourceSummary: {allocatable: {cpu: '1e99999999', pods: '1e99999999'}}\n"
        "  apiEnablements:\n  - groupVersion: apps/v1\n    resources: [{name: deployments, kind: Deployment}]")
    (state / "clusters" / "m1.yaml").write_text(text)
    result = run(state, *NOW, "reconcile", "--offline", timeout=LIMIT)
    assert result.code == 0, result.err
    assert '"replicas": 3' in (state / "computed" / "resourcebindings" / "default" / "d-deployment.json").read_text()
