"""``karmactl plan`` and its alias ``diff``: what a reconcile would change, a summary first
(``karmactl/cli/planning.py``), then the diffs as ``kubectl diff`` prints them
(``karmactl/cli/diffing.py``); ``-o json`` / ``-o markdown`` for CI, ``--annotations`` for
invalid input on the merge request's lines (``karmactl/cli/annotations.py``)."""
from __future__ import annotations

import sys
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.stores import member_layer, store_of

OUTPUTS = ("name", "json", "markdown", "diff")


def _applied_copy(c: Context, tmp, paths: list[str], recursive: bool, kustomize_dir: str | None):
    """A copy of the state directory (its runtime directory and ``.git`` left out) with ``paths`` /
    ``kustomize_dir`` applied to it, as ``apply`` would store them; returns the copy's store and the
    diffs of the user objects the apply created or changed.

    Raises:
        InputError / CLIError: what ``apply`` raises for these inputs (nothing of the real state changes).
    """
    import contextlib
    import io
    import shutil
    from pathlib import Path

    from karmactl.cli import diffing
    from karmactl.cli.applying import apply_cmd
    from karmactl.cli.objects import read_object
    from karmactl.store import edit
    from karmactl.store.state import StateStore

    copy_root = Path(tmp) / "state"
    shutil.copytree(c.state, copy_root, symlinks=True, ignore=shutil.ignore_patterns(".karmactl", ".git"))
    copy_ctx = Context(copy_root, now_text=c.now, verbose=0, command="apply")
    with contextlib.redirect_stdout(io.StringIO()):
        apply_cmd(copy_ctx, paths, recursive, False, kustomize_dir)
    live, applied = StateStore(c.state), StateStore(copy_root)
    before, after = edit.index_user_objects(live), edit.index_user_objects(applied)
    diffs = []
    def read(store, src, namespace):  # a namespaced object written without its namespace is in it (default)
        obj = read_object(store, src)
        if namespace and not (obj.get("metadata") or {}).get("namespace"):
            obj = {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}
        return obj

    for key in sorted(after):
        new = read(applied, after[key], key[2])
        old = read(live, before[key], key[2]) if key in before else None
        if old != new:
            ns, name = key[2], key[3]
            label = diffing.object_label(new["apiVersion"], key[1], ns, name)
            diffs.append(diffing.ObjectDiff(diffing.object_file_name(new["apiVersion"], key[1], ns, name),
                                            f"a/{label}", f"b/{label}", *diffing.mask_secrets(old, new)))
    return applied, diffs


def plan_cmd(c: Context, offline: bool, output: str | None = None, show_managed: bool = False,
             annotations: str | None = None, annotations_file: str | None = None, paths: list[str] | None = None,
             recursive: bool = True, kustomize_dir: str | None = None) -> None:
    """``karmactl plan`` / ``diff``: a dry run, printed for a reviewer.

    With ``paths`` (``-f``) or ``kustomize_dir`` (``-k``), ``kubectl diff -f``: what applying them would
    change, the objects themselves and the bindings, Works and status a run would then compute
    (:func:`_applied_copy`: applied to a copy of the state directory, which is left as it is; offline).

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
    import tempfile

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
    if (paths or kustomize_dir) and not offline:
        raise CLIError("diff -f compares offline (the apply is planned on a copy of the state directory, "
                       "which reaches no member): apply, then `karmactl plan --online`")
    with tempfile.TemporaryDirectory(prefix="karmactl-diff-") as tmp:
        applied: list = []
        store = store_of(c)
        if paths or kustomize_dir:
            store, applied = _applied_copy(c, tmp, list(paths or []), recursive, kustomize_dir)
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
        diffs = applied + diffing.computed_diffs(store, report) + diffing.member_diffs(report.member_changes)
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
                                                                 "(default gl-code-quality-report.json)."),
             filename: List[str] = typer.Option([], "-f", "--filename",
                                                help="What applying these files would change (kubectl diff -f)."),
             kustomize: Optional[str] = typer.Option(None, "-k", "--kustomize", metavar="DIR",
                                                     help="What applying this kustomization would change."),
             recursive: bool = typer.Option(True, "-R", "--recursive", help="Walk -f directories recursively.")):
        """What a reconcile would change: a summary, then unified diffs (exit 0 no differences, 1 differences, >1 error).

        With -f/-k: what applying those files would change, bindings and Works included.
        KARMACTL_EXTERNAL_DIFF="prog args" compares two directories (LIVE, MERGED) with prog instead.
        """
        if filename and kustomize:
            raise CLIError("cannot specify both -f and -k")
        plan_cmd(ctx.obj, offline, output, show_managed, annotations, annotations_file, filename, recursive, kustomize)


    app.command(name="diff", help="Alias of plan.")(plan)
