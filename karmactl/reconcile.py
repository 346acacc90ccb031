"""One reconcile run: observe, decide, act, observe, report.

DESIGN §1, as one control loop over fresh member state::

    load the state directory
    -> probe members (Cluster status)  -> observe members (status of every member copy, now)
    -> compute: the control-plane pipeline (pipeline/registry.py) until nothing changes
    -> act: apply / delete Works on members -> observe again -> compute again (status, and any
       decision the new observations lead to; acted on again, a bounded number of times)
    -> write what changed (or, for a dry run, report it)

Every decision is taken on observations of this run: application failover and graceful eviction
never read a member's status from an earlier run as evidence of how it is now, and the status a
run writes is what the members showed after the run's own changes. :func:`compute` is pure over a
:class:`Snapshot` and ``now``; members are reached only through the :class:`Members` interface,
which :class:`OfflineMembers` implements for offline runs (the recorded observations are all
there is) and ``karmactl.members.layer.MemberLayer`` for online ones.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

from karmactl.api import constants as C
from karmactl.api.snapshot import Snapshot, StepContext
from karmactl.pipeline.registry import PIPELINE
from karmactl.store.events import stage_events
from karmactl.store.state import InputError, StateStore
from karmactl.store.validation import normalize_object, settings_of

MAX_PASSES = 10


class NotConvergedError(RuntimeError):
    """The controllers kept changing objects for :data:`MAX_PASSES` passes."""


@dataclass
class RunOptions:
    """Options of one run.

    Attributes:
        now: the run's clock (RFC 3339), read once.
        offline: never contact members; Cluster status is taken as written.
        dry_run: compute and report, write nothing.
    """

    now: str
    offline: bool = True
    dry_run: bool = False


@dataclass
class RunReport:
    """What a run did: file changes, passes, warnings and per-member failures.

    ``after`` is the computed snapshot; it is None for a large offline run, which is computed
    and written by several processes (``karmactl/incremental/sharded.py: run_sharded``).

    ``incremental`` says how an offline run used the index of the last run
    (``karmactl/incremental/runindex.py``): ``unchanged``, ``partial: N template(s)`` or ``full: why``
    ("" for online and dry runs).

    ``member_changes`` is what an online dry run would do to member copies: ``[{"cluster": str,
    "action": "create"|"update"|"delete", "ref": "Deployment default/nginx" (cluster-scoped:
    "ClusterRole name"), "current": dict|None (the member copy as read), "desired": dict|None
    (what the run would apply)}]``; ``karmactl plan --online`` renders it
    (``karmactl/cli/diffing.py``).

    ``before`` is the snapshot the run computed from, whose computed objects are the files as the
    run found them (for a partial offline run: the templates it recomputed, computed into
    ``partial_after`` while ``after`` stays None); None for a large offline run. The CLI compares it with what the run wrote to summarize
    a run's changes (``karmactl/cli/planning.py``). Unchanged objects are the same values in both.
    """

    changes: list = field(default_factory=list)
    passes: int = 0
    warnings: list = field(default_factory=list)
    events: list = field(default_factory=list)
    member_errors: dict = field(default_factory=dict)
    member_writes: int = 0
    member_changes: list = field(default_factory=list)
    after: Snapshot | None = None
    incremental: str = ""
    before: Snapshot | None = None
    partial_after: Snapshot | None = None


class Members(Protocol):
    """How a run reaches member clusters (``karmactl.members.layer.MemberLayer`` online,
    :class:`OfflineMembers` offline; tests may bring their own).

    Every method returns a new snapshot (the input is not modified) and puts per-member failures
    in ``report.member_errors``, warnings and events in ``report``; none raises for a member's
    failure.
    """

    def probe(self, snap: Snapshot, now: str, report: "RunReport") -> Snapshot:
        """Cluster status (conditions, API enablements, resource summary) into each Cluster's overlay."""

    def observe(self, snap: Snapshot, now: str, report: "RunReport") -> Snapshot:
        """The status and health of every Work's member copy, as observed at ``now``."""

    def observed_clusters(self) -> frozenset | None:
        """The clusters the last :meth:`observe` read, or None when observations are recorded ones."""

    def act(self, snap: Snapshot, now: str, report: "RunReport", dry_run: bool = False) -> Snapshot:
        """Apply or delete every Work (``report.member_writes`` counts the writes); with
        ``dry_run``, send nothing and list the writes in ``report.member_changes``."""

    def close(self) -> None:
        """Release connections."""


