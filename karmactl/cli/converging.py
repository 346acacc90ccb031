"""Reconciling until the members have settled (``reconcile --wait``, ``demo``)."""
from __future__ import annotations

from karmactl.cli.context import CLIError, Context, ExitCode, err
from karmactl.cli.stores import store_of, wall_now
from karmactl.store.fsio import state_lock


def wait_converged(c: Context, members, timeout: float, offline: bool = False, verbose_runs: bool = False):
    """Online runs until the members have settled (``reconcile --wait``, ``demo``): every binding
    scheduled, fully applied and healthy, and a run that changes nothing
    (``karmactl.reconcile.run_until_converged``). Each warning or member error is printed once.

    Returns the last run's report. Raises CLIError (exit 4) on timeout, or before it when a binding
    cannot be scheduled (``karmactl.reconcile.GaveUp``: the message names it and says why).
    """
    from karmactl.reconcile import run_until_converged

    said: set = set()
    last: list = []

    def on_run(runs, report, ok, why):
        last[:] = [report]
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

    from karmactl.reconcile import GaveUp

    try:
        run_until_converged(store_of(c), lambda: wall_now(c), members, timeout, interval=1.0 if offline else 0.5,
                            on_run=on_run, locked=lambda: state_lock(store_of(c).root), offline=offline)
    except GaveUp as exc:
        raise CLIError(f"gave up before {timeout:g}s: {exc}", ExitCode.NOT_CONVERGED) from None
    except TimeoutError as exc:
        raise CLIError(f"did not converge within {timeout:g}s: {exc}", ExitCode.NOT_CONVERGED) from None
    return last[0]
