"""The terminal view of ``karmactl fleet`` (rich): the member clusters, then a table of workloads × clusters
whose cells are ``ready/replicas`` coloured by health (green Healthy, red Unhealthy, yellow otherwise; ``-``
where the binding placed nothing)."""
from __future__ import annotations

import sys

STYLE = {"Healthy": "green", "Unhealthy": "red", "Unknown": "yellow"}


def cell_text(cell: dict | None) -> str:
    """A matrix cell as text: ``ready/replicas`` (``?`` for a ready count not reported yet), or the health
    of a workload without replicas; ``-`` when not placed on that cluster."""
    if cell is None:
        return "-"
    if cell["replicas"] is None:
        return cell["health"]
    ready = "?" if cell["ready"] is None else str(cell["ready"])
    return f"{ready}/{cell['replicas']}"


def ready_text(row: dict) -> str:
    """A workload's READY as ``get`` prints it (``ready/replicas``), ``-`` without replicas."""
    if row["replicas"] is None:
        return "-"
    return f"{row['ready'] or 0}/{row['replicas']}"


def render(data: dict, all_namespaces: bool, color: bool) -> None:
    """Print the fleet to stdout; ``color`` (a terminal) styles it, otherwise plain text as wide as needed."""
    from rich.console import Console
    from rich.table import Table
    from rich import box

    console = Console(file=sys.stdout, no_color=not color, highlight=False, width=None if color else 100_000,
                      force_terminal=color, soft_wrap=not color)
    clusters = [c["name"] for c in data["clusters"]]
    summary = Table(box=None if not color else box.SIMPLE, show_edge=False, pad_edge=False)
    for head in ("CLUSTER", "READY", "SYNC", "TAINTS"):
        summary.add_column(head)
    for c in data["clusters"]:
        ready = {"True": "green", "False": "red"}.get(c["ready"], "yellow")
        summary.add_row(c["name"], f"[{ready}]{c['ready']}[/]", c["syncMode"], ",".join(c["taints"]) or "<none>")
    console.print(summary)
    matrix = Table(box=None if not color else box.SIMPLE, show_edge=False, pad_edge=False)
    if all_namespaces:
        matrix.add_column("NAMESPACE")
    for head in ("WORKLOAD", "READY", "HEALTH", *clusters):
        matrix.add_column(head)
    for row in data["workloads"]:
        cells = []
        for name in clusters:
            cell = row["clusters"].get(name)
            text = cell_text(cell)
            cells.append(f"[{STYLE.get(cell['health'], 'yellow')}]{text}[/]" if cell else text)
        health = {"Healthy": "green", "Unhealthy": "red"}.get(row["health"], "yellow")
        lead = [row["namespace"] or "<cluster>"] if all_namespaces else []
        matrix.add_row(*lead, f"{(row['kind'] or '').lower()}/{row['name']}", ready_text(row),
                       f"[{health}]{row['health']}[/]", *cells)
    console.print()
    if data["workloads"]:
        console.print(matrix)
    else:
        console.print("No workloads: no ResourceBinding yet (apply templates and policies, then reconcile).")
