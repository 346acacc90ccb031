"""In-tree scheduler plugins, registered in one place.

Upstream's registry (``pkg/scheduler/framework/plugins/registry.go``) is a Go map, so the filter
order, and hence which failure reason a cluster reports, is random. karmactl fixes the order
below: APIEnablement, TaintToleration, ClusterAffinity, SpreadConstraint, ClusterEviction.
The WorkloadAffinity/WorkloadAntiAffinity filters (gate ``WorkloadAffinity``, off by default) read
the other bindings, so the scheduler step builds them per pass (:mod:`.workload_affinity`) and runs
them after these.
"""
from __future__ import annotations

from karmactl.scheduler.plugins.api_enablement import APIEnablement
from karmactl.scheduler.plugins.cluster_affinity import ClusterAffinity
from karmactl.scheduler.plugins.cluster_eviction import ClusterEviction
from karmactl.scheduler.plugins.cluster_locality import ClusterLocality
from karmactl.scheduler.plugins.spread_constraint import SpreadConstraint
from karmactl.scheduler.plugins.taint_toleration import TaintToleration

FILTER_PLUGINS = (APIEnablement(), TaintToleration(), ClusterAffinity(), SpreadConstraint(), ClusterEviction())
"""Filter plugins in evaluation order; the first failure is the reported reason."""

SCORE_PLUGINS = (ClusterLocality(), ClusterAffinity())
"""Score plugins; a cluster's score is the plain sum (0 or 100)."""

__all__ = ["FILTER_PLUGINS", "SCORE_PLUGINS", "APIEnablement", "TaintToleration", "ClusterAffinity",
           "SpreadConstraint", "ClusterEviction", "ClusterLocality"]
