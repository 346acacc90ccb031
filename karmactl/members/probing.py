"""Cluster status collection: probe a member's health and read its version, APIs, nodes and pods.

Follows ``pkg/controllers/status/cluster_status_controller.go`` (semantics §4.1): ``/readyz`` (falling
back to ``/healthz`` on 404) decides online/healthy; only a healthy member is asked for the rest.
:func:`probe_member` does the I/O, :func:`status_overlay` folds a result into the Cluster's overlay
with the success/failure thresholds (``karmactl/controllers/cluster_status.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from karmactl.api import constants as C
from karmactl.api.objects import deepcopy, get_condition, set_condition
from karmactl.controllers import cluster_status
from karmactl.api.templates import new_overlay
from karmactl.members.clients import MemberApiError, MemberClient, MemberUnreachable

THRESHOLD_RECORD = "readyThreshold"  # key under the overlay's ``observed``


@dataclass
class ProbeResult:
    """What one probe saw.

    Attributes:
        online / healthy: the health endpoint answered / answered 200.
        client_error: the client could not be built (kubeconfig problem), else None.
        error: why the member failed (for ``report.member_errors``), else None.
        version, api_enablements, complete_apis (None when not collected), failed_group_versions,
        node_summary, resource_summary: collected only when healthy.
    """

    online: bool = False
    healthy: bool = False
    client_error: str | None = None
    error: str | None = None
    version: str | None = None
    api_enablements: list | None = None
    failed_group_versions: list = field(default_factory=list)
    node_summary: dict | None = None
    resource_summary: dict | None = None


def probe_member(client: MemberClient) -> ProbeResult:
    """Probe one member (never raises: failures end up in the result).

    Requests: ``/readyz`` (``/healthz`` on 404); when healthy also ``/version``, discovery, Nodes
    and Pods (cluster-wide lists).
    """
    res = ProbeResult()
    try:
        status, _ = client.request("GET", "/readyz")
        if status == 404:
            status, _ = client.request("GET", "/healthz")
    except MemberUnreachable as exc:
        res.error = f"cluster is not reachable: {exc}"
        return res
    res.online = True
    res.healthy = status == 200
    if not res.healthy:
        res.error = f"cluster is reachable but health endpoint responded without ok (HTTP {status})"
        return res
    try:
        version = (client.call("GET", "/version") or {}).get("gitVersion")
        res.version = version if isinstance(version, str) else None
        disc = client.discovery(refresh=True)
        res.api_enablements = disc.api_enablements()
        res.failed_group_versions = list(disc.failed)
        nodes = (client.call("GET", "/api/v1/nodes") or {}).get("items") or []
        pods = (client.call("GET", "/api/v1/pods") or {}).get("items") or []
    except MemberUnreachable as exc:
        # healthy a moment ago; report it as unreachable now (Karmada would retry next period)
        res.online = res.healthy = False
        res.error = f"cluster is not reachable: {exc}"
        return res
    except MemberApiError as exc:
        res.error = f"failed to collect cluster status: {exc.message}"
        return res
    try:
        if not (isinstance(nodes, list) and isinstance(pods, list)):
            raise TypeError("items is not a list")
        res.node_summary = node_summary(nodes)
        res.resource_summary = resource_summary(nodes, pods)
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        # a malformed answer is this member's failure, never the run's
        res.node_summary = res.resource_summary = None
        res.online = res.healthy = False
        res.error = f"cluster is not reachable: malformed Node or Pod list ({type(exc).__name__}: {exc})"
    return res


def node_summary(nodes: list[dict]) -> dict:
    """``{totalNum, readyNum}``: nodes, and nodes whose ``Ready`` condition is True."""
    ready = sum(1 for n in nodes if any(c.get("type") == "Ready" and c.get("status") == "True"
                                        for c in (n.get("status") or {}).get("conditions") or []))
    return {"totalNum": len(nodes), "readyNum": ready}


def resource_summary(nodes: list[dict], pods: list[dict]) -> dict:
    """``{allocatable, allocating, allocated}`` (``getAllocatableResource``/``getAllocatingResource``/
    ``getAllocatedResource`` in ``cluster_status_controller.go``).

    allocatable: sum of node ``status.allocatable``; allocating: requests of pods without a node
    plus their count as ``pods``; allocated: requests of pods on a node that are not Succeeded or
    Failed plus their count. Empty lists are left out, zero amounts too (``Resource.ResourceList``).
    """
    from karmactl.interpreter import InterpreterError, pod_resource_request

    out: dict = {}
    allocatable = _sum([(n.get("status") or {}).get("allocatable") for n in nodes])
    if allocatable:
        out["allocatable"] = allocatable
    allocating, allocated = [], []
    for pod in pods:
        spec = pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        try:
            req = pod_resource_request(spec) or {}
        except InterpreterError:
            req = {}
        if not spec.get("nodeName"):
            allocating.append(req)
        elif phase not in ("Succeeded", "Failed"):
            allocated.append(req)
    for name, group in (("allocating", allocating), ("allocated", allocated)):
        total = _sum(group, pods=len(group))
        if total:
            out[name] = total
    return out


def _sum(lists: list, pods: int | None = None) -> dict:
    from karmactl.api.quantity import QuantityError, add_resource_lists
    from karmactl.interpreter.replica import format_binary_si, format_decimal_si

    try:
        total = add_resource_lists(*[rl for rl in lists if isinstance(rl, dict)])
    except QuantityError:
        total = {}
    if pods:
        total["pods"] = total.get("pods", 0) + pods
    out = {}
    for name in sorted(total):
        amount = total[name]
        if amount <= 0:
            continue
        if name == "cpu":
            out[name] = format_decimal_si(math.ceil(amount * 1000), -3)
        elif name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
            out[name] = format_binary_si(math.ceil(amount))
        else:
            out[name] = format_decimal_si(math.ceil(amount), 0)
    return out


def status_overlay(key, cluster: dict, overlay: dict | None, result: ProbeResult, now: str,
                   success_threshold: float, failure_threshold: float) -> dict:
    """The Cluster overlay after a probe (§4.1 steps 2–4); ``overlay`` itself when nothing changed.

    The Ready condition goes through ``threshold_adjust`` with the record kept in
    ``observed.readyThreshold`` (so thresholds work across runs). Only when the written Ready is
    True and the member was healthy are ``kubernetesVersion``, ``apiEnablements`` (+
    ``CompleteAPIEnablements``), ``nodeSummary`` and ``resourceSummary`` refreshed.
    """
    new = deepcopy(overlay) if overlay is not None else new_overlay(key, cluster)
    status = new.setdefault("status", deepcopy(cluster.get("status") or {}))
    observed = new.setdefault("observed", {})
    cond = cluster_status.observed_ready_condition(result.online, result.healthy, result.client_error)
    current = get_condition(new, C.COND_READY)
    adjusted, record = cluster_status.threshold_adjust(current, cond, observed.get(THRESHOLD_RECORD), now,
                                                       success_threshold, failure_threshold)
    observed[THRESHOLD_RECORD] = record
    set_condition(new, C.COND_READY, *adjusted, now)
    if adjusted[0] == "True" and result.healthy and result.api_enablements is not None:
        if result.version:
            status["kubernetesVersion"] = result.version
        status["apiEnablements"] = result.api_enablements
        n = len(result.failed_group_versions)
        if n:
            ce = ("False", "Partial", f"might collect partial APIEnablements({n}) from the cluster")
        elif not result.api_enablements:
            ce = ("False", "Empty", "collected empty APIEnablements from the cluster")
        else:
            ce = ("True", "Complete", "collected complete APIEnablements from the cluster")
        set_condition(new, C.COND_COMPLETE_API_ENABLEMENTS, *ce, now)
        status["nodeSummary"] = result.node_summary
        if result.resource_summary:
            rs = dict(result.resource_summary)
            # allocatableModelings belong to resource models (not collected here): keep what is there
            old_models = (status.get("resourceSummary") or {}).get("allocatableModelings")
            if old_models is not None:
                rs["allocatableModelings"] = old_models
            status["resourceSummary"] = rs
        else:
            status.pop("resourceSummary", None)
    if overlay is not None and new == overlay:
        return overlay
    return new


__all__ = ["ProbeResult", "node_summary", "probe_member", "resource_summary", "status_overlay"]
