"""``karmactl fleet``: the fleet at a glance, from the state directory as the last run left it.

A table of workloads x member clusters (each resource template with a ResourceBinding or
ClusterResourceBinding; per cluster its ready/desired replicas and health from the binding's
``spec.clusters`` and ``status.aggregatedStatus``; each cluster's Ready condition and taints in the
header), ``-o json|yaml`` of the same data with the failover timeline and the propagation trees
(:mod:`karmactl.cli.fleetview` documents the shape), and ``--html FILE``: one self-contained page of
all three (:mod:`karmactl.cli.fleetpage`)::

    karmactl fleet -n shop
    karmactl fleet -A -o json
    karmactl fleet -A --html fleet.html --workload deploy/shop/web

Nothing is written to the state directory and no member is reached.
"""
from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path
from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out


def register(app: typer.Typer) -> None:
    """Add ``fleet`` to the app."""

    @app.command()
    def fleet(ctx: typer.Context,
              namespace: str = typer.Option("default", "-n", "--namespace",
                                            help="The namespace of the resource templates shown."),
              all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces",
                                                  help="Every namespace, and the cluster-scoped templates."),
              selector: Optional[str] = typer.Option(None, "-l", "--selector",
                                                     help="Label selector on the templates (k=v,k!=v,k in (a,b),!k)."),
              output: Optional[str] = typer.Option(None, "-o", "--output", help="json or yaml."),
              html: Optional[Path] = typer.Option(None, "--html", metavar="FILE",
                                                  help="Write one self-contained HTML page (matrix, failover "
                                                       "timeline, propagation trees)."),
              workload: Optional[str] = typer.Option(None, "--workload", metavar="KIND/NS/NAME",
                                                     help="The propagation tree of this template only (KIND/NAME "
                                                          "for a cluster-scoped one); printed below the table.")):
        """Show workloads x member clusters: replicas, health, cluster readiness and taints."""
        fleet_cmd(ctx.obj, namespace, all_namespaces, selector, output, html, workload)


def _focus(snap, text: str, namespace: str) -> tuple:
    """The binding key of ``--workload KIND/NS/NAME`` (or KIND/NAME: ``namespace``, or cluster-scoped).

    Raises:
        CLIError: malformed (exit 2), unknown kind (exit 2), no binding for it (exit 1).
    """
    from karmactl.cli.fleetview import BINDING_KINDS, template_key
    from karmactl.cli.objects import resolve_kind

    parts = text.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise CLIError(f'invalid --workload "{text}": expected KIND/NAMESPACE/NAME or KIND/NAME')
    info = resolve_kind(snap, parts[0])
    ns = (parts[1] if len(parts) == 3 else namespace) if info.namespaced else ""
    wanted = (info.group, info.kind, ns, parts[-1])
    for bkey in sorted(snap.bindings):
        if bkey[1] in BINDING_KINDS and template_key(snap, snap.bindings[bkey]["spec"].get("resource") or {}) == wanted:
            return bkey
    where = f' in namespace "{ns}"' if ns else ""
    raise CLIError(f'{info.resource_ref} "{parts[-1]}"{where} has no ResourceBinding or ClusterResourceBinding '
                   "(see `karmactl get rb,crb -A`)", ExitCode.NOT_FOUND)


def fleet_document(c: Context, namespace: str, all_namespaces: bool, selector: str | None,
                   workload: str | None) -> dict:
    """The fleet view of the state directory (:func:`karmactl.cli.fleetview.fleet_view`).

    Raises:
        CLIError: a bad selector or ``--workload`` (exit 2), a workload without binding (exit 1).
        InputError: the state directory does not load (exit 2).
    """
    from karmactl.cli import fleetview
    from karmactl.cli.selectors import parse_label_selector
    from karmactl.cli.stores import load_for_reading
    from karmactl.gcpause import cyclic_gc_paused
    from karmactl.store.events import events_regarding

    sel = parse_label_selector(selector) if selector else None
    with cyclic_gc_paused():
        snap = load_for_reading(c, lambda registry: registry.group_kinds())
        focus = _focus(snap, workload, namespace) if workload else None
        scope = None if all_namespaces else namespace
        rows = fleetview.selected_bindings(snap, scope, sel)
        events = [e for evs in events_regarding(c.state, fleetview.timeline_objects(snap, rows)).values() for e in evs]
        return fleetview.fleet_view(snap, rows, events, scope, c.now if c.now_text else None, focus)


def fleet_cmd(c: Context, namespace: str, all_namespaces: bool, selector: str | None, output: str | None,
              html: Path | None, workload: str | None) -> None:
    """``karmactl fleet``: print the table (or ``-o json|yaml``), write ``--html FILE``.

    Raises:
        CLIError: bad flags (exit 2), a ``--workload`` without binding (exit 1), an unwritable
            ``--html`` file (exit 6).
    """
    if output not in (None, "json", "yaml"):
        raise CLIError(f'invalid --output "{output}": fleet prints json or yaml')
    doc = fleet_document(c, namespace, all_namespaces, selector, workload)
    if html is not None:
        from karmactl.cli.fleetpage import render_page
        from karmactl.store.fsio import write_atomic

        try:
            write_atomic(html, render_page(doc))
        except OSError as exc:
            raise CLIError(f"cannot write --html {html}: {exc}", ExitCode.ENVIRONMENT) from None
        err(f"wrote {html}: {len(doc['workloads'])} workload(s) on {len(doc['clusters'])} cluster(s)")
    if output == "json":
        out(json.dumps(doc, indent=2))
    elif output == "yaml":
        from karmactl.store import yamlio
        out(yamlio.dump(doc).rstrip("\n"))
    elif html is None:
        _print_table(doc, all_namespaces, workload is not None)


