"""KubeRay (``ray.io/v1``): RayCluster, RayJob, RayService.

Written from KubeRay's API: a Ray cluster is one head pod (``headGroupSpec.template``) and
worker groups (``workerGroupSpecs[]``: ``groupName``, ``replicas``, ``template``); a RayCluster
reports the conditions HeadPodReady, RayClusterProvisioned and RayClusterReplicaFailure and its
worker counts; a RayJob reports ``jobDeploymentStatus`` and the Ray ``jobStatus``; a RayService
reports a ``Ready`` condition and its applications. Karmada's rules: ``resourcecustomizations/ray.io/v1/``.
"""
from __future__ import annotations

from fractions import Fraction

from karmactl.api.objects import deepcopy

from . import Rules
from ._util import (component, dig, has_condition, item_statuses, number, pod_dependencies, pod_requirements,
                    template_status)


def _cluster_components(cluster_spec) -> list[dict]:
    """``ray-head`` (one pod) and one component per worker group (``groupName``, else ``worker-<n>``)."""
    out = []
    head = dig(cluster_spec, "headGroupSpec", "template")
    if head is not None:
        out.append(component("ray-head", 1, pod_requirements(head)))
    for i, group in enumerate(dig(cluster_spec, "workerGroupSpecs") or [], 1):
        group = group or {}
        out.append(component(group.get("groupName") or f"worker-{i}", number(group.get("replicas")),
                             pod_requirements(group.get("template")) if group.get("template") is not None else None))
    return out


def _cluster_dependencies(obj: dict, cluster_spec, *extra_pod_specs) -> list[dict]:
    namespace = dig(obj, "metadata", "namespace") or "default"
    specs = [dig(cluster_spec, "headGroupSpec", "template", "spec")]
    specs += [dig(g, "template", "spec") for g in dig(cluster_spec, "workerGroupSpecs") or []]
    refs: list[dict] = []
    for spec in specs + list(extra_pod_specs):
        if isinstance(spec, dict):
            refs += [r for r in pod_dependencies(spec, namespace) if r not in refs]
    return refs


def _one_or_merged(merge):
    """Aggregation that gives a single member's status as it is, else ``merge(template, statuses)``."""
    def aggregate(template: dict, items, _now) -> dict:
        statuses = item_statuses(items)
        if not statuses:
            return template_status(template)
        if len(statuses) == 1:
            return deepcopy(statuses[0][1] or {})
        return merge(template, [s for _c, s in statuses if s is not None])
    return aggregate


# --- RayCluster ------------------------------------------------------------------------------------

_WORKER_COUNTERS = ("readyWorkerReplicas", "availableWorkerReplicas", "maxWorkerReplicas", "minWorkerReplicas",
                    "desiredWorkerReplicas")


def _raycluster_health(obj: dict) -> bool:
    """The head pod ready and the cluster provisioned, without a replica failure."""
    if not isinstance(dig(obj, "status", "conditions"), list):
        return False
    return has_condition(obj, "HeadPodReady") and has_condition(obj, "RayClusterProvisioned") and \
        not has_condition(obj, "RayClusterReplicaFailure")


def _summed_quantity(values: list) -> str:
    """The sum of quantities as ``resource.Quantity`` prints it: BinarySI when one is written with a
    binary suffix, else DecimalSI; ``"0"`` for none."""
    from karmactl.api.quantity import BINARY_SI, DECIMAL_SI, canonical_quantity, parse_quantity

    if not values:
        return "0"
    amount = sum((parse_quantity(v) for v in values), Fraction(0))
    return canonical_quantity(amount, BINARY_SI if any(str(v).endswith("i") for v in values) else DECIMAL_SI)


