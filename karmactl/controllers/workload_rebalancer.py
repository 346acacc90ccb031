"""WorkloadRebalancer (``apps.karmada.io/v1alpha1``): a one-off fresh reschedule of the listed workloads.

Follows ``pkg/controllers/workloadrebalancer/workloadrebalancer_controller.go``:

* ``status.observedWorkloads`` follows ``spec.workloads`` (``syncWorkloadsFromSpecToStatus``): a
  workload still listed keeps its entry, one no longer listed keeps it only when Successful, a new
  one gets an entry without result; sorted by "apiVersion kind namespace name";
* each entry without result: the referenced binding (``<name>-<kind>``, a ResourceBinding in the
  workload's namespace, a ClusterResourceBinding without one) gets ``spec.rescheduleTriggeredAt`` =
  the rebalancer's ``creationTimestamp`` unless it already has that time or a later one, and the
  entry becomes ``Successful``; no binding: ``Failed`` with reason ``ReferencedBindingNotFound``.
  The scheduler then schedules the binding afresh, ignoring where its replicas are
  (``karmactl/scheduler/core.py``: ``rescheduleTriggeredAt`` after ``lastScheduledTime``);
* ``status.finishTime`` = the time the status last changed (every entry has its result then: karmactl
  has no transient errors to retry), ``status.observedGeneration`` the rebalancer's generation;
* ``spec.ttlSecondsAfterFinished``: once ``finishTime + ttl`` has passed the rebalancer is deleted.
  A run deletes it from the state directory before computing (:func:`expired`; the one place a run
  edits a user-written file, because Karmada deletes the object itself).

A rebalancer's ``creationTimestamp`` (and uid, generation) is kept in its overlay from the first run
that sees it. A run with a rebalancer still to act on is not split into shards (:func:`pending`).
"""
from __future__ import annotations

from karmactl.api.objects import add_seconds, parse_time
from karmactl.api.names import binding_name

GROUP, KIND = "apps.karmada.io", "WorkloadRebalancer"
SUCCESSFUL, FAILED = "Successful", "Failed"
NOT_FOUND = "ReferencedBindingNotFound"


def _ref(w: dict) -> dict:
    ref = {"apiVersion": w.get("apiVersion", ""), "kind": w.get("kind", ""), "name": w.get("name", "")}
    if w.get("namespace"):
        ref["namespace"] = w["namespace"]
    return ref


def _sort_key(item: dict) -> str:
    w = item["workload"]
    return f"{w['apiVersion']} {w['kind']} {w.get('namespace', '')} {w['name']}"


def sync_workloads(spec_workloads: list, observed: list) -> list:
    """``syncWorkloadsFromSpecToStatus``: the observedWorkloads for the current spec (new list)."""
    wanted = [_ref(w) for w in spec_workloads]
    out, seen = [], []
    for item in observed:
        ref = _ref(item.get("workload") or {})
        if ref in wanted and ref not in seen:
            out.append(dict(item, workload=ref))
            seen.append(ref)
        elif ref not in wanted and item.get("result") == SUCCESSFUL:
            out.append(dict(item, workload=ref))
    for ref in wanted:
        if ref not in seen:
            out.append({"workload": ref})
            seen.append(ref)
    return sorted(out, key=_sort_key)


def binding_key(ref: dict) -> tuple:
    """The key of the binding a workload reference points at."""
    ns = ref.get("namespace") or ""
    return ("work.karmada.io", "ResourceBinding" if ns else "ClusterResourceBinding", ns,
            binding_name(ref["name"], ref["kind"]))


def trigger(observed: list, bindings: dict, created: str) -> tuple[list, dict]:
    """``triggerReschedule``: results for the entries without one, and the bindings to update.

    Args:
        observed: observedWorkloads (from :func:`sync_workloads`).
        bindings: bindings by key.
        created: the rebalancer's creationTimestamp (RFC 3339).

    Returns:
        ``(observed, {binding key: new binding})``.
    """
    out, changed = [], {}
    for item in observed:
        if item.get("result") in (SUCCESSFUL, FAILED):
            out.append(item)
            continue
        bkey = binding_key(item["workload"])
        binding = changed.get(bkey) or bindings.get(bkey)
        if binding is None or (binding.get("metadata") or {}).get("deletionTimestamp"):
            out.append(dict(item, result=FAILED, reason=NOT_FOUND))
            continue
        at = (binding.get("spec") or {}).get("rescheduleTriggeredAt")
        if not at or parse_time(created) > parse_time(at):
            changed[bkey] = dict(binding, spec=dict(binding["spec"], rescheduleTriggeredAt=created))
        out.append({k: v for k, v in item.items() if k != "reason"} | {"result": SUCCESSFUL})
    return out, changed


