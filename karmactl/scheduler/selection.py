"""Cluster ordering and selection under spread constraints.

Follows ``pkg/scheduler/core/spreadconstraint/`` (``group_clusters.go``, ``select_clusters.go``,
``select_clusters_by_cluster.go``, ``select_clusters_by_region.go``, ``select_groups.go``) and
``pkg/scheduler/core/common.go`` (``SelectClusters``).

Determinism: upstream sorts with ``sort.Slice`` but every comparator ends with the cluster/region
name, so the orders are total; region grouping iterates a Go map but the result is sorted before
use. Python's sorts reproduce the same orders.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from karmactl.api.selectors import cluster_affinity_matches
from karmactl.scheduler.framework import SchedulingError
from karmactl.scheduler.util import (
    DUPLICATED, active_affinity_term, affinity_of_term, assigned_replicas_for, cluster_name,
    cluster_spec, is_static_weighted, placement_of, replica_scheduling_type, replicas_of,
)

WEIGHT_UNIT = 1000
INVALID_REPLICAS = -1
"""``needReplicas`` meaning "do not consider capacity" (Duplicated placements)."""


@dataclass
class ClusterDetail:
    """One feasible cluster as selection and assignment see it (upstream ``ClusterDetailInfo``).

    Attributes:
        name: cluster name.
        score: sum of plugin scores (0 or 100).
        overflow_order: 0 for the active affinity term, i+1 for its i-th overflow affinity.
        available: ``V_c`` replicas = allocatable + replicas currently assigned to it in ``spec.clusters``.
        allocatable: ``A_c`` replicas from the estimator.
        cluster: the Cluster object.
    """

    name: str
    score: int
    overflow_order: int
    available: int
    allocatable: int
    cluster: dict = field(repr=False, compare=False, default_factory=dict)


def sort_key(d: ClusterDetail):
    """overflowOrder ascending, score descending, available replicas descending, name ascending."""
    return (d.overflow_order, -d.score, -d.available, d.name)


def overflow_order(cluster: dict, spec: dict, status: dict) -> int:
    """``getClusterOverflowOrder``: 0 unless ``clusterAffinities`` is used; then 0 for the active term,
    ``i+1`` for the first matching overflow affinity, 1000 when nothing matches (cannot happen after
    the ClusterAffinity filter)."""
    placement = placement_of(spec)
    if placement.get("clusterAffinity") is not None or not placement.get("clusterAffinities"):
        return 0
    term = active_affinity_term(placement, (status or {}).get("schedulerObservingAffinityName") or "")
    if term is not None:
        if cluster_affinity_matches(affinity_of_term(term), cluster):
            return 0
        for i, overflow in enumerate(term.get("overflowAffinities") or []):
            if cluster_affinity_matches(affinity_of_term(overflow), cluster):
                return i + 1
    return 1000


def build_cluster_details(scored: list[tuple[dict, int]], spec: dict, status: dict,
                          allocatable: dict[str, int]) -> list[ClusterDetail]:
    """Cluster details for feasible ``(cluster, score)`` pairs, sorted by :func:`sort_key`.

    Args:
        allocatable: ``A_c`` per cluster name (see :func:`karmactl.scheduler.estimator.cal_available_replicas`).
    """
    details = []
    for cluster, score in scored:
        name = cluster_name(cluster)
        a = int(allocatable.get(name, 0))
        details.append(ClusterDetail(name=name, score=score, overflow_order=overflow_order(cluster, spec, status),
                                     available=a + assigned_replicas_for(spec, name), allocatable=a, cluster=cluster))
    details.sort(key=sort_key)
    return details


def _constraint(constraints: list[dict], by_field: str) -> dict | None:
    """The spread constraint for ``by_field``; the last one wins, as upstream builds a map."""
    found = None
    for c in constraints:
        if c.get("spreadByField") == by_field:
            found = c
    return found


def _groups(c: dict | None, key: str) -> int:
    return int((c or {}).get(key) or 0)


def select_best_clusters(spec: dict, details: list[ClusterDetail], need_replicas: int) -> list[ClusterDetail]:
    """``SelectBestClusters``: all clusters without spread constraints or for static weights; else
    selection by region (if a region constraint exists) or by cluster.

    Args:
        spec: the binding spec (its ``placement``; ``replicas`` for region scores).
        details: feasible clusters sorted by :func:`sort_key`.
        need_replicas: ``spec.replicas`` for Divided; ignored (capacity not considered) for Duplicated.

    Raises:
        SchedulingError: the upstream messages (``just support cluster and region spread constraint``,
            ``the number of feasible clusters is less than spreadConstraint.MinGroups``, ...).
    """
    placement = placement_of(spec)
    constraints = placement.get("spreadConstraints") or []
    if not constraints or is_static_weighted(placement):
        return list(details)
    if placement.get("replicaScheduling") is None or replica_scheduling_type(placement) == DUPLICATED:
        need_replicas = INVALID_REPLICAS
    region = _constraint(constraints, "region")
    by_cluster = _constraint(constraints, "cluster")
    if region is not None:
        return select_by_region(region, by_cluster, details, spec)
    if by_cluster is not None:
        return select_by_cluster(by_cluster, details, need_replicas)
    raise SchedulingError("just support cluster and region spread constraint")


def select_by_cluster(constraint: dict, details: list[ClusterDetail], need_replicas: int) -> list[ClusterDetail]:
    """Spread by cluster: ``k = min(feasible, maxGroups)`` clusters (``maxGroups`` is not defaulted, 0
    selects none); when capacity matters, swap in larger clusters from the back until the total
    ``V`` covers ``need_replicas``."""
    total = len(details)
    if total < _groups(constraint, "minGroups"):
        raise SchedulingError("the number of feasible clusters is less than spreadConstraint.MinGroups")
    need = min(total, _groups(constraint, "maxGroups"))
    if need_replicas == INVALID_REPLICAS:
        return list(details[:need])
    selected = _select_by_available_resource(details, need, need_replicas)
    if not selected:
        raise SchedulingError(f"no enough resource when selecting {need} clusters")
    return selected


def _select_by_available_resource(details: list[ClusterDetail], need: int, need_replicas: int) -> list[ClusterDetail]:
    chosen = list(details[:need])
    rest = list(details[need:])
    position = len(chosen) - 1
    while sum(d.available for d in chosen) < need_replicas and position >= 0:
        # the strictly largest V among the rest, first one on equal V
        best, best_v = -1, chosen[position].available
        for i, d in enumerate(rest):
            if d.available > best_v:
                best, best_v = i, d.available
        if best >= 0:
            chosen[position], rest[best] = rest[best], chosen[position]
        position -= 1
    if sum(d.available for d in chosen) < need_replicas:
        return []
    return chosen


@dataclass
class _Region:
    name: str
    clusters: list[ClusterDetail]
    score: int = 0


def group_score(clusters: list[ClusterDetail], spec: dict, min_groups: int) -> int:
    """``calcGroupScore`` of one region (clusters in :func:`sort_key` order).

    Duplicated: ``validClusters*1000 + avg score of valid clusters`` where valid means ``V >= replicas``.
    Divided: walk clusters accumulating V until ``max(cluster minGroups, min_groups)`` clusters are taken
    and ``V >= ceil(replicas / min_groups)``. ``min_groups`` 0 (no webhook defaulting) is read as 1.
    """
    placement = placement_of(spec)
    replicas = replicas_of(spec)
    if replica_scheduling_type(placement) == DUPLICATED:
        valid = [c for c in clusters if c.available >= replicas]
        if not valid:
            return 0
        return len(valid) * WEIGHT_UNIT + sum(c.score for c in valid) // len(valid)
    min_groups = max(1, min_groups)
    target = math.ceil(replicas / min_groups)
    cluster_min = 0
    for c in placement.get("spreadConstraints") or []:
        if c.get("spreadByField") == "cluster":
            cluster_min = _groups(c, "minGroups")
    cluster_min = max(cluster_min, min_groups)
    sum_v = sum_score = taken = 0
    for c in clusters:
        sum_v += c.available
        sum_score += c.score
        taken += 1
        if taken >= cluster_min and sum_v >= target:
            break
    if sum_v < target:
        return sum_v * WEIGHT_UNIT + sum_score // len(clusters)
    return target * WEIGHT_UNIT + sum_score // taken


def select_by_region(region_c: dict, cluster_c: dict | None, details: list[ClusterDetail],
                     spec: dict) -> list[ClusterDetail]:
    """Spread by region (3.6.3): pick a region combination, then the best cluster of each region, then
    fill up to ``min(clusters in those regions, cluster maxGroups)`` (0 without a cluster constraint).
    Capacity is not re-checked here."""
    by_name: dict[str, _Region] = {}
    for d in details:
        region = cluster_spec(d.cluster).get("region")
        if region:
            by_name.setdefault(region, _Region(region, [])).clusters.append(d)
    if len(by_name) < _groups(region_c, "minGroups"):
        raise SchedulingError("the number of feasible region is less than spreadConstraint.MinGroups")
    for region in by_name.values():
        region.score = group_score(region.clusters, spec, _groups(region_c, "minGroups"))
    chosen = _select_regions(list(by_name.values()), _groups(region_c, "minGroups"), _groups(region_c, "maxGroups"),
                             _groups(cluster_c, "minGroups"))
    if not chosen:
        raise SchedulingError("the number of clusters is less than the cluster spreadConstraint.MinGroups")
    selected = [r.clusters[0] for r in chosen]
    candidates = [c for r in chosen for c in r.clusters[1:]]
    need = min(len(candidates) + len(selected), _groups(cluster_c, "maxGroups"))
    rest = need - len(selected)
    if rest > 0:
        candidates.sort(key=sort_key)
        selected.extend(candidates[:rest])
    return selected


def _select_regions(regions: list[_Region], min_c: int, max_c: int, target: int) -> list[_Region]:
    """``selectGroups``: DFS over regions sorted by (cluster count asc, score desc, name asc) for paths
    whose length is within [min_c, max_c] and whose cluster count reaches ``target``; best path by
    total score, then cluster count, then discovery order; a feasible strict prefix of it wins."""
    if not regions:
        return []
    groups = sorted(regions, key=lambda r: (len(r.clusters), -r.score, r.name))
    paths: list[tuple[int, list[_Region]]] = []  # (id, groups sorted by score desc, name)
    stack: list[_Region] = []

    def dfs(total: int, begin: int) -> None:
        if total >= target and min_c <= len(stack) <= max_c:
            path = sorted(stack, key=lambda r: (-r.score, r.name))
            paths.append((len(paths), path))
            return
        if len(stack) >= max_c:
            return
        for i in range(begin, len(groups)):
            total += len(groups[i].clusters)
            stack.append(groups[i])
            dfs(total, i + 1)
            # upstream quirk: with exactly min_c groups there is one combination, stop backtracking
            if len(groups) == min_c:
                break
            total -= len(groups[i].clusters)
            stack.pop()

    dfs(0, 0)
    if not paths:
        return []
    if len(paths) == 1:
        return paths[0][1]
    ranked = sorted(paths, key=lambda p: (-sum(r.score for r in p[1]), -sum(len(r.clusters) for r in p[1]), p[0]))
    final = ranked[0][1]
    for _, candidate in ranked[1:]:
        if len(candidate) < len(final) and all(final[i].name == g.name for i, g in enumerate(candidate)):
            final = candidate
    return final
