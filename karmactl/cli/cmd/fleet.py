"""``karmactl fleet``: workloads × member clusters with replicas and health, the failover timeline and the
propagation tree, as a terminal view, one self-contained HTML page (``--html FILE``) or JSON (``-o json``),
from the state directory as the last run left it (no member is contacted: run ``reconcile`` first)
(:mod:`karmactl.cli.fleet`). Karmada's own picture of this is its dashboard."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, out


def fleet_cmd(c: Context, namespace: str, all_namespaces: bool, output: Optional[str], html: Optional[Path],
              workload: Optional[str]) -> None:
    """Show the fleet (module docstring); ``--html`` writes the page atomically and says where.

    Raises:
        CLIError: ``-o`` other than json, ``--workload`` not a bound template (exit 2; 1 when not found).
    """
    import json

    from karmactl.cli.fleet.data import fleet_data, find_row
    from karmactl.cli.objects import resolve_kind
    from karmactl.cli.stores import event_rows, load_snapshot

    if output not in (None, "json"):
        raise CLIError(f'unable to match a printer suitable for the output format "{output}", allowed formats are: json')
    snap = load_snapshot(c)
    # the timeline is the fleet's: every Event (a failover touches Clusters, bindings and Works alike)
    data = fleet_data(snap, event_rows(c, None, "", True), c.now, None if all_namespaces else namespace)
    chosen = None
    if workload:
        kind, _sep, name = workload.partition("/")
        if not name:
            raise CLIError(f'--workload takes TYPE/NAME, not "{workload}"')
        info = resolve_kind(snap, kind)
        chosen = find_row(data["workloads"], info, name, namespace)
        if chosen is None:
            raise CLIError(f"{workload} has no binding in namespace {namespace} (no policy selects it, or no run since)")
    if html is not None:
        from karmactl.cli.fleet.page import render_page
        from karmactl.store.fsio import write_atomic

        write_atomic(html, render_page(data, chosen))
        out(f"wrote {html}")
        return
    if output == "json":
        out(json.dumps(data, indent=2))
        return
    from karmactl.cli.fleet.terminal import render

    render(data, all_namespaces, c.stdout_tty)


def register(app: typer.Typer) -> None:
    """Add ``fleet`` to the app."""

    @app.command()
    def fleet(ctx: typer.Context,
              namespace: str = typer.Option("default", "-n", "--namespace"),
              all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="Workloads of every namespace."),
              output: Optional[str] = typer.Option(None, "-o", "--output", help="json: the data of the view."),
              html: Optional[Path] = typer.Option(None, "--html", metavar="FILE",
                                                  help="Write one self-contained HTML page (matrix, timeline, tree)."),
              workload: Optional[str] = typer.Option(None, "--workload", metavar="TYPE/NAME",
                                                     help="The workload whose propagation tree the page shows first.")):
        """Workloads × member clusters with replicas and health, the failover timeline and propagation tree."""
        fleet_cmd(ctx.obj, namespace, all_namespaces, output, html, workload)
