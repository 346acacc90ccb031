"""General replica estimator: how many replicas of a workload fit into a cluster.

Follows ``pkg/estimator/client/general.go`` (``GeneralEstimator.maxAvailableReplicas``) with the
model-based branch (``getMaximumReplicasBasedOnResourceModels``, ``buildModelNodes``) and the
first-fit ``SchedulingSimulator`` of ``pkg/estimator/scheduling_simulator_components.go``, plus
``calAvailableReplicas`` of ``pkg/scheduler/core/util.go``. The optional gRPC scheduler-estimator is
not modelled (karmactl only has the general estimator). Gate ``CustomizedClusterResourceModeling`` is
taken as on (its default); ``SchedulingOvercommitProtection`` as off.
"""
from __future__ import annotations

import math
from fractions import Fraction

from karmactl.api.quantity import QuantityError, parse_quantity
from karmactl.scheduler.util import MAX_INT32, cluster_name, multi_template_applicable, replicas_of

MAX_PODS_PER_NODE = 110
_MAX_INT64 = 2**63 - 1


def _q(value) -> Fraction:
    """A quantity as a Fraction; unparsable values count as 0 (upstream would have rejected them)."""
    if value is None:
        return Fraction(0)
    if isinstance(value, Fraction):
        return value
    try:
        return parse_quantity(value)
    except QuantityError:
        return Fraction(0)


def _value(amount: Fraction) -> int:
    """Quantity.Value(): whole units rounded up (away from zero for positives, as Go)."""
    return math.ceil(amount)


def _milli(amount: Fraction) -> int:
    """Quantity.MilliValue(): milli-units rounded up."""
    return math.ceil(amount * 1000)


def allowed_pod_number(summary: dict) -> int:
    """``allocatable.pods - allocated.pods - allocating.pods`` floored at 0 (missing entries count 0)."""
    def pods(key: str) -> int:
        return _value(_q((summary.get(key) or {}).get("pods")))
    allowed = pods("allocatable") - pods("allocated") - pods("allocating")
    return allowed if allowed > 0 else 0


