"""One reconcile run: load the state directory, run the control plane to a fixpoint, write.

DESIGN §1::

    load -> [probe members] -> controllers + scheduler (repeated until nothing changes)
         -> [execute Works on members -> collect status -> status controllers] -> write

The control-plane part (:func:`compute`) is pure over a :class:`Snapshot` and ``now``; member
contact lives in ``karmactl.members`` and is skipped entirely with ``offline``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from karmactl.api import constants as C
from karmactl.controllers import binding as binding_ctl
from karmactl.controllers import cluster_status, detector, namespace_sync
from karmactl.controllers.templates import refresh_overlay, spec_hash, template_view
from karmactl.api.snapshot import Settings, Snapshot, StepContext
from karmactl.controllers.registry import load_steps
from karmactl.store.state import InputError, Source, StateStore, describe_key, key_of
from karmactl.store.events import stage_events

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
    and written by several processes (:func:`_run_sharded`).
    """

    changes: list = field(default_factory=list)
    passes: int = 0
    warnings: list = field(default_factory=list)
    events: list = field(default_factory=list)
    member_errors: dict = field(default_factory=dict)
    after: Snapshot | None = None


# --------------------------------------------------------------------------- loading


def normalize_object(obj: dict, src: Source, registry, owned: bool = False) -> dict:
    """Alias normalisation, defaulting and validation of one user object (Karmada's webhooks).

    Args:
        owned: the caller hands ``obj`` over (a freshly parsed object): it may be rewritten in
            place instead of copied. Otherwise ``obj`` is left as it is.

    Raises:
        InputError: naming the file, line, object and the first invalid field.
    """
    from karmactl.api.defaults import default_object, normalize_aliases
    from karmactl.api.validation import validate_defaulted

    label = describe_key(key_of(obj))
    obj, errors = normalize_aliases(obj, copy=not owned)
    if not errors:
        obj = default_object(obj, copy=not owned)
        errors = validate_defaulted(obj, registry)
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InputError(first.message + more, src.path, src.line, label, first.path)
    return obj


def load(store: StateStore) -> Snapshot:
    """Load and validate the state directory (raises :class:`InputError`)."""
    from karmactl import __version__

    # the store hands over freshly parsed objects: defaulting may work on them in place
    return store.load(normalize=lambda obj, src: normalize_object(obj, src, store.registry, owned=True),
                      normalize_tag=f"karmactl-{__version__}-{_source_stamp()}")


def _source_stamp() -> str:
    """Changes whenever karmactl's validation code changes, so cached validation results expire."""
    import os
    api_dir = os.path.dirname(C.__file__)
    return str(max(int(os.path.getmtime(os.path.join(api_dir, f))) for f in os.listdir(api_dir) if f.endswith(".py")))


# --------------------------------------------------------------------------- compute


def clusters_of(snap: Snapshot) -> list[dict]:
    """Every Cluster as the control plane sees it (status from the overlay, taints merged)."""
    from karmactl.controllers.templates import merged_view

    out = []
    for key in sorted(k for k in snap.user if k[:2] == ("cluster.karmada.io", "Cluster")):
        out.append(merged_view(snap.user[key], snap.overlays.get(key)))
    return out


def _interpreter_hooks(snap: Snapshot):
    from karmactl import interpreter

    ops = snap.of_kind("policy.karmada.io", "OverridePolicy")
    cops = snap.of_kind("policy.karmada.io", "ClusterOverridePolicy")
    clusters = {c["metadata"]["name"]: c for c in clusters_of(snap)}

    def overrides(manifest, cluster_name):
        from karmactl.overrides import apply_overrides

        cluster = clusters.get(cluster_name) or {"metadata": {"name": cluster_name}, "spec": {}}
        ns = (manifest.get("metadata") or {}).get("namespace") or ""
        res = apply_overrides(manifest, cluster, [o for o in ops if o["metadata"].get("namespace") == ns] if ns else [], cops)
        return res.manifest, res.applied_overrides, res.applied_cluster_overrides

    hooks = binding_ctl.RenderHooks(revise_replica=interpreter.revise_replica,
                                    prune=lambda m: interpreter.prune_manifest(m, in_place=True),
                                    split_job_completions=interpreter.split_job_completions,
                                    apply_overrides=overrides if (ops or cops) else None)
    return interpreter, hooks