class OfflineMembers:
    """:class:`Members` without members: Cluster status is what the state directory records
    (``cluster condition set``, the Cluster file), workload status what ``observe`` recorded, and
    nothing is applied."""

    def probe(self, snap: Snapshot, now: str, report: "RunReport") -> Snapshot:
        return snap

    def observe(self, snap: Snapshot, now: str, report: "RunReport") -> Snapshot:
        return snap

    def observed_clusters(self) -> frozenset | None:
        return None

    def act(self, snap: Snapshot, now: str, report: "RunReport", dry_run: bool = False) -> Snapshot:
        return snap

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- loading


def load(store: StateStore, computed: bool = True) -> Snapshot:
    """Load and validate the state directory (raises :class:`InputError`); with ``computed``
    False, its user files only (``StateStore.load``)."""
    import functools

    from karmactl.incremental.sharded import SHARDS
    from karmactl.incremental.shards import layout_group
    from karmactl.store.state import validation_tag

    # the store hands over freshly parsed objects: defaulting may work on them in place
    # strict: files edited by hand (or merged in git) get the same checks as `apply`
    return store.load(normalize=lambda obj, src: normalize_object(obj, src, store.registry, owned=True, strict=True),
                      normalize_tag=validation_tag(), layout=functools.partial(layout_group, processes=SHARDS),
                      computed=computed)


def _reload(store: StateStore) -> Snapshot:
    """:func:`load` once more in the same run (its notes about skipped documents were given)."""
    from karmactl.store.state import notes_silenced

    with notes_silenced():
        return load(store)


# --------------------------------------------------------------------------- compute


def interpreter_of(snap: Snapshot, now: str):
    """The run's resource interpreter (``karmactl.interpreter.Interpreter``) from the snapshot's
    ResourceInterpreterCustomizations.

    Raises:
        InputError: two customizations of one kind define the same operation (Karmada's webhook
            refuses the second; here the later by name), naming its file, object and field.
    """
    from karmactl.interpreter import Interpreter
    from karmactl.interpreter.customized import GROUP, KIND, OPERATIONS, conflicts

    for c, op, other in conflicts(snap.of_kind(GROUP, KIND)):
        name = c["metadata"]["name"]
        src = snap.sources.get((GROUP, KIND, "", name))
        raise InputError(f"conflicting with InterpreterOperation({OPERATIONS[op][0]}) of existing "
                         f"ResourceInterpreterCustomization({other})", src.path if src else None,
                         src.line if src else None, f"{KIND} {name}", f"spec.customizations.{op}")
    return Interpreter.for_snapshot(snap, now)


def protected_removals(snap: Snapshot) -> list[str]:
    """The resource templates removed from the state directory whose propagation would go with them
    although they were labelled ``resourcetemplate.karmada.io/deletion-protected: Always`` (as the
    member copies their Works carry show): Karmada's ResourceDeletionProtection webhook refuses to
    delete such a template, so a run refuses to remove what it propagated. One line per template."""
    from karmactl.controllers.helper.work import work_binding_key

    orphans = {}
    for key, b in snap.bindings.items():
        res = (b.get("spec") or {}).get("resource") or {}
        tkey = ((res.get("apiVersion") or "").rpartition("/")[0], res.get("kind") or "", res.get("namespace") or "",
                res.get("name") or "")
        if tkey not in snap.user:
            orphans[key] = tkey
    found: dict = {}
    for work in snap.works.values() if orphans else ():
        tkey = orphans.get(work_binding_key(work))
        if tkey is None or tkey in found:
            continue
        for manifest in ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []:
            labels = (manifest.get("metadata") or {}).get("labels") or {} if isinstance(manifest, dict) else {}
            if labels.get(C.DELETION_PROTECTED_LABEL) == "Always":
                found[tkey] = (f"{tkey[1]} {tkey[2] + '/' if tkey[2] else ''}{tkey[3]} was removed from the state "
                               f"directory: admission webhook \"resourcedeletionprotection.karmada.io\" denied the "
                               f"request: This resource is protected, please make sure to remove the label: "
                               f"{C.DELETION_PROTECTED_LABEL} (put it back without the label, reconcile, then delete it)")
    return [found[k] for k in sorted(found)]


