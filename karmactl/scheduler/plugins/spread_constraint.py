"""SpreadConstraint filter: clusters must carry the topology fields the spread constraints group by.

Follows ``pkg/scheduler/framework/plugins/spreadconstraint/spread_constraint.go``.
"""
from __future__ import annotations

from karmactl.scheduler.framework import SUCCESS, FilterResult
from karmactl.scheduler.util import cluster_spec, cluster_zones

NAME = "SpreadConstraint"


class SpreadConstraint:
    """For each constraint spreading by ``provider``/``region``/``zone`` the cluster needs that field."""

    name = NAME

    def filter(self, binding_spec: dict, binding_status: dict, cluster: dict) -> FilterResult:
        spec = cluster_spec(cluster)
        for constraint in (binding_spec.get("placement") or {}).get("spreadConstraints") or []:
            field = constraint.get("spreadByField")
            if field == "provider" and not spec.get("provider"):
                return FilterResult(False, "cluster(s) did not have provider property")
            if field == "region" and not spec.get("region"):
                return FilterResult(False, "cluster(s) did not have region property")
            if field == "zone" and not cluster_zones(cluster):
                return FilterResult(False, "cluster(s) did not have zones property")
        return SUCCESS
