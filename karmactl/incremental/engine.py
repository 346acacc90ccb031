"""The front door of the incremental engine: what an offline run has to do, and the index a full
one leaves (``karmactl/incremental/runindex.py`` is the index itself).

``karmactl.reconcile`` asks :func:`plan_run` first; the answer's ``mode`` chooses the run:
``unchanged`` (nothing read or written), ``partial`` (``karmactl/incremental/partial.py``) or
``full`` (``karmactl/incremental/sharded.py`` for large state directories), after which
:func:`record_full_run` writes the new index.
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
