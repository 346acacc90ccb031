"""Aggregation of member statuses into the resource template (``AggregateStatus``), semantics §10.2.

Follows ``pkg/resourceinterpreter/default/native/aggregatestatus.go``, ``pkg/util/helper/job.go``
(``ParsingJobStatus``), ``pkg/util/helper/service.go`` and ``ingress.go`` (load-balancer ingress
de-duplication). Items are the binding's ``status.aggregatedStatus`` entries
``{clusterName, status, applied, health}``; items without ``status`` are skipped unless a rule says
otherwise, but they still count in "every item" checks.
"""
from __future__ import annotations

from karmactl.api.objects import deepcopy, parse_time

from ._common import (CRONJOB, DAEMONSET, DEPLOYMENT, HPA, INGRESS, JOB, PDB, POD, PV, PVC, REPLICASET,
                      SERVICE, STATEFULSET, InterpreterError, canonical_json, describe, get_int,
                      get_list, get_str, gvk, omit_zero)


def _member_status(item: dict) -> dict | None:
    status = item.get("status")
    if status is None:
        return None
    if not isinstance(status, dict):
        raise InterpreterError(f"status of cluster {item.get('clusterName')} is not an object")
    return status


def _unchanged(template: dict) -> dict:
    return deepcopy(template.get("status") or {})


def _settle(template: dict, new_status: dict) -> dict:
    """``new_status``, or the template's status when the two serialize identically."""
    old = template.get("status") or {}
    if canonical_json(old) == canonical_json(new_status):
        return deepcopy(old)
    return new_status


# --- workloads that track generations --------------------------------------------------------

def _generation_counters(template: dict, items: list[dict], fields: tuple[str, ...],
                         required: tuple[str, ...], compare_member_generation: bool) -> dict:
    """Sum ``fields`` over members and move ``observedGeneration`` forward when all members caught up.

    ``observedGeneration`` becomes the template generation only if every item (items without
    status count as not caught up) reports ``observedGeneration >= generation`` and
    ``resourceTemplateGeneration >= template generation``. StatefulSet (``compare_member_generation``)
    compares ``resourceTemplateGeneration`` with the member's own generation instead — a quirk of
    Karmada kept on purpose.
    """
    template_generation = get_int(template, "metadata", "generation")
    old = template.get("status") or {}
    sums = dict.fromkeys(fields, 0)
    caught_up = 0
    for item in items:
        member = _member_status(item)
        if member is None:
            continue
        generation = get_int(member, "generation")
        target = generation if compare_member_generation else template_generation
        if (get_int(member, "observedGeneration") >= generation
                and get_int(member, "resourceTemplateGeneration") >= target):
            caught_up += 1
        for key in fields:
            sums[key] += get_int(member, key)
    sums["observedGeneration"] = get_int(old, "observedGeneration")
    if caught_up == len(items):
        sums["observedGeneration"] = template_generation
    if all(sums[key] == get_int(old, key) for key in sums):
        return _unchanged(template)
    # Only the aggregated counters change; conditions and the rest of the status stay.
    new = deepcopy(old)
    optional = tuple(k for k in sums if k not in required)
    omit_zero(new, required, optional, sums)
    return new


def _deployment(template, items):
    return _generation_counters(
        template, items,
        ("replicas", "readyReplicas", "updatedReplicas", "availableReplicas", "unavailableReplicas"),
        (), False)


def _replicaset(template, items):
    return _generation_counters(template, items, ("replicas", "readyReplicas", "availableReplicas"),
                                ("replicas",), False)


def _statefulset(template, items):
    return _generation_counters(
        template, items,
        ("availableReplicas", "currentReplicas", "readyReplicas", "replicas", "updatedReplicas"),
        ("replicas", "availableReplicas"), True)