def compute(snap: Snapshot, now: str, report: RunReport | None = None,
            observed: frozenset | None = None) -> Snapshot:
    """Run the control plane over ``snap`` until nothing changes; returns the new snapshot.

    Each pass runs every step of :data:`karmactl.pipeline.registry.PIPELINE` in order (cluster
    status, remedy, cluster taints, detector, taint manager, application failover, scheduler,
    graceful eviction, binding, namespace sync, execution, status). ``snap`` itself is not
    modified; it is what the run observed (the state directory and, online, the members).
    ``observed`` names the clusters whose workload status was read in this run (None offline).

    Raises:
        NotConvergedError: still changing after :data:`MAX_PASSES` passes.
        InputError: invalid settings; a deletion-protected template removed from the state
            directory (:func:`protected_removals`).
    """
    report = report if report is not None else RunReport()
    refused = protected_removals(snap)
    if refused:
        raise InputError.several([InputError(line) for line in refused])
    interpreter = interpreter_of(snap, now)
    ctx = StepContext(settings=settings_of(snap), warnings=report.warnings, events=report.events, observed=observed,
                      interpreter=interpreter)
    out = snap.copy_computed()
    for passes in range(1, MAX_PASSES + 1):
        ctx.passes = passes
        changed = False
        for step in PIPELINE:
            changed = bool(step.run(snap, out, now, ctx)) or changed
        report.passes = passes
        for line in interpreter.failures:  # once, unless a step's warning already quotes it
            if not any(line in w for w in ctx.warnings):
                ctx.warn(line)
        if not changed:
            return out
    raise NotConvergedError(f"the control plane did not converge after {MAX_PASSES} passes")


# --------------------------------------------------------------------------- the run


def run(store: StateStore, options: RunOptions, members=None) -> RunReport:
    """One whole run: load, compute, (execute and collect unless offline), write unless dry-run.

    An offline run that writes goes through the incremental engine (``karmactl/incremental/``),
    which may find it has nothing to do, or little; any other run is the loop of DESIGN §1 over
    the whole state directory.

    Args:
        store: the state directory.
        options: clock, offline, dry-run.
        members: the member-cluster layer (``karmactl.members.MemberLayer``); required unless offline.

    Raises:
        InputError: invalid state directory (nothing is written).
        NotConvergedError: the control plane did not settle (nothing is written).
    """
    from karmactl.gcpause import cyclic_gc_paused

    # Nothing in a run creates reference cycles that must be freed before it ends.
    with cyclic_gc_paused():
        if options.offline and not options.dry_run:
            return _run_offline(store, options.now)
        report = RunReport()
        before = _without_expired_rebalancers(store, load(store), options.now, report, options.dry_run)
        _selection_advice(before, report)
        members = OfflineMembers() if options.offline or members is None else members
        return _compute_and_write(store, before, options.now, members, report, options.dry_run)


def _without_expired_rebalancers(store: StateStore, before: Snapshot, now: str, report: RunReport,
                                 dry_run: bool = False) -> Snapshot:
    """``before``, loaded again when expired WorkloadRebalancers were removed from their files."""
    return load(store) if _delete_expired_rebalancers(store, before, now, report, dry_run) else before


def _compute_and_write(store: StateStore, before: Snapshot, now: str, members: Members, report: RunReport,
                       dry_run: bool = False) -> RunReport:
    """:func:`control_loop` over ``before``, then write what changed (with the Events derived
    from it, ``karmactl/store/events.py``), or for a dry run list it."""
    after = control_loop(before, now, members, report, dry_run=dry_run)
    report.after, report.before = after, before
    if dry_run:
        report.changes = _planned_changes(store, before, after)
    else:
        report.changes = store.write_changes(before, after, extra=lambda w: stage_events(store, w, before, after, now))
    return report


