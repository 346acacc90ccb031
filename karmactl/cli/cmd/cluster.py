"""``karmactl cluster condition set|unset``: record or remove a condition on a Cluster's status, as the
member's own report would (``karmactl/controllers/cluster_status.py``)."""
from __future__ import annotations

import re
from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, out
from karmactl.cli.objects import not_found, resolve_kind
from karmactl.cli.stores import load_snapshot, store_of
from karmactl.store.fsio import state_lock


def condition_cmd(c: Context, name: str, ctype: str, status: str | None, reason: str | None, message: str | None) -> None:
    from karmactl.controllers import cluster_status
    from karmactl.store.fsio import write_atomic
    from karmactl.store.state import dump_computed

    if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9_.\-/]*[A-Za-z0-9])?", ctype):
        raise CLIError(f'invalid condition type "{ctype}"')
    if reason is not None and not re.fullmatch(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?", reason):
        raise CLIError(f'invalid --reason "{reason}": must be CamelCase (letters, digits, _ , :)')
    store = store_of(c)
    with state_lock(store.root):
        snap = load_snapshot(c)
        key = ("cluster.karmada.io", "Cluster", "", name)
        cluster = snap.user.get(key)
        if cluster is None:
            raise not_found(resolve_kind(snap, "cluster"), name)
        # fold any newer report from the file in first, so this one is the newest
        overlay = cluster_status.ingest_file_status(key, cluster, snap.overlays.get(key), c.now)
        new = cluster_status.report_condition(key, cluster, overlay, ctype, status, reason, message, c.now)
        if new != snap.overlays.get(key):
            write_atomic(store.computed_path(key), dump_computed(new))  # computed files are JSON
    verb = "set" if status is not None else "unset"
    out(f"cluster.cluster.karmada.io/{name} condition {ctype} {verb}")


def register(app: typer.Typer) -> None:
    """Add ``cluster condition set`` and ``cluster condition unset`` to the app."""
    cluster_app = typer.Typer(no_args_is_help=True, help="Cluster operations (conditions).")
    condition_app = typer.Typer(no_args_is_help=True, help="Record or remove a condition on a Cluster's status.")
    cluster_app.add_typer(condition_app, name="condition")
    app.add_typer(cluster_app, name="cluster")

    @condition_app.command("set")
    def condition_set(ctx: typer.Context, name: str = typer.Argument(..., help="Cluster name."),
                      condition: str = typer.Argument(..., help="TYPE=True|False|Unknown"),
                      reason: Optional[str] = typer.Option(None, "--reason"),
                      message: Optional[str] = typer.Option(None, "--message")):
        """Record a condition on a Cluster's status, as the member's own report would."""
        if "=" not in condition:
            raise CLIError(f'invalid condition "{condition}": expected TYPE=True|False|Unknown')
        ctype, status = condition.split("=", 1)
        if status not in ("True", "False", "Unknown"):
            raise CLIError(f'invalid condition status "{status}": must be True, False or Unknown')
        condition_cmd(ctx.obj, name, ctype, status, reason, message)


    @condition_app.command("unset")
    def condition_unset(ctx: typer.Context, name: str = typer.Argument(...), ctype: str = typer.Argument(..., metavar="TYPE")):
        """Remove a condition from a Cluster's status."""
        condition_cmd(ctx.obj, name, ctype, None, None, None)