def settings_of(snap: Snapshot) -> Settings:
    """The run's settings from ``karmada-system/karmactl-config`` (raises :class:`InputError`)."""
    try:
        return Settings.from_snapshot(snap)
    except ValueError as exc:
        src = snap.sources.get(Settings.SETTINGS_KEY)
        raise InputError(str(exc), src.path if src else None, src.line if src else None,
                         "ConfigMap karmada-system/karmactl-config") from None


def compute(snap: Snapshot, now: str, report: RunReport | None = None) -> Snapshot:
    """Run the control plane over ``snap`` until nothing changes; returns the new snapshot.

    Order per pass (semantics §15.1): cluster steps, template bookkeeping + detector, binding
    steps (evictions), scheduler, scheduled steps (graceful eviction), binding controller,
    namespace sync, status steps. ``snap`` itself is not modified.

    Raises:
        NotConvergedError: still changing after :data:`MAX_PASSES` passes.
        InputError: invalid settings.
    """
    from karmactl.scheduler import schedule_binding

    report = report if report is not None else RunReport()
    settings = settings_of(snap)
    ctx = StepContext(settings=settings, warnings=report.warnings, events=report.events)
    phases = load_steps()
    config = detector.DetectorConfig(skipped_namespaces=settings.skipped_namespaces)
    out = snap.copy_computed()
    interpreter, hooks = _interpreter_hooks(snap)
    for key, cluster in sorted((k, v) for k, v in snap.user.items() if k[:2] == ("cluster.karmada.io", "Cluster")):
        out.set_overlay(key, cluster_status.ingest_file_status(key, cluster, out.overlays.get(key), now))
        out.set_overlay(key, cluster_status.stamp_creation(key, cluster, out.overlays.get(key), now))
    templates = {k: v for k, v in snap.user.items() if detector.is_template(k, v, config)}
    pps = [p for p in snap.of_kind("policy.karmada.io", "PropagationPolicy") if not p["metadata"].get("deletionTimestamp")]
    cpps = [p for p in snap.of_kind("policy.karmada.io", "ClusterPropagationPolicy") if not p["metadata"].get("deletionTimestamp")]
    override_names = {(k[1], k[2], k[3]) for k in snap.user if k[0] == "policy.karmada.io"
                      and k[1] in ("OverridePolicy", "ClusterOverridePolicy")}
    render_memo: dict = {}
    view_cache: dict = {}
    hashes = {k: spec_hash(obj) for k, obj in templates.items()}

    def view_of(k):
        overlay = out.overlays.get(k)
        cached = view_cache.get(k)
        if cached is not None and cached[0] is overlay:
            return cached[1]
        v = template_view(templates[k], overlay)
        view_cache[k] = (overlay, v)
        return v

    replica_memo: dict = {}
    detector_memo: dict = {}

    def interpret_replica(view):
        """The interpreter's answer, once per template: it reads only apiVersion, kind and spec,
        and every view of a template shares the template's ``spec`` object."""
        spec = view.get("spec")
        gvk = (view.get("apiVersion"), view.get("kind"))
        hit = replica_memo.get(id(spec))
        if hit is None or hit[0] is not spec or hit[1] != gvk:
            hit = (spec, gvk, interpreter.interpret_replica(view))
            replica_memo[id(spec)] = hit
        return hit[2]

    def run_phase(name: str) -> bool:
        changed = False
        for step in phases[name]:
            changed = bool(step(snap, out, now, ctx)) or changed
        return changed

    for passes in range(1, MAX_PASSES + 1):
        ctx.passes = passes
        changed = run_phase("clusters")
        # template bookkeeping (uid, generation) before the detector reads the views
        for key, obj in templates.items():
            out.set_overlay(key, refresh_overlay(key, obj, out.overlays.get(key), None, now, hashes[key]))
        views = {k: view_of(k) for k in templates}
        claims = {k: {"labels": (out.overlays.get(k) or {}).get("metadata", {}).get("labels") or {},
                      "annotations": (out.overlays.get(k) or {}).get("metadata", {}).get("annotations") or {}}
                  for k in templates}
        det = detector.reconcile(templates, views, claims, pps, cpps, out.bindings, override_names, now,
                                 interpret_replica, config, detector_memo)
        for line in det.waiting:
            ctx.warn(line)
        for key, claim in det.claims.items():
            changed = out.set_overlay(key, refresh_overlay(key, templates[key], out.overlays.get(key), claim, now,
                                                           hashes[key])) or changed
        views = {k: view_of(k) for k in templates}
        for bkey, b in det.bindings.items():
            changed = out.set_binding(bkey, b) or changed
        changed = run_phase("bindings") or changed
        clusters = clusters_of(out)
        for bkey in sorted(out.bindings):
            changed = out.set_binding(bkey, schedule_binding(out.bindings[bkey], clusters, now).binding) or changed
        changed = run_phase("scheduled") or changed
        bres = binding_ctl.reconcile(out.bindings, out.works, views, now, hooks, render_memo)
        for wkey, w in bres.works.items():
            changed = out.set_work(wkey, w) or changed
        for bkey, errs in sorted(bres.errors.items()):
            for e in errs:
                ctx.warn(f"{describe_key(bkey)}: {e}")
        nres = namespace_sync.reconcile(snap.user, [c["metadata"]["name"] for c in clusters], out.works, now, config)
        for wkey, w in nres.items():
            changed = out.set_work(wkey, w) or changed
        changed = run_phase("status") or changed
        report.passes = passes
        if not changed:
            return out
    raise NotConvergedError(f"the control plane did not converge after {MAX_PASSES} passes")