def _run_offline(store: StateStore, now: str) -> RunReport:
    """An offline run that writes: as little as the last run's index allows
    (``karmactl/incremental/engine.py: plan_run``): nothing, some templates, or everything (in
    shards when large), the index then written anew."""
    started_ns = time.time_ns()
    done, run_plan = _run_incrementally(store, now, started_ns)
    if done is not None:
        return done
    return _run_full_offline(store, now, run_plan, started_ns)


def _run_incrementally(store: StateStore, now: str, started_ns: int) -> tuple:
    """``(report, None)`` of an unchanged or partial run, or ``(None, plan)`` for a full one
    (``plan.reason`` says why)."""
    from karmactl.incremental import engine

    run_plan = engine.plan_run(store, now)
    report = RunReport()
    if run_plan.mode == "unchanged":
        report.warnings.extend(run_plan.index.warnings)
        report.passes = 1
        report.incremental = "unchanged"
        return report, None
    if run_plan.mode == "partial":
        done, run_plan.reason = _run_partial(store, now, report, run_plan, started_ns)
        if done is not None:
            return done, None
    return None, run_plan


def _run_partial(store: StateStore, now: str, report: RunReport, run_plan, started_ns: int,
                 members: Members | None = None) -> tuple:
    """Recompute only the templates the plan names (``karmactl/incremental/partial.py``), with
    ``members`` (offline: none): ``(report, "")``, or ``(None, why)`` when a full run must decide
    (any input error included: the full run reports it with every other one)."""
    from karmactl.incremental.partial import FullRun, PartialRun

    try:
        part = PartialRun.prepare(store, run_plan.index, run_plan.plan)
        try:
            computed_from = part.snapshot()
            _selection_advice(computed_from, report, policies_too=False)
            after = control_loop(computed_from, now, members or OfflineMembers(), report)
        except (InputError, NotConvergedError) as exc:
            raise FullRun(f"{type(exc).__name__}: {exc}") from None  # the full run reports it as it would
        done = part.commit(after, report, now, started_ns)
        done.before, done.partial_after = computed_from, after
        return done, ""
    except FullRun as exc:
        return None, str(exc) or "partial run not possible"


def _run_full_offline(store: StateStore, now: str, run_plan, started_ns: int) -> RunReport:
    """The whole state directory, computed in shards when large (``karmactl/incremental/sharded.py``)
    or here, and the run index written after the commit."""
    from karmactl.incremental import engine, runindex, sharded

    report = RunReport(incremental=f"full: {run_plan.reason}")
    # the loaded snapshot is handed over, not kept here: a sharded run lets go of it
    done, before, config = sharded.run_large(store, *_load_full(store, run_plan, now, report), now, report,
                                             started_ns, run_plan.tag, compute=compute, load=_reload)
    if done is not None:
        return done
    shared = runindex.shared_objects_bytes(before, config)  # before computing: as loaded
    _compute_and_write(store, before, now, OfflineMembers(), report)
    engine.record_full_run(store, before, report.after, report, now, run_plan.tag, config, started_ns, shared)
    return report


def _load_full(store: StateStore, run_plan, now: str, report: RunReport) -> tuple:
    """``(snapshot, ShardInputs or None)`` for a full offline run (``sharded.load_for_shards``
    with the last run's index, which is let go before the load), expired WorkloadRebalancers
    removed; the index file is dropped (until the new one is written, a crash means a full run)."""
    from karmactl.incremental import engine, runindex, sharded

    owners = engine.take_owners(store, run_plan)
    if owners is not None:  # computed files the shard processes read (karmactl/incremental/shard_inputs.py)
        before, later = sharded.load_for_shards(store, owners, load)
    else:
        before, later = load(store), None
    owners = None
    if _delete_expired_rebalancers(store, before, now, report):
        before, later = load(store), None
    _selection_advice(before, report)
    runindex.drop_index(store.root)
    return before, later


