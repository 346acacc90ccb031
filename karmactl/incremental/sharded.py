"""The sharded run: a large offline run computed and written by :data:`SHARDS` processes, in
shards of about :data:`SHARD_TEMPLATES` templates (``karmactl/incremental/shards.py`` says why
the shards are independent); the files of all shards land together or not at all.

:func:`run_large` is the one call ``karmactl.reconcile`` makes for a full offline run: it computes
and writes the run in shards and records the index, or answers None when the run is one process's
(small, no second core or ``fork``, templates joined, a rebalancer pending). :func:`load_for_shards`
loads a full run that has the last run's index so that the computed files of one template's shard
are read by the process of that shard (``karmactl/incremental/shard_inputs.py``).

The control plane itself is the caller's (``compute(snapshot, now, report=...)``, as
``karmactl.reconcile.compute``): this module decides only who computes what.
"""
from __future__ import annotations

from karmactl.api.snapshot import Snapshot
from karmactl.controllers.helper.template import DetectorConfig
from karmactl.store.state import InputError, StateStore
from karmactl.store.validation import settings_of

SHARDS = 2
SHARD_MIN_OBJECTS = 2000  # below this, starting a second process costs more than it saves
SHARD_TEMPLATES = 600
"""Resource templates per shard, about: a large run is cut into more shards than processes, each
process computing its shards one after the other, so what a process holds at once is one shard's
results (its bindings, Works, statuses and Events: some 10 MB here), not its share of the fleet."""
_SHARD_JOB = None  # what forked shard processes compute from (inherited, never pickled)


def shard_count(snap: Snapshot) -> int:
    """How many processes compute and write an offline run of ``snap``: 1, or :data:`SHARDS`
    for large state directories on machines with several cores and ``fork``."""
    from karmactl.controllers import workload_rebalancer
    from karmactl.incremental.shards import has_cross_template_dependencies

    if not _may_shard(snap) or has_cross_template_dependencies(snap):
        return 1
    if workload_rebalancer.pending(snap):
        return 1  # a rebalancer reads bindings of every shard: the run that acts on it is not split
    return SHARDS


def _may_shard(snap: Snapshot) -> bool:
    """Whether :func:`shard_count` can give more than one process by what ``snap.user`` holds and
    the machine has (large enough, several cores, ``fork``, no object that joins templates); the
    computed objects may still say no."""
    import multiprocessing
    import os

    from karmactl.incremental.shards import has_cross_template_dependencies

    return (len(snap.user) >= SHARD_MIN_OBJECTS and (os.cpu_count() or 1) >= 2
            and "fork" in multiprocessing.get_all_start_methods()
            and not has_cross_template_dependencies(Snapshot(snap.registry, snap.user)))


def load_for_shards(store: StateStore, owners: dict, load) -> tuple:
    """Load the state directory for a full offline run that has the last run's index, ``owners``
    its ``runindex.computed_owners`` (``karmactl/incremental/shard_inputs.py``): ``(snapshot,
    None)`` as ``load`` gives it, or, when the run can be sharded by its user objects, ``(snapshot,
    ShardInputs)``: the snapshot without the computed files that the index gives to one template's
    shard, for the shard processes to read.

    Args:
        load: ``f(store, computed=True) -> Snapshot``, the run's load (``reconcile.load``).

    Raises:
        InputError: as ``load`` (exactly: a damaged computed file the parent meets is
            reported by a whole load).
    """
    from karmactl.incremental import runindex
    from karmactl.incremental.shard_inputs import ShardInputs, deferrable
    from karmactl.incremental.shards import template_binding_key
    from karmactl.store.state import notes_silenced

    before = load(store, computed=False)
    try:
        config = DetectorConfig(skipped_namespaces=settings_of(before).skipped_namespaces)
    except InputError:
        config = None  # reported after the computed files, as always
    if config is None or not _may_shard(before):
        store.read_computed(before)
        return before, None
    live = {runindex.owner_of_binding(template_binding_key(k)) for k, o in before.user.items()
            if runindex.is_split(k, o, config)}
    try:
        rels = store.read_computed(before, skip=deferrable(owners, live, runindex.SHARED))
    except InputError:
        with notes_silenced():  # raises what a load raises: the first damaged file in load order
            return load(store), None
    return before, (ShardInputs(rels, owners) if rels else None)


