"""normalize_aliases and default_object: aliases, both-spellings errors, webhook/CRD defaults, idempotence."""
import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api_samples import ALL, sample
from karmactl.api import constants as C
from karmactl.api.defaults import (
    COP_PERMANENT_ID_LABEL, default_object, default_resource_models, normalize_aliases,
)
from karmactl.api.objects import permanent_id


def _get(obj, path):
    for p in path.split("."):
        obj = obj[int(p)] if p.isdigit() else obj[p]
    return obj


# --- aliases ----------------------------------------------------------------------------------

ALIAS_CASES = [
    ("app-purge-Immediately", {"failover": {"application": {"purgeMode": "Immediately"}}},
     "spec.failover.application.purgeMode", "Directly"),
    ("app-purge-Graciously", {"failover": {"application": {"purgeMode": "Graciously"}}},
     "spec.failover.application.purgeMode", "Gracefully"),
    ("cluster-purge-Immediately", {"failover": {"cluster": {"purgeMode": "Immediately"}}},
     "spec.failover.cluster.purgeMode", "Directly"),
    ("cluster-purge-Graciously", {"failover": {"cluster": {"purgeMode": "Graciously"}}},
     "spec.failover.cluster.purgeMode", "Gracefully"),
    ("purge-Never-kept", {"failover": {"application": {"purgeMode": "Never"}}},
     "spec.failover.application.purgeMode", "Never"),
    ("suspension-suspendDispatching", {"suspension": {"suspendDispatching": True}},
     "spec.suspension", {"dispatching": True}),
    ("suspension-suspendDispatchingOnClusters", {"suspension": {"suspendDispatchingOnClusters": {"clusterNames": ["m2"]}}},
     "spec.suspension", {"dispatchingOnClusters": {"clusterNames": ["m2"]}}),
    ("spec-level-suspendDispatching", {"suspendDispatching": True}, "spec.suspension", {"dispatching": True}),
    ("spec-level-suspendDispatchingOnClusters", {"suspendDispatchingOnClusters": {"clusterNames": ["m1", "m3"]}},
     "spec.suspension", {"dispatchingOnClusters": {"clusterNames": ["m1", "m3"]}}),
    ("canonical-untouched", {"suspension": {"dispatching": False}}, "spec.suspension", {"dispatching": False}),
]


@pytest.mark.parametrize("extra,path,expected", [c[1:] for c in ALIAS_CASES], ids=[c[0] for c in ALIAS_CASES])
@pytest.mark.parametrize("kind", ["PropagationPolicy", "ClusterPropagationPolicy", "ResourceBinding"])
def test_alias_normalized(kind, extra, path, expected):
    obj = sample(kind)
    obj["spec"].update(copy.deepcopy(extra))
    before = copy.deepcopy(obj)
    out, errs = normalize_aliases(obj)
    assert errs == []
    assert _get(out, path) == expected
    assert "suspendDispatching" not in out["spec"] and "suspendDispatchingOnClusters" not in out["spec"]
    assert obj == before  # input untouched


BOTH_CASES = [
    ("suspension-dispatching", {"suspension": {"dispatching": True, "suspendDispatching": False}},
     "spec.suspension.dispatching", ['"spec.suspension.dispatching"', '"spec.suspension.suspendDispatching"'], True),
    ("spec-level-and-canonical", {"suspendDispatching": True, "suspension": {"dispatching": True}},
     "spec.suspension.dispatching", ['"spec.suspension.dispatching"', '"spec.suspendDispatching"'], True),
    ("two-aliases", {"suspendDispatching": False, "suspension": {"suspendDispatching": True}},
     "spec.suspension.dispatching", ['"spec.suspension.suspendDispatching"', '"spec.suspendDispatching"'], True),
    ("on-clusters", {"suspension": {"dispatchingOnClusters": {"clusterNames": ["a"]},
                                    "suspendDispatchingOnClusters": {"clusterNames": ["b"]}}},
     "spec.suspension.dispatchingOnClusters",
     ['"spec.suspension.dispatchingOnClusters"', '"spec.suspension.suspendDispatchingOnClusters"'],
     {"clusterNames": ["a"]}),
]