def _print_table(doc: dict, all_namespaces: bool, with_tree: bool) -> None:
    """The terminal view: rich's table (colours on a terminal only), then ``--workload``'s tree."""
    from rich.console import Console

    if not doc["workloads"]:
        err(f"No resources found in {doc['namespace']} namespace." if doc["namespace"] is not None
            else "No resources found")
    tty = sys.stdout.isatty()
    buf = io.StringIO()
    width = shutil.get_terminal_size().columns if tty else 100_000  # a pipe gets whole lines
    console = Console(file=buf, force_terminal=tty, no_color=not tty, highlight=False, soft_wrap=False, width=width)
    if doc["workloads"]:
        console.print(_table(doc, all_namespaces))
    if with_tree:
        for tree in doc["trees"]:
            console.print(_rich_tree(tree))
    out("\n".join(line.rstrip() for line in buf.getvalue().splitlines()))


_HEALTH_STYLE = {"Healthy": "green", "Unhealthy": "red"}


def _table(doc: dict, all_namespaces: bool):
    from rich import box
    from rich.table import Table
    from rich.text import Text
    from karmactl.cli.fleetview import replica_text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    if all_namespaces:
        table.add_column("NAMESPACE", no_wrap=True)
    table.add_column("WORKLOAD", no_wrap=True)
    table.add_column("REPLICAS", justify="right")
    names = [c["name"] for c in doc["clusters"]]
    names += sorted({p["cluster"] for w in doc["workloads"] for p in w["placements"]} - set(names))
    by_name = {c["name"]: c for c in doc["clusters"]}
    for name in names:
        c = by_name.get(name)
        head = Text(name, style="bold")
        if c is None:
            head.append("\nno Cluster", style="yellow")
        else:
            word = {"True": "Ready", "False": "NotReady"}.get(c["ready"], "Unknown")
            head.append("\n" + word, style={"Ready": "green", "NotReady": "red"}.get(word, "yellow"))
            for t in c["taints"]:
                head.append(f"\n{t['key']}{'=' + t['value'] if t['value'] else ''}:{t['effect']}", style="red")
        table.add_column(head, justify="left", no_wrap=True)
    for w in doc["workloads"]:
        by_cluster = {p["cluster"]: p for p in w["placements"]}
        cells = [w["namespace"]] if all_namespaces else []
        cells += [f"{w['kind']}/{w['name']}", "-" if w["replicas"] is None else str(w["replicas"])]
        for name in names:
            p = by_cluster.get(name)
            if p is None:
                cells.append(Text("-", style="dim"))
                continue
            numbers = replica_text(p)
            cell = Text(numbers + " " if numbers else "")
            cell.append(p["health"], style=_HEALTH_STYLE.get(p["health"], "yellow"))
            if p["evicting"]:
                cell.append(" evicting", style="red")
            elif not p["scheduled"]:
                cell.append(" not scheduled", style="red")
            cells.append(cell)
        table.add_row(*cells)
    return table


def _rich_tree(tree: dict):
    """``--workload``'s propagation tree for the terminal (rich's Tree)."""
    from rich.text import Text
    from rich.tree import Tree
    from karmactl.cli.fleetview import workload_label

    def ref(kind: str, namespace: str, name: str) -> Text:
        return Text(kind, style="bold").append(" " + "/".join(p for p in (namespace, name) if p), style="")

    wl, b, p = tree["workload"], tree["binding"], tree["policy"]
    root = Tree(Text("propagation of ") + Text(workload_label(wl), style="bold"))
    node = root
    if p is not None:
        node = node.add(ref(p["kind"], p["namespace"], p["name"]) + Text("" if p["found"] else " (not in the state directory)"))
    node = node.add(ref(wl["kind"], wl["namespace"], wl["name"]))
    node = node.add(ref(b["kind"], b["namespace"], b["name"]) + Text(f"  Scheduled={b['scheduled']} "
                                                                     f"FullyApplied={b['fullyApplied']}"))
    for w in tree["works"]:
        work = node.add(ref("Work", w["namespace"], w["name"]) + Text(
            f"  on {w['cluster']}  Applied={w['applied']}" + ("  terminating" if w["terminating"] else "")))
        for o in w["objects"]:
            seen = f"  {o['health']}, observed {o['observedAt']}" if o["observed"] else "  not observed yet"
            work.add(ref(o["kind"], o["namespace"], o["name"]) + Text(seen))
    return root


__all__ = ["fleet_cmd", "fleet_document", "register"]
