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
==========================  ===============================================================

Nothing registers itself on import: this tuple is the whole list.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from karmactl.controllers import (application_failover, binding, binding_status, cluster_status, cluster_taints,
                                  dependencies_distributor, detector, execution, federated_resource_quota,
                                  graceful_eviction, multicluster_ingress, multicluster_service, namespace_sync,
                                  remedy, scheduling, taint_manager, template_status, workload_rebalancer)


class Step(NamedTuple):
    """One controller of the pipeline: its name, the Karmada source it follows, and its function."""

    name: str
    karmada: str
    run: Callable


PIPELINE: tuple[Step, ...] = (
    Step("cluster-status", "pkg/controllers/status/cluster_status_controller.go", cluster_status.step),
    Step("remedy", "pkg/controllers/remediation/remedy_controller.go", remedy.step),
    Step("cluster-taints", "pkg/controllers/cluster/cluster_controller.go (taintClusterByCondition), "
                           "pkg/controllers/taint/clustertaintpolicy_controller.go", cluster_taints.step),
    Step("detector", "pkg/detector/detector.go", detector.step),
    Step("multiclusterservice", "pkg/controllers/multiclusterservice/mcs_controller.go", multicluster_service.step),
    Step("workload-rebalancer", "pkg/controllers/workloadrebalancer/workloadrebalancer_controller.go",
         workload_rebalancer.step),
    # the status observed on the members reaches the bindings before anything decides on it
    Step("binding-status", "pkg/controllers/status/rb_status_controller.go", binding_status.step),
    Step("taint-manager", "pkg/controllers/cluster/taint_manager.go", taint_manager.step),
    Step("application-failover", "pkg/controllers/applicationfailover/", application_failover.step),
    Step("scheduler", "pkg/scheduler/scheduler.go", scheduling.step),
    Step("dependencies-distributor", "pkg/dependenciesdistributor/", dependencies_distributor.step),
    Step("graceful-eviction", "pkg/controllers/gracefuleviction/", graceful_eviction.step),
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
)


__all__ = ["PIPELINE", "Step"]
