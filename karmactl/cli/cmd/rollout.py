"""``karmactl rollout status|history|undo|restart`` (kubectl ``pkg/cmd/rollout``) for workload templates.

``status`` runs online passes (as ``reconcile --wait``, the state lock held per pass) until the
template's aggregated status says the rollout is done (:mod:`karmactl.cli.rollout_status`): the binding
carried the new revision to every member and every member copy reports it updated and available.
``history`` and ``undo`` read the template's revisions from git (:mod:`karmactl.cli.template_history`);
``undo`` and ``restart`` edit the template in its file (:mod:`karmactl.cli.template_edits`).
"""
from __future__ import annotations

import time
from typing import List

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, out

PASS_INTERVAL = 0.25  # seconds between passes while waiting (a pass itself reads every member)
ROLLOUT_KINDS = {("apps", "Deployment"), ("apps", "DaemonSet"), ("apps", "StatefulSet")}


def _one_target(c: Context, args: list[str]):
    """``(KindInfo, name)`` of ``TYPE NAME`` / ``TYPE/NAME`` (one object).

    Raises:
        CLIError: not exactly one object, or a kind rollout does not handle (exit 2).
    """
    from karmactl.cli.objects import parse_get_args
    from karmactl.cli.stores import registry_of

    parsed = parse_get_args(registry_of(c), args)
    if len(parsed) != 1 or len(parsed[0][1]) != 1:
        raise CLIError("rollout needs exactly one object: TYPE NAME or TYPE/NAME")
    info, names = parsed[0]
    if (info.group, info.kind) not in ROLLOUT_KINDS:
        raise CLIError(f'no rollout viewer has been implemented for "{info.kind}": rollout handles Deployments, '
                       f"DaemonSets and StatefulSets")
    return info, names[0]


def _view(c: Context, snap, info, name: str, namespace: str) -> dict:
    from karmactl.cli.objects import find, not_found

    obj = find(snap, info, name, namespace) if snap is not None else None
    if obj is None:
        from karmactl.cli.stores import load_snapshot
        obj = find(load_snapshot(c), info, name, namespace)
    if obj is None:
        raise not_found(info, name)
    return obj


def status_cmd(c: Context, args: list[str], namespace: str, watch: bool, timeout: float) -> None:
    """Print kubectl's rollout messages for a template until it has rolled out (``watch``), each
    message once, or once as it stands (``--watch=false``: the files as an offline dry run computes them,
    with the members' last recorded status; nothing written, no member contacted).

    Raises:
        CLIError: a kind without a viewer, an OnDelete strategy, an exceeded progress deadline (exit 1,
            as kubectl); not found (exit 1); ``timed out waiting for the condition`` (exit 4).
    """
    from karmactl.cli.converging import online_pass
    from karmactl.cli.rollout_status import RolloutError, rollout_state
    from karmactl.cli.stores import member_layer, store_of, wall_now
    from karmactl.reconcile import RunOptions, run

    info, name = _one_target(c, args)
    try:
        if not watch:  # as it stands: the control plane's view of the files (an offline dry run), nothing written
            report = run(store_of(c), RunOptions(now=wall_now(c), offline=True, dry_run=True), None)
            message, _done = rollout_state(_view(c, report.after, info, name, namespace))
            out(message)
            return
        members = member_layer(c)
        deadline = time.monotonic() + timeout if timeout > 0 else None
        said: set = set()
        last = None
        while True:
            report = online_pass(c, members, said)
            message, done = rollout_state(_view(c, report.after, info, name, namespace))
            if message != last:
                out(message)
                last = message
            if done:
                return
            if deadline is not None and time.monotonic() > deadline:
                raise CLIError("timed out waiting for the condition", ExitCode.NOT_CONVERGED)
            time.sleep(PASS_INTERVAL)
    except RolloutError as exc:
        raise CLIError(str(exc), ExitCode.NOT_FOUND) from None


def _history(c: Context, info, name: str, namespace: str):
    from karmactl.cli.objects import not_found, read_object
    from karmactl.cli.template_history import revisions
    from karmactl.store import edit
    from karmactl.store.state import StateStore

    store = StateStore(c.state)
    key = (info.group, info.kind, namespace if info.namespaced else "", name)
    src = edit.index_user_objects(store).get(key)
    if src is None:
        raise not_found(info, name)
    return revisions(c.state, src.path, key, read_object(store, src))


def history_cmd(c: Context, args: list[str], namespace: str, revision: int) -> None:
    """kubectl's ``rollout history``: the template's revisions (REVISION, CHANGE-CAUSE), or one
    revision's Pod template (``--revision``).

    Raises:
        CLIError: no git history (exit 2), an unknown revision (exit 2), not found (exit 1).
    """
    from karmactl.cli.printers import align, kind_prefix
    from karmactl.cli.template_history import not_found
    from karmactl.store import yamlio

    info, name = _one_target(c, args)
    revs = _history(c, info, name, namespace)
    if revision:
        rev = next((r for r in revs if r.number == revision), None)
        if rev is None:
            raise not_found(revision)
        template = yamlio.dump((rev.obj.get("spec") or {}).get("template") or {})
        out(f"{kind_prefix(info)}/{name} with revision #{revision}\nPod Template:\n"
            + "".join(f"  {line}\n" for line in template.splitlines()))
        return
    out(f"{kind_prefix(info)}/{name} ")
    out(align([["REVISION", "CHANGE-CAUSE"]] + [[str(r.number), r.cause or "<none>"] for r in revs]).rstrip("\n"))


