"""ClusterLocality score: favour clusters that already run the resource.

Follows ``pkg/scheduler/framework/plugins/clusterlocality/cluster_locality.go``.
"""
from __future__ import annotations

from karmactl.scheduler.framework import MAX_CLUSTER_SCORE, MIN_CLUSTER_SCORE
from karmactl.scheduler.util import cluster_name, target_contains

NAME = "ClusterLocality"


class ClusterLocality:
    """100 when the cluster is in a non-empty ``spec.clusters``, else 0."""

    name = NAME

    def score(self, binding_spec: dict, cluster: dict) -> int:
        if binding_spec.get("clusters") and target_contains(binding_spec, cluster_name(cluster)):
            return MAX_CLUSTER_SCORE
        return MIN_CLUSTER_SCORE
