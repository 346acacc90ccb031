"""The control plane of one reconcile pass: one ordered tuple of steps, each a Karmada controller.

A step is ``run(loaded: Snapshot, out: Snapshot, now: str, ctx: StepContext) -> bool``: it reads
``out`` (the snapshot being computed; ``loaded`` is what the run observed: the state directory plus
what the member layer read from the members), replaces objects in ``out`` through
``out.set_overlay/set_binding/set_work``, and returns True when it changed anything. Steps are
pure: no files, no network, time only from ``now``. :func:`karmactl.reconcile.compute` runs the
whole tuple, in order, until a pass changes nothing.

The order is Karmada's flow of one object through its controllers (semantics §15.1):

==========================  ===============================================================
cluster status, remedy,     what is known of each member cluster (conditions, taints)
cluster taints
detector                    template -> policy -> ResourceBinding
MultiClusterService         the Service's ResourceBinding (providers and consumers), marker Works
workload rebalancer         ``rescheduleTriggeredAt`` on the bindings a WorkloadRebalancer lists
binding status              the workload status observed in this run, into the bindings
taint manager,              evictions decided on this pass's clusters and workload health
application failover
scheduler                   placement (``spec.clusters``)
dependencies distributor    attached bindings of ``propagateDeps`` dependencies (``requiredBy``)
graceful eviction           eviction tasks kept or dropped once the replacement is healthy
binding, namespace sync,    Works in the execution namespaces
FederatedResourceQuota sync
EndpointSlice dispatch      collected provider EndpointSlices as Works for the consumers
execution                   the Work's ``Dispatching`` condition (applying is the member layer's)
MultiClusterIngress,        status: Works -> bindings -> templates
binding status,
template status,
FederatedResourceQuota      status: member ResourceQuotas (and bindings, gate
status                      ``FederatedQuotaEnforcement``) -> FederatedResourceQuotas
advice                      warnings for what Karmada would leave undone silently (``advice.py``)
==========================  ===============================================================

Nothing registers itself on import: this tuple is the whole list.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from karmactl.controllers import (application_failover, binding, binding_status, cluster_status, cluster_taints,
                                  dependencies_distributor, detector, execution, federated_resource_quota,
                                  graceful_eviction, multicluster_ingress, multicluster_service, namespace_sync,
                                  remedy, taint_manager, template_status, workload_rebalancer)
from karmactl.pipeline import advice, scheduling


class Step(NamedTuple):
    """One controller of the pipeline: its name, the Karmada source it follows, its function and,
    for controllers whose decisions depend on the clock, ``wake``.

    ``wake(snap, now, settings) -> [(binding key or None, RFC 3339 time)]`` says, for a computed
    snapshot (a fixpoint at ``now``), from when on the step could change something although no
    input changed: a toleration window or grace period that ends, a TTL. None stands for the whole
    state (not one binding); a time equal to ``now`` means "at every run". Incremental runs
    (``karmactl/incremental/runindex.py``) recompute a binding, or everything, once its time is reached;
    a step without ``wake`` must give the same result at any later time.
    """

    name: str
    karmada: str
    run: Callable
    wake: Callable | None = None


PIPELINE: tuple[Step, ...] = (
    Step("cluster-status", "pkg/controllers/status/cluster_status_controller.go", cluster_status.step,
         cluster_status.wake),
    Step("remedy", "pkg/controllers/remediation/remedy_controller.go", remedy.step),
    Step("cluster-taints", "pkg/controllers/cluster/cluster_controller.go (taintClusterByCondition), "
                           "pkg/controllers/taint/clustertaintpolicy_controller.go", cluster_taints.step),
    Step("detector", "pkg/detector/detector.go", detector.step),
    Step("multiclusterservice", "pkg/controllers/multiclusterservice/mcs_controller.go", multicluster_service.step),
    Step("workload-rebalancer", "pkg/controllers/workloadrebalancer/workloadrebalancer_controller.go",
         workload_rebalancer.step, workload_rebalancer.wake),
    # the status observed on the members reaches the bindings before anything decides on it
    Step("binding-status", "pkg/controllers/status/rb_status_controller.go", binding_status.step),
    Step("taint-manager", "pkg/controllers/cluster/taint_manager.go", taint_manager.step, taint_manager.wake),
    Step("application-failover", "pkg/controllers/applicationfailover/", application_failover.step,
         application_failover.wake),
    Step("scheduler", "pkg/scheduler/scheduler.go", scheduling.step),
    Step("dependencies-distributor", "pkg/dependenciesdistributor/", dependencies_distributor.step),
    Step("graceful-eviction", "pkg/controllers/gracefuleviction/", graceful_eviction.step,
         graceful_eviction.wake),
    Step("binding", "pkg/controllers/binding/binding_controller.go", binding.step),
    Step("namespace-sync", "pkg/controllers/namespace/namespace_sync_controller.go", namespace_sync.step),
    Step("federated-resource-quota-sync",
         "pkg/controllers/federatedresourcequota/federated_resource_quota_sync_controller.go",
         federated_resource_quota.sync_step),
    Step("endpointslice-dispatch", "pkg/controllers/multiclusterservice/endpointslice_dispatch_controller.go",
         multicluster_service.dispatch_step),
    Step("execution", "pkg/controllers/execution/execution_controller.go", execution.step),
    Step("multicluster-ingress", "pkg/apis/networking/v1alpha1/ingress_types.go (status.trafficBlockClusters), "
                                 "Remedy design document", multicluster_ingress.step),
    Step("binding-status", "pkg/controllers/status/rb_status_controller.go", binding_status.step),
    Step("template-status", "pkg/controllers/status/rb_status_controller.go (updateResourceStatus)",
         template_status.step),
    Step("federated-resource-quota-status",
         "pkg/controllers/federatedresourcequota/federated_resource_quota_status_controller.go, "
         "federated_resource_quota_enforcement_controller.go", federated_resource_quota.status_step),
    Step("advice", "— (karmactl's own: what Karmada leaves undone without a word, as warnings)", advice.step),
)


def wake_times(snap, now: str, settings) -> list:
    """Every ``wake`` of :data:`PIPELINE` over a computed snapshot, plus the clock-reading parts
    outside the steps: a ResourceInterpreterCustomization's Lua may call ``os.time``/``os.date``
    (``karmactl/interpreter/luavm.py``), so with any customization the whole state is due at every
    run. Returns ``[(binding key or None, RFC 3339 time)]`` as :class:`Step` describes."""
    from karmactl.interpreter.customized import GROUP, KIND

    out: list = [(None, now)] if snap.keys_of_kind(GROUP, KIND) else []
    for step in PIPELINE:
        if step.wake is not None:
            out.extend(step.wake(snap, now, settings))
    return out


__all__ = ["PIPELINE", "Step", "wake_times"]
