"""``karmactl plan`` and its alias ``diff``: what a reconcile would change, as ``kubectl diff`` prints it."""
from __future__ import annotations

from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.stores import member_layer, store_of


def plan_cmd(c: Context, offline: bool, output: str | None = None) -> None:
    """``karmactl plan`` / ``diff``: a dry run, printed as ``kubectl diff`` prints (one unified
    diff per changed computed object and, online, per member copy; ``karmactl/cli/diffing.py``).

    Args:
        offline: compute from the files only; online also reads the members.
        output: None (diffs, or ``KARMACTL_EXTERNAL_DIFF``'s output) or ``name`` (the changed
            objects' kubectl diff file names, one per line).

    Raises:
        SystemExit: code 1 when there are differences (kubectl diff's convention).
        CLIError: a bad ``-o`` (exit 2) or external diff program (exit 2).
        InputError: an invalid state directory (exit 2).
    """
    import os

    from karmactl.cli import diffing
    from karmactl.reconcile import RunOptions, run

    if output not in (None, "name"):
        raise CLIError(f'unable to match a printer suitable for the output format "{output}", allowed formats are: name')
    store = store_of(c)
    report = run(store, RunOptions(now=c.now, offline=offline, dry_run=True), member_layer(c, offline))
    for w in report.warnings:
        err(f"warning: {w}")
    for cluster, msg in sorted(report.member_errors.items()):
        err(f"member {cluster}: {msg}")
    diffs = diffing.computed_diffs(store, report) + diffing.member_diffs(report.member_changes)
    external = os.environ.get(diffing.EXTERNAL_DIFF_ENV)
    if output == "name":
        names = [d.name for d in diffs if d.differs()]
        for name in names:
            out(name)
        differs = bool(names)
    elif external:
        differs = bool(diffs) and diffing.run_external(external, diffs)
    else:
        differs = diffing.print_unified(diffs, colour=c.stdout_tty and not os.environ.get("NO_COLOR"))
    if differs:
        raise SystemExit(int(ExitCode.CHANGES))


def register(app: typer.Typer) -> None:
    """Add ``plan`` and ``diff`` to the app."""

    @app.command()
    def plan(ctx: typer.Context,
             offline: bool = typer.Option(True, "--offline/--online", help="Online: also read the member copies."),
             output: Optional[str] = typer.Option(None, "-o", "--output", help="name: only the changed objects' names.")):
        """What a reconcile would change, as unified diffs (exit 0 no differences, 1 differences, >1 error).

        KARMACTL_EXTERNAL_DIFF="prog args" compares two directories (LIVE, MERGED) with prog instead.
        """
        plan_cmd(ctx.obj, offline, output)


    app.command(name="diff", help="Alias of plan.")(plan)
