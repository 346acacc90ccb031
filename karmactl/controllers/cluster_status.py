"""Cluster status: reports written by people, probes with thresholds.

Follows ``pkg/controllers/status/cluster_status_controller.go`` and ``cluster_condition_cache.go``
(semantics §4.1).

A Cluster's status has two sources in karmactl:

* the file: a person may write ``status`` (conditions, apiEnablements, resourceSummary) in the
  Cluster's own file, as a member's report for offline runs;
* the overlay (``computed/status/clusters.cluster.karmada.io/<name>.yaml``), where probes and
  ``karmactl cluster condition set`` record reports.

The newest report wins: when the file's status changed since the last run (karmactl remembers a
hash of it in ``observed.fileStatusHash``), the file's fields replace the overlay's, condition by
condition; otherwise the overlay stands.
"""
from __future__ import annotations


from karmactl.api import constants as C
from karmactl.api.objects import add_seconds, content_hash, deepcopy, get_condition, remove_condition, seconds_between, set_condition
from karmactl.api.templates import new_overlay
from karmactl.controllers.helper.cluster import stamp_creation


def _hash(data) -> str:
    return content_hash(data)


def ingest_file_status(key, cluster: dict, overlay: dict | None, now: str) -> dict | None:
    """Fold the file's ``status`` into the overlay when the file changed since the last run.

    Returns the new overlay (``overlay`` itself when nothing changed; None when neither exists).
    Conditions from the file without ``lastTransitionTime`` get ``now`` when their status differs
    from the one recorded (else the recorded time is kept).
    """
    file_status = cluster.get("status")
    recorded = ((overlay or {}).get("observed") or {}).get("fileStatusHash")
    h = _hash(file_status) if file_status is not None else None
    if h == recorded:
        return overlay
    if file_status is None and overlay is None:
        return None
    new = deepcopy(overlay) if overlay is not None else new_overlay(key, cluster)
    new.setdefault("observed", {})
    if h is None:
        new["observed"].pop("fileStatusHash", None)
    else:
        new["observed"]["fileStatusHash"] = h
    if file_status:
        status = new.setdefault("status", {})
        for fname, value in file_status.items():
            if fname != "conditions":
                status[fname] = deepcopy(value)
        for cond in file_status.get("conditions") or []:
            if not isinstance(cond, dict) or not cond.get("type"):
                continue
            set_condition(new, cond["type"], str(cond.get("status", "Unknown")), cond.get("reason") or "Reported",
                          cond.get("message") or "", cond.get("lastTransitionTime") or now)
            if cond.get("lastTransitionTime"):
                get_condition(new, cond["type"])["lastTransitionTime"] = cond["lastTransitionTime"]
    if overlay is not None and new == overlay:
        return overlay
    return new


def report_condition(key, cluster: dict, overlay: dict | None, ctype: str, status: str | None,
                     reason: str | None, message: str | None, now: str) -> dict:
    """Record (or, with ``status`` None, remove) a condition as a member's own report would.

    ``lastTransitionTime`` is ``now`` when the status changes (``SetStatusCondition`` semantics).
    Returns the new overlay.
    """
    new = deepcopy(overlay) if overlay is not None else new_overlay(key, cluster)
    if "status" not in new:
        new["status"] = deepcopy(cluster.get("status") or {})
    if status is None:
        remove_condition(new, ctype)
    else:
        set_condition(new, ctype, status, reason or _default_reason(ctype, status), message or "", now)
    return new


def _default_reason(ctype: str, status: str) -> str:
    if ctype == C.COND_READY:
        return {"True": C.REASON_CLUSTER_READY, "False": C.REASON_CLUSTER_NOT_READY}.get(status, "ClusterStatusUnknown")
    return "ManuallyReported"


def observed_ready_condition(online: bool, healthy: bool, client_error: str | None = None) -> tuple[str, str, str]:
    """(status, reason, message) of the Ready condition for a probe outcome (§1.1 table)."""
    if client_error is not None:
        return "False", C.REASON_STATUS_COLLECTION_FAILED, f"failed to create a ClusterClient: {client_error}"
    if not online:
        return "False", C.REASON_CLUSTER_NOT_REACHABLE, C.MSG_CLUSTER_NOT_REACHABLE
    if not healthy:
        return "False", C.REASON_CLUSTER_NOT_READY, C.MSG_CLUSTER_NOT_READY
    return "True", C.REASON_CLUSTER_READY, C.MSG_CLUSTER_READY