@pytest.mark.parametrize("extra,path,names,kept", [c[1:] for c in BOTH_CASES], ids=[c[0] for c in BOTH_CASES])
def test_both_spellings_error(extra, path, names, kept):
    obj = sample("PropagationPolicy")
    obj["spec"].update(copy.deepcopy(extra))
    out, errs = normalize_aliases(obj)
    assert len(errs) == 1 and errs[0].path == path
    assert all(n in errs[0].message for n in names)
    assert _get(out, path) == kept


def test_work_suspendDispatching_is_not_an_alias():
    work = sample("Work")
    work["spec"]["suspendDispatching"] = True
    out, errs = normalize_aliases(work)
    assert errs == [] and out == work


# --- defaulting -------------------------------------------------------------------------------

def _pp(**spec):
    obj = sample("PropagationPolicy")
    obj["spec"].update(spec)
    return obj


DEFAULT_CASES = [
    ("namespace-default", sample("Deployment"), "metadata.namespace", "default"),
    ("pp-selector-namespace", sample("PropagationPolicy"), "spec.resourceSelectors.0.namespace", "default"),
    ("pp-conflictResolution", sample("PropagationPolicy"), "spec.conflictResolution", "Abort"),
    ("pp-priority", sample("PropagationPolicy"), "spec.priority", 0),
    ("pp-preemption", sample("PropagationPolicy"), "spec.preemption", "Never"),
    ("pp-schedulerName", sample("PropagationPolicy"), "spec.schedulerName", "default-scheduler"),
    ("pp-permanent-id", sample("PropagationPolicy"), f"metadata.labels.{C.PP_PERMANENT_ID_LABEL}",
     permanent_id("PropagationPolicy", "default", "nginx-propagation")),
    ("cpp-permanent-id", sample("ClusterPropagationPolicy"), f"metadata.labels.{C.CPP_PERMANENT_ID_LABEL}",
     permanent_id("ClusterPropagationPolicy", "crd-propagation")),
    ("op-permanent-id", sample("OverridePolicy"), f"metadata.labels.{C.OP_PERMANENT_ID_LABEL}",
     permanent_id("OverridePolicy", "default", "example")),
    ("cop-permanent-id", sample("ClusterOverridePolicy"), f"metadata.labels.{COP_PERMANENT_ID_LABEL}",
     permanent_id("ClusterOverridePolicy", "label-all")),
    ("rb-permanent-id", sample("ResourceBinding"), f"metadata.labels.{C.RB_PERMANENT_ID_LABEL}",
     permanent_id("ResourceBinding", "default", "nginx-deployment")),
    ("work-permanent-id", sample("Work"), f"metadata.labels.{C.WORK_PERMANENT_ID_LABEL}",
     permanent_id("Work", "karmada-es-member1", "nginx-687f7fb96f")),
    ("op-selector-namespace", sample("OverridePolicy"), "spec.resourceSelectors.0.namespace", "default"),
    ("spread-defaults", _pp(placement={"spreadConstraints": [{"maxGroups": 2}]}),
     "spec.placement.spreadConstraints.0", {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}),
    ("spread-label-kept", _pp(placement={"spreadConstraints": [{"spreadByLabel": "team", "minGroups": 0}]}),
     "spec.placement.spreadConstraints.0", {"spreadByLabel": "team", "minGroups": 1}),
    ("divided-type-default", _pp(placement={"replicaScheduling": {}}),
     "spec.placement.replicaScheduling", {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}),
    ("duplicated-no-preference", _pp(placement={"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}),
     "spec.placement.replicaScheduling", {"replicaSchedulingType": "Duplicated"}),
    ("aggregated-kept", _pp(placement={"replicaScheduling": {"replicaDivisionPreference": "Aggregated"}}),
     "spec.placement.replicaScheduling", {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}),
    ("service-import-propagateDeps", _pp(resourceSelectors=[{"apiVersion": "multicluster.x-k8s.io/v1alpha1",
                                                            "kind": "ServiceImport", "name": "s"}]),
     "spec.propagateDeps", True),
    ("app-failover-defaults", _pp(propagateDeps=True, failover={"application": {"decisionConditions": {}}}),
     "spec.failover.application",
     {"decisionConditions": {"tolerationSeconds": 300}, "purgeMode": "Gracefully", "gracePeriodSeconds": 600,
      "blockPredecessorSeconds": 600}),
    ("app-failover-directly-no-grace", _pp(failover={"application": {"decisionConditions": {"tolerationSeconds": 0},
                                                                     "purgeMode": "Directly"}}),
     "spec.failover.application",
     {"decisionConditions": {"tolerationSeconds": 0}, "purgeMode": "Directly", "blockPredecessorSeconds": 600}),
    ("app-failover-alias-grace", _pp(failover={"application": {"decisionConditions": {},
                                                               "purgeMode": "Graciously"}}),
     "spec.failover.application.gracePeriodSeconds", 600),
    ("cluster-failover-purge", _pp(failover={"cluster": {}}), "spec.failover", {"cluster": {"purgeMode": "Gracefully"}}),
    ("rb-conflictResolution", sample("ResourceBinding"), "spec.conflictResolution", "Abort"),
    ("cluster-zone-to-zones", {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                               "metadata": {"name": "m1"}, "spec": {"syncMode": "Pull", "zone": "z1"}},
     "spec.zones", ["z1"]),
    ("cluster-resource-models", {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                                 "metadata": {"name": "m1"}, "spec": {"syncMode": "Pull", "resourceModels": []}},
     "spec.resourceModels", default_resource_models()),
]


@pytest.mark.parametrize("obj,path,expected", [c[1:] for c in DEFAULT_CASES], ids=[c[0] for c in DEFAULT_CASES])
def test_default(obj, path, expected):
    before = copy.deepcopy(obj)
    out = default_object(obj)
    if path.startswith("metadata.labels."):  # label keys contain dots
        assert out["metadata"]["labels"][path[len("metadata.labels."):]] == expected
    else:
        assert _get(out, path) == expected
    assert obj == before


def test_no_failover_no_failover_defaults():
    out = default_object(sample("PropagationPolicy"))
    assert "failover" not in out["spec"] and "propagateDeps" not in out["spec"]


def test_existing_permanent_id_kept():
    obj = sample("PropagationPolicy")
    obj["metadata"]["labels"] = {C.PP_PERMANENT_ID_LABEL: "given"}
    assert default_object(obj)["metadata"]["labels"][C.PP_PERMANENT_ID_LABEL] == "given"


def test_cluster_zone_cleared_and_models_standardized():
    cluster = sample("Cluster")
    cluster["spec"].pop("zones")
    cluster["spec"]["zone"] = "z1"
    cluster["spec"]["resourceModels"] = [
        {"grade": 1, "ranges": [{"name": "cpu", "min": "1", "max": "4"}]},
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0.5", "max": "1"}]},
    ]
    spec = default_object(cluster)["spec"]
    assert "zone" not in spec and spec["zones"] == ["z1"]
    assert [m["grade"] for m in spec["resourceModels"]] == [0, 1]
    assert spec["resourceModels"][0]["ranges"][0]["min"] == "0"
    assert spec["resourceModels"][1]["ranges"][0]["max"] == "9223372036854775807"


def test_default_models_shape():
    models = default_resource_models()
    assert [m["grade"] for m in models] == list(range(9))
    assert models[0]["ranges"] == [{"name": "cpu", "min": "0", "max": "1"},
                                   {"name": "memory", "min": "0", "max": "4Gi"}]
    assert models[8]["ranges"][1] == {"name": "memory", "min": "1024Gi", "max": "9223372036854775807"}


def test_cluster_scoped_gets_no_namespace():
    assert "namespace" not in default_object(sample("ClusterPropagationPolicy"))["metadata"]


@pytest.mark.parametrize("kind", sorted(ALL))
def test_idempotent_on_samples(kind):
    once = default_object(sample(kind))
    assert default_object(once) == once


# --- property: idempotent, pure, and validation-stable on generated policies -------------------

_names = st.sampled_from(["member1", "member2", "member3"])
_spread = st.fixed_dictionaries({}, optional={
    "spreadByField": st.sampled_from(["cluster", "region", "zone", "provider"]),
    "spreadByLabel": st.sampled_from(["team", "env"]),
    "minGroups": st.integers(-1, 3),
    "maxGroups": st.integers(-1, 3),
})
_replica = st.fixed_dictionaries({}, optional={
    "replicaSchedulingType": st.sampled_from(["Duplicated", "Divided"]),
    "replicaDivisionPreference": st.sampled_from(["Aggregated", "Weighted"]),
})
_application = st.fixed_dictionaries({}, optional={
    "decisionConditions": st.fixed_dictionaries({}, optional={"tolerationSeconds": st.integers(-5, 500)}),
    "purgeMode": st.sampled_from(["Directly", "Gracefully", "Never", "Immediately", "Graciously"]),
    "gracePeriodSeconds": st.integers(-1, 900),
    "blockPredecessorSeconds": st.integers(-1, 900),
})
_failover = st.fixed_dictionaries({}, optional={
    "application": _application,
    "cluster": st.fixed_dictionaries({}, optional={
        "purgeMode": st.sampled_from(["Directly", "Gracefully", "Immediately", "Graciously"]),
        "gracePeriodSeconds": st.integers(-1, 900)}),
})
_spec = st.fixed_dictionaries(
    {"resourceSelectors": st.lists(st.fixed_dictionaries(
        {"apiVersion": st.just("apps/v1"), "kind": st.just("Deployment")},
        optional={"name": st.sampled_from(["a", "b"]), "namespace": st.sampled_from(["", "default", "x"])}),
        min_size=1, max_size=2)},
    optional={
        "placement": st.fixed_dictionaries({}, optional={
            "clusterAffinity": st.fixed_dictionaries({"clusterNames": st.lists(_names, max_size=2)}),
            "spreadConstraints": st.lists(_spread, max_size=2),
            "replicaScheduling": _replica,
        }),
        "propagateDeps": st.booleans(),
        "failover": _failover,
        "suspendDispatching": st.booleans(),
        "suspension": st.fixed_dictionaries({}, optional={
            "dispatching": st.booleans(),
            "suspendDispatchingOnClusters": st.fixed_dictionaries({"clusterNames": st.lists(_names, max_size=2)}),
        }),
        "priority": st.integers(-3, 3),
    })
_policy = st.builds(
    lambda kind, ns, spec: {"apiVersion": "policy.karmada.io/v1alpha1", "kind": kind,
                            "metadata": {"name": "p", **({"namespace": ns} if ns else {})}, "spec": spec},
    st.sampled_from(["PropagationPolicy", "ClusterPropagationPolicy"]),
    st.sampled_from(["", "default", "team-a"]),
    _spec,
)


@settings(max_examples=150, deadline=None)
@given(_policy)
def test_property_default_idempotent_and_pure(obj):
    from karmactl.api.kinds import KindRegistry
    from karmactl.api.validation import validate_object

    before = copy.deepcopy(obj)
    normalized, _ = normalize_aliases(obj)
    once = default_object(normalized)
    assert default_object(once) == once
    assert obj == before
    # Normalizing again finds nothing to change, and validating raw or defaulted input agrees.
    assert normalize_aliases(once) == (once, [])
    reg = KindRegistry.default()
    raw_errs = validate_object(obj, reg)
    alias_errs = normalize_aliases(obj)[1]
    assert validate_object(once, reg) == [e for e in raw_errs if e not in alias_errs]


@given(st.lists(st.text(max_size=40), min_size=1, max_size=4))
def test_permanent_id_is_the_rfc4122_uuid5_of_the_key(parts):
    import uuid

    from karmactl.api.objects import _ID_NAMESPACE_BYTES, permanent_id

    namespace = uuid.UUID("6c1f8f0e-4a5b-5b8e-9a63-6b61726d6163")  # the ids files already hold
    assert _ID_NAMESPACE_BYTES == namespace.bytes
    assert permanent_id(*parts) == str(uuid.uuid5(namespace, "/".join(parts)))
