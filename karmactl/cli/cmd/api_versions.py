"""``karmactl api-versions``: the API versions karmactl serves, as group/version (kubectl ``pkg/cmd/apiresources``)."""
from __future__ import annotations

import typer

from karmactl.cli.context import Context, out
from karmactl.cli.stores import registry_of


def api_versions_cmd(c: Context) -> None:
    """kubectl's ``api-versions``: every ``group/version`` served, sorted, one per line."""
    found = {f"{i.group}/{v}" if i.group else v for i in registry_of(c).all() for v in (i.versions or (i.version,))}
    out("\n".join(sorted(found)))


def register(app: typer.Typer) -> None:
    """Add ``api-versions`` to the app."""

    @app.command("api-versions")
    def api_versions(ctx: typer.Context):
        """Print the API versions karmactl serves, as group/version."""
        api_versions_cmd(ctx.obj)