def run_large(store: StateStore, before: Snapshot, later, now: str, report, started_ns: int, tag: str,
              compute, load) -> tuple:
    """A full offline run of ``before`` in shards, when it is large enough (:func:`shard_count`),
    with its index recorded.

    Args:
        later: the ``ShardInputs`` of :func:`load_for_shards`, or None.
        report: the run's ``reconcile.RunReport``.
        compute: ``f(snapshot, now, report=...) -> Snapshot``, the control plane.
        load: ``f(store) -> Snapshot``, a whole load (its notes given already).

    Returns:
        ``(report, before, config)``: ``report`` None when the run is one process's, to compute
        from ``before`` (loaded again when the computed files were left to the shards) with the
        detector's ``config``.

    Raises:
        As :func:`run_sharded`, but ``StaleShardInputs`` (the run is then computed from a whole load).
    """
    import copy

    from karmactl.incremental.engine import record_index
    from karmactl.incremental.shard_inputs import StaleShardInputs

    config = DetectorConfig(skipped_namespaces=settings_of(before).skipped_namespaces)
    processes = shard_count(before)
    if later is not None and processes == 1:  # computed files (a pending rebalancer...) join them
        before, later = load(store), None
    if processes == 1:
        return None, before, config
    parts: dict = {}
    try:
        done = run_sharded(store, before, now, copy.deepcopy(report), processes, parts, later, compute=compute)
    except StaleShardInputs:
        # the last run's owners do not fit what the files hold now: as without them
        before, parts = load(store), {}
        config = DetectorConfig(skipped_namespaces=settings_of(before).skipped_namespaces)
        processes = shard_count(before)
        done = run_sharded(store, before, now, report, processes, parts, compute=compute) if processes > 1 else None
    if done is not None:
        record_index(store, before, done, parts["owners"], parts["wakes"], now, tag, config, started_ns,
                     parts["shared"], parts["split"], parts["written"])
    return done, before, config


def _compute_shard(worker: int) -> tuple:
    """What one process computes of a sharded run (in a forked process, or in the parent for
    worker 0): the shards ``worker``, ``worker + processes``, ... one after the other; for each,
    compute its part of the snapshot (with its computed files, when the parent left them to the
    shards: ``incremental/shard_inputs.py``), stage the files it owns, derive and merge the Events of the
    objects it owns (an Event file holds objects of several shards: the parent stages them), then
    let its results go. Returns ``(plan, staged, warnings, events, passes, error, merged Events,
    owners, wakes)`` (merged Events of all its shards as ``store.events.EventBuffer.packed``
    returns them; the last two for the run index: ``{computed rel: [owner, claim]}`` of the objects it
    owns, and the ``wake_times`` entries of its bindings and of the whole state); an error is
    returned, not raised, so the parent can undo every shard's staging."""
    from karmactl.pipeline.events import derive_events
    from karmactl.pipeline.registry import wake_times
    from karmactl.incremental.runindex import Owners
    from karmactl.store.events import EventBuffer, merge_derived
    from karmactl.store.fsio import TreeWriter

    store, before, sharding, now, staging, processes, inputs, compute, new_report = _SHARD_JOB
    # What the other processes compute is not this one's to keep: dropped, its memory (grouped by
    # shards.layout_group) takes this process's results. The parent's (worker 0) run index
    # needs only the sources of what it drops.
    sharding.keep_only(before, worker, processes)
    writer = TreeWriter(store.root, staging)
    report = new_report()
    staged: list = []
    merged = EventBuffer()
    owners: dict = {}
    wakes: list = []
    passes = 0
    stored: dict = {}  # Event files read, for the shards after (store.events.merge_derived)
    try:
        for index in range(worker, sharding.shards, processes):
            sub = sharding.split(before, index)
            if inputs is not None:  # this shard's computed files, read now (incremental/shard_inputs.py)
                inputs.add_to(store, sub, sharding, index)
            after = compute(sub, now, report=report)
            passes = max(passes, report.passes)
            owned = lambda which, key, obj, index=index: sharding.owner(which, key, obj) == index  # noqa: E731
            staged += store.stage_changes(sub, after, writer, keep=owned)
            merged.add(merge_derived(store.root, derive_events(sub, after, now, keep=owned), now, stored))
            settings = settings_of(after)
            config = DetectorConfig(skipped_namespaces=settings.skipped_namespaces)
            owners.update(Owners.of(after.user, after.bindings, config).owner_map(store, after, keep=owned))
            wakes += [(b, t) for b, t in wake_times(after, now, settings)
                      if b is None or sharding.owner("bindings", b, {}) == index]
            del sub, after
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        return writer.plan(), [], report.warnings, report.events, passes, exc, None, {}, []
    # the objects are done with (the parent's run index reads only the sources): their memory
    # takes what follows
    before.user = before.bindings = before.works = before.overlays = {}
    result = (writer.plan(), staged, report.warnings, report.events, passes, None, merged.packed(), owners, wakes)
    return _compressed(result) if worker else result


def _compressed(result: tuple) -> bytes:
    """A forked shard process's result as it is sent to the parent (:func:`_shard_result`):
    pickled straight into a zlib stream, so that neither the pickle of some 20,000 file names
    nor the pipe's copies of it are ever held whole."""
    import pickle
    import zlib

    class _Sink:
        def __init__(self):
            self.zip, self.chunks = zlib.compressobj(1), []

        def write(self, data) -> int:
            self.chunks.append(self.zip.compress(data))
            return len(data)

    sink = _Sink()
    pickle.Pickler(sink, protocol=pickle.HIGHEST_PROTOCOL).dump(result)
    sink.chunks.append(sink.zip.flush())
    return b"".join(sink.chunks)


