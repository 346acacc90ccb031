"""Small readers over binding and placement dicts shared by the scheduler modules.

Follows ``binding_types_helper.go`` of the work.karmada.io v1alpha2 API and
``pkg/apis/policy/v1alpha1/propagation_helper.go``; the defaults the admission webhook would have
applied (``replicaSchedulingType: Divided``, ``replicaDivisionPreference: Weighted``) are applied when
reading, because files never went through the webhook.
"""
from __future__ import annotations

MAX_INT32 = 2**31 - 1

DUPLICATED = "Duplicated"
DIVIDED = "Divided"
AGGREGATED = "Aggregated"
WEIGHTED = "Weighted"

# Assignment strategy names (pkg/scheduler/core/assignment.go).
DUPLICATED_STRATEGY = "Duplicated"
AGGREGATED_STRATEGY = "Aggregated"
STATIC_WEIGHT_STRATEGY = "StaticWeight"
DYNAMIC_WEIGHT_STRATEGY = "DynamicWeight"


def placement_of(spec: dict) -> dict:
    return spec.get("placement") or {}


def replicas_of(spec: dict) -> int:
    return int(spec.get("replicas") or 0)


def target_clusters(spec: dict) -> list[dict]:
    """``spec.clusters`` as ``[{"name", "replicas"}]`` with replicas defaulted to 0."""
    return [{"name": c.get("name", ""), "replicas": int(c.get("replicas") or 0)} for c in spec.get("clusters") or []]


def target_contains(spec: dict, name: str) -> bool:
    return any(c.get("name") == name for c in spec.get("clusters") or [])


def assigned_replicas_for(spec: dict, name: str) -> int:
    for c in spec.get("clusters") or []:
        if c.get("name") == name:
            return int(c.get("replicas") or 0)
    return 0


def is_workload(spec: dict) -> bool:
    """``replicas > 0`` or ``replicaRequirements`` present or at least one component."""
    return replicas_of(spec) > 0 or spec.get("replicaRequirements") is not None or len(spec.get("components") or []) >= 1


def multi_template_applicable(spec: dict) -> bool:
    """``isMultiTemplateSchedulingApplicable`` (``pkg/scheduler/core/estimation.go``): the binding
    has components and a spread constraint by cluster with ``minGroups == maxGroups == 1``.

    The gate ``MultiplePodTemplatesScheduling`` is not read here: the detector records
    ``spec.components`` only while it is on, so a binding with components is one the gate applies to.
    """
    if not spec.get("components"):
        return False
    return any(c.get("spreadByField") == "cluster" and c.get("minGroups") == 1 and c.get("maxGroups") == 1
               for c in placement_of(spec).get("spreadConstraints") or [] if isinstance(c, dict))


def replica_scheduling_type(placement: dict) -> str:
    """``Duplicated`` when ``replicaScheduling`` is absent, else its type (CRD default ``Divided``)."""
    rs = placement.get("replicaScheduling")
    if rs is None:
        return DUPLICATED
    return rs.get("replicaSchedulingType") or DIVIDED


def division_preference(placement: dict) -> str:
    """``replicaDivisionPreference`` with the webhook default ``Weighted``."""
    rs = placement.get("replicaScheduling") or {}
    return rs.get("replicaDivisionPreference") or WEIGHTED


def strategy_type(placement: dict) -> str:
    """The assignment strategy of 3.6.4: Duplicated, Aggregated, DynamicWeight or StaticWeight."""
    if replica_scheduling_type(placement) != DIVIDED:
        return DUPLICATED_STRATEGY
    if division_preference(placement) == AGGREGATED:
        return AGGREGATED_STRATEGY
    wp = (placement.get("replicaScheduling") or {}).get("weightPreference")
    if wp is not None and wp.get("dynamicWeight"):
        return DYNAMIC_WEIGHT_STRATEGY
    return STATIC_WEIGHT_STRATEGY


def is_static_weighted(placement: dict) -> bool:
    """Upstream ``shouldIgnoreSpreadConstraint``: Divided + Weighted with a nil weightPreference, or a
    non-empty staticWeightList and no dynamicWeight."""
    rs = placement.get("replicaScheduling")
    if rs is None or replica_scheduling_type(placement) != DIVIDED or division_preference(placement) != WEIGHTED:
        return False
    wp = rs.get("weightPreference")
    return wp is None or (bool(wp.get("staticWeightList")) and not wp.get("dynamicWeight"))


def cluster_in_eviction_tasks(spec: dict, name: str) -> bool:
    return any(t.get("fromCluster") == name for t in spec.get("gracefulEvictionTasks") or [])


def cluster_name(cluster: dict) -> str:
    return (cluster.get("metadata") or {}).get("name", "")


def cluster_spec(cluster: dict) -> dict:
    return cluster.get("spec") or {}


def cluster_zones(cluster: dict) -> list[str]:
    """``spec.zones``, falling back to the deprecated single ``spec.zone`` (the server would move it)."""
    spec = cluster_spec(cluster)
    zones = spec.get("zones")
    if zones:
        return list(zones)
    return [spec["zone"]] if spec.get("zone") else []


def is_deleting(obj: dict | None) -> bool:
    return bool(obj and (obj.get("metadata") or {}).get("deletionTimestamp"))


def active_affinity_term(placement: dict, observed_name: str) -> dict | None:
    """The ``clusterAffinities`` term whose ``affinityName`` equals ``observed_name`` (or None)."""
    for term in placement.get("clusterAffinities") or []:
        if term.get("affinityName") == observed_name:
            return term
    return None


def affinity_of_term(term: dict) -> dict:
    """The inline ClusterAffinity fields of a term (``affinityName``/``overflowAffinities`` dropped)."""
    return {k: v for k, v in term.items() if k not in ("affinityName", "overflowAffinities")}
