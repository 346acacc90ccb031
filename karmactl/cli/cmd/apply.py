"""``karmactl apply -f``: store the objects of files, directories, URLs or stdin in the state directory
(kubectl ``apply``); the storing itself is :mod:`karmactl.cli.applying` (``demo`` applies with it)."""
from __future__ import annotations

from typing import List

import typer

from karmactl.cli.applying import apply_cmd


def register(app: typer.Typer) -> None:
    """Add ``apply`` to the app."""

    @app.command()
    def apply(ctx: typer.Context,
              filename: List[str] = typer.Option(..., "-f", "--filename", help="File, directory, http(s) URL or - for stdin (repeatable)."),
              recursive: bool = typer.Option(True, "-R", "--recursive", help="Walk directories recursively."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change.")):
        """Store every object found in the given YAML files in the state directory (kubectl apply)."""
        apply_cmd(ctx.obj, filename, recursive, dry_run)
