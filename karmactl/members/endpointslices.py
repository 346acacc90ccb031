"""The I/O of Karmada's EndpointSlice collection for MultiClusterServices: list a provider's
EndpointSlices in the run's observe phase.

Karmada's ``pkg/controllers/multiclusterservice/endpointslice_collect_controller.go`` watches
``discovery.k8s.io/v1`` EndpointSlices on every cluster holding a MultiClusterService Work and
reports them as Works; here the member layer lists them once per observe (one cluster-wide LIST,
through the same :class:`~karmactl.members.executing.MemberCopies` the workload status uses) and
:func:`karmactl.controllers.multicluster_service.collect` decides which Works that gives.
"""
from __future__ import annotations

from karmactl.controllers import multicluster_service as mcs
from karmactl.members.clients import MemberApiError


def collect_member(cluster: str, works: dict, copies, now: str) -> tuple[dict, str | None]:
    """The collected EndpointSlice Works of one member.

    Args:
        cluster: the member cluster's name.
        works: Work key -> Work of ``karmada-es-<cluster>``.
        copies: the member's ``MemberCopies`` of this observe.
        now: the observation time.

    Returns:
        ``(changes, warning)``: ``{Work key: Work or None}`` (see ``multicluster_service.collect``;
        empty when the member holds no MultiClusterService Work), and a warning when the member does
        not serve EndpointSlices or refuses the LIST (then nothing collected before is dropped).

    Raises:
        MemberUnreachable: the member stopped answering.
    """
    if not any(mcs.is_marker_work(w) for w in works.values()):
        return mcs.collect(cluster, works, [], now), None
    try:
        r = copies.client.resource_for(mcs.EPS_API, mcs.EPS_KIND)
        if r is None:
            return {}, f"cluster {cluster} does not serve {mcs.EPS_API} EndpointSlices: nothing collected"
        slices = list(copies.objects(r).values())
    except MemberApiError as exc:
        return {}, f"cluster {cluster}: failed to list EndpointSlices: {exc.message}"
    return mcs.collect(cluster, works, slices, now), None


__all__ = ["collect_member"]
