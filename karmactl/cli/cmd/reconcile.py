"""``karmactl reconcile``: one run of the control plane (detector, scheduler, controllers, execution
on members, status: :func:`karmactl.reconcile.run`), ``--wait`` until converged, or ``--watch``: the
continuous control loop (``karmactl/continuous.py``) with one log line per pass on stderr, Events and
member failures when they change, ``-v`` for the files each pass wrote, an optional metrics endpoint.

Runs without typer on the light path (see :mod:`karmactl.cli.cmd.get`).
"""
from contextlib import nullcontext
from typing import Optional

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.converging import wait_converged
from karmactl.cli.flags import parse_duration
from karmactl.cli.stores import member_layer, store_of, wall_now
from karmactl.store.fsio import state_lock


def reconcile_cmd(c: Context, offline: bool, dry_run: bool, wait: bool, timeout: str, watch: bool = False,
                  resync: str = "30m", metrics_addr: str | None = None) -> None:
    """``karmactl reconcile``: one run (:func:`karmactl.reconcile.run`; ``--dry-run`` writes nothing),
    runs until converged (``--wait``, within ``timeout``), or the control loop (``--watch``: :func:`watch_cmd`).

    Raises:
        CLIError: bad flags (exit 2), members that failed (exit 3), no convergence in time (exit 4).
    """
    from karmactl.reconcile import RunOptions, run

    store = store_of(c)
    if watch:
        for flag, given in (("--dry-run", dry_run), ("--wait", wait), ("--now", bool(c.now_text))):
            if given:
                raise CLIError(f"--watch runs until stopped on the wall clock: it cannot be combined with {flag}",
                               ExitCode.INPUT_ERROR)
        watch_cmd(c, member_layer(c, offline), offline=offline, resync=parse_duration(resync, "--resync"),
                  metrics_addr=metrics_addr)
        return
    from karmactl.cli.planning import RunChanges, run_summary

    members = member_layer(c, offline)
    changes = RunChanges()
    if wait and not dry_run:
        try:
            report = wait_converged(c, members, parse_duration(timeout, "--timeout"), offline=offline, verbose_runs=True,
                                    changes=changes)
        finally:  # what the runs changed, also when they did not settle in time
            _print_summary(changes)
    else:
        with state_lock(store.root) if not dry_run else nullcontext():
            report = run(store, RunOptions(now=c.now, offline=offline, dry_run=dry_run), members)
        _print_report(c, report, dry_run)
        if not dry_run:
            run_summary(store, report, changes)
            _print_summary(changes)
    if report.member_errors:
        raise CLIError(f"{len(report.member_errors)} member cluster(s) failed: " +
                       ", ".join(sorted(report.member_errors)), ExitCode.MEMBER_FAILURE)


def _print_summary(changes) -> None:
    """The summary table of what the runs changed (``karmactl/cli/planning.py``) on stderr, after
    the run's own lines; nothing when they changed nothing a reviewer reads."""
    from karmactl.cli.planning import run_summary_text

    text = run_summary_text(changes)
    if text:
        err(text.rstrip("\n"))


def _print_report(c: Context, report, dry_run: bool) -> None:
    """A run's warnings, Events and member errors on stderr; the planned changes (dry run) on stdout."""
    for w in report.warnings:
        err(f"warning: {w}")
    for e in report.events:
        err(e)
    for cluster, msg in sorted(report.member_errors.items()):
        err(f"member {cluster}: {msg}")
    if dry_run:
        for action, path in report.changes:
            out(f"{action:7} {path}")
        err(f"dry run: {len(report.changes)} change(s) planned, nothing written")
    else:
        if c.verbose:
            if report.incremental:
                err(f"run: {report.incremental}")
            for action, path in report.changes:
                err(f"{action:7} {path}")
        err(f"reconciled: {len(report.changes)} file(s) changed in {report.passes} pass(es)")


