"""Replica assignment over the selected clusters.

Follows ``pkg/scheduler/core/common.go`` (``AssignReplicas``, ``assignWorkloadReplicas`` with overflow
tiers), ``pkg/scheduler/core/assignment.go`` (strategies, Steady/Fresh modes) and
``pkg/scheduler/core/division_algorithm.go`` (static weights, dynamic scale up/down/fresh, Aggregated).

Results are lists of ``{"name": str, "replicas": int}``. Determinism notes:

* weight lists are sorted by weight descending with a *stable* sort (upstream's ``sort.Sort`` is an
  insertion sort, hence stable, below 13 clusters; above that Go may permute equal weights);
* ``MergeTargetClusters`` appends untouched previous clusters in Go map order; karmactl appends them
  in name order (and :mod:`karmactl.scheduler.core` finally sorts the whole result by name).
"""
from __future__ import annotations

from karmactl.api.objects import parse_time
from karmactl.api.selectors import cluster_affinity_matches
from karmactl.scheduler.framework import SchedulingError, UnschedulableError
from karmactl.scheduler.selection import ClusterDetail
from karmactl.scheduler.util import (
    AGGREGATED_STRATEGY, DUPLICATED_STRATEGY, STATIC_WEIGHT_STRATEGY, active_affinity_term,
    multi_template_applicable, placement_of, replicas_of, strategy_type, target_clusters,
)
from karmactl.scheduler.webster import allocate_webster_seats

STEADY = "Steady"
FRESH = "Fresh"


def reschedule_required(spec: dict, status: dict) -> bool:
    """``util.RescheduleRequired``: ``rescheduleTriggeredAt`` strictly after ``lastScheduledTime``
    (False when either is missing: a binding never scheduled successfully just waits)."""
    triggered = spec.get("rescheduleTriggeredAt")
    last = (status or {}).get("lastScheduledTime")
    if not triggered or not last:
        return False
    return parse_time(triggered) > parse_time(last)


def _tie_uid(spec: dict) -> str:
    return (spec.get("resource") or {}).get("uid") or ""


def _targets(seats: dict[str, int]) -> list[dict]:
    return [{"name": n, "replicas": r} for n, r in seats.items()]


def assign_replicas(clusters: list[ClusterDetail], spec: dict, status: dict) -> list[dict]:
    """``AssignReplicas``: the scheduling result for the selected clusters.

    Workloads (replicas > 0 or requirements, at most one component) go through the strategy (with
    overflow tiers when the active ``clusterAffinities`` term has ``overflowAffinities``) and lose
    0-replica targets; other bindings get every selected cluster with 0 replicas.

    Raises:
        SchedulingError: ``no clusters available to schedule``.
        UnschedulableError: not enough capacity for dynamic/Aggregated division.
    """
    if not clusters:
        raise SchedulingError("no clusters available to schedule")
    components = spec.get("components") or []
    if (replicas_of(spec) > 0 or spec.get("replicaRequirements") is not None) and len(components) <= 1:
        return _assign_workload(clusters, spec, status)
    if len(components) > 1 and multi_template_applicable(spec):
        # multi-component workloads are not divided: each target runs one whole set
        return [{"name": c.name, "replicas": 0,
                 "components": [{"name": comp["name"], "replicas": int(comp.get("replicas") or 0)}
                                for comp in components]} for c in clusters]
    return [{"name": c.name, "replicas": 0} for c in clusters]


def _overflow_enabled(spec: dict, status: dict) -> bool:
    placement = placement_of(spec)
    observed = (status or {}).get("schedulerObservingAffinityName") or ""
    if placement.get("clusterAffinity") is not None or placement.get("clusterAffinities") is None or not observed:
        return False
    term = active_affinity_term(placement, observed)
    return term is not None and term.get("overflowAffinities") is not None


def _assign_workload(clusters: list[ClusterDetail], spec: dict, status: dict) -> list[dict]:
    if not _overflow_enabled(spec, status):
        return _assign_to_clusters(clusters, spec, status)
    tiers: dict[int, list[ClusterDetail]] = {}
    for c in clusters:
        tiers.setdefault(c.overflow_order, []).append(c)
    remaining = replicas_of(spec)
    results: list[dict] = []
    for order in sorted(tiers):
        tier = tiers[order]
        tier_spec = dict(spec)
        tier_spec["replicas"] = min(remaining, sum(c.available for c in tier))
        results.extend(_assign_to_clusters(tier, tier_spec, status))
        remaining -= tier_spec["replicas"]
        if remaining <= 0:
            break
    if remaining > 0:
        raise UnschedulableError("Clusters available replicas are not enough to schedule.")
    return results


def _assign_to_clusters(clusters: list[ClusterDetail], spec: dict, status: dict) -> list[dict]:
    strategy = strategy_type(placement_of(spec))
    if strategy == DUPLICATED_STRATEGY:
        result = [{"name": c.name, "replicas": replicas_of(spec)} for c in clusters]
    elif strategy == STATIC_WEIGHT_STRATEGY:
        result = assign_static_weight(clusters, spec)
    else:
        mode = FRESH if reschedule_required(spec, status) else STEADY
        result = assign_dynamic(clusters, spec, strategy, mode)
    return [t for t in result if t["replicas"] > 0]