# --------------------------------------------------------------------------- the run


def run(store: StateStore, options: RunOptions, members=None) -> RunReport:
    """One whole run: load, compute, (execute and collect unless offline), write unless dry-run.

    Args:
        store: the state directory.
        options: clock, offline, dry-run.
        members: the member-cluster layer (``karmactl.members.MemberLayer``); required unless offline.

    Raises:
        InputError: invalid state directory (nothing is written).
        NotConvergedError: the control plane did not settle (nothing is written).
    """
    import gc

    # A run builds hundreds of thousands of small acyclic dicts and lists; the cyclic collector
    # would rescan them over and over (about 40 % of a 10,000-binding run). Nothing in a run
    # creates reference cycles that must be freed before it ends.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(store, options, members)
    finally:
        if was_enabled:
            # Everything allocated meanwhile sits in the youngest generation: the first
            # collection after enabling would scan it all. Freezing moves it out of the
            # collector's view (reference counting still frees it).
            gc.freeze()
            gc.enable()


def _run(store: StateStore, options: RunOptions, members) -> RunReport:
    report = RunReport()
    before = load(store)
    if options.offline and not options.dry_run:
        shards = shard_count(before)
        if shards > 1:
            return _run_sharded(store, before, options.now, report, shards)
    after = before
    if not options.offline and members is not None:
        after = members.probe(after, options.now, report)
    if not options.offline:  # cluster condition detection for Remedy (karmactl/members/detection.py)
        from karmactl.members.detection import detect_conditions
        after = detect_conditions(after, options.now, report, getattr(members, "client_for", None), store.root)
    after = compute(after, options.now, report=report)
    # a dry run (and plan) reads members but never writes to them
    if not options.offline and members is not None and not options.dry_run:
        # Status the members report can make the control plane render other Works (failover,
        # evictions): execute again, a bounded number of times, while it does.
        def _dispatched(works: dict) -> dict:  # what execution acts on: spec, terminating or not
            return {k: (w.get("spec"), (w.get("metadata") or {}).get("deletionTimestamp")) for k, w in works.items()}

        for _ in range(3):
            executed_from = after
            after = members.execute(after, options.now, report)
            if (after.works == executed_from.works and after.overlays == executed_from.overlays
                    and after.bindings == executed_from.bindings):
                break  # members reported nothing new: the control plane has nothing to redo
            executed = _dispatched(after.works)
            after = compute(after, options.now, report=report)
            if _dispatched(after.works) == executed:
                break
    report.after = after
    if options.dry_run:
        report.changes = _planned_changes(store, before, after)
    else:
        # Events (karmactl/store/events.py): derived from this run's changes, staged with its files
        report.changes = store.write_changes(before, after, extra=lambda w: stage_events(store, w, before, after, options.now))
    return report


