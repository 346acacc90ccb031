"""Apache Flink Kubernetes operator (``flink.apache.org/v1beta1`` FlinkDeployment).

Written from the operator's API: a FlinkDeployment runs ``spec.jobManager.replicas`` JobManager
pods (default 1) and TaskManager pods - ``spec.taskManager.replicas``, or enough for
``spec.job.parallelism`` with ``taskmanager.numberOfTaskSlots`` slots each (1 when either is
unknown); each has ``resource.cpu`` (cores, a number) and ``resource.memory`` (a Flink memory
size: ``2048m`` is 2048 MiB, ``1g``, ``1024mb``; Kubernetes quantities such as ``2Gi`` read as
such) and both share ``spec.podTemplate``. The status reports ``jobStatus.state`` (Flink's job
states, upper case), ``jobManagerDeploymentStatus`` and ``lifecycleState``, and ``error``.
Karmada's rules: ``resourcecustomizations/flink.apache.org/v1beta1/FlinkDeployment``.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

from karmactl.api.objects import deepcopy
from karmactl.interpreter._common import InterpreterError

from . import Rules
from ._util import component, dig, item_statuses, number, pick, template_status

_TERMINAL = {"FINISHED", "FAILED", "CANCELED", "SUSPENDED"}
_SHORT_LIVED = {"CANCELLING", "FAILING", "RESTARTING"}
_EPHEMERAL = {"CREATED", "INITIALIZING", "RECONCILING"}
# errors of the user's own making (an image that cannot be pulled...): the job is not rescheduled for them
_USER_ERRORS = ("ErrImagePull", "ImagePullBackOff", "CrashLoopBackOff")
_STATUS = ("clusterInfo", "error", "jobManagerDeploymentStatus", "jobStatus", "observedGeneration", "lifecycleState",
           "reconciliationStatus", "taskManager")

_FLINK_UNITS = {"": 1, "b": 1, "bytes": 1, "k": 2**10, "kb": 2**10, "kibibytes": 2**10, "m": 2**20, "mb": 2**20,
                "mebibytes": 2**20, "g": 2**30, "gb": 2**30, "gibibytes": 2**30, "t": 2**40, "tb": 2**40,
                "tebibytes": 2**40}


def _health(obj: dict) -> bool:
    """RUNNING and terminal job states are healthy, so are short-lived transitions; CREATED,
    INITIALIZING and RECONCILING only with a user error the operator reports; without a job
    state, healthy when the JobManager is READY and the lifecycle STABLE."""
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    state = dig(status, "jobStatus", "state")
    if state is None:
        return status.get("jobManagerDeploymentStatus") == "READY" and status.get("lifecycleState") == "STABLE"
    if state == "RUNNING" or state in _TERMINAL or state in _SHORT_LIVED:
        return True
    if state in _EPHEMERAL:
        error = status.get("error")
        return isinstance(error, str) and any(e in error for e in _USER_ERRORS)
    return False


def memory_bytes(value) -> Fraction:
    """A Flink memory size in bytes: a number with an optional unit (b, k/kb, m/mb, g/gb, t/tb:
    binary multiples, any case, spaces allowed), or a Kubernetes quantity (``2Gi``, ``1G``).

    Raises:
        InterpreterError: neither.
    """
    text = str(value).strip()
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)", text)
    if match and match.group(2).lower() in _FLINK_UNITS:
        return Fraction(match.group(1)) * _FLINK_UNITS[match.group(2).lower()]
    from karmactl.api.quantity import QuantityError, parse_quantity
    try:
        return parse_quantity(text)
    except QuantityError:
        raise InterpreterError(f"memory {value!r} is neither a Flink memory size nor a quantity") from None


def _quantity(amount: Fraction) -> str:
    from karmactl.api.quantity import BINARY_SI, canonical_quantity as _canonical

    return _canonical(Fraction(math.ceil(amount)), BINARY_SI)


def _pod_claim(obj: dict) -> dict:
    """The nodeClaim and priority class the shared ``spec.podTemplate`` gives every pod."""
    pod = dig(obj, "spec", "podTemplate", "spec") or {}
    out: dict = {}
    claim = {k: deepcopy(pod[k]) for k in ("nodeSelector", "tolerations") if pod.get(k)}
    if claim:
        out["nodeClaim"] = claim
    if pod.get("priorityClassName"):
        out["priorityClassName"] = pod["priorityClassName"]
    return out


def _task_managers(obj: dict) -> int:
    replicas = number(dig(obj, "spec", "taskManager", "replicas"), None)
    if replicas is not None:
        return int(replicas)
    parallelism = number(dig(obj, "spec", "job", "parallelism"), None)
    slots = number(dig(obj, "spec", "flinkConfiguration", "taskmanager.numberOfTaskSlots"), None)
    if parallelism is None or not slots:
        return 1
    return math.ceil(parallelism / slots)


def _resources(obj: dict, role: str) -> dict:
    out = {}
    cpu = dig(obj, "spec", role, "resource", "cpu")
    if cpu is not None:
        from karmactl.interpreter.luakube import canonical_quantity
        out["cpu"] = canonical_quantity(cpu)
    memory = dig(obj, "spec", role, "resource", "memory")
    if memory is not None:
        out["memory"] = _quantity(memory_bytes(memory))
    return out


def _requirements(obj: dict, request: dict) -> dict | None:
    out = _pod_claim(obj)
    if request:
        out["resourceRequest"] = request
    return out or None


def _components(obj: dict) -> list[dict]:
    """``jobmanager`` and ``taskmanager``, each with its own resources and the shared pod template's claim."""
    return [component("jobmanager", number(dig(obj, "spec", "jobManager", "replicas"), 1),
                      _requirements(obj, _resources(obj, "jobManager"))),
            component("taskmanager", _task_managers(obj), _requirements(obj, _resources(obj, "taskManager")))]


def _replicas(obj: dict) -> tuple[int, dict | None]:
    """JobManagers plus TaskManagers; one replica asks for the larger CPU and memory of the two roles."""
    from karmactl.api.quantity import parse_quantity

    job, task = _resources(obj, "jobManager"), _resources(obj, "taskManager")
    request = {}
    for name in ("cpu", "memory"):
        values = [r[name] for r in (job, task) if name in r]
        if values:
            request[name] = max(values, key=parse_quantity)
    requirements = _requirements(obj, request) or {}
    namespace = dig(obj, "metadata", "namespace")
    if namespace:
        requirements["namespace"] = namespace
    replicas = int(number(dig(obj, "spec", "jobManager", "replicas"), 1)) + _task_managers(obj)
    return replicas, requirements or None


def _aggregate(template: dict, items, _now) -> dict:
    """The last reporting member's status fields (a FlinkDeployment runs in one cluster)."""
    status = template_status(template)
    if not items:
        return status
    last = None
    for _cluster, member in item_statuses(items):
        if member is not None:
            last = member
    for key in _STATUS:
        if last is not None and last.get(key) is not None:
            status[key] = deepcopy(last[key])
        elif last is not None:
            status.pop(key, None)
    return status


RULES = {
    ("flink.apache.org/v1beta1", "FlinkDeployment"): Rules(
        health=_health, components=_components, replica=_replicas, aggregate=_aggregate,
        reflect=lambda obj: pick(obj.get("status") or {}, _STATUS) if isinstance(obj.get("status"), dict) else {}),
}