def _selection_advice(snap: Snapshot, report: RunReport, policies_too: bool = True) -> None:
    """The warnings of ``pipeline/advice.py: selection_advice`` over what the run loaded."""
    from karmactl.pipeline.advice import selection_advice

    for line in selection_advice(snap, settings_of(snap).skipped_namespaces, policies_too):
        if line not in report.warnings:
            report.warnings.append(line)


class FullPassNeeded(Exception):
    """:func:`run_online_pass` with ``defer_full``: a full pass is needed, ``str(exc)`` says why;
    nothing was written."""


def run_online_pass(store: StateStore, now: str, members: Members, targeted: Members, owners=(),
                    full: str = "", defer_full: bool = False) -> RunReport:
    """One online pass of the continuous loop (``karmactl/continuous.py``): as little as the
    incremental engine can prove enough (``engine.plan_online``), and the run index left for the
    next one. ``report.incremental`` says which: ``unchanged``, ``partial: N template(s)`` (the
    templates whose files changed or whose wake time came, and the bindings ``owners`` whose member
    copies changed: computed with ``targeted``, members reached with one GET per member copy of
    their Works and no probe, the loop's probes keeping Cluster status) or ``full: why`` (the loop
    of DESIGN §1 over everything with ``members``; ``full`` forces it with that reason).

    Raises:
        InputError, NotConvergedError: as :func:`run` (nothing is written).
        FullPassNeeded: with ``defer_full``, instead of running a full pass (the continuous loop
            runs it in a process of its own).
    """
    from karmactl.gcpause import cyclic_gc_paused
    from karmactl.incremental import engine

    started_ns = time.time_ns()
    with cyclic_gc_paused():
        run_plan = engine.plan_online(store, now, owners, full)
        report = RunReport()
        if run_plan.mode == "unchanged":
            report.warnings.extend(run_plan.index.warnings)
            report.incremental = "unchanged"
            return report
        reason = run_plan.reason
        if run_plan.mode == "partial":
            done, reason = _run_partial(store, now, report, run_plan, started_ns, targeted)
            if done is not None:
                return done
            report = RunReport()
        if defer_full:
            raise FullPassNeeded(reason)
        return _run_full_online(store, now, members, report, reason, run_plan.tag, started_ns)


def _run_full_online(store: StateStore, now: str, members: Members, report: RunReport, reason: str, tag: str,
                     started_ns: int) -> RunReport:
    """:func:`run`'s online run, its index recorded after the commit (``engine.record_full_run``)."""
    from karmactl.controllers.helper.template import DetectorConfig
    from karmactl.incremental import engine, runindex

    report.incremental = f"full: {reason}"
    before = _without_expired_rebalancers(store, load(store), now, report)
    runindex.drop_index(store.root)  # until the new one is written, a crash means a full run
    config = DetectorConfig(skipped_namespaces=settings_of(before).skipped_namespaces)
    shared = runindex.shared_objects_bytes(before, config)
    _compute_and_write(store, before, now, members, report)
    engine.record_full_run(store, before, report.after, report, now, tag, config, started_ns, shared)
    return report


ACT_ROUNDS = 3  # act -> observe -> compute rounds in one run while decisions keep changing Works


def control_loop(before: Snapshot, now: str, members: Members, report: RunReport, dry_run: bool = False) -> Snapshot:
    """Observe, decide, act, observe, decide: the snapshot a run writes.

    The members are probed and observed first, so the control plane decides on this run's
    observations. Then Works are applied and deleted, the members observed again (the status the
    run reports is what they showed after its changes), and the control plane computed again;
    when that changes what is dispatched (an eviction the new status led to, a Work whose copy is
    gone), it is acted on again, at most :data:`ACT_ROUNDS` times. A dry run acts with
    ``dry_run`` (nothing is sent; ``report.member_changes`` lists what would be).

    Raises:
        NotConvergedError, InputError: from :func:`compute`.
    """
    snap = members.probe(before, now, report)
    snap = members.observe(snap, now, report)
    after = compute(snap, now, report, members.observed_clusters())
    if dry_run:
        members.act(after, now, report, dry_run=True)
        return after
    for _ in range(ACT_ROUNDS):
        writes = report.member_writes
        acted = members.act(after, now, report)
        if report.member_writes == writes and acted.works == after.works:
            break  # nothing sent and nothing learned: the observations of this run still hold
        dispatched = _dispatched(acted.works)
        snap = members.observe(acted, now, report) if report.member_writes != writes else acted
        after = compute(snap, now, report, members.observed_clusters())
        if _dispatched(after.works) == dispatched:
            break
    return after


