"""``karmactl plan`` and its alias ``diff``: what a reconcile would change, as ``kubectl diff`` prints it."""
from __future__ import annotations

from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.stores import member_layer, store_of


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


def plan_cmd(c: Context, offline: bool, output: str | None = None, paths: list[str] | None = None,
             recursive: bool = True, kustomize_dir: str | None = None) -> None:
    """``karmactl plan`` / ``diff``: a dry run, printed as ``kubectl diff`` prints (one unified
    diff per changed computed object and, online, per member copy; ``karmactl/cli/diffing.py``).

    With ``paths`` (``-f``) or ``kustomize_dir`` (``-k``), ``kubectl diff -f``: what applying them would
    change, the objects themselves and the bindings, Works and status a run would then compute
    (:func:`_applied_copy`: applied to a copy of the state directory, which is left as it is; offline).

    Args:
        offline: compute from the files only; online also reads the members.
        output: None (diffs, or ``KARMACTL_EXTERNAL_DIFF``'s output) or ``name`` (the changed
            objects' kubectl diff file names, one per line).

    Raises:
        SystemExit: code 1 when there are differences (kubectl diff's convention).
        CLIError: a bad ``-o`` (exit 2) or external diff program (exit 2).
        InputError: an invalid state directory (exit 2).
    """
    import tempfile

    from karmactl.cli import diffing
    from karmactl.reconcile import RunOptions, run

    if output not in (None, "name"):
        raise CLIError(f'unable to match a printer suitable for the output format "{output}", allowed formats are: name')
    with tempfile.TemporaryDirectory(prefix="karmactl-diff-") as tmp:
        applied: list = []
        store = store_of(c)
        if paths or kustomize_dir:
            if not offline:
                raise CLIError("diff -f compares offline (the apply is planned on a copy of the state directory, "
                               "which reaches no member): apply, then `karmactl plan --online`")
            store, applied = _applied_copy(c, tmp, list(paths or []), recursive, kustomize_dir)
        report = run(store, RunOptions(now=c.now, offline=offline, dry_run=True), member_layer(c, offline))
        for w in report.warnings:
            err(f"warning: {w}")
        for cluster, msg in sorted(report.member_errors.items()):
            err(f"member {cluster}: {msg}")
        diffs = applied + diffing.computed_diffs(store, report) + diffing.member_diffs(report.member_changes)
    _show(c, diffs, output)


def _show(c: Context, diffs: list, output: str | None) -> None:
    """Print ``diffs`` as kubectl diff does (or their names, or through the external program).

    Raises:
        SystemExit: 1 when there are differences.
    """
    import os

    from karmactl.cli import diffing

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
             output: Optional[str] = typer.Option(None, "-o", "--output", help="name: only the changed objects' names."),
             filename: List[str] = typer.Option([], "-f", "--filename",
                                                help="What applying these files would change (kubectl diff -f)."),
             kustomize: Optional[str] = typer.Option(None, "-k", "--kustomize", metavar="DIR",
                                                     help="What applying this kustomization would change."),
             recursive: bool = typer.Option(True, "-R", "--recursive", help="Walk -f directories recursively.")):
        """What a reconcile would change, as unified diffs (exit 0 no differences, 1 differences, >1 error).

        With -f/-k: what applying those files would change, bindings and Works included.
        KARMACTL_EXTERNAL_DIFF="prog args" compares two directories (LIVE, MERGED) with prog instead.
        """
        if filename and kustomize:
            raise CLIError("cannot specify both -f and -k")
        plan_cmd(ctx.obj, offline, output, filename, recursive, kustomize)


    app.command(name="diff", help="Alias of plan.")(plan)
