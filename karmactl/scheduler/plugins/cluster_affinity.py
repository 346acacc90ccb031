"""ClusterAffinity filter and (zero) score.

Follows ``pkg/scheduler/framework/plugins/clusteraffinity/cluster_affinity.go``; matching is
``util.ClusterMatches`` (:func:`karmactl.api.selectors.cluster_affinity_matches`).
"""
from __future__ import annotations

from karmactl.api.selectors import cluster_affinity_matches
from karmactl.scheduler.framework import MIN_CLUSTER_SCORE, SUCCESS, FilterResult
from karmactl.scheduler.util import active_affinity_term, affinity_of_term, is_workload

NAME = "ClusterAffinity"
REASON = "cluster(s) did not match the placement cluster affinity constraint"


def affinities_for(binding_spec: dict, binding_status: dict) -> list[dict] | None:
    """The affinities a cluster may match: ``[clusterAffinity]``; or the active ``clusterAffinities`` term
    plus (for workloads) its overflow tiers; or None when the placement has neither (all pass).

    The active term is the one named by ``status.schedulerObservingAffinityName`` of this attempt; if
    no term has that name upstream collects no affinity and lets every cluster pass, and so do we."""
    placement = binding_spec.get("placement") or {}
    if placement.get("clusterAffinity") is not None:
        return [placement["clusterAffinity"]]
    terms = placement.get("clusterAffinities")
    if not terms:
        return None
    term = active_affinity_term(placement, (binding_status or {}).get("schedulerObservingAffinityName") or "")
    if term is None:
        return None
    out = [affinity_of_term(term)]
    # Overflow tiers exist to find compute capacity; non-workloads (Service, ConfigMap) never overflow.
    if is_workload(binding_spec):
        out.extend(affinity_of_term(o) for o in term.get("overflowAffinities") or [])
    return out


class ClusterAffinity:
    """Filter: the cluster must match one of :func:`affinities_for`. Score: always 0."""

    name = NAME

    def filter(self, binding_spec: dict, binding_status: dict, cluster: dict) -> FilterResult:
        affinities = affinities_for(binding_spec, binding_status)
        if affinities is None:
            return SUCCESS
        if any(cluster_affinity_matches(a, cluster) for a in affinities):
            return SUCCESS
        return FilterResult(False, REASON)

    def score(self, binding_spec: dict, cluster: dict) -> int:
        return MIN_CLUSTER_SCORE