def _dispatched(works: dict) -> dict:
    """What execution acts on: each Work's spec and whether it is terminating."""
    return {k: (w.get("spec"), (w.get("metadata") or {}).get("deletionTimestamp")) for k, w in works.items()}


# --------------------------------------------------------------------------- runs over time


def converged(snap: Snapshot) -> tuple[bool, str]:
    """Whether every binding is scheduled, fully applied and healthy in every target cluster
    (True for a snapshot without bindings).

    The Works of Pull mode Clusters wait for the member's own agent, which karmactl neither runs nor
    waits for: their part of a binding (applied, health) is left out (the run's warning names them).

    Returns ``(ok, what is still missing)``: the first line of :func:`waiting_for`.
    """
    waiting = waiting_for(snap, first_only=True)
    return (False, waiting[0]) if waiting else (True, "")


def waiting_for(snap: Snapshot, first_only: bool = False) -> list[str]:
    """What convergence still waits for, one line per binding and target cluster, in binding
    order: ``Deployment default/nginx: not scheduled yet (reason)``, ``... on member1: 2/3
    replicas updated`` (a rollout in progress), ``... on member1: cluster member1 is not Ready
    (reason: message)`` (a sick cluster), ``... on member1: not applied: message``. Empty when
    :func:`converged` holds. ``first_only`` stops at the first line.

    The replicas a cluster should run are the binding's ``spec.clusters[].replicas``; the counts
    are the member's observed status as aggregated into the binding's ``aggregatedStatus``
    (``pkg/controllers/status/rb_status_controller.go``).
    """
    from karmactl.controllers.helper.cluster import pull_cluster_names

    pull = pull_cluster_names(snap)
    out: list[str] = []
    for key in sorted(snap.bindings):
        out.extend(_binding_waits(snap, key, snap.bindings[key], pull))
        if first_only and out:
            return out[:1]
    return out


def _binding_label(key, b: dict) -> str:
    """``Deployment default/nginx``: the binding's resource as :func:`waiting_for` names it."""
    res = (b.get("spec") or {}).get("resource") or {}
    return f"{res.get('kind') or key[1]} " + (f"{res.get('namespace')}/" if res.get("namespace") else "") + \
        str(res.get("name") or key[3])


def _binding_waits(snap: Snapshot, key, b: dict, pull: set) -> list[str]:
    """:func:`waiting_for`'s lines of one binding; the clusters of ``pull`` (Pull mode) are left out."""
    from karmactl.controllers.helper.cluster import CLUSTER_GK, effective_status

    status = b.get("status") or {}
    conds = {x.get("type"): x for x in status.get("conditions") or [] if isinstance(x, dict)}
    name = _binding_label(key, b)
    if (conds.get("Scheduled") or {}).get("status") != "True":
        return [f"{name}: not scheduled yet{_because(conds.get('Scheduled'))}"]
    out = []
    desired = {c.get("name"): c.get("replicas") for c in (b.get("spec") or {}).get("clusters") or []}
    seen = set()
    for item in status.get("aggregatedStatus") or []:
        cluster = item.get("clusterName")
        seen.add(cluster)
        if cluster in pull:
            continue
        ckey = (*CLUSTER_GK, "", cluster)
        cstatus = effective_status(snap.user[ckey], snap.overlays.get(ckey)) if ckey in snap.user else {}
        what = _cluster_progress(item, desired.get(cluster), cluster, cstatus)
        if what:
            out.append(f"{name} on {cluster}: {what}")
    if (conds.get("FullyApplied") or {}).get("status") != "True" and not out:
        return _not_applied(name, desired, seen, pull, conds.get("FullyApplied"))
    return out