def replicas_by_summary(summary: dict, resource_request: dict) -> int:
    """Summary-based estimate: min over requested resources of ``floor(available / request)``.

    CPU compares milli-units, everything else whole units. A requested resource missing from
    ``allocatable``, or with nothing left, yields 0. Returns MaxInt64 when nothing positive is requested.
    """
    best = _MAX_INT64
    allocatable = summary.get("allocatable") or {}
    allocated = summary.get("allocated") or {}
    allocating = summary.get("allocating") or {}
    for name, value in (resource_request or {}).items():
        request = _q(value)
        requested = _value(request)
        if requested <= 0:
            continue
        if name not in allocatable:
            return 0
        available = _q(allocatable[name])
        if name in allocated:
            available -= _q(allocated[name])
        if name in allocating:
            available -= _q(allocating[name])
        have = _value(available)
        if have <= 0:
            return 0
        if name == "cpu":
            requested, have = _milli(request), _milli(available)
        best = min(best, have // requested)
    return best


def _is_scalar_resource(name: str) -> bool:
    """Kubernetes ``IsScalarResourceName``: extended (domain-prefixed, not ``kubernetes.io/``), hugepages,
    attachable volumes and native ``kubernetes.io/`` prefixed resources; plain unknown names are not."""
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    return "/" in name


def _resource_vector(resource_list: dict) -> dict[str, int]:
    """util.NewResource: cpu in milli-units, memory/ephemeral-storage/pods/scalars in whole units."""
    vec: dict[str, int] = {}
    for name, value in (resource_list or {}).items():
        amount = _q(value)
        if name == "cpu":
            vec["cpu"] = vec.get("cpu", 0) + _milli(amount)
        elif name in ("memory", "pods", "ephemeral-storage") or _is_scalar_resource(name):
            vec[name] = vec.get(name, 0) + _value(amount)
    return vec


def _max_divided(node: dict[str, int], request: dict[str, int]) -> int:
    """Resource.MaxDivided: how many requests fit in the node; pods always bound it."""
    best = _MAX_INT64
    for name, amount in request.items():
        if name == "pods" or amount <= 0:
            continue
        best = min(best, node.get(name, 0) // amount)
    return min(best, node.get("pods", 0))


class ModelError(ValueError):
    """The cluster's resource models cannot be used (upstream falls back to the summary estimate)."""


def build_model_nodes(cluster: dict) -> list[dict[str, int]]:
    """Virtual nodes: for each grade present in ``spec.resourceModels`` and with a positive count in
    ``status.resourceSummary.allocatableModelings``, ``count`` nodes whose capacity is each range's
    ``min`` plus 110 pods; grades ascending.

    Raises:
        ModelError: no resource models, or a negative count.
    """
    models = (cluster.get("spec") or {}).get("resourceModels") or []
    summary = (cluster.get("status") or {}).get("resourceSummary")
    if summary is None:
        raise ModelError("resource summary is nil")
    if not models:
        raise ModelError("no resource models defined")
    capacity_by_grade: dict[int, dict[str, int]] = {}
    for model in models:
        template = {r.get("name"): r.get("min") for r in model.get("ranges") or []}
        vec = _resource_vector(template)
        vec["pods"] = MAX_PODS_PER_NODE
        capacity_by_grade[int(model.get("grade") or 0)] = vec
    counts: dict[int, int] = {}
    for modeling in summary.get("allocatableModelings") or []:
        count = int(modeling.get("count") or 0)
        if count < 0:
            raise ModelError(f"negative node count for grade {modeling.get('grade')}")
        grade = int(modeling.get("grade") or 0)
        counts[grade] = counts.get(grade, 0) + count
    nodes = []
    for grade in sorted(capacity_by_grade):
        for _ in range(counts.get(grade, 0)):
            nodes.append(dict(capacity_by_grade[grade]))
    return nodes


def replicas_by_models(cluster: dict, resource_request: dict) -> int:
    """Model-based estimate: replicas placed one by one, first fit, on :func:`build_model_nodes`.

    Node affinity and tolerations are ignored (virtual nodes carry no labels or taints). Each replica
    needs its request and one pod; since replicas are identical, first fit places
    ``MaxDivided(node)`` replicas on each node in turn. Capped at MaxInt32.

    Raises:
        ModelError: see :func:`build_model_nodes`.
    """
    request = _resource_vector(resource_request)
    request["pods"] = 1
    total = sum(_max_divided(node, request) for node in build_model_nodes(cluster))
    return min(total, MAX_INT32)


def max_available_replicas(cluster: dict, replica_requirements: dict | None) -> int:
    """General estimator for one cluster (replicas, >= 0, capped at MaxInt32).

    1. no ``status.resourceSummary`` -> 0; 2. no pods left -> 0; 3. no requirements -> allowed pods;
    4. ``allocatableModelings`` non-empty -> ``min(allowed pods, model estimate)`` unless the models
    are unusable; 5. else ``min(allowed pods, summary estimate)``.
    """
    summary = (cluster.get("status") or {}).get("resourceSummary")
    if summary is None:
        return 0
    maximum = allowed_pod_number(summary)
    if maximum <= 0:
        return 0
    if replica_requirements is None:
        return min(maximum, MAX_INT32)
    request = replica_requirements.get("resourceRequest") or {}
    if summary.get("allocatableModelings"):
        try:
            return min(maximum, replicas_by_models(cluster, request), MAX_INT32)
        except ModelError:
            pass  # upstream logs and falls back to the summary
    return min(maximum, replicas_by_summary(summary, request), MAX_INT32)


def _quantity_as_int(value) -> int:
    """``quantityAsInt64``: milli-units for decimal quantities (``500m``, ``2``, ``1G``), whole units
    for binary ones (``1Gi``)."""
    amount = _q(value)
    binary = isinstance(value, str) and value.rstrip().endswith("i")
    return _value(amount) if binary else _milli(amount)


def max_available_component_sets(cluster: dict, components: list[dict]) -> int:
    """How many whole sets of ``components`` fit into a cluster (``GeneralEstimator.
    maxAvailableComponentSets``, ``pkg/estimator/client/general.go``), >= 0.

    The allowed pods bound the sets by the pods of one set (the sum of component replicas); every
    resource one set requests (each component's request times its replicas, as ``quantityAsInt64``)
    bounds them by what is left of it (allocatable - allocated - allocating); a requested resource
    with nothing left gives 0. A set of no pods: the allowed pods. With resource models
    (``allocatableModelings``), sets are also placed one by one on the model nodes, first fit.
    """
    summary = (cluster.get("status") or {}).get("resourceSummary")
    if summary is None:
        return 0
    allowed = allowed_pod_number(summary)
    if allowed <= 0:
        return 0
    pods_per_set = sum(int(c.get("replicas") or 0) for c in components)
    if pods_per_set <= 0:
        return min(allowed, MAX_INT32)
    sets = min(allowed // pods_per_set, MAX_INT32)
    per_set: dict[str, int] = {}
    for comp in components:
        for name, value in (((comp.get("replicaRequirements") or {}).get("resourceRequest")) or {}).items():
            per_set[name] = per_set.get(name, 0) + _quantity_as_int(value) * int(comp.get("replicas") or 0)
    for name, need in per_set.items():
        if need <= 0:
            continue
        left = _available_as_int(summary, name)
        if left <= 0:
            return 0
        sets = min(sets, left // need)
    if summary.get("allocatableModelings"):
        try:
            sets = min(sets, sets_by_models(cluster, components, sets))
        except ModelError:
            pass  # upstream logs and keeps the summary estimate
    return sets


def _available_as_int(summary: dict, name: str) -> int:
    if name not in (summary.get("allocatable") or {}):
        return 0
    raw = summary["allocatable"][name]
    amount = _q(raw) - _q((summary.get("allocated") or {}).get(name)) - _q((summary.get("allocating") or {}).get(name))
    binary = isinstance(raw, str) and raw.rstrip().endswith("i")
    return _value(amount) if binary else _milli(amount)


def sets_by_models(cluster: dict, components: list[dict], upper: int) -> int:
    """Whole sets placed one after another on :func:`build_model_nodes`, each pod first fit
    (``SchedulingSimulator.SimulateScheduling``), at most ``upper``.

    Raises:
        ModelError: see :func:`build_model_nodes`.
    """
    nodes = build_model_nodes(cluster)
    pods = []
    for comp in components:
        request = _resource_vector(((comp.get("replicaRequirements") or {}).get("resourceRequest")) or {})
        request["pods"] = 1
        pods += [request] * int(comp.get("replicas") or 0)
    placed = 0
    while placed < upper:
        trial = [dict(n) for n in nodes]
        for pod in pods:
            node = next((n for n in trial if all(n.get(k, 0) >= v for k, v in pod.items())), None)
            if node is None:
                return placed
            for k, v in pod.items():
                node[k] = node.get(k, 0) - v
        nodes = trial
        placed += 1
    return placed


def cal_available_replicas(clusters: list[dict], spec: dict) -> dict[str, int]:
    """Allocatable replicas ``A_c`` per cluster name (``calAvailableReplicas``).

    Non-workloads (``replicas == 0`` and no components) get MaxInt32 without estimation. A
    binding scheduled as a whole set of components (:func:`karmactl.scheduler.util.
    multi_template_applicable`) gets the sets that fit (:func:`max_available_component_sets`);
    others the general estimator's replicas. A value still at MaxInt32 is replaced by ``spec.replicas``.
    """
    if replicas_of(spec) == 0 and not spec.get("components"):
        return {cluster_name(c): MAX_INT32 for c in clusters}
    requirements = spec.get("replicaRequirements")
    sets = multi_template_applicable(spec)
    out = {}
    for cluster in clusters:
        value = (max_available_component_sets(cluster, spec["components"]) if sets
                 else max_available_replicas(cluster, requirements))
        out[cluster_name(cluster)] = replicas_of(spec) if value == MAX_INT32 else value
    return out
