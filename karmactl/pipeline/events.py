"""Karmada's Events, derived from what a run changed, and merged into the Events already recorded.

Karmada's controllers call an ``EventRecorder`` as they act; karmactl derives the same Events after
the fact by comparing the snapshot a run loaded with the one it computed, so an Event is recorded
exactly when something happened and the controllers stay as they are. Reasons, types, the objects an
Event is recorded on and the wording of its note follow Karmada (``pkg/events/events.go``):

=================================  =========================  ==============================================
change (before -> after)           Event (type)               recorded on, by (``reportingController``)
=================================  =========================  ==============================================
binding created, or its policy     ApplyPolicySucceed         template, ``resource-detector``
or detector-written spec changed                              (``pkg/detector/detector.go``)
the policy could not be applied    ApplyPolicyFailed (W)      template, ``resource-detector`` (a missing
(``observed.applyPolicyFailed``)                              PriorityClass of ``schedulePriority``)
``spec.clusters`` or the           ScheduleBindingSucceed /   binding and template, ``spec.schedulerName``
``Scheduled`` condition changed    ScheduleBindingFailed (W)  (``pkg/scheduler/scheduler.go``)
a binding's Works created,         SyncWorkSucceed            binding and template, ``binding-controller`` /
updated or deleted                                            ``cluster-resource-binding-controller``
``aggregatedStatus`` /             AggregateStatusSucceed     binding, ``resource-binding-status-controller``
``FullyApplied`` changed                                      (``pkg/util/helper/workstatus.go``); a
                                                              template's status: on the template
                                                              (``pkg/controllers/status/common.go``)
a new graceful eviction task       EvictWorkloadFrom-         binding and template, by the task's producer
                                   ClusterSucceed             (``taint-manager``, application failover)
a graceful eviction task dropped   EvictWorkloadFrom-         binding and template, ``resource-binding-
                                   ClusterSucceed             graceful-eviction-controller`` (gracefuleviction/)
a Work's ``Applied`` condition     SyncSucceed /              Work and each manifest's object (the template),
changed                            SyncFailed (W)             ``execution-controller``
a Work's ``Dispatching`` changed   WorkDispatching            Work, ``execution-controller``
karmactl's cluster taints changed  TaintClusterSucceed        Cluster, ``cluster-controller`` (Ready taints)
                                                              or ``cluster-taint-policy-controller``
a MultiClusterService's            SyncServiceSucceed /       the MultiClusterService,
``ServiceApplied`` changed         SyncServiceFailed (W)      ``multiclusterservice-controller``
its ``EndpointSliceDispatched``    DispatchEndpointSlice-     the MultiClusterService,
became True                        Succeed                    ``endpointslice-dispatch-controller``
a FederatedResourceQuota's Works   SyncWorkSucceed            the quota, ``federated-resource-quota-sync-
created, updated or deleted                                   controller`` (pkg/controllers/federatedresourcequota/)
its ``aggregatedStatus`` changed   AggregateStatusSucceed     the quota, ``federated-resource-quota-status-
(also ``overall*`` with the gate                              controller``
``FederatedQuotaEnforcement`` off)
its ``overall``/``overallUsed``    CollectOverallStatus-      the quota, ``federated-resource-quota-
changed, gate on                   Succeed                    enforcement-controller``
=================================  =========================  ==============================================

Deviations: a new eviction task's note adds the task's reason (``Evict from cluster member1 succeed.
Reason: TaintUntolerated.``), as Karmada's note does not say why; Events are recorded when something
changed, where Karmada's scheduler records one per scheduling attempt even when nothing moved.
Karmada's remedy controller records no Events, so changed ``status.remedyActions`` record none here
either. Failures Karmada reports only as API errors (other ApplyPolicyFailed causes, SyncWorkFailed,
CleanupWorkFailed, TaintClusterFailed) have no counterpart in a snapshot and are not derived.

Pure: no I/O, the clock is an argument.
"""
from __future__ import annotations

from datetime import timedelta
from functools import lru_cache

