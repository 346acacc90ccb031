"""``karmactl api-resources``: the kinds karmactl knows, its own and those CRDs in the state directory
define (kubectl ``pkg/cmd/apiresources``)."""
from __future__ import annotations

import sys
from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, out
from karmactl.cli.stores import registry_of


def api_resources_cmd(c: Context, namespaced: Optional[bool], api_group: Optional[str], output: Optional[str],
                      no_headers: bool, sort_by: Optional[str]) -> None:
    """kubectl's ``api-resources``: NAME, SHORTNAMES, APIVERSION, NAMESPACED, KIND (``-o wide`` adds VERBS,
    ``-o name`` prints ``plural.group``)."""
    from karmactl.cli.printers import align

    if output not in (None, "wide", "name"):
        raise CLIError(f'--output {output} is not available: use wide or name')
    if sort_by not in (None, "name", "kind"):
        raise CLIError('--sort-by accepts only name or kind')
    infos = [i for i in registry_of(c).all() if (namespaced is None or i.namespaced == namespaced)
             and (api_group is None or i.group == api_group)]
    infos.sort(key=lambda i: (i.kind,) if sort_by == "kind" else (i.plural,) if sort_by == "name" else (i.group, i.plural))
    if output == "name":
        out("".join(f"{i.resource_ref}\n" for i in infos).rstrip("\n"))
        return
    header = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"] + (["VERBS"] if output == "wide" else [])
    verbs = lambda i: "[create delete get list patch update]" if i.kind not in (  # noqa: E731
        "ResourceBinding", "ClusterResourceBinding", "Work", "Event") else "[get list]"
    rows = [[i.plural, ",".join(i.short_names), i.api_version, str(i.namespaced).lower(), i.kind]
            + ([verbs(i)] if output == "wide" else []) for i in infos]
    sys.stdout.write(align([header] + rows, no_headers))


def register(app: typer.Typer) -> None:
    """Add ``api-resources`` to the app."""

    @app.command("api-resources")
    def api_resources(ctx: typer.Context,
                      namespaced: Optional[str] = typer.Option(None, "--namespaced", metavar="true|false",
                                                                help="true: namespaced kinds only; false: cluster-scoped only."),
                      api_group: Optional[str] = typer.Option(None, "--api-group", help="Only this API group (\"\" for core)."),
                      output: Optional[str] = typer.Option(None, "-o", "--output", help="wide or name."),
                      no_headers: bool = typer.Option(False, "--no-headers"),
                      sort_by: Optional[str] = typer.Option(None, "--sort-by", help="name or kind.")):
        """Print the kinds karmactl knows (its own and those CRDs in the state directory define)."""
        if namespaced not in (None, "true", "false"):
            raise CLIError(f'invalid --namespaced "{namespaced}": must be true or false')
        api_resources_cmd(ctx.obj, None if namespaced is None else namespaced == "true", api_group, output,
                          no_headers, sort_by)
