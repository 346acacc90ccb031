"""The scheduler as a pipeline step: place every ResourceBinding and ClusterResourceBinding.

The scheduling algorithm itself (filter and score plugins, replica assignment) lives in
``karmactl.scheduler`` (``pkg/scheduler/``); this step feeds it the Clusters as the control plane
sees them in this pass (status and controller taints merged) and stores its answer.
"""
from __future__ import annotations


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``scheduler`` (``pkg/scheduler/scheduler.go``): ``spec.clusters``, the
    ``Scheduled`` condition and ``lastScheduledTime`` of every binding that needs scheduling."""
    from karmactl.controllers.cluster_status import clusters_of
    from karmactl.scheduler import schedule_binding

    clusters = clusters_of(out)
    changed = False
    for bkey in sorted(out.bindings):
        changed = out.set_binding(bkey, schedule_binding(out.bindings[bkey], clusters, now).binding) or changed
    return changed