from karmactl.api import constants as C
from karmactl.api.objects import content_hash, get_condition, parse_time
from karmactl.api.snapshot import Key, Snapshot
from karmactl.controllers.helper.binding import SCHEDULER_OWNED
from karmactl.controllers.helper.work import work_binding_key

EVENT_API_VERSION = "events.k8s.io/v1"
REPORTING_INSTANCE = "karmactl"
EVENTS_PER_OBJECT = 20  # newest Events kept per regarding object
NOTE_LIMIT = 1024  # bytes: the API server refuses longer notes (events.k8s.io/v1 validation)

# Karmada's controller names (the EventRecorder names in cmd/controller-manager and the scheduler)
DETECTOR = "resource-detector"
RB_CONTROLLER = "binding-controller"
CRB_CONTROLLER = "cluster-resource-binding-controller"
RB_STATUS_CONTROLLER = "resource-binding-status-controller"
CRB_STATUS_CONTROLLER = "cluster-resource-binding-status-controller"
RB_GRACEFUL_EVICTION = "resource-binding-graceful-eviction-controller"
CRB_GRACEFUL_EVICTION = "cluster-resource-binding-graceful-eviction-controller"
EXECUTION_CONTROLLER = "execution-controller"
CLUSTER_CONTROLLER = "cluster-controller"
TAINT_POLICY_CONTROLLER = "cluster-taint-policy-controller"
TAINT_MANAGER = "taint-manager"
MCS_CONTROLLER = "multiclusterservice-controller"
EPS_DISPATCH_CONTROLLER = "endpointslice-dispatch-controller"
DEFAULT_SCHEDULER = "default-scheduler"

NORMAL, WARNING = "Normal", "Warning"
APPLY_POLICY_FAILED = "applyPolicyFailed"  # a template overlay's observed note (controllers/detector.py)

_READY_TAINT_KEYS = frozenset({C.TAINT_NOT_READY, C.TAINT_UNREACHABLE})


