"""Kubeflow (``kubeflow.org``): Notebook, PyTorchJob, TFJob (training operator v1) and MPIJob (v2beta1).

Written from Kubeflow's APIs: a Notebook runs one pod from ``spec.template`` and reports that
pod's ``containerState``; training jobs keep one pod template per replica type
(``spec.pytorchReplicaSpecs``, ``tfReplicaSpecs``, ``mpiReplicaSpecs``: ``replicas`` defaulting
to 1, MPI workers to 0), report ``replicaStatuses`` per type and JobConditions (Created,
Running, Restarting, Succeeded, Failed). Karmada's rules: ``resourcecustomizations/kubeflow.org/``.
"""
from __future__ import annotations

from karmactl.api.objects import deepcopy

from . import Rules
from ._util import (component, dig, item_statuses, number, omit_empty, pod_requirements, template_dependencies,
                    template_status)


def _stamped(ctype: str, reason: str, message: str, now: str | None) -> dict:
    condition = {"type": ctype, "status": "True", "reason": reason, "message": message}
    if now:
        condition["lastProbeTime"] = condition["lastTransitionTime"] = now
    return condition


# --- Notebook ------------------------------------------------------------------------------------


def _notebook_health(obj: dict) -> bool:
    """Healthy while the container runs or is being created, or ended without an error."""
    state = dig(obj, "status", "containerState")
    if not isinstance(state, dict):
        return False
    if state.get("running") is not None:
        return True
    if state.get("waiting") is not None:
        return (state["waiting"] or {}).get("reason") == "ContainerCreating"
    terminated = state.get("terminated")
    if terminated is not None:
        terminated = terminated or {}
        return terminated.get("reason") not in ("Error", "OOMKilled", "ContainerCannotRun") and \
            number(terminated.get("exitCode")) == 0
    return False


def _notebook_aggregate(template: dict, items, now) -> dict:
    """One member: its status. Several: ready replicas summed, a failed container state (none,
    waiting or terminated) wins, else the latest running start; Failed/Ready conditions."""
    if not items:
        return template_status(template)
    statuses = item_statuses(items)
    if len(statuses) == 1:
        return deepcopy(statuses[0][1] or {})
    ready, failed, running, state, latest = 0, [], 0, None, None
    for cluster, member in statuses:
        if member is None:
            continue
        ready += number(member.get("readyReplicas"))
        cs = member.get("containerState")
        if not cs or cs.get("terminated") is not None or cs.get("waiting") is not None:
            failed.append(cluster)
            state = deepcopy(cs) if cs else {"waiting": {"reason": "Unschedulable"}}
        elif cs.get("running") is not None and not failed:
            running += 1
            started = (cs["running"] or {}).get("startedAt")
            if state is None:
                state, latest = {"running": {"startedAt": started}}, started
            elif started is not None and (latest is None or started > latest):
                latest = started
                state["running"] = {"startedAt": started}
    conditions = []
    if failed:
        conditions.append(_stamped("Failed", "NotebookFailed",
                                   "Notebook executed failed in member clusters: " + ", ".join(failed), now))
    if running == len(statuses) and running > 0:
        conditions.append(_stamped("Ready", "Ready", "All notebooks are ready", now))
    out = {"readyReplicas": ready, "conditions": conditions}
    if state is not None:
        out["containerState"] = state
    return out


def _notebook_reflect(obj: dict) -> dict:
    status = obj.get("status")
    if not isinstance(status, dict):
        return {}
    conditions = status.get("conditions")
    return {"readyReplicas": number(status.get("readyReplicas")),
            "containerState": deepcopy(status.get("containerState") or {}),
            "conditions": deepcopy(conditions) if isinstance(conditions, list) else []}


NOTEBOOK = Rules(replica=lambda obj: (1, pod_requirements(dig(obj, "spec", "template"))),
                 health=_notebook_health, aggregate=_notebook_aggregate, reflect=_notebook_reflect)


# --- training jobs -------------------------------------------------------------------------------


def _job_health(obj: dict) -> bool:
    """Healthy unless the job has no conditions yet or has a Failed condition that is True."""
    conditions = dig(obj, "status", "conditions")
    if not isinstance(conditions, list):
        return False
    return not any(isinstance(c, dict) and c.get("type") == "Failed" and c.get("status") == "True"
                   for c in conditions)


