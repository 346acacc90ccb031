"""The scheduler as a pipeline step: place every ResourceBinding and ClusterResourceBinding.

The scheduling algorithm itself (filter and score plugins, replica assignment) lives in
``karmactl.scheduler`` (``pkg/scheduler/``); this step feeds it the Clusters as the control plane
sees them in this pass (status and controller taints merged) and stores its answer. Under the feature
gate ``FederatedQuotaEnforcement`` each ResourceBinding's new placement first passes the
ResourceBinding webhook's FederatedResourceQuota check
(``karmactl.controllers.federated_resource_quota.QuotaAdmission``).
"""
from __future__ import annotations


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``scheduler`` (``pkg/scheduler/scheduler.go``): ``spec.clusters``, the
    ``Scheduled`` condition and ``lastScheduledTime`` of every binding that needs scheduling."""
    from karmactl.controllers.helper.cluster import clusters_of
    from karmactl.controllers.federated_resource_quota import scheduler_admission
    from karmactl.scheduler import schedule_binding

    clusters = clusters_of(out)
    quotas = scheduler_admission(out, ctx)
    changed = False
    for bkey in sorted(out.bindings):
        old = out.bindings[bkey]
        new = schedule_binding(old, clusters, now).binding
        if quotas is not None and bkey[1] == "ResourceBinding":
            new = quotas.admit(old, new, now)
        changed = out.set_binding(bkey, new) or changed
    return changed
