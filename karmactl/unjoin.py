"""Unjoining a Push member cluster as ``karmadactl unjoin`` does (``pkg/karmadactl/unjoin/unjoin.go``;
the Cluster's deletion in ``pkg/controllers/cluster/cluster_controller.go``): runs of the control
plane with the Cluster terminating until its member copies are deleted, then its Works and its
Cluster file removed. Orchestration, as :mod:`karmactl.reconcile` (whose load, compute and member
layer it drives); the ``unjoin`` command (``karmactl/cli/cmd/unjoin.py``) calls :func:`unjoin`.
"""
from __future__ import annotations

import time

from karmactl.api.snapshot import Snapshot
from karmactl.reconcile import Members, OfflineMembers, RunReport, compute, load
from karmactl.store.events import stage_events
from karmactl.store.state import StateStore


def unjoin_pass(before: Snapshot, name: str, now: str, members: Members | None, report: RunReport):
    """One unjoin attempt over a loaded snapshot (``karmadactl unjoin``; the Cluster's deletion in
    ``pkg/controllers/cluster/cluster_controller.go``).

    1. The Cluster is seen as terminating (``metadata.deletionTimestamp``), so the scheduler moves
       bindings away from it; members are probed and observed and the control plane computed.
    2. Every Work of its execution space (``karmada-es-<name>``, namespace Works included) is
       marked terminating (or dropped when never applied) and the member layer acts: member
       copies are deleted while the member is Ready, and those Works dropped.
    3. The control plane is computed again without the Cluster (and its status overlay).

    Returns:
        ``(after, remaining)``: the snapshot to write and the keys of Works still in the execution
        space (their member copies could not be deleted).
    """
    from karmactl.controllers.helper.work import delete_work
    from karmactl.api.names import execution_namespace

    members = members if members is not None else OfflineMembers()
    key = ("cluster.karmada.io", "Cluster", "", name)
    cluster = before.user[key]
    user = dict(before.user)
    user[key] = dict(cluster, metadata=dict(cluster["metadata"], deletionTimestamp=now))
    snap = Snapshot(before.registry, user, before.sources, dict(before.overlays), dict(before.bindings),
                    dict(before.works))
    snap = members.observe(members.probe(snap, now, report), now, report)
    snap = compute(snap, now, report, members.observed_clusters())
    space = execution_namespace(name)
    for wkey in sorted(k for k in snap.works if k[2] == space):
        snap.set_work(wkey, delete_work(snap.works[wkey], now))
    snap = members.act(snap, now, report)
    user = {k: v for k, v in snap.user.items() if k != key}
    sources = {k: v for k, v in snap.sources.items() if k != key}
    after = Snapshot(snap.registry, user, sources, dict(snap.overlays), dict(snap.bindings), dict(snap.works))
    after.set_overlay(key, None)
    after = compute(after, now, report)
    return after, sorted(k for k in after.works if k[2] == space)


class UnjoinError(RuntimeError):
    """An unjoin that cannot go on. ``reason``: ``NotFound`` (no such Cluster), ``PullMode`` (a
    Pull cluster is unregistered, not unjoined) or ``Timeout`` (member copies remain after the
    wait; ``remaining`` lists their Works and ``why`` says what the member answered)."""

    def __init__(self, reason: str, message: str, remaining: list | None = None, why: str = ""):
        super().__init__(message)
        self.reason, self.remaining, self.why = reason, remaining or [], why


def unjoin(store: StateStore, name: str, members: Members | None, clock, wait: float, force: bool,
           on_wait=None) -> tuple[list, RunReport]:
    """Remove a Push member cluster as ``karmadactl unjoin`` does: delete its member copies, drop
    its Works, remove its Cluster from the state directory.

    Karmada deletes the Cluster object and waits until the execution controller has removed every
    Work of ``karmada-es-<name>`` (deleting member copies while the member is ready); with
    ``force`` it drops what is left after the wait (``DeleteClusterObject``). This runs
    :func:`unjoin_pass` once a second until ``wait`` seconds pass; nothing is written until an
    attempt succeeds or ``force`` gives up on the member. The caller holds the state lock.

    Args:
        clock: ``f() -> RFC 3339``, read once per attempt.
        wait: seconds to wait for the member copies to go.
        on_wait: ``f(remaining Work keys, why)`` called (at most every 10 s) while waiting.

    Returns:
        ``(dropped, report)``: the Works dropped without deleting their member copies (only with
        ``force``) and the last attempt's report.

    Raises:
        UnjoinError: see its reasons. InputError / NotConvergedError: from the run.
    """
    from karmactl.store import edit

    key = ("cluster.karmada.io", "Cluster", "", name)
    deadline = time.monotonic() + wait
    announced = 0.0
    while True:
        before = load(store)
        cluster = before.user.get(key)
        if cluster is None:
            raise UnjoinError("NotFound", f"no cluster object {name} found in karmada control Plane")
        if (cluster.get("spec") or {}).get("syncMode") == "Pull":
            raise UnjoinError("PullMode", f"cluster {name} is a Pull mode member cluster (its agent applies "
                                          f"the Works itself); remove it with `karmactl delete cluster {name}` "
                                          f"if you want to continue unregistering the cluster")
        report = RunReport()
        now = clock()
        after, remaining = unjoin_pass(before, name, now, members, report)
        why = report.member_errors.get(name) or ""
        if remaining and time.monotonic() < deadline:
            if on_wait is not None and time.monotonic() - announced > 10:
                on_wait(remaining, why or "member copies are not deleted yet")
                announced = time.monotonic()
            time.sleep(1.0)
            continue
        if remaining and not force:
            raise UnjoinError("Timeout", f"cluster({name}) was not unjoined within {wait:g}s: the member copies of "
                                         f"{len(remaining)} Work(s) in {remaining[0][2]} could not be deleted "
                                         f"({why or 'the member did not delete them'}); retry when the member is "
                                         f"reachable, or pass --force to remove the Cluster and leave them in the "
                                         f"member", remaining, why)
        for wkey in remaining:
            after.set_work(wkey, None)
        store.write_changes(before, after, extra=lambda w: stage_events(store, w, before, after, now))
        index = edit.index_user_objects(store)
        if key in index:
            edit.remove_object(store, index[key])
        return remaining, report


__all__ = ["unjoin", "unjoin_pass", "UnjoinError"]