def _replica_components(field: str, types, default_replicas=lambda t: 1, need_template: bool = False):
    """One component per replica type present in ``spec.<field>`` (``types``: ``[(key, name)]``;
    with ``need_template`` only types that have a pod template)."""
    def components(obj: dict) -> list[dict]:
        specs = dig(obj, "spec", field) or {}
        out = []
        for key, name in types(specs):
            spec = specs.get(key)
            if not isinstance(spec, dict) or (need_template and spec.get("template") is None):
                continue
            out.append(component(name, number(spec.get("replicas"), default_replicas(key)),
                                 pod_requirements(spec.get("template"))))
        return out
    return components


def _replica_dependencies(field: str, keys):
    def dependencies(obj: dict) -> list[dict]:
        refs = []
        for key in keys:
            for ref in template_dependencies(obj, "spec", field, key, "template"):
                if ref not in refs:
                    refs.append(ref)
        return refs
    return dependencies


def _times(statuses) -> dict:
    """The earliest ``startTime``, latest ``completionTime`` and latest ``lastReconcileTime``."""
    out: dict = {}
    for _cluster, member in statuses:
        for key, later in (("startTime", False), ("completionTime", True), ("lastReconcileTime", True)):
            value = (member or {}).get(key)
            if value and (key not in out or (value > out[key] if later else value < out[key])):
                out[key] = value
    return out


def _replica_statuses(statuses, types) -> dict:
    sums = {t: {"active": 0, "failed": 0, "succeeded": 0} for t in types}
    for _cluster, member in statuses:
        for t in types:
            counts = ((member or {}).get("replicaStatuses") or {}).get(t)
            if isinstance(counts, dict):
                for key in ("active", "failed", "succeeded"):
                    sums[t][key] += number(counts.get(key))
    return sums


