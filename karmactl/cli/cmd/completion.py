"""``karmactl completion bash|zsh|fish``: the shell completion scripts (:mod:`karmactl.cli.completing`)."""
from __future__ import annotations

import typer

from karmactl.cli.context import CLIError, out


def register(app: typer.Typer) -> None:
    """Add ``completion`` to the app."""

    @app.command()
    def completion(shell: str = typer.Argument(..., help="bash, zsh or fish")):
        """Print a shell completion script (e.g. `source <(karmactl completion bash)`); it completes commands,
        flags, kinds, object names, namespaces, clusters, output formats and files."""
        from karmactl.cli.completing import script

        if shell not in ("bash", "zsh", "fish"):
            raise CLIError(f'unsupported shell "{shell}": use bash, zsh or fish')
        out(script(shell))
