"""``karmactl apply -f``: store the objects of files, directories, URLs or stdin in the state directory
(kubectl ``apply``); the storing itself is :mod:`karmactl.cli.applying` (``demo`` applies with it)."""
from __future__ import annotations

from typing import List, Optional

import typer

from karmactl.cli.applying import apply_cmd
from karmactl.cli.context import CLIError


def register(app: typer.Typer) -> None:
    """Add ``apply`` to the app."""

    @app.command()
    def apply(ctx: typer.Context,
              filename: List[str] = typer.Option([], "-f", "--filename", help="File, directory, http(s) URL or - for stdin (repeatable)."),
              kustomize: Optional[str] = typer.Option(None, "-k", "--kustomize", metavar="DIR",
                                                      help="A kustomization directory, built with `kubectl kustomize`."),
              recursive: bool = typer.Option(True, "-R", "--recursive", help="Walk directories recursively."),
              all_clusters: bool = typer.Option(False, "--all-clusters",
                                                help="Also a policy per object propagating it to every member cluster (karmadactl)."),
              clusters: List[str] = typer.Option([], "-C", "--cluster",
                                                 help="Also a policy per object propagating it to these clusters (karmadactl)."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change.")):
        """Store every object found in the given YAML files in the state directory (kubectl apply)."""
        if bool(filename) == bool(kustomize):
            raise CLIError("must specify one of -f and -k" if not filename else "cannot specify both -f and -k")
        names = [n.strip() for v in clusters for n in v.split(",") if n.strip()]
        apply_cmd(ctx.obj, filename, recursive, dry_run, kustomize, names or None, all_clusters)