def _shard_result(sent) -> tuple:
    """What :func:`_compute_shard` returned in a forked process (compressed there)."""
    import pickle
    import zlib

    return pickle.loads(zlib.decompress(sent)) if isinstance(sent, bytes) else sent


def run_sharded(store: StateStore, before: Snapshot, now: str, report, processes: int,
                index_parts: dict | None = None, later=None, *, compute):
    """An offline run computed and written by ``processes`` processes, in shards of about
    :data:`SHARD_TEMPLATES` templates. ``index_parts``, when given, receives for the run index
    (``karmactl/incremental/runindex.py``) ``owners`` and ``wakes``, gathered from the shards,
    ``shared`` and ``split`` (``runindex.shared_objects_bytes`` and the split templates, taken from
    the objects as loaded while the other processes compute), and ``written`` (the signatures of
    the files written, ``TreeWriter.written``). ``later``, when given, is the
    ``ShardInputs`` of :func:`load_for_shards`: computed files ``before`` does not hold, each read
    by the process of its shard just before computing it. ``compute`` as for :func:`run_large`;
    ``report`` (a ``reconcile.RunReport``) is returned with the shards' warnings, events, passes
    and the run's changes.

    Raises:
        InputError, NotConvergedError, OSError: as a single-process run would (nothing is written).
        StaleShardInputs: a file of ``later`` does not fit its shard (nothing is written; the
            caller computes from the whole snapshot).
    """
    from karmactl.gcpause import return_free_memory
    from karmactl.incremental.shards import Sharding
    from karmactl.store.events import stage_merged, unpack_events
    from karmactl.store.state import change_list

    settings = settings_of(before)
    config = DetectorConfig(skipped_namespaces=settings.skipped_namespaces)
    sharding = Sharding(before, lambda templates: processes * max(1, -(-templates // (SHARD_TEMPLATES * processes))),
                        config)
    if later is not None:
        later.split(sharding.shards)
    return_free_memory()  # what loading left free, before two processes count it
    writer = store.new_writer()
    job = (store, before, sharding, now, writer.staging, processes, later, compute, type(report))
    results = _compute_in_processes(job, index_parts, writer, config)
    staged = _gather(results, writer, report, index_parts)
    try:
        staged += stage_merged(store.root, writer, [unpack_events(r[6]) for r in results if r[6] is not None])
    except BaseException:
        writer.abort()
        raise
    writer.commit()
    report.changes = change_list(staged)
    if index_parts is not None:
        index_parts["written"] = writer.written
    return report


def _compute_in_processes(job: tuple, index_parts: dict | None, writer, config) -> list:
    """Every process's :func:`_compute_shard` result, worker 0's (this process's) first; while the
    others compute, ``index_parts`` gets ``shared`` and ``split`` from the objects as loaded. Any
    failure drops all staging."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from karmactl.store.fsio import die_with_parent, kill_pool

    global _SHARD_JOB
    store, before, sharding, _now, _staging, processes = job[:6]
    _SHARD_JOB = job
    try:
        pool = ProcessPoolExecutor(max_workers=processes - 1, mp_context=multiprocessing.get_context("fork"),
                                   initializer=die_with_parent)
        try:
            futures = [pool.submit(_compute_shard, i) for i in range(1, processes)]
            if index_parts is not None:  # while the others compute, from the objects as loaded
                from karmactl.incremental.runindex import is_split, shared_objects_bytes

                index_parts["shared"] = shared_objects_bytes(before, config)
                index_parts["split"] = {k for k in sharding.split_templates() if is_split(k, before.user[k], config)}
            mine = _compute_shard(0)
            sent = [f.result() for f in futures]
        except BaseException:  # never wait for (or leave behind) a worker after an interrupt
            kill_pool(pool)
            raise
        pool.shutdown()  # the processes are gone (and their memory with them) before their results unpack
        return [mine] + [_shard_result(s) for s in sent]
    except BaseException:  # a shard process died, or the run was interrupted: drop all staging
        writer.abort()
        raise
    finally:
        _SHARD_JOB = None


def _gather(results: list, writer, report, index_parts: dict | None) -> list:
    """The shards' staging adopted by ``writer``, their warnings, events and passes into ``report``
    and their index parts into ``index_parts``; the files staged. The first error of a shard
    (stale inputs first: computed from the whole snapshot, the run reports what it would) is
    raised after all staging is dropped."""
    staged: list = []
    owners: dict = {}
    wakes: list = []
    for plan, part, warnings, events, passes, _error, _events, shard_owners, shard_wakes in results:
        writer.adopt(plan)
        owners.update(shard_owners)
        wakes.extend(shard_wakes)
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
        from karmactl.incremental.shard_inputs import StaleShardInputs

        writer.abort()
        raise next((e for e in errors if isinstance(e, StaleShardInputs)), errors[0])
    if index_parts is not None:
        index_parts.update(owners=owners, wakes=wakes)
    return staged