@lru_cache(maxsize=4096)
def micro_time(now: str, microseconds: int = 0) -> str:
    """An RFC 3339 time (plus ``microseconds``) as Kubernetes' MicroTime (``2026-01-01T00:00:00.000000Z``).

    Raises:
        ValueError: ``now`` is not RFC 3339.
    """
    return (parse_time(now) + timedelta(microseconds=microseconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def regarding_key(ref: dict) -> Key:
    """``(group, kind, namespace, name)`` of an Event's ``regarding`` reference."""
    return (ref.get("apiVersion", "").rpartition("/")[0], ref.get("kind", ""), ref.get("namespace") or "",
            ref.get("name", ""))


def _truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8 (not inside a character)."""
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def make_event(regarding: dict, etype: str, reason: str, note: str, controller: str, action: str,
               now: str) -> dict:
    """One ``events.k8s.io/v1`` Event, first observed at ``now``.

    Its ``metadata.name`` is ``<regarding name>.<16 hex digits>`` hashed from the regarding object,
    reason, note and reporting controller (Kubernetes' aggregation key), so the same occurrence
    always has the same name and a repeat is found by name. Cluster-scoped regarding objects get
    their Events in namespace ``default``, as Kubernetes records them.

    Args:
        regarding: ``{apiVersion, kind, namespace?, name, uid?}`` (an ObjectReference).
        etype: ``Normal`` or ``Warning``.
        reason, note: Karmada's reason constant and message (cut to :data:`NOTE_LIMIT` bytes).
        controller: Karmada's controller name (``reportingController``).
        action: what was done (``Schedule``, ``Evict``, ...).
        now: RFC 3339.
    """
    note = _truncate(note, NOTE_LIMIT)
    ident = [regarding.get("apiVersion"), regarding.get("kind"), regarding.get("namespace") or "",
             regarding.get("name"), reason, note, controller]
    name = f"{regarding['name'][:236]}.{content_hash(ident)}"
    return {"apiVersion": EVENT_API_VERSION, "kind": "Event",
            "metadata": {"name": name, "namespace": regarding.get("namespace") or "default",
                         "creationTimestamp": now},
            "eventTime": micro_time(now),
            "reportingController": controller, "reportingInstance": REPORTING_INSTANCE,
            "action": action, "reason": reason, "regarding": regarding, "note": note, "type": etype}


# --------------------------------------------------------------------------- deriving


def _object_ref(api_version: str, kind: str, namespace: str | None, name: str, uid: str | None) -> dict:
    ref = {"apiVersion": api_version, "kind": kind}
    if namespace:
        ref["namespace"] = namespace
    ref["name"] = name
    if uid:
        ref["uid"] = uid
    return ref


def _ref(obj: dict) -> dict:
    m = obj.get("metadata") or {}
    return _object_ref(obj.get("apiVersion", ""), obj.get("kind", ""), m.get("namespace"), m.get("name", ""), m.get("uid"))


def _template_ref(binding: dict) -> dict:
    res = (binding.get("spec") or {}).get("resource") or {}
    return _object_ref(res.get("apiVersion", ""), res.get("kind", ""), res.get("namespace"), res.get("name", ""),
                       res.get("uid"))


def _policy_of(binding: dict) -> tuple:
    ann = (binding.get("metadata") or {}).get("annotations") or {}
    if ann.get(C.PP_NAME_ANNOTATION):
        return ("pp", ann.get(C.PP_NAMESPACE_ANNOTATION, ""), ann[C.PP_NAME_ANNOTATION])
    if ann.get(C.CPP_NAME_ANNOTATION):
        return ("cpp", "", ann[C.CPP_NAME_ANNOTATION])
    return ()


def _detector_part(binding: dict) -> tuple:
    spec = binding.get("spec") or {}
    # spec fields of a binding written by others than the detector (scheduler, evictions, dependencies)
    return _policy_of(binding), {k: v for k, v in spec.items() if k not in SCHEDULER_OWNED}


def _cond(obj: dict | None, ctype: str) -> tuple:
    c = get_condition(obj, ctype) if obj else None
    return (c.get("status"), c.get("reason"), c.get("message")) if c else ()


def _schedule_part(binding: dict | None) -> tuple:
    if not binding:
        return ((), ())
    clusters = tuple((c.get("name"), c.get("replicas", 0)) for c in (binding.get("spec") or {}).get("clusters") or [])
    return clusters, _cond(binding, C.COND_SCHEDULED)


def _aggregate_part(binding: dict | None) -> tuple:
    if not binding:
        return (None, ())
    return (binding.get("status") or {}).get("aggregatedStatus"), _cond(binding, "FullyApplied")


def _is_crb(binding: dict) -> bool:
    return binding.get("kind") == "ClusterResourceBinding"


def _binding_label(binding: dict) -> str:
    m = binding.get("metadata") or {}
    if _is_crb(binding):
        return f"ClusterResourceBinding({m.get('name', '')})"
    return f"ResourceBinding({m.get('namespace', '')}/{m.get('name', '')})"


def _taint_message(taints: list[dict]) -> str:
    """Karmada's ``GenerateTaintsMessage`` (``pkg/util/helper/taint.go``)."""
    if not taints:
        return "cluster now does not have taints"
    parts = []
    for t in taints:
        value = f"Value:{t['value']}," if t.get("value") else ""
        parts.append(f"{{Key:{t.get('key', '')},{value}Effect:{t.get('effect', '')}}}")
    return f"cluster now has taints([{','.join(parts)}])"


def _taint_set(overlay: dict | None) -> set:
    return {(t.get("key"), t.get("value") or "", t.get("effect"))
            for t in ((overlay or {}).get("spec") or {}).get("taints") or []}


def _eviction_controller(task: dict, binding: dict) -> str:
    producer = task.get("producer") or ""
    if producer == C.EVICTION_PRODUCER_TAINT_MANAGER:
        return TAINT_MANAGER
    if producer:
        return producer  # application failover controllers produce under their own names
    return CRB_GRACEFUL_EVICTION if _is_crb(binding) else RB_GRACEFUL_EVICTION


class _Recorder:
    """Collects derived Events once each (a run observes an occurrence once)."""

    def __init__(self, now: str):
        self.now = now
        self.events: dict[str, dict] = {}

    def record(self, regarding: dict, etype: str, reason: str, note: str, controller: str, action: str) -> None:
        ev = make_event(regarding, etype, reason, note, controller, action, self.now)
        self.events.setdefault(f"{ev['metadata']['namespace']}/{ev['metadata']['name']}", ev)

    def stamped(self) -> list[dict]:
        """The Events in the order recorded, each ``eventTime`` one microsecond after the one
        before it about the same object: the run's clock is read once, yet the order of an
        object's Events survives storage and sorting (per object, so a run split into shards,
        which derive the Events of disjoint objects, stamps the same times). The recorder is
        left empty: the Events returned are its own dicts, stamped in place."""
        out, seen = [], {}
        for ev in self.events.values():  # the recorder's own dicts: stamped in place, once
            obj = regarding_key(ev["regarding"])
            seen[obj] = seen.get(obj, -1) + 1
            ev["eventTime"] = micro_time(self.now, seen[obj])
            out.append(ev)
        self.events = {}
        return out


def derive_events(before: Snapshot, after: Snapshot, now: str, keep=None) -> list[dict]:
    """The Events Karmada would have recorded for what changed from ``before`` to ``after``.

    Args:
        before: the snapshot the run loaded.
        after: the snapshot the run computed (members' results included).
        now: the run's clock (RFC 3339).
        keep: optional ``f(which, key, obj) -> bool`` (``which``: bindings, works, overlays)
            limiting the changed objects looked at (a shard derives only from the objects it owns).

    Returns:
        ``events.k8s.io/v1`` Event dicts (one occurrence each, no ``series``), in a stable order.

    Raises:
        ValueError: ``now`` is not RFC 3339.
    """
    rec = _Recorder(now)
    kept = (lambda which, key, obj: True) if keep is None else keep
    changed = _changes(before, after, kept)

    # in the order things happen in a run: taints, then per binding policy, evictions, scheduling,
    # Works, status; then what members reported of each Work
    for key, old, new in changed["overlays"]:
        if new is not None and key in after.user and key[:2] == ("cluster.karmada.io", "Cluster"):
            _cluster_events(rec, key, old, new, after)
        elif new is not None and key in after.user and key[:2] == ("networking.karmada.io", "MultiClusterService"):
            _mcs_events(rec, old, new)
        elif new is not None and key in after.user:
            _apply_policy_failed(rec, key, old, new, after.user[key])
    synced = {work_binding_key(new if new is not None else old) for _k, old, new in changed["works"]
              if _binding_controller_changed(old, new)}
    for bkey, old, new in changed["bindings"]:
        if new is not None:
            _binding_events(rec, old, new, bkey in synced)
    # bindings left as they were whose Works the binding controller changed (e.g. an override)
    changed_bindings = {k for k, _o, _n in changed["bindings"]}
    for bkey in sorted(b for b in synced if b is not None and b not in changed_bindings):
        binding = after.bindings.get(bkey)
        if binding is not None and kept("bindings", bkey, binding):
            _binding_events(rec, binding, binding, True)
    for wkey, old, new in changed["works"]:
        if new is not None:
            _work_events(rec, wkey, old, new)
    _template_status_events(rec, changed["overlays"], after)
    _quota_events(rec, changed, after)
    return rec.stamped()


def _changes(before: Snapshot, after: Snapshot, kept) -> dict:
    """``{"overlays" | "bindings" | "works": [(key, old or None, new or None)]}`` of the objects that
    differ between the snapshots and that ``kept`` keeps, in key order."""
    changed = {which: [(k, getattr(before, which).get(k), getattr(after, which).get(k))
                       for k in sorted(set(getattr(before, which)) | set(getattr(after, which)))]
               for which in ("overlays", "bindings", "works")}
    for which, items in changed.items():
        changed[which] = [(k, old, new) for k, old, new in items
                          if old is not new and old != new and kept(which, k, new if new is not None else old)]
    return changed


def _apply_policy_failed(rec: _Recorder, key: Key, old: dict | None, new: dict, obj: dict) -> None:
    """ApplyPolicyFailed (Warning) on a template whose policy could not be applied in this run
    (the detector leaves the note in its overlay's ``observed.applyPolicyFailed``)."""
    note = (new.get("observed") or {}).get(APPLY_POLICY_FAILED)
    if note and note != ((old or {}).get("observed") or {}).get(APPLY_POLICY_FAILED):
        rec.record(_object_ref(obj.get("apiVersion", ""), key[1], key[2], key[3],
                               (new.get("metadata") or {}).get("uid")), WARNING, "ApplyPolicyFailed", note,
                   DETECTOR, "ApplyPolicy")


def _template_status_events(rec: _Recorder, overlays: list, after: Snapshot) -> None:
    """AggregateStatusSucceed on every template whose status (written by the status controllers) changed."""
    templates = {}  # template key -> its binding (the status controllers write the template's status)
    for b in after.bindings.values():
        t = _template_ref(b)
        templates[(t["apiVersion"].rpartition("/")[0], t["kind"], t.get("namespace", ""), t["name"])] = b
    for key, old, new in overlays:
        if (key in templates and new is not None and new.get("status") is not None
                and (old or {}).get("status") != new["status"]):
            binding = templates[key]
            ctl = CRB_STATUS_CONTROLLER if _is_crb(binding) else RB_STATUS_CONTROLLER
            rec.record(_template_ref(binding), NORMAL, "AggregateStatusSucceed",
                       "Update Resource with AggregatedStatus successfully.", ctl, "AggregateStatus")


def _binding_events(rec: _Recorder, old: dict | None, new: dict, synced: bool) -> None:
    """The Events of one changed binding, in the order its controllers act: policy applied, eviction
    tasks added, scheduled, Works synced, eviction tasks dropped, status aggregated."""
    template = _template_ref(new)
    ref = _ref(new)
    if old is None or _detector_part(old) != _detector_part(new):
        policy = _policy_of(new)
        if policy:
            note = (f"Apply policy({policy[1]}/{policy[2]}) succeed" if policy[0] == "pp"
                    else f"Apply cluster policy({policy[2]}) succeed")
            rec.record(template, NORMAL, "ApplyPolicySucceed", note, DETECTOR, "ApplyPolicy")
    old_tasks = {t.get("fromCluster"): t for t in ((old or {}).get("spec") or {}).get("gracefulEvictionTasks") or []}
    new_tasks = {t.get("fromCluster"): t for t in (new.get("spec") or {}).get("gracefulEvictionTasks") or []}
    _eviction_task_events(rec, new, new_tasks, old_tasks, (ref, template))
    _schedule_events(rec, old, new, (ref, template))
    if synced:
        note = f"Sync work of {_binding_label(new)} successful."
        ctl = CRB_CONTROLLER if _is_crb(new) else RB_CONTROLLER
        for r in (ref, template):
            rec.record(r, NORMAL, "SyncWorkSucceed", note, ctl, "SyncWork")
    for cluster in sorted(set(old_tasks) - set(new_tasks), key=str):
        ctl = CRB_GRACEFUL_EVICTION if _is_crb(new) else RB_GRACEFUL_EVICTION
        for r in (ref, template):
            rec.record(r, NORMAL, "EvictWorkloadFromClusterSucceed", f"Evict from cluster {cluster} succeed.", ctl,
                       "Evict")
    aggregate = _aggregate_part(new)
    if aggregate[0] is not None and aggregate != _aggregate_part(old):
        ctl = CRB_STATUS_CONTROLLER if _is_crb(new) else RB_STATUS_CONTROLLER
        rec.record(ref, NORMAL, "AggregateStatusSucceed",
                   f"Update {_binding_label(new)} with AggregatedStatus successfully.", ctl, "AggregateStatus")


def _eviction_task_events(rec: _Recorder, new: dict, new_tasks: dict, old_tasks: dict, refs: tuple) -> None:
    """EvictWorkloadFromClusterSucceed for every new graceful eviction task, by its producer."""
    for cluster in sorted(set(new_tasks) - set(old_tasks), key=str):
        task = new_tasks[cluster]
        # Karmada's note, with the task's reason (and message) that made it
        why = f" Reason: {task['reason']}." if task.get("reason") else ""
        if task.get("message"):
            why += f" Message: {task['message']}"
        note = f"Evict from cluster {cluster} succeed.{why}"
        for r in refs:
            rec.record(r, NORMAL, "EvictWorkloadFromClusterSucceed", note, _eviction_controller(task, new), "Evict")


def _schedule_events(rec: _Recorder, old: dict | None, new: dict, refs: tuple) -> None:
    """ScheduleBindingSucceed / ScheduleBindingFailed when the placement or the Scheduled condition changed."""
    sched = _schedule_part(new)
    if sched != _schedule_part(old) and sched[1]:
        controller = (new.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER
        if sched[1][0] == "True":
            result = ", ".join(f"{n}:{r}" for n, r in sched[0])
            etype, reason, note = NORMAL, "ScheduleBindingSucceed", f"{C.MSG_SCHEDULE_SUCCESS} Result: {{{result}}}"
        else:
            etype, reason, note = WARNING, "ScheduleBindingFailed", sched[1][2] or sched[1][1] or "schedule failed"
        for r in refs:
            rec.record(r, etype, reason, note, controller, "Schedule")


def _quota_events(rec: _Recorder, changed: dict, after: Snapshot) -> None:
    """The Events of ``pkg/controllers/federatedresourcequota/`` (see the module table)."""
    from karmactl.api.snapshot import Settings
    from karmactl.controllers import federated_resource_quota as frq

    synced = _synced_quotas(changed["works"])
    statuses = {k: (old, new) for k, old, new in changed["overlays"] if k[:2] == (frq.FRQ_GROUP, frq.FRQ_KIND)}
    if not synced and not statuses:
        return
    enforcement = Settings.from_snapshot(after).federated_quota_enforcement
    for key in sorted(synced | set(statuses)):
        quota = after.user.get(key)
        if quota is None:
            continue
        ref, label = _ref(quota), f"{key[2]}/{key[3]}"
        if key in synced:
            rec.record(ref, NORMAL, "SyncWorkSucceed", f"Sync works for FederatedResourceQuota({label}) succeed.",
                       frq.SYNC_CONTROLLER, "SyncWork")
        if key not in statuses or statuses[key][1] is None:
            continue
        _quota_status_events(rec, ref, label, (statuses[key][0] or {}).get("status") or {},
                             statuses[key][1].get("status") or {}, enforcement)


def _synced_quotas(works: list) -> set:
    """Keys of the FederatedResourceQuotas whose quota Works the sync controller wrote (created,
    changed or deleted: not a status move, not the execution controller dropping a deleted Work)."""
    from karmactl.controllers import federated_resource_quota as frq

    def written(w: dict | None) -> tuple | None:
        return None if w is None else (w["metadata"].get("labels"), w.get("spec"), w["metadata"].get("deletionTimestamp"))

    synced = set()
    for _wkey, old, new in works:
        work = new if new is not None else old
        if not frq.is_quota_work(work):
            continue
        if (new is None and old["metadata"].get("deletionTimestamp")) or written(old) == written(new):
            continue  # the execution controller dropped a deleted Work, or only its status moved
        labels = work["metadata"]["labels"]
        synced.add((frq.FRQ_GROUP, frq.FRQ_KIND, labels[frq.NAMESPACE_LABEL], labels[frq.NAME_LABEL]))
    return synced


def _quota_status_events(rec: _Recorder, ref: dict, label: str, before: dict, now: dict, enforcement: bool) -> None:
    """AggregateStatusSucceed (status controller) / CollectOverallStatusSucceed (enforcement
    controller, gate ``FederatedQuotaEnforcement``) when a quota's status changed."""
    from karmactl.controllers import federated_resource_quota as frq

    overall = [f for f in ("overall", "overallUsed") if before.get(f) != now.get(f)]
    if before.get("aggregatedStatus") != now.get("aggregatedStatus") or (overall and not enforcement):
        rec.record(ref, NORMAL, "AggregateStatusSucceed",
                   f"Collect status of FederatedResourceQuota({label}) succeed.", frq.STATUS_CONTROLLER,
                   "AggregateStatus")
    if overall and enforcement:
        rec.record(ref, NORMAL, "CollectOverallStatusSucceed",
                   f"Collect status of FederatedResourceQuota({label}) succeed.", frq.ENFORCEMENT_CONTROLLER,
                   "CollectOverallStatus")


def _binding_controller_changed(old: dict | None, new: dict | None) -> bool:
    """Whether the binding controller created, updated or deleted a Work (not the execution
    controller dropping a terminating one, nor a status update)."""
    if new is None:
        return not ((old or {}).get("metadata") or {}).get("deletionTimestamp")
    return old is None or _desired(old) != _desired(new)


def _work_events(rec: _Recorder, wkey: Key, old: dict | None, new: dict) -> None:
    from karmactl.api.names import cluster_of_execution_namespace

    ns, name = wkey[2], wkey[3]
    cluster = cluster_of_execution_namespace(ns) or ns
    ref = _ref(new)
    # the execution controller sets Dispatching before it syncs
    dispatching = _cond(new, C.COND_DISPATCHING)
    if dispatching and dispatching[:1] != _cond(old, C.COND_DISPATCHING)[:1]:
        rec.record(ref, NORMAL, "WorkDispatching", dispatching[2] or "", EXECUTION_CONTROLLER, "Dispatch")
    applied = _cond(new, C.COND_APPLIED)
    if applied and applied != _cond(old, C.COND_APPLIED):
        manifests = ((new.get("spec") or {}).get("workload") or {}).get("manifests") or []
        if applied[0] == "True":
            rec.record(ref, NORMAL, "SyncSucceed", f"Sync work({ns}/{name}) to cluster({cluster}) successful.",
                       EXECUTION_CONTROLLER, "Sync")
            for m in manifests:
                md = m.get("metadata") or {}
                rec.record(_ref(m), NORMAL, "SyncSucceed",
                           f"Successfully applied resource({md.get('namespace', '')}/{md.get('name', '')}) to cluster {cluster}",
                           EXECUTION_CONTROLLER, "Sync")
        else:
            err = applied[2] or applied[1] or ""
            rec.record(ref, WARNING, "SyncFailed",
                       f"Failed to sync work({ns}/{name}) to cluster({cluster}), err: {err}", EXECUTION_CONTROLLER, "Sync")
            for m in manifests:
                md = m.get("metadata") or {}
                obj = f"{md['namespace']}/{md.get('name', '')}" if md.get("namespace") else md.get("name", "")
                rec.record(_ref(m), WARNING, "SyncFailed",
                           f"Failed to create or update resource({obj}) in member cluster({cluster}): {err}",
                           EXECUTION_CONTROLLER, "Sync")


def _desired(work: dict) -> tuple:
    """What the binding controller writes of a Work: labels, annotations, spec, deletion."""
    m = work.get("metadata") or {}
    return m.get("labels"), m.get("annotations"), work.get("spec"), m.get("deletionTimestamp")


def _cluster_events(rec: _Recorder, key: Key, old: dict | None, new: dict, after: Snapshot) -> None:
    from karmactl.api.templates import merged_view

    before_taints, after_taints = _taint_set(old), _taint_set(new)
    changed = before_taints ^ after_taints
    if not changed:
        return
    view = merged_view(after.user[key], new)
    taints = (view.get("spec") or {}).get("taints") or []
    ref = _ref(view)
    message = _taint_message(taints)
    if any(t[0] in _READY_TAINT_KEYS for t in changed):
        rec.record(ref, NORMAL, "TaintClusterSucceed", f"Taint cluster succeed: {message}.", CLUSTER_CONTROLLER, "Taint")
    if any(t[0] not in _READY_TAINT_KEYS for t in changed):
        rec.record(ref, NORMAL, "TaintClusterSucceed", f"Update Cluster({key[3]}) with taints({message}) succeed",
                   TAINT_POLICY_CONTROLLER, "Taint")


def _mcs_events(rec: _Recorder, old: dict | None, new: dict) -> None:
    """``mcs_controller.go`` and ``endpointslice_dispatch_controller.go`` record on the MCS the
    outcome of each reconcile: here, when the condition it sets changes."""
    ref = _ref(new)
    applied = _cond(new, "ServiceApplied")
    if applied and applied != _cond(old, "ServiceApplied"):
        ok = applied[0] == "True"
        rec.record(ref, NORMAL if ok else WARNING, "SyncServiceSucceed" if ok else "SyncServiceFailed",
                   applied[2], MCS_CONTROLLER, "SyncService")
    dispatched = _cond(new, "EndpointSliceDispatched")
    if dispatched and dispatched[0] == "True" and dispatched != _cond(old, "EndpointSliceDispatched"):
        rec.record(ref, NORMAL, "DispatchEndpointSliceSucceed", dispatched[2], EPS_DISPATCH_CONTROLLER,
                   "DispatchEndpointSlice")


# --------------------------------------------------------------------------- recording


def last_seen(event: dict) -> str:
    """When an Event was last observed: ``series.lastObservedTime``, else ``eventTime`` (MicroTime)."""
    return ((event.get("series") or {}).get("lastObservedTime") or event.get("eventTime")
            or (event.get("metadata") or {}).get("creationTimestamp") or "")


def merge_events(existing: list[dict], new: list[dict], now: str,
                 limit: int = EVENTS_PER_OBJECT) -> tuple[list[dict], list[dict]]:
    """Record ``new`` occurrences among the Events already stored, as Kubernetes' event
    correlator does: a repeat (same name, i.e. same regarding object, reason, note and reporting
    controller) raises ``series.count`` and moves ``series.lastObservedTime`` to ``now`` instead of
    adding an Event; then only the ``limit`` most recently seen Events of each regarding object are
    kept.

    Args:
        existing: stored Events of (at least) every object the new ones regard.
        new: occurrences from :func:`derive_events`.
        now: the run's clock (RFC 3339).
        limit: Events kept per regarding object.

    Returns:
        ``(write, drop)``: Events to store (new or updated) and stored Events to remove.

    Raises:
        ValueError: ``now`` is not RFC 3339.
    """
    stored = {(e["metadata"].get("namespace"), e["metadata"]["name"]): e for e in existing}
    changed: dict = {}
    for ev in new:
        ident = (ev["metadata"]["namespace"], ev["metadata"]["name"])
        old = changed.get(ident) or stored.get(ident)
        if old is None:
            changed[ident] = ev
            continue
        count = int((old.get("series") or {}).get("count") or 1)
        changed[ident] = dict(old, series={"count": count + 1, "lastObservedTime": ev.get("eventTime") or micro_time(now)})
    if not stored:  # nothing stored (a cold run): every Event is kept unless an object has too many
        per_object: dict = {}
        for ev in changed.values():
            obj = regarding_key(ev.get("regarding") or {})
            per_object[obj] = per_object.get(obj, 0) + 1
        if not per_object or max(per_object.values()) <= limit:
            return list(changed.values()), []
    by_object: dict = {}
    for ident, ev in {**stored, **changed}.items():
        by_object.setdefault(regarding_key(ev.get("regarding") or {}), []).append((ident, ev))
    touched = {regarding_key(ev.get("regarding") or {}) for ev in changed.values()}
    write, drop = [], []
    for obj in sorted(touched):
        items = sorted(by_object[obj], key=lambda i: (last_seen(i[1]), i[0]), reverse=True)
        for n, (ident, ev) in enumerate(items):
            if n < limit:
                if ident in changed:
                    write.append(ev)
            elif ident in stored:
                drop.append(ev)
    return write, drop