def watch_cmd(c: Context, members, offline: bool, resync: float, metrics_addr: str | None) -> None:
    """Run the control loop on ``c``'s state directory until SIGINT/SIGTERM (exit 130/143).

    Args:
        members: the member layer (None offline).
        offline: passes are offline (no probes; files and the clock trigger them).
        resync: seconds between whole passes when nothing triggered one.
        metrics_addr: ``HOST:PORT`` for ``/metrics`` and ``/healthz``, or None.

    Raises:
        CLIError: a bad ``--resync`` or ``--metrics-addr`` (exit 2), a port that cannot be bound (exit 2).
    """
    from karmactl.continuous import ControlLoop, FileTrigger, LoopOptions, Metrics, Triggers, serve_metrics
    from karmactl.store.fsio import state_lock

    if resync <= 0:
        raise CLIError("--resync must be more than 0 seconds", ExitCode.INPUT_ERROR)
    store = store_of(c)
    metrics = Metrics()
    server = None
    if metrics_addr:
        try:
            server = serve_metrics(metrics, metrics_addr)
        except ValueError as exc:
            raise CLIError(str(exc), ExitCode.INPUT_ERROR) from None
        except OSError as exc:
            raise CLIError(f"--metrics-addr {metrics_addr}: {exc.strerror or exc}", ExitCode.INPUT_ERROR) from None
        host = server.server_address[0]
        err(f"reconcile --watch: metrics on http://{host}:{server.server_port}/metrics, health on /healthz")
    said: set = set()

    def on_pass(rec) -> None:
        metrics.record(rec)
        report = rec.report
        if report is None:
            line = f"error: {rec.error}" if rec.kind == "input" else f"error: internal error: {rec.error} (this is a bug)"
            if line not in said or c.verbose:
                said.add(line)
                err(line)
            err(f"pass {rec.number} ({rec.trigger}): failed in {rec.seconds:.2f}s; waiting for the files to change")
            return
        for e in report.events:
            err(e)
        problems = [f"warning: {w}" for w in report.warnings] + \
            [f"member {cl}: {msg}" for cl, msg in sorted(report.member_errors.items())]
        for line in problems:
            if line not in said:
                said.add(line)
                err(line)
        said.intersection_update(problems)  # a problem gone and back is printed again
        if c.verbose:
            for action, path in report.changes:
                err(f"{action:7} {path}")
        failed = f", {len(report.member_errors)} member(s) failing" if report.member_errors else ""
        mode = f"{report.incremental}; " if report.incremental else ""
        err(f"pass {rec.number} ({rec.trigger}): {mode}{len(report.changes)} file(s) changed, "
            f"{report.member_writes} member write(s){failed} in {rec.seconds:.2f}s")

    triggers = Triggers()
    files = FileTrigger(store.root, triggers).start()
    loop = ControlLoop(store, members, lambda: wall_now(c), LoopOptions(resync=resync, offline=offline),
                       locked=lambda: state_lock(store.root, wait=True), on_pass=on_pass, triggers=triggers)
    err(f"reconcile --watch: {store.root} ({'offline' if offline else 'online'}; files watched"
        f"{' by polling' if files.polling else ''}, resync every {resync:g}s); Ctrl-C stops")
    try:
        loop.run()
    finally:
        loop.close()
        files.stop()
        if server is not None:
            server.shutdown()
        if members is not None:
            members.close()


def register(app) -> None:
    """Add ``reconcile`` to the typer ``app``."""
    import typer

    @app.command()
    def reconcile(ctx: typer.Context,
                  offline: bool = typer.Option(False, "--offline", help="Never contact members; trust Cluster status in the files."),
                  dry_run: bool = typer.Option(False, "--dry-run", help="Print what would change; write nothing."),
                  wait: bool = typer.Option(False, "--wait", help="Repeat runs until nothing changes."),
                  timeout: str = typer.Option("5m", "--timeout", help="With --wait: give up after this long (e.g. 90s, 5m)."),
                  watch: bool = typer.Option(False, "-w", "--watch",
                                             help="Keep running: a pass whenever files, cluster health or the clock call "
                                                  "for one (until Ctrl-C / SIGTERM)."),
                  resync: str = typer.Option("30m", "--resync", help="With --watch: a whole pass at least this often."),
                  metrics_addr: Optional[str] = typer.Option(None, "--metrics-addr",
                                                             help="With --watch: serve /metrics (Prometheus) and /healthz "
                                                                  "on HOST:PORT.")):
        """Run the control plane once: detector, scheduler, controllers, execution on members, status."""
        reconcile_cmd(ctx.obj, offline=offline, dry_run=dry_run, wait=wait, timeout=timeout, watch=watch,
                      resync=resync, metrics_addr=metrics_addr)