def threshold_adjust(current: dict | None, observed: tuple[str, str, str], record: dict | None, now: str,
                     success_threshold: float = 30.0, failure_threshold: float = 30.0) -> tuple[tuple[str, str, str], dict]:
    """Apply the success/failure thresholds to an observed Ready condition (§4.1 step 3).

    Args:
        current: the Cluster's current Ready condition or None.
        observed: (status, reason, message) just observed.
        record: persisted ``{"lastObservedStatus": str, "since": RFC3339}`` or None (first observation).
        now: the run's clock.
        success_threshold / failure_threshold: seconds.

    Returns:
        ((status, reason, message) to write, the new record).
    """
    status = observed[0]
    if record is None or current is None:
        return observed, {"lastObservedStatus": status, "since": now}
    if record.get("lastObservedStatus") != status:
        record = {"lastObservedStatus": status, "since": now}
    held = seconds_between(record["since"], now)
    cur = current.get("status")
    keep = (current.get("status"), current.get("reason", ""), current.get("message", ""))
    if status == "True" and cur != "True" and held < success_threshold:
        return keep, record
    if status != "True" and cur == "True" and held < failure_threshold:
        return keep, record
    return observed, record


def threshold_due(overlay: dict | None, success_threshold: float, failure_threshold: float) -> str | None:
    """When a Cluster's Ready condition will flip if the probes keep answering as they do now:
    ``since + threshold`` of its pending threshold record (``observed.readyThreshold``, see
    :func:`threshold_adjust`), or None when the last observation agrees with the written condition.
    RFC 3339. The continuous loop (``karmactl/continuous.py``) probes at that moment, as Karmada's
    cluster status controller re-checks every ``--cluster-status-update-frequency``."""
    if not overlay:
        return None
    record = (overlay.get("observed") or {}).get("readyThreshold") or {}
    seen, since = record.get("lastObservedStatus"), record.get("since")
    current = get_condition(overlay, "Ready")
    if not since or not seen or current is None or current.get("status") == seen:
        return None
    if seen == "True":
        held = success_threshold
    elif current.get("status") == "True":
        held = failure_threshold
    else:  # False <-> Unknown flips at once (threshold_adjust)
        held = 0.0
    return add_seconds(since, held)


CLUSTER_STARTUP_GRACE_PERIOD = 60.0
"""Seconds a Pull mode Cluster may go without any Ready condition before the cluster controller
marks it Unknown (Karmada's ``--cluster-startup-grace-period`` default)."""
REASON_NEVER_UPDATED = "ClusterStatusNeverUpdated"
MSG_NEVER_UPDATED = "Cluster status controller never posted cluster status."


def never_updated(key, cluster: dict, overlay: dict | None, now: str) -> dict | None:
    """The overlay of a Pull mode Cluster that has never reported a Ready condition (in its file or
    with ``karmactl cluster condition set``, where its agent's report would land) once
    :data:`CLUSTER_STARTUP_GRACE_PERIOD` has passed since its creation: Ready ``Unknown``,
    ``ClusterStatusNeverUpdated`` (``pkg/controllers/cluster/cluster_controller.go:
    tryUpdateClusterHealth``). ``overlay`` itself otherwise. karmactl has no Lease, so a reported
    condition is never aged out (``docs/member-connections.md``)."""
    from karmactl.controllers.helper.cluster import effective_status, is_pull

    if not is_pull(cluster) or any(c.get("type") == C.COND_READY for c in effective_status(cluster, overlay).get("conditions") or []):
        return overlay
    created = ((overlay or {}).get("metadata") or {}).get("creationTimestamp")
    if not created or seconds_between(created, now) < CLUSTER_STARTUP_GRACE_PERIOD:
        return overlay
    new = deepcopy(overlay) if overlay is not None else new_overlay(key, cluster)
    new.setdefault("status", deepcopy(cluster.get("status") or {}))
    set_condition(new, C.COND_READY, "Unknown", REASON_NEVER_UPDATED, MSG_NEVER_UPDATED, now)
    return new


def wake(snap, now: str, settings) -> list:
    """``[(None, time)]``: when :func:`never_updated` will mark each Pull mode Cluster of the computed
    ``snap`` that has not reported yet (see ``karmactl/pipeline/registry.py: Step``)."""
    from karmactl.controllers.helper.cluster import effective_status, is_pull

    out = []
    for key in snap.keys_of_kind("cluster.karmada.io", "Cluster"):
        cluster, overlay = snap.user[key], snap.overlays.get(key)
        created = ((overlay or {}).get("metadata") or {}).get("creationTimestamp")
        if is_pull(cluster) and created and not get_condition({"status": effective_status(cluster, overlay)}, C.COND_READY):
            out.append((None, add_seconds(created, CLUSTER_STARTUP_GRACE_PERIOD)))
    return out


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``cluster-status``: fold status reported in each Cluster's file (or by
    ``cluster condition set``) into its overlay and stamp its creation time; the member layer
    has already probed reachable Push members (``pkg/controllers/status/cluster_status_controller.go``);
    a Pull mode Cluster that never reported goes Unknown after the startup grace period (:func:`never_updated`)."""
    changed = False
    for key in loaded.keys_of_kind("cluster.karmada.io", "Cluster"):
        cluster = loaded.user[key]
        changed = out.set_overlay(key, ingest_file_status(key, cluster, out.overlays.get(key), now)) or changed
        changed = out.set_overlay(key, stamp_creation(key, cluster, out.overlays.get(key), now)) or changed
        changed = out.set_overlay(key, never_updated(key, cluster, out.overlays.get(key), now)) or changed
    return changed
