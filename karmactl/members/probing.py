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
        node_available: per node, in list order, what its pods leave of its allocatable
            (:func:`node_available`; None for a node with no room for another pod), for the
            resource models (:func:`allocatable_modelings`); collected only when healthy.
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
    node_available: list | None = None


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
        res.node_available = node_available(nodes, pods)
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        # a malformed answer is this member's failure, never the run's
        res.node_summary = res.resource_summary = res.node_available = None
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
    out: dict = {}
    allocatable = _sum([(n.get("status") or {}).get("allocatable") for n in nodes])
    if allocatable:
        out["allocatable"] = allocatable
    allocating, allocated = [], []
    for pod in pods:
        spec = pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        req = _pod_request(pod)
        if not spec.get("nodeName"):
            allocating.append(req)
        elif phase not in ("Succeeded", "Failed"):
            allocated.append(req)
    for name, group in (("allocating", allocating), ("allocated", allocated)):
        total = _sum(group, pods=len(group))
        if total:
            out[name] = total
    return out


def _pod_request(pod: dict) -> dict:
    """A pod's resource request (``pod_resource_request``); {} when its spec is malformed."""
    from karmactl.interpreter import InterpreterError, pod_resource_request

    try:
        return pod_resource_request(pod.get("spec") or {}) or {}
    except InterpreterError:
        return {}


def node_available(nodes: list[dict], pods: list[dict]) -> list[dict | None]:
    """Per node (in list order): its ``status.allocatable`` less the requests of the pods bound to
    it that are not Succeeded or Failed, ``pods`` less their count, as exact amounts
    (``{resource name: Fraction}``); None for a node whose pods leave no room for another pod
    (``getNodeAvailable`` in ``cluster_status_controller.go``: such a node is not modelled).
    Resources the node does not report stay absent; a node with no pods keeps its allocatable.

    Raises:
        QuantityError: a node's allocatable is not a valid quantity (the probe reports the member
            as failed).
    """
    from karmactl.api.quantity import add_resource_lists, parse_quantity

    bound: dict[str, list] = {}
    for pod in pods:
        name = (pod.get("spec") or {}).get("nodeName")
        if name and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            bound.setdefault(name, []).append(_pod_request(pod))
    out: list[dict | None] = []
    for node in nodes:
        raw = (node.get("status") or {}).get("allocatable") or {}
        allocatable = {k: parse_quantity(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
        on_node = bound.get((node.get("metadata") or {}).get("name"))
        if not on_node:
            out.append(allocatable)
            continue
        used = add_resource_lists(*on_node)
        used["pods"] = used.get("pods", 0) + len(on_node)
        if allocatable.get("pods", 0) - used["pods"] <= 0:
            out.append(None)
            continue
        out.append({k: v - used[k] if k in used else v for k, v in allocatable.items()})
    return out


def cluster_resource_models(cluster: dict) -> list[dict]:
    """The Cluster's ``spec.resourceModels``, or Karmada's nine default grades when it sets none (the
    defaulting of ``pkg/apis/cluster/mutation/mutation.go``, which karmactl applies on read)."""
    from karmactl.api.defaults import default_resource_models

    models = (cluster.get("spec") or {}).get("resourceModels")
    return models if isinstance(models, list) and models else default_resource_models()


def _last_not_above(bounds: list, target) -> int:
    """The index of the last entry of ascending ``bounds`` not above ``target``, -1 when the first
    already is (a binary search, as ``searchLastLessElement`` in ``pkg/modeling/modeling.go``)."""
    low, high = 0, len(bounds) - 1
    while low <= high:
        mid = (low + high) // 2
        if bounds[mid] <= target:
            if mid == len(bounds) - 1 or bounds[mid + 1] > target:
                return mid
            low = mid + 1
        else:
            high = mid - 1
    return -1


def allocatable_modelings(models: list[dict], available: list[dict | None]) -> list[dict]:
    """``status.resourceSummary.allocatableModelings``: for each grade of ``models`` (in their order,
    sorted by grade), ``{grade, count}`` with ``count`` the nodes whose available resources fall in
    that grade: per resource of the first model's ranges, the last grade whose ``min`` is not above
    the node's amount, and the lowest of those over the resources (a missing amount counts 0).
    ``available`` is :func:`node_available`'s list; a None entry ends the counting, as
    ``getAllocatableModelings`` in ``cluster_status_controller.go`` stops at such a node; a node below
    every grade is not counted. Empty when ``models`` is empty or malformed (validation reports it).
    """
    from karmactl.api.quantity import QuantityError, parse_quantity

    try:
        names = [r["name"] for r in models[0]["ranges"]] if models else []
        mins = {name: [parse_quantity(next(r["min"] for r in m["ranges"] if r["name"] == name)) for m in models]
                for name in names}
    except (KeyError, TypeError, StopIteration, QuantityError):
        return []
    counts = [0] * len(models)
    for amounts in available:
        if amounts is None:
            break
        grade = min((_last_not_above(mins[name], amounts.get(name, 0)) for name in names), default=-1)
        if grade >= 0:
            counts[grade] += 1
    return [{"grade": m["grade"], "count": n} for m, n in zip(models, counts)] if names else []


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
        rs = dict(result.resource_summary or {})
        modelings = allocatable_modelings(cluster_resource_models(cluster), result.node_available or [])
        if modelings:
            rs["allocatableModelings"] = modelings
        if rs:
            status["resourceSummary"] = rs
        else:
            status.pop("resourceSummary", None)
    if overlay is not None and new == overlay:
        return overlay
    return new


__all__ = ["ProbeResult", "allocatable_modelings", "cluster_resource_models", "node_available", "node_summary",
           "probe_member", "resource_summary", "status_overlay"]
