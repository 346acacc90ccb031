"""``karmactl cordon`` and ``uncordon``: mark a cluster unschedulable or schedulable again with the
taint ``cluster.karmada.io/unschedulable:NoSchedule`` (karmadactl ``pkg/karmadactl/cordon/cordon.go``),
in the Cluster's own file (:mod:`karmactl.cli.clusters`)."""
from __future__ import annotations

import typer

from karmactl.api import constants as C
from karmactl.cli.clusters import edit_cluster_taints
from karmactl.cli.context import out


def cordon_cmd(c, name: str, cordon: bool, dry_run: bool) -> None:
    """``karmactl cordon|uncordon NAME``: add/remove ``cluster.karmada.io/unschedulable:NoSchedule``."""
    probe = {"key": C.TAINT_UNSCHEDULABLE, "effect": C.EFFECT_NO_SCHEDULE}
    verb = "cordon" if cordon else "uncordon"

    def change(cname, taints):
        present = any(t.get("key") == probe["key"] and t.get("effect") == probe["effect"] for t in taints)
        if present == cordon:
            return f"{cname} cluster already {verb}ed", None
        if cordon:
            new = taints + [dict(probe)]
        else:
            new = [t for t in taints if not (t.get("key") == probe["key"] and t.get("effect") == probe["effect"])]
        return f"{cname} cluster {verb}ed", (None if dry_run else new)

    out(edit_cluster_taints(c, name, change))


def register(app: typer.Typer) -> None:
    """Add ``cordon`` and ``uncordon`` to the app."""

    @app.command()
    def cordon(ctx: typer.Context, name: str = typer.Argument(..., help="Cluster name."),
               dry_run: bool = typer.Option(False, "--dry-run")):
        """Mark a cluster unschedulable (taint cluster.karmada.io/unschedulable:NoSchedule)."""
        cordon_cmd(ctx.obj, name, True, dry_run)

    @app.command()
    def uncordon(ctx: typer.Context, name: str = typer.Argument(..., help="Cluster name."),
                 dry_run: bool = typer.Option(False, "--dry-run")):
        """Mark a cluster schedulable again (remove cluster.karmada.io/unschedulable:NoSchedule)."""
        cordon_cmd(ctx.obj, name, False, dry_run)
