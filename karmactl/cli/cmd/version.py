"""``karmactl version``: the client version (kubectl ``pkg/cmd/version``; there is no server)."""
from __future__ import annotations

import json
import platform
import sys
from typing import Optional

import typer

from karmactl.cli.context import CLIError, out


def version_info() -> dict:
    """``{"clientVersion": {...}}`` as ``kubectl version -o json`` shapes it (karmactl's own version)."""
    from karmactl import __version__

    return {"clientVersion": {"gitVersion": f"v{__version__}", "pythonVersion": platform.python_version(),
                              "platform": f"{sys.platform}/{platform.machine()}"}}


def version_cmd(output: Optional[str]) -> None:
    """``karmactl version [-o json|yaml]``: the client version (there is no server: the state directory is it)."""
    info = version_info()
    if output == "json":
        out(json.dumps(info, indent=2))
    elif output == "yaml":
        from karmactl.store import yamlio
        out(yamlio.dump(info).rstrip("\n"))
    elif output:
        raise CLIError("--output must be 'yaml' or 'json'")
    else:
        out(f"Client Version: {info['clientVersion']['gitVersion']}")


def register(app: typer.Typer) -> None:
    """Add ``version`` to the app."""

    @app.command()
    def version(output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml or json."),
                client: bool = typer.Option(True, "--client", help="Client version only (always: there is no server).")):
        """Print the karmactl version (kubectl version --client)."""
        version_cmd(output)