def _finished(member: dict | None) -> str | None:
    found = None
    for c in (member or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("status") == "True" and c.get("type") in ("Succeeded", "Failed"):
            found = c["type"]
    return found


_PYTORCH_TYPES = ("Master", "Worker")


def _pytorch_tally(statuses) -> tuple[list[str], int, int, dict | None]:
    """``(failed clusters, succeeded members, created members, the last Running condition seen)``."""
    failed, succeeded, created, running = [], 0, 0, None
    for cluster, member in statuses:
        conditions = [c for c in (member or {}).get("conditions") or [] if isinstance(c, dict)]
        true = {c.get("type") for c in conditions if c.get("status") == "True"}
        if "Failed" in true:
            failed.append(cluster)
        elif "Succeeded" in true:
            succeeded += 1
        created += "Created" in true
        running = next((c for c in reversed(conditions) if c.get("type") == "Running"), running)
    return failed, succeeded, created, running


def _pytorch_aggregate(template: dict, items, _now) -> dict:
    """Replica counts summed; Created (any member created), Running (False once final), then
    Failed (any member failed) or Succeeded (every member succeeded), stamped with the earliest
    start and latest completion; empty fields left out."""
    status = template_status(template)
    if not items:
        for key in ("startTime", "completionTime"):
            status.pop(key, None)
        status["replicaStatuses"], status["conditions"] = {}, []
        return status
    statuses = item_statuses(items)
    times = _times(statuses)
    failed, succeeded, created, running = _pytorch_tally(statuses)
    conditions = []
    start, completion = times.get("startTime"), times.get("completionTime")

    def stamped(ctype, state, reason, message, when):
        return {"type": ctype, "status": state, "lastUpdateTime": when, "lastTransitionTime": when,
                "reason": reason, "message": message}
    if created:
        conditions.append(stamped("Created", "True", "PyTorchJobCreated", "PyTorchJob is created.", start))
    final = bool(failed) or succeeded == len(statuses)
    if running is not None:
        conditions.append(dict(stamped("Running", "False" if final else "True", "PyTorchJobRunning",
                                       "PyTorchJob is running.", None),
                               lastUpdateTime=running.get("lastUpdateTime"),
                               lastTransitionTime=running.get("lastTransitionTime")))
    if failed:
        conditions.append(stamped("Failed", "True", "PyTorchJobFailed",
                                  "PyTorchJob executed failed in member clusters: " + ", ".join(failed), completion))
    elif succeeded == len(statuses) and succeeded > 0:
        conditions.append(stamped("Succeeded", "True", "PyTorchJobSucceeded", "PyTorchJob is successfully completed.",
                                  completion))
        status["completionTime"] = completion
    status["startTime"], status["lastReconcileTime"] = start, times.get("lastReconcileTime")
    status["replicaStatuses"] = _replica_statuses(statuses, _PYTORCH_TYPES)
    status["conditions"] = conditions
    return omit_empty(status) or {}


_TF_TYPES = (("PS", "ps"), ("Worker", "worker"), ("Chief", "chief"), ("Master", "master"), ("Evaluator", "evaluator"))


def _tfjob_aggregate(template: dict, items, now) -> dict:
    """Replica counts summed; Failed (any member failed) and Succeeded (every member succeeded)
    conditions stamped ``now``; empty fields left out."""
    status = template_status(template)
    if not items:
        for key in ("startTime", "completionTime"):
            status.pop(key, None)
        status["replicaStatuses"], status["conditions"] = {}, []
        return status
    statuses = item_statuses(items)
    times = _times(statuses)
    failed, succeeded = [], 0
    for cluster, member in statuses:
        finished = _finished(member)
        if finished == "Succeeded":
            succeeded += 1
        elif finished == "Failed":
            failed.append(cluster)
    conditions = []
    if failed:
        conditions.append(_stamped("Failed", "TFJobFailed",
                                   "TFJob executed failed in member clusters: " + ", ".join(failed), now))
    if succeeded == len(statuses) and succeeded > 0:
        conditions.append(_stamped("Succeeded", "Completed", "TFJob completed successfully", now))
        status["completionTime"] = times.get("completionTime")
    status["startTime"], status["lastReconcileTime"] = times.get("startTime"), times.get("lastReconcileTime")
    status["replicaStatuses"] = _replica_statuses(statuses, [t for t, _n in _TF_TYPES])
    status["conditions"] = conditions
    return omit_empty(status) or {}


def _mpijob_health(obj: dict) -> bool:
    return bool(dig(obj, "status", "conditions")) and _job_health(obj)


def _mpijob_aggregate(template: dict, items, _now) -> dict:
    """One member: its status. Several: replica counts per type summed, the earliest start and
    latest completion and reconcile times, and per condition type the most recently updated."""
    if not items:
        return template_status(template)
    statuses = item_statuses(items)
    if len(statuses) == 1:
        return deepcopy(statuses[0][1] or {})
    replica_statuses: dict = {}
    latest: dict = {}
    for _cluster, member in statuses:
        for rtype, counts in ((member or {}).get("replicaStatuses") or {}).items():
            sums = replica_statuses.setdefault(rtype, {"active": 0, "succeeded": 0, "failed": 0})
            for key in sums:
                sums[key] += number((counts or {}).get(key))
        for c in (member or {}).get("conditions") or []:
            when = (c or {}).get("lastUpdateTime") or (c or {}).get("lastTransitionTime")
            if when:
                seen = latest.get(c.get("type"))
                if seen is None or when > (seen.get("lastUpdateTime") or seen.get("lastTransitionTime")):
                    latest[c.get("type")] = deepcopy(c)
    status = dict(_times(statuses), replicaStatuses=replica_statuses, conditions=list(latest.values()))
    return omit_empty(status, drop_zero=False) or {}


def _mpijob_reflect(obj: dict) -> dict:
    status = obj.get("status")
    if not isinstance(status, dict):
        return {}
    out = {"replicaStatuses": {k: {f: v.get(f) for f in ("active", "succeeded", "failed", "selector")
                                   if v.get(f) is not None}
                               for k, v in (status.get("replicaStatuses") or {}).items() if isinstance(v, dict)},
           "conditions": deepcopy(status["conditions"]) if isinstance(status.get("conditions"), list) else []}
    for key in ("startTime", "completionTime", "lastReconcileTime"):
        if status.get(key) is not None:
            out[key] = status[key]
    return out


RULES = {
    ("kubeflow.org/v1", "Notebook"): NOTEBOOK,
    ("kubeflow.org/v1", "PyTorchJob"): Rules(
        components=_replica_components("pytorchReplicaSpecs", lambda specs: [("Master", "master"), ("Worker", "worker")]),
        aggregate=_pytorch_aggregate, health=_job_health,
        dependencies=_replica_dependencies("pytorchReplicaSpecs", _PYTORCH_TYPES)),
    ("kubeflow.org/v1", "TFJob"): Rules(
        components=_replica_components("tfReplicaSpecs", lambda specs: _TF_TYPES),
        aggregate=_tfjob_aggregate, health=_job_health,
        dependencies=_replica_dependencies("tfReplicaSpecs", [t for t, _n in _TF_TYPES])),
    ("kubeflow.org/v2beta1", "MPIJob"): Rules(
        health=_mpijob_health,
        components=_replica_components("mpiReplicaSpecs", lambda specs: [(k, k) for k in specs],
                                       default_replicas=lambda key: 0 if key.lower() == "worker" else 1,
                                       need_template=True),
        aggregate=_mpijob_aggregate, reflect=_mpijob_reflect),
}
