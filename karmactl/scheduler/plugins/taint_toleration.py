"""TaintToleration filter: NoSchedule/NoExecute taints must be tolerated by ``placement.clusterTolerations``.

Follows ``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`` (Kubernetes
``FindMatchingUntoleratedTaint`` with comparison operators disabled).
"""
from __future__ import annotations

from karmactl.api.selectors import taint_string, toleration_tolerates
from karmactl.scheduler.framework import SUCCESS, FilterResult
from karmactl.scheduler.util import target_contains

NAME = "TaintToleration"
_EFFECTS = ("NoSchedule", "NoExecute")


def first_untolerated_taint(taints: list[dict], tolerations: list[dict]) -> dict | None:
    """The first NoSchedule/NoExecute taint (in ``spec.taints`` order) that no toleration tolerates."""
    for taint in taints or []:
        if taint.get("effect") not in _EFFECTS:
            continue  # PreferNoSchedule is only a preference, ignored by the filter
        if not any(toleration_tolerates(t, taint) for t in tolerations or []):
            return taint
    return None


class TaintToleration:
    """Clusters already in ``spec.clusters`` pass: an existing placement on a newly tainted cluster is
    the taint manager's business (NoExecute eviction after tolerationSeconds), not the scheduler's."""

    name = NAME

    def filter(self, binding_spec: dict, binding_status: dict, cluster: dict) -> FilterResult:
        name = (cluster.get("metadata") or {}).get("name", "")
        if target_contains(binding_spec, name):
            return SUCCESS
        placement = binding_spec.get("placement") or {}
        taint = first_untolerated_taint((cluster.get("spec") or {}).get("taints"), placement.get("clusterTolerations"))
        if taint is None:
            return SUCCESS
        return FilterResult(False, f"cluster(s) had untolerated taint {{{taint_string(taint)}}}")
