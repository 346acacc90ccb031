"""``karmactl plan`` and its alias ``diff``: what a reconcile would change, a summary first
(``karmactl/cli/planning.py``), then the diffs as ``kubectl diff`` prints them
(``karmactl/cli/diffing.py``); ``-o json`` / ``-o markdown`` for CI, ``--annotations`` for
invalid input on the merge request's lines (``karmactl/cli/annotations.py``)."""
from __future__ import annotations

import sys
from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.stores import member_layer, store_of

OUTPUTS = ("name", "json", "markdown", "diff")


def plan_cmd(c: Context, offline: bool, output: str | None = None, show_managed: bool = False,
             annotations: str | None = None, annotations_file: str | None = None) -> None:
    """``karmactl plan`` / ``diff``: a dry run, printed for a reviewer.

    Args:
        offline: compute from the files only; online also reads the members.
        output: None (the summary table, then one unified diff per object that changes more
            than bookkeeping; or ``KARMACTL_EXTERNAL_DIFF``'s output), ``diff`` (the diffs only),
            ``name`` (the changed objects' kubectl diff file names, one per line), ``json`` (one
            document of ``karmactl/cli/schemas/plan-v1.json``) or ``markdown`` (a merge-request
            comment; also for invalid input, then exit 2).
        show_managed: keep bookkeeping fields (generations, versions, observation times,
            managed annotations) in the diffs and rows.
        annotations: ``github`` or ``gitlab``: invalid input also as CI annotations.
        annotations_file: the Code Quality report ``gitlab`` writes (default
            ``gl-code-quality-report.json``), written on every plan (``[]`` when valid).

    Raises:
        SystemExit: code 1 when a run would change files (bookkeeping included: kubectl diff's
            convention), 0 when not.
        CLIError: a bad ``-o`` or ``--annotations`` (exit 2), or external diff program (exit 2).
        InputError: an invalid state directory (exit 2), after its annotations.
    """
    from karmactl.cli import annotations as notes
    from karmactl.cli import diffing, planning
    from karmactl.reconcile import RunOptions, run
    from karmactl.store.state import InputError

    if output not in (None, *OUTPUTS):
        raise CLIError(f'unable to match a printer suitable for the output format "{output}", allowed formats are: '
                       + ",".join(OUTPUTS))
    if annotations not in (None, *notes.FORMATS):
        raise CLIError(f"--annotations must be one of {', '.join(notes.FORMATS)}, not {annotations!r}",
                       ExitCode.INPUT_ERROR)
    if annotations_file and annotations != "gitlab":
        raise CLIError("--annotations-file goes with --annotations gitlab", ExitCode.INPUT_ERROR)
    store = store_of(c)
    try:
        report = run(store, RunOptions(now=c.now, offline=offline, dry_run=True), member_layer(c, offline))
    except InputError as exc:
        _annotate(notes.errors_of(exc, store.root), annotations, annotations_file, output)
        raise
    _annotate([], annotations, annotations_file, output)
    for w in report.warnings:
        err(f"warning: {w}")
    for cluster, msg in sorted(report.member_errors.items()):
        err(f"member {cluster}: {msg}")
    diffs = diffing.computed_diffs(store, report) + diffing.member_diffs(report.member_changes)
    plan = planning.build(diffs, show_managed=show_managed)
    if _print_plan(c, plan, diffs, output, offline, report):
        raise SystemExit(int(ExitCode.CHANGES))


def _annotate(errors: list[dict], annotations: str | None, annotations_file: str | None, output: str | None) -> None:
    """Invalid input (``errors`` of ``karmactl/cli/annotations.py: errors_of``, empty when valid)
    as the annotations asked for, and as the Markdown comment when ``-o markdown``."""
    from karmactl.cli import annotations as notes
    from karmactl.cli import planning

    if annotations == "github":
        for line in notes.github_lines(errors):
            out(line)
    elif annotations == "gitlab":
        notes.write_gitlab_report(annotations_file or notes.GITLAB_REPORT, errors)
    if errors and output == "markdown":
        sys.stdout.write(planning.invalid_markdown(errors))


def _print_plan(c: Context, plan, diffs: list, output: str | None, offline: bool, report) -> bool:
    """Print the plan as ``output`` asks; whether there are differences (the exit code's)."""
    import os

    from karmactl.cli import diffing, planning

    shown = [r.diff for r in plan.rows]
    external = os.environ.get(diffing.EXTERNAL_DIFF_ENV)
    differs = plan.differs()
    if output == "name":
        for d in diffs:
            if d.differs():
                out(d.name)
    elif output == "json":
        import json

        sys.stdout.write(json.dumps(planning.plan_document(plan, offline, report.warnings, report.member_errors),
                                    indent=2, ensure_ascii=False) + "\n")
    elif output == "markdown":
        sys.stdout.write(planning.markdown(plan, offline, report.warnings, report.member_errors))
    elif external:
        differs = bool(shown) and diffing.run_external(external, shown)
    else:
        if output is None and differs:  # nothing to do prints nothing, as kubectl diff
            sys.stdout.write(planning.summary_table(plan))
            if shown:
                sys.stdout.write("\n")
            sys.stdout.flush()
        diffing.print_unified(shown, colour=c.stdout_tty and not os.environ.get("NO_COLOR"))
    return differs


def register(app: typer.Typer) -> None:
    """Add ``plan`` and ``diff`` to the app."""

    @app.command()
    def plan(ctx: typer.Context,
             offline: bool = typer.Option(True, "--offline/--online", help="Online: also read the member copies."),
             output: Optional[str] = typer.Option(None, "-o", "--output",
                                                  help="json (schema plan.karmactl.io/v1), markdown (a merge-request "
                                                       "comment), diff (the diffs only), name (the changed objects)."),
             show_managed: bool = typer.Option(False, "--show-managed",
                                               help="Keep bookkeeping fields (generations, versions, times, managed "
                                                    "annotations) in the diffs."),
             annotations: Optional[str] = typer.Option(None, "--annotations",
                                                       help="Invalid input as CI annotations: github (::error lines) or "
                                                            "gitlab (a Code Quality report file)."),
             annotations_file: Optional[str] = typer.Option(None, "--annotations-file",
                                                            help="With --annotations gitlab: the report's file "
                                                                 "(default gl-code-quality-report.json).")):
        """What a reconcile would change: a summary, then unified diffs (exit 0 no differences, 1 differences, >1 error).

        KARMACTL_EXTERNAL_DIFF="prog args" compares two directories (LIVE, MERGED) with prog instead.
        """
        plan_cmd(ctx.obj, offline, output, show_managed, annotations, annotations_file)


    app.command(name="diff", help="Alias of plan.")(plan)
