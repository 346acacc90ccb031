"""APIEnablement filter: the template's API must be served by the cluster.

Follows ``pkg/scheduler/framework/plugins/apienablement/api_enablement.go`` and
``pkg/apis/cluster/v1alpha1/cluster_helper.go`` (``Cluster.APIEnablement``).
"""
from __future__ import annotations

from karmactl.scheduler.framework import SUCCESS, FilterResult
from karmactl.scheduler.util import target_contains

NAME = "APIEnablement"
REASON = "cluster(s) did not have the API resource"


def api_enabled(cluster: dict, api_version: str, kind: str) -> bool:
    """Whether ``status.apiEnablements`` lists ``kind`` under the group/version ``api_version``.

    Upstream distinguishes "disabled" (condition ``CompleteAPIEnablements`` True) from "unknown"; the
    filter rejects both, so only "enabled" matters here.
    """
    for enablement in (cluster.get("status") or {}).get("apiEnablements") or []:
        if enablement.get("groupVersion") != api_version:
            continue
        if any(r.get("kind") == kind for r in enablement.get("resources") or []):
            return True
    return False


def api_disabled(cluster: dict, api_version: str, kind: str) -> bool:
    """``Cluster.APIEnablement(gvk) == APIDisabled``: not listed in ``status.apiEnablements`` while
    the condition ``CompleteAPIEnablements`` is True (an incomplete list means "unknown")."""
    if api_enabled(cluster, api_version, kind):
        return False
    return any(c.get("type") == "CompleteAPIEnablements" and c.get("status") == "True"
               for c in (cluster.get("status") or {}).get("conditions") or [])


class APIEnablement:
    """Passes clusters already in ``spec.clusters`` (never drop a placement because an API list is
    momentarily incomplete: controllers recreate the objects once the API is back); otherwise the
    template's apiVersion/kind must be in ``status.apiEnablements``."""

    name = NAME

    def filter(self, binding_spec: dict, binding_status: dict, cluster: dict) -> FilterResult:
        name = (cluster.get("metadata") or {}).get("name", "")
        if target_contains(binding_spec, name):
            return SUCCESS
        resource = binding_spec.get("resource") or {}
        if api_enabled(cluster, resource.get("apiVersion", ""), resource.get("kind", "")):
            return SUCCESS
        return FilterResult(False, REASON)
