"""ClusterEviction filter: keeps clusters with a pending graceful eviction task out of new placements.

Follows ``pkg/scheduler/framework/plugins/clustereviction/cluster_eviction.go``.
"""
from __future__ import annotations

from karmactl.scheduler.framework import SUCCESS, FilterResult
from karmactl.scheduler.util import cluster_in_eviction_tasks, cluster_name

NAME = "ClusterEviction"
REASON = "cluster(s) is in the process of eviction"


class ClusterEviction:
    """Fails while ``spec.gracefulEvictionTasks`` has a task whose ``fromCluster`` is this cluster; the
    cluster becomes schedulable again once the graceful-eviction controller drops the task."""

    name = NAME

    def filter(self, binding_spec: dict, binding_status: dict, cluster: dict) -> FilterResult:
        if cluster_in_eviction_tasks(binding_spec, cluster_name(cluster)):
            return FilterResult(False, REASON)
        return SUCCESS
