"""Volcano (``batch.volcano.sh/v1alpha1`` Job).

Written from Volcano's API: a Job is a gang of ``spec.tasks``, each a pod template whose
``minAvailable`` pods must run together; the job
reports ``status.state.phase`` (Pending, Running, Restarting, Completing, Completed, Aborting,
Aborted, Terminating, Terminated, Failed), pod counters and ``taskStatusCount`` per task.
Karmada's rules: ``resourcecustomizations/batch.volcano.sh/v1alpha1/Job``.
"""
from __future__ import annotations

import re

from karmactl.api.objects import deepcopy

from . import Rules
from ._util import component, dig, item_statuses, number, omit_empty, pod_requirements, template_status

_HEALTHY_PHASES = {"Running", "Completed", "Pending", "Aborting", "Aborted", "Restarting", "Completing",
                   "Terminating", "Terminated"}
_FAILED_CONDITIONS = {"Failed", "Aborted", "Aborting", "Terminated", "Terminating"}
_COUNTERS = ("minAvailable", "pending", "running", "succeeded", "failed", "terminating", "unknown", "retryCount")


def _health(obj: dict) -> bool:
    """Healthy in every phase but Failed (and while no phase is reported: unhealthy)."""
    return dig(obj, "status", "state", "phase") in _HEALTHY_PHASES


def _components(obj: dict) -> list[dict]:
    """One component per task: ``minAvailable`` pods (1 when unset) of its template; a task
    without a name is ``task-<index>``."""
    out = []
    for i, task in enumerate(dig(obj, "spec", "tasks") or []):
        task = task or {}
        name = task.get("name") or f"task-{i}"
        out.append(component(name, number(task.get("minAvailable"), 1), pod_requirements(task.get("template"))))
    return out


def _seconds(duration) -> float:
    """A Go duration (``1h2m3s``) in seconds; numbers as they are; 0 when unreadable."""
    if isinstance(duration, (int, float)) and not isinstance(duration, bool):
        return duration
    if not isinstance(duration, str):
        return 0
    scale = {"h": 3600, "m": 60, "s": 1}
    found = sum(float(n) * scale[u] for n, u in re.findall(r"([\d.]+)([hms])", duration))
    return found or number(duration)


def _add(status: dict, member: dict) -> None:
    """One member's counters, duration, task phases and controlled resources added to ``status``."""
    for key in _COUNTERS:
        status[key] += number(member.get(key))
    status["version"] = max(status["version"], number(member.get("version")))
    if _seconds(member.get("runningDuration")) > _seconds(status["runningDuration"]):
        status["runningDuration"] = member["runningDuration"]
    for task, counts in (member.get("taskStatusCount") or {}).items():
        phases = status["taskStatusCount"].setdefault(task, {"phase": {}})["phase"]
        for phase, count in ((counts or {}).get("phase") or {}).items():
            phases[phase] = phases.get(phase, 0) + number(count)
    status["controlledResources"].update(deepcopy(member.get("controlledResources") or {}))


def _conditions(members: list[dict]) -> list[dict]:
    """The conditions of the first member with a failed one, else per condition status the one
    with the latest transition (a member's conditions after its first failed one are not read)."""
    latest: dict = {}
    for member in members:
        conditions = [c for c in member.get("conditions") or [] if isinstance(c, dict)]
        if any(c.get("status") in _FAILED_CONDITIONS for c in conditions):
            return deepcopy(conditions)
        for c in conditions:
            seen = latest.get(c.get("status"))
            if seen is None or (c.get("lastTransitionTime") or "") > (seen.get("lastTransitionTime") or ""):
                latest[c.get("status")] = deepcopy(c)
    return list(latest.values())


def _state(statuses, now) -> dict:
    failed = [cluster for cluster, member in statuses if dig(member, "state", "phase") in ("Failed", "Aborted")]
    completed = sum(1 for _cluster, member in statuses if dig(member, "state", "phase") == "Completed")
    state: dict = {}
    if failed:
        state = {"phase": "Failed", "reason": "VolcanoJobFailed", "message": "Job failed in clusters: " + ",".join(failed)}
    if completed == len(statuses):
        state = {"phase": "Completed", "reason": "Completed", "message": "Job completed successfully"}
    if state and now:
        state["lastTransitionTime"] = now
    return state


def _aggregate(template: dict, items, now) -> dict:
    """One member: its status. Several: counters summed (``version`` the largest), the longest
    ``runningDuration``, ``taskStatusCount`` phases summed per task; the state Failed when a member
    failed or was aborted (naming the clusters), Completed when every member completed; the
    conditions of the first failing member, else per status the latest transition."""
    statuses = item_statuses(items)
    if not statuses:
        return template_status(template)
    if len(statuses) == 1:
        return deepcopy(statuses[0][1] or {})
    status: dict = dict.fromkeys(_COUNTERS, 0)
    status.update({"version": 0, "runningDuration": "0s", "taskStatusCount": {}, "controlledResources": {}})
    members = [member for _cluster, member in statuses if member is not None]
    for member in members:
        _add(status, member)
    status["state"] = _state(statuses, now)
    status["conditions"] = _conditions(members)
    return omit_empty(status) or {}


def _reflect(obj: dict) -> dict:
    status = obj.get("status")
    if not isinstance(status, dict):
        return {}
    out = {k: status[k] for k in _COUNTERS + ("version", "runningDuration") if status.get(k) is not None}
    out["taskStatusCount"] = deepcopy(status.get("taskStatusCount") or {})
    out["controlledResources"] = deepcopy(status.get("controlledResources") or {})
    if status.get("state") is not None:
        out["state"] = deepcopy(status["state"])
    out["conditions"] = deepcopy(status["conditions"]) if isinstance(status.get("conditions"), list) else []
    return out


RULES = {
    ("batch.volcano.sh/v1alpha1", "Job"): Rules(health=_health, components=_components, aggregate=_aggregate,
                                                reflect=_reflect),
}