def expired(rebalancer: dict, overlay: dict | None, now: str) -> bool:
    """Whether ``ttlSecondsAfterFinished`` has passed since ``status.finishTime`` (``timeLeft`` <= 0)."""
    ttl = (rebalancer.get("spec") or {}).get("ttlSecondsAfterFinished")
    finish = ((overlay or {}).get("status") or {}).get("finishTime")
    if ttl is None or not finish:
        return False
    return parse_time(add_seconds(finish, int(ttl))) <= parse_time(now)


def pending(snap) -> bool:
    """Whether a WorkloadRebalancer has a listed workload without result yet (it has still to read,
    and perhaps update, bindings anywhere in the snapshot; once every entry has its result it
    reads none)."""
    for key in snap.keys_of_kind(GROUP, KIND):
        status = (snap.overlays.get(key) or {}).get("status") or {}
        observed = sync_workloads((snap.user[key].get("spec") or {}).get("workloads") or [],
                                  status.get("observedWorkloads") or [])
        if any(item.get("result") not in (SUCCESSFUL, FAILED) for item in observed):
            return True
    return False


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``workload-rebalancer``: trigger fresh scheduling of the listed workloads'
    bindings and keep each rebalancer's status (``pkg/controllers/workloadrebalancer/``)."""
    from karmactl.api.templates import refresh_overlay

    changed = False
    for key in loaded.keys_of_kind(GROUP, KIND):
        obj = loaded.user[key]
        old = out.overlays.get(key)
        overlay = refresh_overlay(key, obj, old, None, now)
        created = overlay["metadata"]["creationTimestamp"]
        status = dict(overlay.get("status") or {})
        observed = sync_workloads((obj.get("spec") or {}).get("workloads") or [], status.get("observedWorkloads") or [])
        observed, updates = trigger(observed, out.bindings, created)
        for bkey, binding in updates.items():
            changed = out.set_binding(bkey, binding) or changed
            ctx.event(f"workloadrebalancer {key[3]}: rescheduling {bkey[1]} "
                      f"{bkey[2] + '/' if bkey[2] else ''}{bkey[3]} afresh")
        new_status = {"observedWorkloads": observed, "observedGeneration": overlay["metadata"]["generation"]}
        if status.get("finishTime"):
            new_status["finishTime"] = status["finishTime"]
        if {k: v for k, v in status.items() if k != "finishTime"} != \
                {k: v for k, v in new_status.items() if k != "finishTime"}:
            new_status["finishTime"] = now
        if new_status != status:
            overlay = dict(overlay, status=new_status)
        changed = out.set_overlay(key, overlay) or changed
    for key in [k for k in out.overlays if k[0] == GROUP and k[1] == KIND and k not in loaded.user]:
        changed = out.set_overlay(key, None) or changed
    return changed


__all__ = ["binding_key", "expired", "pending", "step", "sync_workloads", "trigger"]


def wake(snap, now: str, settings) -> list:
    """When WorkloadRebalancers need a whole run: while one is pending (it reads and updates
    bindings anywhere), at every run; once finished with ``ttlSecondsAfterFinished``, when that
    passes (the run deletes it from its file). ``[(None, RFC 3339 time)]``: None = the whole state."""
    if pending(snap):
        return [(None, now)]
    out = []
    for key in snap.keys_of_kind(GROUP, KIND):
        ttl = (snap.user[key].get("spec") or {}).get("ttlSecondsAfterFinished")
        finish = ((snap.overlays.get(key) or {}).get("status") or {}).get("finishTime")
        if ttl is not None and finish:
            out.append((None, add_seconds(finish, int(ttl))))
    return out
