"""Reconciling until the members have settled (``reconcile --wait``, ``demo``)."""
from __future__ import annotations

import time

from karmactl.cli.context import CLIError, Context, ExitCode, err
from karmactl.cli.stores import store_of, wall_now
from karmactl.store.fsio import state_lock


HEARTBEAT_SECONDS = 15.0  # a line at least this often while waiting, so a CI log shows it is alive


def wait_converged(c: Context, members, timeout: float, offline: bool = False, verbose_runs: bool = False,
                   changes=None):
    """Online runs until the members have settled (``reconcile --wait``, ``demo``): every binding
    scheduled, fully applied and healthy, and a run that changes nothing
    (``karmactl.reconcile.run_until_converged``). Each warning or member error is printed once.

    While it waits, a heartbeat line at least every :data:`HEARTBEAT_SECONDS` (seconds) says how
    long it has waited and everything still awaited, per binding and cluster
    (``karmactl.reconcile.waiting_for``): ``still waiting (45s of 5m): Deployment default/nginx on
    member1: 2/3 replicas updated``; a cluster that is not Ready is named as such.

    ``changes``: a :class:`karmactl.cli.planning.RunChanges` each run's changes are folded into
    (for the summary ``reconcile`` prints at the end), or None.

    Returns the last run's report. Raises CLIError (exit 4) on timeout, or before it when a binding
    cannot be scheduled (``karmactl.reconcile.GaveUp``: the message names it and says why).
    """
    from karmactl.reconcile import run_until_converged, waiting_for

    said: set = set()
    last: list = []
    started = time.monotonic()
    spoke = [started]  # when the last progress line was printed

    def on_run(runs, report, ok, why):
        last[:] = [report]
        if changes is not None:
            from karmactl.cli.planning import run_summary

            run_summary(store_of(c), report, changes)
        if verbose_runs:
            for e in report.events:
                err(e)
        for line in [f"warning: {w}" for w in report.warnings] + \
                [f"member {cl}: {msg}" for cl, msg in sorted(report.member_errors.items())]:
            if line not in said:  # each problem once, not once a run
                said.add(line)
                err(line)
        if report.changes or why not in said:
            said.add(why)
            err(f"reconcile #{runs}: {len(report.changes)} file(s) changed" + ("" if ok else f"; waiting: {why}"))
            spoke[0] = time.monotonic()
        elif not ok and time.monotonic() - spoke[0] >= HEARTBEAT_SECONDS:
            spoke[0] = time.monotonic()
            pending = waiting_for(report.after) if report.after is not None else [why]
            err(f"still waiting ({spoke[0] - started:.0f}s of {timeout:g}s, run #{runs}): " + "; ".join(pending or [why]))

    from karmactl.reconcile import GaveUp

    try:
        run_until_converged(store_of(c), lambda: wall_now(c), members, timeout, interval=1.0 if offline else 0.5,
                            on_run=on_run, locked=lambda: state_lock(store_of(c).root), offline=offline)
    except GaveUp as exc:
        raise CLIError(f"gave up before {timeout:g}s: {exc}", ExitCode.NOT_CONVERGED) from None
    except TimeoutError as exc:
        raise CLIError(f"did not converge within {timeout:g}s: {exc}", ExitCode.NOT_CONVERGED) from None
    return last[0]


def online_pass(c: Context, members, said: set):
    """One online run with the state lock held (``rollout status``, ``wait``), each member error printed
    once over the calls sharing ``said``; returns the run's report (``after``: the computed snapshot)."""
    from karmactl.reconcile import RunOptions, run

    with state_lock(store_of(c).root):
        report = run(store_of(c), RunOptions(now=wall_now(c), offline=False), members)
    for cl, msg in sorted(report.member_errors.items()):
        if (cl, msg) not in said:
            said.add((cl, msg))
            err(f"member {cl}: {msg}")
    return report