def _raycluster_merge(template: dict, statuses: list[dict]) -> dict:
    """Conditions of every member, worker counters and desired resources summed, the latest
    update time, and endpoints, head and state of the first member reporting them."""
    status = template_status(template)
    status["conditions"] = [deepcopy(c) for s in statuses for c in s.get("conditions") or []]
    for key in _WORKER_COUNTERS:
        status[key] = sum(number(s.get(key)) for s in statuses)
    for key in ("desiredCPU", "desiredMemory"):
        status[key] = _summed_quantity([s[key] for s in statuses if s.get(key)])
    for key in ("desiredGPU", "desiredTPU"):
        status[key] = str(sum(number(s.get(key)) for s in statuses))
    times = [s["lastUpdateTime"] for s in statuses if s.get("lastUpdateTime")]
    if times:
        status["lastUpdateTime"] = max(times)
    for key in ("endpoints", "head"):
        found = next((s[key] for s in statuses if s.get(key) is not None), None)
        if found is not None:
            status[key] = deepcopy(found)
    first = next((s for s in statuses if s.get("state") is not None), None)
    if first is not None:
        status["state"] = first["state"]
        if first.get("stateTransitionTimes") is not None:
            status["stateTransitionTimes"] = deepcopy(first["stateTransitionTimes"])
    return status


# --- RayJob --------------------------------------------------------------------------------------

_DEPLOYMENT_ORDER = ["", "Initializing", "Waiting", ("Suspending", "Suspended"), "Retrying", "Running", "Complete",
                     "ValidationFailed", "Failed"]
_JOB_ORDER = ["", "PENDING", "RUNNING", "SUCCEEDED", "STOPPED", "FAILED"]


def _rank(order, value) -> int:
    for i, entry in enumerate(order):
        if value == entry or (isinstance(entry, tuple) and value in entry):
            return i
    return 0