def static_weights(clusters: list[ClusterDetail], placement: dict) -> list[tuple[str, int]]:
    """``getStaticWeightInfoList``: per cluster the maximum weight of the matching ``staticWeightList``
    rules; unmatched clusters are dropped; if nothing matched (or no weightPreference) weight 1 each."""
    wp = (placement.get("replicaScheduling") or {}).get("weightPreference")
    if wp is None:
        return [(c.name, 1) for c in clusters]
    out = []
    for c in clusters:
        weight = 0
        for rule in wp.get("staticWeightList") or []:
            if cluster_affinity_matches(rule.get("targetCluster") or {}, c.cluster):
                weight = max(weight, int(rule.get("weight") or 0))
        if weight > 0:
            out.append((c.name, weight))
    if sum(w for _, w in out) == 0:
        out = [(c.name, 1) for c in clusters]
    return out


def assign_static_weight(clusters: list[ClusterDetail], spec: dict) -> list[dict]:
    """Static weight: Webster-apportion ``spec.replicas`` from zero by :func:`static_weights`.

    The previous result and cluster capacity are not consulted. Result in name order, zeros kept
    (the caller drops them)."""
    weights = static_weights(clusters, placement_of(spec))
    seats = allocate_webster_seats(replicas_of(spec), [(n, w, 0) for n, w in weights], _tie_uid(spec))
    return _targets(seats)


def assign_dynamic(clusters: list[ClusterDetail], spec: dict, strategy: str, mode: str) -> list[dict]:
    """Dynamic weight and Aggregated (``assignByDynamicStrategy``).

    ``scheduled`` = previous targets still among ``clusters``. Fresh: weights ``A_c + previous``, target
    ``replicas``, from scratch. Steady: scale down (assigned > replicas) divides ``replicas`` by the
    current replicas of ``scheduled``; scale up divides ``replicas - assigned`` by ``A_c`` and adds the
    seats to ``scheduled``; equal returns ``scheduled`` as is.

    Raises:
        UnschedulableError: ``failed to ...: Clusters available replicas N are not enough to schedule.``
    """
    names = {c.name for c in clusters}
    scheduled = [t for t in target_clusters(spec) if t["name"] in names]
    assigned = sum(t["replicas"] for t in scheduled)
    replicas = replicas_of(spec)
    if mode == FRESH:
        previous = {t["name"]: t["replicas"] for t in scheduled}
        available = [(c.name, c.allocatable + previous.get(c.name, 0)) for c in clusters]
        return _divide(strategy, spec, replicas, _by_weight_desc(available), [], "failed to do fresh scale: ")
    if assigned > replicas:
        available = [(t["name"], t["replicas"]) for t in scheduled]
        return _divide(strategy, spec, replicas, _by_weight_desc(available), [], "failed to scale down: ")
    if assigned < replicas:
        available = [(c.name, c.allocatable) for c in clusters]
        return _divide(strategy, spec, replicas - assigned, _by_weight_desc(available), scheduled, "failed to scale up: ")
    return scheduled


def _by_weight_desc(weights: list[tuple[str, int]]) -> list[tuple[str, int]]:
    return sorted(weights, key=lambda nw: -nw[1])  # stable: equal weights keep the candidate order


def _divide(strategy: str, spec: dict, target: int, available: list[tuple[str, int]], scheduled: list[dict],
            prefix: str) -> list[dict]:
    """``dynamicDivideReplicas``: capacity check, Aggregated prefix cut, Webster, merge with ``scheduled``."""
    total = sum(w for _, w in available)
    if total < target:
        raise UnschedulableError(f"{prefix}Clusters available replicas {total} are not enough to schedule.")
    if strategy == AGGREGATED_STRATEGY:
        prior = {t["name"] for t in scheduled if t["replicas"] > 0}
        if prior:
            # clusters already running replicas come first so scale-up tops them up before adding new ones
            available = [a for a in available if a[0] in prior] + [a for a in available if a[0] not in prior]
        running = 0
        for i, (_, weight) in enumerate(available):
            running += weight
            if running >= target:
                available = available[:i + 1]
                break
    if total == 0 or sum(w for _, w in available) == 0:
        new: list[dict] = []  # Dispenser.AllocateByWeight returns nothing when the weights sum to 0
    else:
        new = _targets(allocate_webster_seats(target, [(n, w, 0) for n, w in available], _tie_uid(spec)))
    return merge_target_clusters(scheduled, new)


def merge_target_clusters(old: list[dict], new: list[dict]) -> list[dict]:
    """``util.MergeTargetClusters``: ``new`` with old replicas added; old-only clusters appended in name
    order (upstream: Go map order)."""
    if not old:
        return [dict(t) for t in new]
    if not new:
        return [dict(t) for t in old]
    old_map = {t["name"]: t["replicas"] for t in old}
    merged = []
    for t in new:
        merged.append({"name": t["name"], "replicas": t["replicas"] + old_map.pop(t["name"], 0)})
    merged.extend({"name": n, "replicas": old_map[n]} for n in sorted(old_map))
    return merged