def _not_applied(name: str, desired: dict, seen: set, pull: set, cond: dict | None) -> list[str]:
    """The line of a binding not fully applied whose reported clusters all look fine: the target
    clusters not reported yet (Pull clusters never are: none left means nothing to wait for)."""
    missing = sorted(str(c) for c in desired if c not in seen and c not in pull)
    if pull and not missing:
        return []
    return [f"{name}: not applied yet" + (f" on {', '.join(missing)}" if missing else "") + _because(cond)]


def _because(cond: dict | None) -> str:
    """`` (reason: message)`` of a condition, or ``""``."""
    if not cond:
        return ""
    text = ": ".join(str(x) for x in (cond.get("reason"), cond.get("message")) if x)
    return f" ({text})" if text else ""


_REPLICA_COUNTS = {"updatedReplicas": "updated", "readyReplicas": "ready", "availableReplicas": "available"}


def _cluster_progress(item: dict, desired, cluster: str, cluster_status: dict) -> str:
    """What one cluster's entry of ``aggregatedStatus`` still waits for, ``""`` when it is Healthy:
    the cluster itself when it is not Ready, else the application, else the rollout's counts."""
    ready = next((c for c in cluster_status.get("conditions") or [] if c.get("type") == "Ready"), None)
    if ready is not None and ready.get("status") != "True":
        return f"cluster {cluster} is not Ready{_because(ready)}"
    if item.get("health") == "Healthy":
        return ""
    if item.get("applied") is False:
        return "not applied" + (f": {item['appliedMessage']}" if item.get("appliedMessage") else "")
    st = item.get("status")
    if not isinstance(st, dict) or not st:
        return f"no status reported by {cluster} yet"
    gen, seen = st.get("generation"), st.get("observedGeneration")
    if isinstance(gen, int) and (seen is None or isinstance(seen, int) and seen < gen):
        return f"rollout not yet started by {cluster} (generation {gen}, observed {seen if seen is not None else 'none yet'})"
    want = desired if isinstance(desired, int) else st.get("replicas")
    if isinstance(want, int) and any(f in st for f in _REPLICA_COUNTS):
        for count, word in _REPLICA_COUNTS.items():
            have = st.get(count) or 0  # a count the workload controller leaves out is 0
            if isinstance(have, int) and have < want:
                return f"{have}/{want} replicas {word}"
    return f"{item.get('health') or 'health not reported'} (as the member reports it)"


class GaveUp(TimeoutError):
    """``reconcile --wait`` stops before its timeout: a run changed nothing and a binding cannot be
    scheduled by waiting (:func:`unschedulable`); the message names it and says why."""


def unschedulable(snap: Snapshot) -> str | None:
    """Why a binding of ``snap`` cannot be scheduled however long one waits, or None.

    A binding whose ``spec.schedulerName`` is not ``default-scheduler`` is never scheduled here;
    one whose ``Scheduled`` condition is False is stuck while every Cluster is Ready (a NotReady or
    unreachable Cluster may come back and change the answer, so then the wait goes on).
    """
    every_ready = all(any(c.get("type") == "Ready" and c.get("status") == "True"
                          for c in ((snap.overlays.get(k) or {}).get("status") or snap.user[k].get("status") or {})
                          .get("conditions") or [])
                      for k in snap.keys_of_kind("cluster.karmada.io", "Cluster"))
    for key in sorted(snap.bindings):
        b = snap.bindings[key]
        name = f"{key[2]}/{key[3]}" if key[2] else key[3]
        scheduler = (b.get("spec") or {}).get("schedulerName")
        if scheduler and scheduler != C.DEFAULT_SCHEDULER_NAME:
            return (f"binding {name} cannot be scheduled: its spec.schedulerName is \"{scheduler}\", "
                    f"not karmactl's {C.DEFAULT_SCHEDULER_NAME}")
        cond = next((c for c in (b.get("status") or {}).get("conditions") or [] if c.get("type") == "Scheduled"), None)
        if every_ready and cond is not None and cond.get("status") == "False":
            return f"binding {name} cannot be scheduled: {cond.get('reason')}: {cond.get('message')}"
    return None


