"""The front door of the incremental engine: what an offline run has to do, and the index a full
one leaves (``karmactl/incremental/runindex.py`` is the index itself).

``karmactl.reconcile`` asks :func:`plan_run` first; the answer's ``mode`` chooses the run:
``unchanged`` (nothing read or written), ``partial`` (``karmactl/incremental/partial.py``) or
``full`` (``karmactl/incremental/sharded.py`` for large state directories), after which
:func:`record_full_run` writes the new index. The continuous loop's online passes ask
:func:`plan_online` (the same answer, with the bindings whose member copies changed due too).
"""
from __future__ import annotations

from dataclasses import dataclass

from karmactl.api.snapshot import Snapshot
from karmactl.incremental import runindex


@dataclass
class RunPlan:
    """What an offline run has to do.

    Attributes:
        mode: ``unchanged``, ``partial`` or ``full`` (``runindex.Plan.mode``).
        reason: why a run is full.
        tag: :func:`index_tag`, what the index this run writes is made by.
        index: the last run's ``runindex.RunIndex`` (None when missing or invalid).
        plan: ``runindex.plan``'s answer (files touched and removed, owners due).
    """

    mode: str
    reason: str
    tag: str
    index: runindex.RunIndex | None
    plan: runindex.Plan


def index_tag() -> str:
    """What an index of the last run must have been made by: this karmactl, these sources."""
    from karmactl import __version__

    return f"karmactl-{__version__}-{runindex.code_stamp()}"


def plan_run(store, now: str) -> RunPlan:
    """Compare the state directory with the last run's index (``runindex.plan``: stats every
    input and computed file, reads none)."""
    tag = index_tag()
    index = runindex.read_index(store.root, tag)
    plan = runindex.plan(store, index, now)
    return RunPlan(plan.mode, plan.reason, tag, index, plan)


ONLINE_PARTIAL_MAX = 200
"""At most this many templates in one partial pass of the continuous loop: past it, a full pass
(one LIST per kind and member) costs less than a GET per member copy of each template's Works."""


def plan_online(store, now: str, owners=(), full: str = "") -> RunPlan:
    """What one online pass of the continuous loop (``karmactl/continuous.py``) has to do:
    :func:`plan_run`, with ``owners`` (``runindex.owner_of_binding`` strings: the bindings whose
    member copies changed) due as well. ``full`` is a reason the caller already has for a full
    pass (the start, a resync, a Cluster's status changed, a watch that may have missed events).

    Full, with the reason, too: what :func:`plan_run` finds full, a member object of no single
    binding changed (a Namespace the namespace sync propagates: the shared owner ``""``), or more
    than :data:`ONLINE_PARTIAL_MAX` templates to recompute.
    """
    tag = index_tag()
    if full:
        return RunPlan("full", full, tag, None, runindex.Plan("full", full))
    run_plan = plan_run(store, now)
    if run_plan.mode == "full" or not owners:
        pass
    elif runindex.SHARED in owners:
        run_plan.mode = run_plan.plan.mode = "full"
        run_plan.reason = run_plan.plan.reason = "a member object that several templates' results hold changed"
    else:
        run_plan.plan = runindex.with_due(store, run_plan.index, run_plan.plan, owners)
        run_plan.mode, run_plan.reason = run_plan.plan.mode, run_plan.plan.reason
    n = max(len(run_plan.plan.touched), len(run_plan.plan.due)) if run_plan.mode == "partial" else 0
    if n > ONLINE_PARTIAL_MAX:  # (a file holds a template in general; a due owner's is among them)
        run_plan.mode = run_plan.plan.mode = "full"
        run_plan.reason = run_plan.plan.reason = f"some {n} templates to compute (more than {ONLINE_PARTIAL_MAX})"
    return run_plan


def take_owners(store, run_plan: RunPlan) -> dict | None:
    """For a full run: which owner each computed file of the last run had
    (``runindex.computed_owners``), or None without an index. The plan lets go of the index
    (some 30 MB at 10,000 templates) and its file lists: the full run loads after this."""
    owners = runindex.computed_owners(store.root, run_plan.index) if run_plan.index is not None else None
    run_plan.index = run_plan.plan = None
    return owners


def record_index(store, before: Snapshot, report, owners: dict, wakes: list, now: str, tag: str, config,
                 started_ns: int, shared: tuple | None, split: set | None = None, written: dict | None = None) -> None:
    """Write the index of a full offline run that committed: ``owners`` ``{computed rel: [owner,
    claim]}`` (``runindex.Owners.owner_map``), ``wakes`` ``registry.wake_times`` entries, ``shared``
    the shared file (``runindex.shared_objects_bytes``; None: an object cannot be JSON, and no index
    is kept), ``split`` and ``written`` as for ``runindex.build_index``; ``report`` a
    ``reconcile.RunReport`` (its warnings are recorded)."""
    if shared is not None:
        index = runindex.build_index(store, before, owners, runindex.wake_map(wakes, now), report.warnings, now,
                                     tag, config, started_ns, split, written)
        runindex.write_index(store.root, index, shared)


def record_full_run(store, before: Snapshot, after: Snapshot, report, now: str, tag: str, config,
                    started_ns: int, shared: tuple | None) -> None:
    """:func:`record_index` after a full run computed in one process (``after`` its result)."""
    from karmactl.pipeline.registry import wake_times
    from karmactl.store.validation import settings_of

    owners = runindex.Owners.of(after.user, after.bindings, config).owner_map(store, after)
    record_index(store, before, report, owners, wake_times(after, now, settings_of(after)), now, tag, config,
                 started_ns, shared)