def undo_cmd(c: Context, args: list[str], namespace: str, to_revision: int, dry_run: bool) -> None:
    """kubectl's ``rollout undo``: the template's Pod template set back to ``--to-revision`` (default:
    the revision before the current one), only the lines that differ changed.

    Raises:
        CLIError: ``no last revision to roll back to``, an unknown revision (exit 2); not found (exit 1).
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.cli.template_edits import edit_templates
    from karmactl.cli.template_history import not_found

    info, name = _one_target(c, args)
    revs = _history(c, info, name, namespace)
    if to_revision:
        target = next((r for r in revs if r.number == to_revision), None)
        if target is None:
            raise not_found(to_revision)
    elif len(revs) < 2:
        raise CLIError("no last revision to roll back to")
    else:
        target = revs[-2]
    wanted = (target.obj.get("spec") or {}).get("template")
    if ((revs[-1].obj.get("spec") or {}).get("template")) == wanted:
        out(f"{kind_prefix(info)}/{name} skipped rollback (current template already matches revision "
            f"{target.number})")
        return

    def change(_info, obj):
        obj.setdefault("spec", {})["template"] = wanted
        return obj

    edit_templates(c, args, namespace, change, "rolled back", dry_run)


def restart_cmd(c: Context, args: list[str], namespace: str, dry_run: bool) -> None:
    """kubectl's ``rollout restart``: stamp ``kubectl.kubernetes.io/restartedAt`` (the clock, RFC 3339) on
    the Pod template, so every member rolls its Pods.

    Raises:
        CLIError: as :func:`karmactl.cli.template_edits.edit_templates`.
    """
    from karmactl.cli.stores import wall_now
    from karmactl.cli.template_edits import edit_templates

    info, name = _one_target(c, args)
    now = wall_now(c)

    def change(_info, obj):
        meta = obj.setdefault("spec", {}).setdefault("template", {}).setdefault("metadata", {})
        meta.setdefault("annotations", {})["kubectl.kubernetes.io/restartedAt"] = now
        return obj

    edit_templates(c, args, namespace, change, "restarted", dry_run)


def register(app: typer.Typer) -> None:
    """Add ``rollout status|history|undo|restart`` to the app."""
    from karmactl.cli.flags import parse_duration

    rollout = typer.Typer(name="rollout", no_args_is_help=True, rich_markup_mode=None,
                          help="Manage the rollout of workload templates (kubectl rollout).")
    target = typer.Argument(..., metavar="(TYPE NAME | TYPE/NAME)")

    @rollout.command("status", no_args_is_help=True)
    def status(ctx: typer.Context, args: List[str] = target,
               namespace: str = typer.Option("default", "-n", "--namespace"),
               watch: str = typer.Option("true", "--watch", metavar="true|false",
                                         help="Run passes until the rollout is done (false: say once how it stands)."),
               timeout: str = typer.Option("0s", "--timeout", help="Give up after this long (0: never).")):
        """Run passes until the template has rolled out on every member (aggregated status)."""
        if watch not in ("true", "false"):
            raise CLIError(f'invalid argument "{watch}" for "--watch" flag: expected true or false')
        status_cmd(ctx.obj, args, namespace, watch == "true", parse_duration(timeout, "--timeout"))

    @rollout.command("history", no_args_is_help=True)
    def history(ctx: typer.Context, args: List[str] = target,
                namespace: str = typer.Option("default", "-n", "--namespace"),
                revision: int = typer.Option(0, "--revision", help="Show this revision's Pod template.")):
        """The template's revisions: the versions of its file in git."""
        history_cmd(ctx.obj, args, namespace, revision)

    @rollout.command("undo", no_args_is_help=True)
    def undo(ctx: typer.Context, args: List[str] = target,
             namespace: str = typer.Option("default", "-n", "--namespace"),
             to_revision: int = typer.Option(0, "--to-revision", help="The revision to roll back to (0: the last)."),
             dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change.")):
        """Set the template's Pod template back to an earlier revision (from git)."""
        undo_cmd(ctx.obj, args, namespace, to_revision, dry_run)

    @rollout.command("restart", no_args_is_help=True)
    def restart(ctx: typer.Context, args: List[str] = target,
                namespace: str = typer.Option("default", "-n", "--namespace"),
                dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change.")):
        """Restart the template's Pods on every member (a restartedAt annotation on its Pod template)."""
        restart_cmd(ctx.obj, args, namespace, dry_run)

    app.add_typer(rollout)
