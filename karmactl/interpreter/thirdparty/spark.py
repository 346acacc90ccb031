"""Spark operator (``sparkoperator.k8s.io/v1beta2`` SparkApplication).

Written from the Spark operator's API and Spark's resource rules: one driver pod and
``spec.executor.instances`` executors (with ``spec.dynamicAllocation`` enabled, at least its
``initialExecutors`` and ``minExecutors``); each pod asks for ``cores`` CPUs (default 1) and its
JVM ``memory`` (Java size: ``512m``, ``2g``; default ``1g``) plus ``memoryOverhead`` - by default
``memoryOverheadFactor`` of the memory (0.1 for Java/Scala, 0.4 otherwise), at least 384 MiB;
optional ``gpu: {name, quantity}``. The status reports ``applicationState.state``.
Karmada's rules: ``resourcecustomizations/sparkoperator.k8s.io/v1beta2/SparkApplication``.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

from karmactl.api.objects import deepcopy
from karmactl.interpreter._common import InterpreterError

from . import Rules
from ._util import component, dig, item_statuses, number, pick, template_status

_JAVA_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30,
               "t": 2**40, "tb": 2**40, "p": 2**50, "pb": 2**50}
_MIN_OVERHEAD = 384 * 2**20
_STATE_ORDER = {"UNKNOWN": 0, "": 0, "SUBMITTED": 1, "PENDING_RERUN": 1, "COMPLETED": 2, "SUSPENDING": 3,
                "SUSPENDED": 3, "RUNNING": 4, "RESUMING": 4, "SUCCEEDING": 4, "INVALIDATING": 5, "FAILING": 6,
                "FAILED": 6, "SUBMISSION_FAILED": 6}
_STATUS = ("applicationState", "driverInfo", "executorState", "sparkApplicationId", "lastSubmissionAttemptTime",
           "submissionAttempts", "executionAttempts", "submissionID", "terminationTime")


def java_memory(value) -> Fraction:
    """A Java memory size (``512m``, ``2g``, ``1024k``; binary multiples) in bytes.

    Raises:
        InterpreterError: not a Java memory size.
    """
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([a-z]*)", str(value).strip().lower())
    if not match or match.group(2) not in _JAVA_UNITS:
        raise InterpreterError(f"memory {value!r} is not a Java memory size (such as 512m or 2g)")
    return Fraction(match.group(1)) * _JAVA_UNITS[match.group(2)]


def _pod_memory(role: dict, factor) -> str:
    from karmactl.api.quantity import BINARY_SI, canonical_quantity as _canonical

    memory = java_memory(role.get("memory") or "1g")
    if role.get("memoryOverhead") is not None:
        overhead = java_memory(role["memoryOverhead"])
    else:
        overhead = max(memory * Fraction(str(factor)), Fraction(_MIN_OVERHEAD))
    return _canonical(Fraction(math.ceil(memory + overhead)), BINARY_SI)


def _requirements(role: dict, factor) -> dict:
    from karmactl.interpreter.luakube import canonical_quantity

    request = {"cpu": canonical_quantity(role.get("cores") if role.get("cores") is not None else 1),
               "memory": _pod_memory(role, factor)}
    gpu = role.get("gpu")
    if isinstance(gpu, dict) and gpu.get("name") and number(gpu.get("quantity")) > 0:
        request[gpu["name"]] = canonical_quantity(number(gpu["quantity"]))
    out: dict = {"resourceRequest": request}
    claim = {k: deepcopy(role[k]) for k in ("nodeSelector", "tolerations") if role.get(k)}
    hard = dig(role, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    if hard:
        claim["hardNodeAffinity"] = deepcopy(hard)
    if claim:
        out["nodeClaim"] = claim
    if role.get("priorityClassName"):
        out["priorityClassName"] = role["priorityClassName"]
    return out


def _components(obj: dict) -> list[dict]:
    """``driver`` (one pod) and ``executor`` (``instances``, raised to the dynamic allocation's
    initial and minimum executors when it is enabled)."""
    spec = obj.get("spec") or {}
    jvm = str(spec.get("type") or "").lower() in ("java", "scala")
    factor = number(spec.get("memoryOverheadFactor"), 0.1 if jvm else 0.4)
    executors = number(dig(spec, "executor", "instances"), 1)
    if dig(spec, "dynamicAllocation", "enabled"):
        executors = max(executors, number(dig(spec, "dynamicAllocation", "initialExecutors"), 1),
                        number(dig(spec, "dynamicAllocation", "minExecutors"), 1))
    return [component("driver", 1, _requirements(spec.get("driver") or {}, factor)),
            component("executor", executors, _requirements(spec.get("executor") or {}, factor))]


def _aggregate(template: dict, items, _now) -> dict:
    """One member: its status. Several: the application state of the worst member, attempts
    summed, the latest submission and termination times, executor states joined."""
    statuses = item_statuses(items)
    if not statuses:
        return template_status(template)
    if len(statuses) == 1:
        return deepcopy(statuses[0][1] or {})
    status = template_status(template)
    state, worst, executors = {}, -1, {}
    attempts = {"executionAttempts": 0, "submissionAttempts": 0}
    times = {"lastSubmissionAttemptTime": "", "terminationTime": ""}
    for _cluster, member in statuses:
        if member is None:
            continue
        app = member.get("applicationState")
        if isinstance(app, dict) and _STATE_ORDER.get(app.get("state") or "", 0) > worst:
            worst, state = _STATE_ORDER.get(app.get("state") or "", 0), deepcopy(app)
        for key in attempts:
            attempts[key] += number(member.get(key))
        for key in times:
            if member.get(key) and member[key] > times[key]:
                times[key] = member[key]
        executors.update(deepcopy(member.get("executorState") or {}))
    status.update(applicationState=state, executorState=executors, **attempts, **times)
    return status


RULES = {
    ("sparkoperator.k8s.io/v1beta2", "SparkApplication"): Rules(
        health=lambda obj: dig(obj, "status", "applicationState", "state") not in (None, "FAILED"),
        components=_components, aggregate=_aggregate,
        reflect=lambda obj: pick(obj.get("status") or {}, _STATUS) if isinstance(obj.get("status"), dict) else {}),
}
