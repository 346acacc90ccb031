"""``karmactl join``: register a Push member cluster (karmadactl ``pkg/karmadactl/join/join.go``;
semantics §11.2); the Cluster written is :mod:`karmactl.cli.membership`'s."""
from __future__ import annotations

from typing import Optional

import typer

from karmactl.cli.membership import join_cluster


def register(app: typer.Typer) -> None:
    """Add ``join`` to the app."""

    @app.command(rich_help_panel="Cluster registration")
    def join(ctx: typer.Context,
             name: str = typer.Argument(..., metavar="CLUSTER_NAME", help="Name of the member cluster."),
             kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", "--cluster-kubeconfig",
                                                      help="Path of the member's kubeconfig (default $KUBECONFIG, ~/.kube/config)."),
             context: Optional[str] = typer.Option(None, "--context", "--cluster-context",
                                                   help="Context in the kubeconfig (default: its current-context)."),
             provider: Optional[str] = typer.Option(None, "--provider", "--cluster-provider", help="spec.provider"),
             region: Optional[str] = typer.Option(None, "--region", "--cluster-region", help="spec.region"),
             zones: Optional[str] = typer.Option(None, "--zones", "--cluster-zones", help="spec.zones, comma-separated"),
             dry_run: bool = typer.Option(False, "--dry-run", help="Print the Cluster, write nothing.")):
        """Register a Push member cluster: write clusters/NAME.yaml naming its kubeconfig and context."""
        zl = [z.strip() for z in (zones or "").split(",") if z.strip()]
        join_cluster(ctx.obj, name, kubeconfig, context, provider, region, zl, dry_run)
