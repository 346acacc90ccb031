"""``karmactl reconcile --watch``: the continuous control loop at the command line
(``karmactl/continuous.py``): one log line per pass on stderr, Events and member failures when they
change, ``-v`` for the files each pass wrote, an optional metrics endpoint."""
from __future__ import annotations

from karmactl.cli.context import CLIError, Context, ExitCode, err


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
    from karmactl.cli.commands import _wall_now, store_of
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
        err(f"pass {rec.number} ({rec.trigger}): {len(report.changes)} file(s) changed, "
            f"{report.member_writes} member write(s){failed} in {rec.seconds:.2f}s")

    triggers = Triggers()
    files = FileTrigger(store.root, triggers).start()
    loop = ControlLoop(store, members, lambda: _wall_now(c), LoopOptions(resync=resync, offline=offline),
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