def _rayjob_health(obj: dict) -> bool:
    """Running, or Complete with the Ray job SUCCEEDED."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return False
    deployment = status.get("jobDeploymentStatus")
    return deployment == "Running" or (deployment == "Complete" and status.get("jobStatus") == "SUCCEEDED")


def _rayjob_merge(template: dict, statuses: list[dict]) -> dict:
    """The worst deployment status (with its reason and message) and the worst Ray job status."""
    status = template_status(template)
    worst = None
    for s in statuses:
        if s.get("jobDeploymentStatus") is not None and \
                (worst is None or _rank(_DEPLOYMENT_ORDER, s["jobDeploymentStatus"])
                 > _rank(_DEPLOYMENT_ORDER, worst["jobDeploymentStatus"])):
            worst = s
    for key in ("jobDeploymentStatus", "reason", "message"):
        if worst is not None and worst.get(key) is not None:
            status[key] = worst[key]
        else:
            status.pop(key, None)
    job = None
    for s in statuses:
        if s.get("jobStatus") and (job is None or _rank(_JOB_ORDER, s["jobStatus"]) > _rank(_JOB_ORDER, job)):
            job = s["jobStatus"]
    if job is None:
        status.pop("jobStatus", None)
    else:
        status["jobStatus"] = job
    return status


# --- RayService ----------------------------------------------------------------------------------

_APP_ORDER = ["RUNNING", "NOT_STARTED", "DEPLOYING", "DELETING", "UNHEALTHY", "DEPLOY_FAILED"]


def _rayservice_replicas(obj: dict) -> tuple[int, dict | None]:
    """The head plus every worker; one replica asks for the largest CPU and memory of head and groups."""
    from karmactl.api.quantity import parse_quantity

    config = dig(obj, "spec", "rayClusterConfig")
    head = dig(config, "headGroupSpec", "template")
    if head is None:
        return 0, None
    requirements = pod_requirements(head) or {}
    request = dict(requirements.get("resourceRequest") or {})
    replicas = 1
    for group in dig(config, "workerGroupSpecs") or []:
        replicas += int(number((group or {}).get("replicas")))
        worker = (pod_requirements((group or {}).get("template")) or {}).get("resourceRequest") or {}
        for name in ("cpu", "memory"):
            if name in worker and (name not in request or parse_quantity(worker[name]) > parse_quantity(request[name])):
                request[name] = worker[name]
    if request:
        requirements = dict(requirements, resourceRequest=request)
    return replicas, requirements or None


def _rayservice_revise(obj: dict, replicas: int) -> dict:
    """``replicas - 1`` workers spread over the worker groups in proportion to their current
    sizes (evenly when all are 0); the last group takes the remainder."""
    new = deepcopy(obj)
    groups = dig(new, "spec", "rayClusterConfig", "workerGroupSpecs")
    if not groups:
        return new
    workers = max(0, int(replicas) - 1)
    if len(groups) == 1:
        groups[0]["replicas"] = workers
        return new
    current = sum(int(number((g or {}).get("replicas"))) for g in groups)
    given = 0
    for i, group in enumerate(groups):
        if workers == 0:
            group["replicas"] = 0
        elif i == len(groups) - 1:
            group["replicas"] = workers - given
        elif current == 0:
            group["replicas"] = workers // len(groups) + (1 if i < workers % len(groups) else 0)
            given += group["replicas"]
        else:
            group["replicas"] = int(workers * number(group.get("replicas")) / current + 0.5)
            given += group["replicas"]
    return new


def _rayservice_merge(template: dict, statuses: list[dict]) -> dict:
    """Conditions of every member, serve endpoints summed, the latest update time and largest
    observed generation; per application the worst status; the first active and pending service status."""
    status = template_status(template)
    status["conditions"] = [deepcopy(c) for s in statuses for c in s.get("conditions") or []]
    status["numServeEndpoints"] = sum(number(s.get("numServeEndpoints")) for s in statuses)
    times = [s["lastUpdateTime"] for s in statuses if s.get("lastUpdateTime")]
    if times:
        status["lastUpdateTime"] = max(times)
    status["observedGeneration"] = max([0] + [number(s.get("observedGeneration")) for s in statuses])
    status["serviceStatus"] = "" if any(s.get("serviceStatus") == "" for s in statuses) else "Running"
    active = next((deepcopy(s["activeServiceStatus"]) for s in statuses if s.get("activeServiceStatus") is not None),
                  None)
    if active is not None:
        apps: dict = {}
        for s in statuses:
            for name, app in (dig(s, "activeServiceStatus", "applicationStatuses") or {}).items():
                if name not in apps or _rank(_APP_ORDER, (app or {}).get("status")) > \
                        _rank(_APP_ORDER, (apps[name] or {}).get("status")):
                    apps[name] = deepcopy(app)
        active["applicationStatuses"] = apps
        status["activeServiceStatus"] = active
    pending = next((s["pendingServiceStatus"] for s in statuses if s.get("pendingServiceStatus") is not None), None)
    if pending is not None:
        status["pendingServiceStatus"] = deepcopy(pending)
    return status


RULES = {
    ("ray.io/v1", "RayCluster"): Rules(
        components=lambda obj: _cluster_components(obj.get("spec")), health=_raycluster_health,
        aggregate=_one_or_merged(_raycluster_merge)),
    ("ray.io/v1", "RayJob"): Rules(
        components=lambda obj: _cluster_components(dig(obj, "spec", "rayClusterSpec")), health=_rayjob_health,
        aggregate=_one_or_merged(_rayjob_merge),
        dependencies=lambda obj: _cluster_dependencies(obj, dig(obj, "spec", "rayClusterSpec"),
                                                       dig(obj, "spec", "submitterPodTemplate", "spec"))),
    ("ray.io/v1", "RayService"): Rules(
        replica=_rayservice_replicas, revise=_rayservice_revise,
        health=lambda obj: has_condition(obj, "Ready"), aggregate=_one_or_merged(_rayservice_merge),
        dependencies=lambda obj: _cluster_dependencies(obj, dig(obj, "spec", "rayClusterConfig"))),
}
