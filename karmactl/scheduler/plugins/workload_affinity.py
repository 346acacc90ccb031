"""WorkloadAffinity and WorkloadAntiAffinity filters (feature gate ``WorkloadAffinity``, alpha, off).

Follow ``pkg/scheduler/framework/plugins/workloadaffinity/workload_affinity.go`` and
``workloadantiaffinity/workload_anti_affinity.go``; the index of ResourceBindings by group is
``pkg/scheduler/indexer.go``. A ResourceBinding's ``spec.workloadAffinityGroups`` (written by the
detector from the template's labels) names its ``affinityGroup`` and ``antiAffinityGroup``
(``<label key>=<value>``):

* affinity: a cluster passes when every other scheduled ResourceBinding of the same namespace and
  affinity group targets it (the first of a group goes anywhere the other filters allow);
* anti-affinity: a cluster fails when another ResourceBinding of the same namespace and
  anti-affinity group targets it;
* a cluster the binding already targets always passes (the filters never remove a placement).

The scheduler step (``karmactl/pipeline/scheduling.py``) keeps :class:`GroupIndex` current as it
places bindings one after the other, as Karmada's scheduler cache sees its own assignments
(``AssigningResourceBindings``).
"""
from __future__ import annotations

from karmactl.api.names import binding_name
from karmactl.scheduler.framework import SUCCESS, FilterResult
from karmactl.scheduler.util import cluster_name, target_contains

AFFINITY = "affinityGroup"
ANTI_AFFINITY = "antiAffinityGroup"


class GroupIndex:
    """ResourceBindings by ``(group field, namespace, group)``: ``{binding name: binding}``.

    Args:
        bindings: ``{binding key: binding}``; only ResourceBindings with ``spec.workloadAffinityGroups`` count.
    """

    def __init__(self, bindings: dict):
        self.groups: dict = {}
        self.where: dict = {}
        for key, binding in bindings.items():
            self.update(key, binding)

    def update(self, key, binding: dict | None) -> None:
        """Record ``binding`` (None: removed) under its groups, replacing what ``key`` had."""
        for slot in self.where.pop(key, ()):
            self.groups.get(slot, {}).pop(key[3], None)
        if binding is None or key[1] != "ResourceBinding":
            return
        groups = (binding.get("spec") or {}).get("workloadAffinityGroups") or {}
        slots = []
        for field in (AFFINITY, ANTI_AFFINITY):
            if groups.get(field):
                slot = (field, key[2], groups[field])
                self.groups.setdefault(slot, {})[key[3]] = binding
                slots.append(slot)
        if slots:
            self.where[key] = slots

    def peers(self, field: str, namespace: str, group: str) -> dict:
        """``{binding name: binding}`` of ``namespace`` in ``group`` (``field``: :data:`AFFINITY`
        or :data:`ANTI_AFFINITY`)."""
        return self.groups.get((field, namespace, group), {})


class _GroupFilter:
    field = ""
    reason = ""

    def __init__(self, index: GroupIndex):
        self.index = index

    def _obeys(self, peer_spec: dict, cluster: str) -> bool:
        raise NotImplementedError

    def filter(self, binding_spec: dict, binding_status: dict, cluster: dict) -> FilterResult:
        name = cluster_name(cluster)
        if target_contains(binding_spec, name):
            return SUCCESS
        group = (binding_spec.get("workloadAffinityGroups") or {}).get(self.field)
        if not group:
            return SUCCESS
        resource = binding_spec.get("resource") or {}
        own = binding_name(resource.get("name") or "", resource.get("kind") or "")
        for peer_name, peer in self.index.peers(self.field, resource.get("namespace") or "", group).items():
            if peer_name != own and not self._obeys(peer.get("spec") or {}, name):
                return FilterResult(False, self.reason)
        return SUCCESS


class WorkloadAffinity(_GroupFilter):
    """Keeps the workloads of one affinity group on the clusters the group's scheduled workloads use."""

    name = "WorkloadAffinity"
    field = AFFINITY
    reason = "ResourceBinding with the same affinity group does not target this cluster"

    def _obeys(self, peer_spec: dict, cluster: str) -> bool:
        return not peer_spec.get("clusters") or target_contains(peer_spec, cluster)


class WorkloadAntiAffinity(_GroupFilter):
    """Keeps the workloads of one anti-affinity group off each other's clusters."""

    name = "WorkloadAntiAffinity"
    field = ANTI_AFFINITY
    reason = "cluster already has workload with the same anti-affinity group"

    def _obeys(self, peer_spec: dict, cluster: str) -> bool:
        return not target_contains(peer_spec, cluster)


def workload_affinity_filters(index: GroupIndex) -> tuple:
    """The two filters over ``index``, in karmactl's fixed order (after the in-tree ones)."""
    return (WorkloadAffinity(index), WorkloadAntiAffinity(index))


__all__ = ["GroupIndex", "WorkloadAffinity", "WorkloadAntiAffinity", "workload_affinity_filters"]