def unsettled_bindings(snap: Snapshot) -> set:
    """The keys of the bindings :func:`converged` still waits for (:func:`waiting_for` has lines for
    them; Pull mode clusters left out), for the continuous loop's settle passes."""
    from karmactl.controllers.helper.cluster import pull_cluster_names

    pull = pull_cluster_names(snap)
    return {key for key in snap.bindings if _binding_waits(snap, key, snap.bindings[key], pull)}


def run_until_converged(store: StateStore, clock, members: Members | None, timeout: float, interval: float = 0.5,
                        on_run=None, locked=None, offline: bool = False) -> int:
    """Runs until one changes nothing and, online, :func:`converged` holds: the members have
    settled (``reconcile --wait``, ``demo``).

    Args:
        store: the state directory.
        clock: ``f() -> RFC 3339`` read once per run.
        members: the member layer (None with ``offline``).
        timeout: seconds before giving up.
        interval: seconds between runs.
        on_run: ``f(run number, RunReport, ok, why)`` after each run (progress output).
        locked: a context manager factory held around each run (the state lock), or None.
        offline: offline runs (the control plane only: until a run changes nothing).

    Returns:
        The number of runs.

    Raises:
        TimeoutError: not converged within ``timeout`` (the message says what is missing);
            :class:`GaveUp` before it, when a run changed nothing and a binding cannot be scheduled.
        InputError, NotConvergedError: from a run.
    """
    deadline = time.monotonic() + timeout
    runs = 0
    while True:
        runs += 1
        options = RunOptions(now=clock(), offline=offline)
        if locked is not None:
            with locked():
                report = run(store, options, members)
        else:
            report = run(store, options, members)
        ok, why = (True, "") if offline or report.after is None else converged(report.after)
        if on_run is not None:
            on_run(runs, report, ok, why)
        if ok and not report.changes:
            return runs
        if not ok and not report.changes and report.after is not None:
            stuck = unschedulable(report.after)
            if stuck is not None:
                raise GaveUp(stuck)
        if time.monotonic() > deadline:
            raise TimeoutError(why or "still changing")
        time.sleep(interval)


def _delete_expired_rebalancers(store: StateStore, snap: Snapshot, now: str, report: RunReport,
                                dry_run: bool = False) -> bool:
    """Remove from their files the WorkloadRebalancers whose ``ttlSecondsAfterFinished`` has passed,
    as Karmada's controller deletes them; True if any was removed (the caller reloads). A dry run
    only says which it would delete."""
    from karmactl.controllers import workload_rebalancer as W
    from karmactl.store.edit import remove_object

    gone = [k for k in snap.keys_of_kind(W.GROUP, W.KIND) if W.expired(snap.user[k], snap.overlays.get(k), now)]
    # several objects of one file: remove from the last document up, so the indexes stay valid
    for key in sorted(gone, key=lambda k: (snap.sources[k].path, -snap.sources[k].index)):
        if not dry_run:
            remove_object(store, snap.sources[key])
        report.events.append(f"workloadrebalancer {key[3]} {'would be ' if dry_run else ''}deleted: "
                             f"ttlSecondsAfterFinished passed ({snap.sources[key].path})")
    return bool(gone) and not dry_run


def _planned_changes(store: StateStore, before: Snapshot, after: Snapshot) -> list:
    out = []
    for old_map, new_map in ((before.bindings, after.bindings), (before.works, after.works),
                             (before.overlays, after.overlays)):
        for key in sorted(set(old_map) | set(new_map)):
            old, new = old_map.get(key), new_map.get(key)
            if old != new:
                action = "create" if old is None else "delete" if new is None else "update"
                out.append((action, store.rel(store.computed_path(key))))
    return out


__all__ = ["FullPassNeeded", "Members", "OfflineMembers", "RunOptions", "RunReport", "run", "run_online_pass", "compute", "control_loop", "converged",
           "load", "normalize_object", "settings_of", "run_until_converged", "unsettled_binding", "NotConvergedError", "InputError"]
