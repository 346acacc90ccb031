"""The scheduler as a pipeline step: place every ResourceBinding and ClusterResourceBinding.

The scheduling algorithm itself (filter and score plugins, replica assignment) lives in
``karmactl.scheduler`` (``pkg/scheduler/``); this step feeds it the Clusters as the control plane
sees them in this pass (status and controller taints merged) and stores its answer. Under the feature
gate ``FederatedQuotaEnforcement`` each ResourceBinding's new placement first passes the
ResourceBinding webhook's FederatedResourceQuota check
(``karmactl.controllers.federated_resource_quota.QuotaAdmission``), so quota goes to the bindings in
the order they are scheduled.

Order (``pkg/scheduler/internal/queue``): under the gate ``PriorityBasedScheduling`` (beta, on)
Karmada's active queue pops the highest ``spec.schedulePriority.priority`` first and, among equal
priorities, the binding queued first (``Less``); karmactl reads "queued first" as the older
``metadata.creationTimestamp`` and then the binding's key (a run queues every binding at once).
With the gate off, bindings go by key. Karmada's scheduler does not preempt bindings: a
higher-priority binding refused by a quota waits until quota frees up, as there.

Under the gate ``WorkloadAffinity`` the WorkloadAffinity / WorkloadAntiAffinity filters see every
ResourceBinding's groups as placed so far in this pass (``karmactl.scheduler.plugins.workload_affinity``).
"""
from __future__ import annotations


def binding_priority(binding: dict) -> int:
    """``spec.schedulePriority.priority`` (0 when unset: ``SchedulePriorityValue``)."""
    value = ((binding.get("spec") or {}).get("schedulePriority") or {}).get("priority")
    return int(value) if isinstance(value, int) else 0


def scheduling_order(bindings: dict, by_priority: bool) -> list:
    """The binding keys in the order the scheduler takes them (module docs)."""
    if not by_priority:
        return sorted(bindings)
    return sorted(bindings, key=lambda k: (-binding_priority(bindings[k]),
                                           (bindings[k].get("metadata") or {}).get("creationTimestamp") or "", k))


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``scheduler`` (``pkg/scheduler/scheduler.go``): ``spec.clusters``, the
    ``Scheduled`` condition and ``lastScheduledTime`` of every binding that needs scheduling."""
    from karmactl.controllers.helper.cluster import clusters_of
    from karmactl.controllers.federated_resource_quota import scheduler_admission
    from karmactl.scheduler import schedule_binding
    from karmactl.scheduler.plugins.workload_affinity import GroupIndex, workload_affinity_filters

    clusters = clusters_of(out)
    quotas = scheduler_admission(out, ctx)
    index, extra = None, ()
    if ctx.settings.workload_affinity:
        index = GroupIndex(out.bindings)
        extra = workload_affinity_filters(index)
    changed = False
    for bkey in scheduling_order(out.bindings, ctx.settings.priority_based_scheduling):
        old = out.bindings[bkey]
        new = schedule_binding(old, clusters, now, extra_filters=extra).binding
        if quotas is not None and bkey[1] == "ResourceBinding":
            new = quotas.admit(old, new, now)
        if out.set_binding(bkey, new):
            changed = True
            if index is not None:
                index.update(bkey, new)
    return changed