# --------------------------------------------------------------------------- shards

SHARDS = 2
SHARD_MIN_OBJECTS = 2000  # below this, starting a second process costs more than it saves
_SHARD_JOB = None  # what forked shard processes compute from (inherited, never pickled)


def shard_count(snap: Snapshot) -> int:
    """How many processes compute and write an offline run of ``snap``: 1, or :data:`SHARDS`
    for large state directories on machines with several cores and ``fork``."""
    import multiprocessing
    import os

    if len(snap.user) < SHARD_MIN_OBJECTS or (os.cpu_count() or 1) < 2:
        return 1
    return SHARDS if "fork" in multiprocessing.get_all_start_methods() else 1


def _compute_shard(index: int) -> tuple:
    """One shard (in a forked process, or in the parent for shard 0): compute its part of the
    snapshot and stage the files it owns. Returns ``(plan, staged, warnings, events, passes,
    error)``; an error is returned, not raised, so the parent can undo every shard's staging."""
    from karmactl.store.fsio import TreeWriter

    store, before, sharding, now, staging = _SHARD_JOB
    writer = TreeWriter(store.root, staging)
    report = RunReport()
    try:
        sub = sharding.split(before, index)
        after = compute(sub, now, report=report)
        owned = lambda which, key, obj: sharding.owner(which, key, obj) == index  # noqa: E731
        staged = store.stage_changes(sub, after, writer, keep=owned)
        staged += stage_events(store, writer, sub, after, now, keep=owned)  # Events of the objects it owns
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        return writer.plan(), [], report.warnings, report.events, report.passes, exc
    return writer.plan(), staged, report.warnings, report.events, report.passes, None


def _run_sharded(store: StateStore, before: Snapshot, now: str, report: RunReport, shards: int) -> RunReport:
    """An offline run computed and written by ``shards`` processes (``controllers/shards.py``
    says why the parts are independent); the files of all shards land together or not at all.

    Raises:
        InputError, NotConvergedError, OSError: as a single-process run would (nothing is written).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from karmactl.controllers.shards import Sharding
    from karmactl.store.state import change_list

    global _SHARD_JOB
    settings = settings_of(before)
    sharding = Sharding(before, shards, detector.DetectorConfig(skipped_namespaces=settings.skipped_namespaces))
    writer = store.new_writer()
    _SHARD_JOB = (store, before, sharding, now, writer.staging)
    try:
        with ProcessPoolExecutor(max_workers=shards - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_compute_shard, i) for i in range(1, shards)]
            results = [_compute_shard(0)] + [f.result() for f in futures]
    except BaseException:  # a shard process died, or the run was interrupted: drop all staging
        writer.abort()
        raise
    finally:
        _SHARD_JOB = None
    staged: list = []
    for plan, part, warnings, events, passes, _error in results:
        writer.adopt(plan)
        staged.extend(part)
        for line in warnings:
            if line not in report.warnings:
                report.warnings.append(line)
        for line in events:
            if line not in report.events:
                report.events.append(line)
        report.passes = max(report.passes, passes)
    errors = [r[5] for r in results if r[5] is not None]
    if errors:
        writer.abort()
        raise errors[0]
    writer.commit()
    report.changes = change_list(staged)
    return report


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


__all__ = ["RunOptions", "RunReport", "run", "compute", "load", "NotConvergedError", "InputError"]
