"""ClusterEviction filter: keeps clusters with a pending graceful eviction task out of new placements.

Follows ``pkg/scheduler/framework/plugins/clustereviction/cluster_eviction.go``, plus the design
document ``proposals/application-failover.md`` (DESIGN §3.2): clusters in the binding's active
eviction history (``activeEvictionHistory`` entries ``{clusterName, creationTimestamp}``, written by
application failover) are filtered out too. The filter has no clock: expired history entries are
removed by ``karmactl/controllers/application_failover.py`` before the scheduler runs.
"""
from __future__ import annotations

from karmactl.scheduler.framework import SUCCESS, FilterResult
from karmactl.scheduler.util import cluster_in_eviction_tasks, cluster_name

NAME = "ClusterEviction"
REASON = "cluster(s) is in the process of eviction"
HISTORY_REASON = "cluster(s) is in the active eviction history"


def cluster_in_eviction_history(binding_spec: dict, binding_status: dict, name: str) -> bool:
    """Whether ``name`` has an ``activeEvictionHistory`` entry (spec, as the design document places it,
    or status, where karmactl keeps it: see ``application_failover``)."""
    for holder in (binding_spec, binding_status):
        if any(e.get("clusterName") == name for e in (holder or {}).get("activeEvictionHistory") or []):
            return True
    return False


class ClusterEviction:
    """Fails while ``spec.gracefulEvictionTasks`` has a task whose ``fromCluster`` is this cluster (the
    cluster becomes schedulable again once the graceful-eviction controller drops the task), or while
    the cluster is in the binding's active eviction history."""

    name = NAME

    def filter(self, binding_spec: dict, binding_status: dict, cluster: dict) -> FilterResult:
        if cluster_in_eviction_tasks(binding_spec, cluster_name(cluster)):
            return FilterResult(False, REASON)
        if cluster_in_eviction_history(binding_spec, binding_status, cluster_name(cluster)):
            return FilterResult(False, HISTORY_REASON)
        return SUCCESS
