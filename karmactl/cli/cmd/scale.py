"""``karmactl scale``: set a workload template's replicas in its file (kubectl ``pkg/cmd/scale``); the
next ``reconcile`` divides them among the members as the policy says (Karmada scales the template
on its API server the same way: members follow through the binding)."""
from __future__ import annotations

from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context


def scale_cmd(c: Context, args: list[str], namespace: str, replicas: Optional[int], current: Optional[int],
              all_objects: bool, selector: Optional[str], dry_run: bool) -> None:
    """Set ``spec.replicas`` of each named template (only that line changes); ``--current-replicas`` is
    kubectl's precondition.

    Raises:
        CLIError: kubectl's messages for a missing or negative ``--replicas``, a failed precondition, a
            kind without replicas (exit 2); objects not found (exit 1).
    """
    from karmactl.cli.template_edits import SCALABLE, edit_templates, not_scalable

    if replicas is None:
        raise CLIError('required flag(s) "replicas" not set')
    if replicas < 0:
        raise CLIError("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")

    def change(info, obj):
        if (info.group, info.kind) not in SCALABLE:
            raise not_scalable(info, obj["metadata"]["name"])
        spec = obj.setdefault("spec", {})
        was = spec.get("replicas", 1)
        if current is not None and current >= 0 and was != current:
            raise CLIError(f"Expected replicas to be {current}, was {was}")
        spec["replicas"] = replicas
        return obj

    edit_templates(c, args, namespace, change, "scaled", dry_run, all_objects, selector, report_unchanged=True)


def register(app: typer.Typer) -> None:
    """Add ``scale`` to the app."""

    @app.command(no_args_is_help=True)
    def scale(ctx: typer.Context,
              args: List[str] = typer.Argument(..., metavar="(TYPE NAME | TYPE/NAME)"),
              replicas: Optional[int] = typer.Option(None, "--replicas", help="The new number of replicas."),
              current_replicas: Optional[int] = typer.Option(None, "--current-replicas",
                                                             help="Scale only if the replicas are this now."),
              namespace: str = typer.Option("default", "-n", "--namespace"),
              all_objects: bool = typer.Option(False, "--all", help="Every object of the type (in the namespace)."),
              selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Objects matching a label selector."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change.")):
        """Set a new size for a Deployment, ReplicaSet, ReplicationController or StatefulSet template."""
        scale_cmd(ctx.obj, args, namespace, replicas, current_replicas, all_objects, selector, dry_run)