def _daemonset(template, items):
    return _generation_counters(
        template, items,
        ("currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberMisscheduled",
         "numberReady", "updatedNumberScheduled", "numberUnavailable"),
        ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady"), False)


# --- Job and CronJob -------------------------------------------------------------------------

def _finished(status: dict) -> str | None:
    for cond in get_list(status, "conditions"):
        if (isinstance(cond, dict) and cond.get("type") in ("Complete", "Failed")
                and cond.get("status") == "True"):
            return cond["type"]
    return None


def _condition(ctype: str, reason: str, message: str, now: str | None) -> dict:
    cond = {"type": ctype, "status": "True"}
    if now:
        cond["lastProbeTime"] = now
        cond["lastTransitionTime"] = now
    cond["reason"] = reason
    cond["message"] = message
    return cond


def _earlier(a: str, b: str) -> bool:
    return parse_time(a) < parse_time(b)


def _job(template, items, now):
    old = template.get("status") or {}
    if _finished(old):
        # A finished Job is final: members may be cleaned up (TTL) without undoing it.
        return _unchanged(template)
    tally = _JobTally(items)
    conditions = tally.conditions(len(items), now)
    new: dict = {}
    if conditions:
        new["conditions"] = conditions
    template_start = old.get("startTime")
    if template_start:
        new["startTime"] = template_start
    elif tally.started == len(items) and tally.started > 0:
        new["startTime"] = tally.start_time
    if tally.completion_time is not None and tally.completed == len(items):
        new["completionTime"] = tally.completion_time
    omit_zero(new, (), ("active", "succeeded", "failed"), tally.sums)
    return _settle(template, new)


class _JobTally:
    """The member Jobs' statuses of :func:`_job` summed: active/succeeded/failed counts, how many
    completed (and met their success criteria), the clusters where the Job failed, the earliest
    start and latest completion times, and how many members have each."""

    def __init__(self, items: list[dict]) -> None:
        self.sums = {"active": 0, "succeeded": 0, "failed": 0}
        self.failed_clusters: list[str] = []
        self.successful = self.started = self.completed = self.criteria_met = 0
        self.start_time = self.completion_time = None
        for item in items:
            member = _member_status(item)
            if member is not None:
                self._add(item, member)

    def _add(self, item: dict, member: dict) -> None:
        for key in self.sums:
            self.sums[key] += get_int(member, key)
        finished = _finished(member)
        if finished == "Complete":
            self.successful += 1
        elif finished == "Failed":
            self.failed_clusters.append(item.get("clusterName", ""))
        if any(isinstance(c, dict) and c.get("type") == "SuccessCriteriaMet" and c.get("status") == "True"
               for c in get_list(member, "conditions")):
            self.criteria_met += 1
        member_start = member.get("startTime")
        if member_start:
            self.started += 1
            if self.start_time is None or _earlier(member_start, self.start_time):
                self.start_time = member_start
        member_completion = member.get("completionTime")
        if member_completion:
            self.completed += 1
            if self.completion_time is None or _earlier(self.completion_time, member_completion):
                self.completion_time = member_completion

    def conditions(self, count: int, now: str) -> list[dict]:
        """The template Job's conditions for ``count`` members: Failed when one failed, Complete
        (and SuccessCriteriaMet) when all completed; none for no members (a binding just created)."""
        conditions = []
        if self.failed_clusters:
            conditions.append(_condition("Failed", "JobFailed",
                                         f"Job executed failed in member clusters {','.join(self.failed_clusters)}",
                                         now))
        # No items (binding just created) must not mark the Job complete.
        if self.successful == count and self.successful > 0:
            conditions.append(_condition("Complete", "Completed", "Job completed", now))
            if self.criteria_met == count:
                conditions.append(_condition("SuccessCriteriaMet", "CompletionsReached",
                                             "All member clusters have met success criteria", now))
        return conditions


def _cronjob(template, items, now):
    active: list = []
    last_schedule = last_successful = None
    for item in items:
        member = _member_status(item)
        if member is None:
            continue
        active.extend(deepcopy(get_list(member, "active")))
        for key in ("lastScheduleTime", "lastSuccessfulTime"):
            value = member.get(key)
            current = last_schedule if key == "lastScheduleTime" else last_successful
            if value and (current is None or _earlier(current, value)):
                current = value
            if key == "lastScheduleTime":
                last_schedule = current
            else:
                last_successful = current
    new: dict = {}
    if active:
        new["active"] = active
    if last_schedule:
        new["lastScheduleTime"] = last_schedule
    if last_successful:
        new["lastSuccessfulTime"] = last_successful
    return _settle(template, new)


# --- Pod, PV, PVC ----------------------------------------------------------------------------

def _first_present(phases: set[str], order: tuple[str, ...]) -> str | None:
    for phase in order:
        if phase in phases:
            return phase
    return None


def _pod(template, items, now):
    if items is None:
        return _unchanged(template)
    phases: set[str] = set()
    containers: list[dict] = []
    init_containers: list[dict] = []
    for item in items:
        member = _member_status(item)
        if member is None:
            phases.add("Pending")  # not reflected yet: treat as still pending
            continue
        phases.add(get_str(member, "phase"))
        for target, key in ((containers, "containerStatuses"), (init_containers, "initContainerStatuses")):
            for cs in get_list(member, key):
                cs = cs or {}
                # Reduced to what makes sense across clusters (Go also emits zero-valued
                # required fields such as name/restartCount; they carry nothing and are left out).
                reduced = {"ready": bool(cs.get("ready", False))}
                if cs.get("state"):
                    reduced["state"] = deepcopy(cs["state"])
                target.append(reduced)
    new: dict = {}
    phase = _first_present(phases, ("Failed", "Pending", "Running", "Succeeded"))
    if phase:
        new["phase"] = phase
    if containers:
        new["containerStatuses"] = containers
    if init_containers:
        new["initContainerStatuses"] = init_containers
    return _settle(template, new)


def _pv(template, items, now):
    phases: set[str] = set()
    for item in items:
        member = _member_status(item)
        phases.add("Pending" if member is None else get_str(member, "phase"))
    phase = _first_present(phases, ("Failed", "Pending", "Available", "Bound", "Released"))
    return _settle(template, {"phase": phase} if phase else {})


def _pvc(template, items, now):
    phase = "Bound"
    for item in items:
        member = _member_status(item)
        if member is None:
            continue
        member_phase = get_str(member, "phase")
        if member_phase == "Lost":
            phase = "Lost"
            break
        if member_phase != "Bound":
            phase = member_phase
    return _settle(template, {"phase": phase} if phase else {})


# --- Service, Ingress ------------------------------------------------------------------------

def _port_key(port: dict):
    error = port.get("error")
    return (port.get("port") or 0, port.get("protocol") or "", error is not None, error or "")


def _dedupe_lb_ingress(entries: list[dict], with_ip_mode: bool) -> list[dict]:
    """De-duplicate load-balancer ingress entries by hostname/IP(/ipMode), union and sort their ports.

    ``helper.DedupeAndSortServiceLoadBalancerIngress`` / ``DedupeAndSortIngressLoadBalancerIngress``:
    the last entry of a key supplies the other fields; entries sort hostnames first (by hostname),
    then by IP, then (Services) ipMode with unset last.
    """
    merged: dict[tuple, dict] = {}
    ports: dict[tuple, dict[str, dict]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise InterpreterError("loadBalancer.ingress entries must be objects")
        key = (entry.get("hostname") or "", entry.get("ip") or "",
               entry.get("ipMode") if with_ip_mode else None)
        bucket = ports.setdefault(key, {})
        for port in entry.get("ports") or []:
            bucket.setdefault(canonical_json(port), port)
        copy = deepcopy(entry)
        copy.pop("ports", None)
        merged[key] = copy
    out = []
    for key, entry in merged.items():
        port_list = sorted((deepcopy(p) for p in ports[key].values()), key=_port_key)
        if port_list:
            entry["ports"] = port_list
        out.append(entry)

    def sort_key(entry):
        hostname = entry.get("hostname") or ""
        ip_mode = entry.get("ipMode") if with_ip_mode else None
        return (hostname == "", hostname, entry.get("ip") or "", ip_mode is None, ip_mode or "")

    out.sort(key=sort_key)
    return out


def _lb_union(template, items, with_ip_mode):
    entries: list[dict] = []
    for item in items:
        member = _member_status(item)
        if member is None:
            continue
        entries.extend(get_list(member, "loadBalancer", "ingress"))
    union = _dedupe_lb_ingress(entries, with_ip_mode)
    return _settle(template, {"loadBalancer": {"ingress": union} if union else {}})


def _service(template, items, now):
    if get_str(template, "spec", "type") != "LoadBalancer":
        return _unchanged(template)
    return _lb_union(template, items, True)


def _ingress(template, items, now):
    return _lb_union(template, items, False)


# --- PDB, HPA --------------------------------------------------------------------------------

def _pdb(template, items, now):
    sums = dict.fromkeys(("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"), 0)
    disrupted: dict = {}
    for item in items:
        member = _member_status(item)
        if member is None:
            continue
        for key in sums:
            sums[key] += get_int(member, key)
        for pod, when in (member.get("disruptedPods") or {}).items():
            # Pod names are only unique within a cluster.
            disrupted[f"{item.get('clusterName', '')}/{pod}"] = when
    new: dict = {}
    if disrupted:
        new["disruptedPods"] = dict(sorted(disrupted.items()))
    omit_zero(new, tuple(sums), (), sums)
    return _settle(template, new)


def _hpa(template, items, now):
    sums = {"currentReplicas": 0, "desiredReplicas": 0}
    for item in items:
        member = _member_status(item)
        if member is None:
            continue
        for key in sums:
            sums[key] += get_int(member, key)
    new: dict = {}
    omit_zero(new, ("desiredReplicas",), ("currentReplicas",), sums)
    return _settle(template, new)


_HOOKS = {
    DEPLOYMENT: lambda t, i, now: _deployment(t, i),
    REPLICASET: lambda t, i, now: _replicaset(t, i),
    STATEFULSET: lambda t, i, now: _statefulset(t, i),
    DAEMONSET: lambda t, i, now: _daemonset(t, i),
    JOB: _job,
    CRONJOB: _cronjob,
    POD: _pod,
    SERVICE: _service,
    INGRESS: _ingress,
    PV: _pv,
    PVC: _pvc,
    PDB: _pdb,
    HPA: _hpa,
}


def has_aggregate_hook(api_version: str, kind: str) -> bool:
    """Whether the native interpreter aggregates status for this GVK."""
    return (api_version, kind) in _HOOKS


def aggregate_status(template: dict, items: list[dict] | None, *, now: str | None = None) -> dict | None:
    """The template's new ``.status`` computed from the binding's aggregated status items (§10.2).

    Follows ``pkg/resourceinterpreter/default/native/aggregatestatus.go``.

    Args:
        template: the resource template (its current ``.status`` is the starting point).
        items: ``binding.status.aggregatedStatus`` entries ``{clusterName, status, applied, health}``.
        now: RFC 3339 time for ``lastProbeTime``/``lastTransitionTime`` of the Job conditions
            Karmada adds (``metav1.Now()`` upstream); left out when None. Nothing else reads it.

    Returns:
        None when the kind has no hook. Otherwise the new status — a copy of the current one
        (``{}`` when the template has none) when nothing changes, so callers can compare.

    Raises:
        InterpreterError: a member status or a field has the wrong type.
    """
    hook = _HOOKS.get(gvk(template))
    if hook is None:
        return None
    try:
        return hook(template, items if items is not None or gvk(template) == POD else [], now)
    except (InterpreterError, ValueError) as err:
        raise InterpreterError(f"{describe(template)}: {err}") from None
