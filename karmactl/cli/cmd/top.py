"""``karmactl top node|pod``: resource usage in member clusters (karmadactl ``pkg/karmadactl/top``).

Read from each member's metrics API (``metrics.k8s.io/v1beta1``, served by metrics-server), every
registered Cluster by default or those ``--clusters``/``-C`` names, all at once; rows carry a CLUSTER
column as karmadactl's printer. A member without the metrics API, or whose metrics API has no item yet,
is karmadactl's ``cluster(<name>): metrics API not available`` / ``metrics not available yet`` (exit 3,
after the other members' rows): karmactl computes no usage of its own (requests are not usage).
Units as kubectl prints them: CPU in millicores (``250m``), memory in MiB (``512Mi``), percentages of
the Node's allocatable (``--show-capacity``: its capacity).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out

METRICS = "/apis/metrics.k8s.io/v1beta1"


def _cpu(q) -> str:
    from karmactl.api.quantity import parse_quantity
    return f"{int(parse_quantity(q or '0') * 1000)}m"


def _mem(q) -> str:
    from karmactl.api.quantity import parse_quantity
    return f"{int(parse_quantity(q or '0') / (1024 * 1024))}Mi"


def _percent(used, available) -> str:
    from karmactl.api.quantity import parse_quantity
    total = parse_quantity(available or "0")
    return f"{int(parse_quantity(used or '0') * 100 / total)}%" if total else "<unknown>"


def _read(reader, path: str, selector: Optional[str]) -> list[dict]:
    data = reader.get(path, {"labelSelector": selector} if selector else None)
    return list(data.get("items") or []) if "items" in data else [data]


def _member_metrics(cluster: dict, state, kind: str, name: Optional[str], namespace: Optional[str],
                    selector: Optional[str], capacity: bool) -> tuple[list[dict], dict, str | None]:
    """``(metrics items, {node: allocatable or capacity}, error or None)`` of one member."""
    from karmactl.cli.members_view import MemberAccessError, MemberReader

    cname = cluster["metadata"]["name"]
    try:
        reader = MemberReader(cluster, state)
    except MemberAccessError as exc:
        return [], {}, f"cluster({cname}): {exc}"
    try:
        groups = reader.get("/apis").get("groups") or []
        if not any(g.get("name") == "metrics.k8s.io" and any(v.get("version") == "v1beta1" for v in g.get("versions") or [])
                   for g in groups):
            return [], {}, f"cluster({cname}): metrics API not available"
        base = f"{METRICS}/namespaces/{namespace}/pods" if kind == "pod" and namespace else f"{METRICS}/{kind}s"
        items = _read(reader, base + (f"/{name}" if name else ""), selector)
        if not items:
            return [], {}, None if kind == "pod" else f"cluster({cname}): metrics not available yet"
        available = {}
        if kind == "node":
            for n in _read(reader, "/api/v1/nodes" + (f"/{name}" if name else ""), selector):
                status = n.get("status") or {}
                available[n["metadata"]["name"]] = status.get("capacity" if capacity else "allocatable") or {}
        return items, available, None
    except MemberAccessError as exc:
        return [], {}, f"cluster({cname}): {exc}"
    finally:
        reader.close()


def top_cmd(c: Context, kind: str, name: Optional[str], clusters: list[str], namespace: str, all_namespaces: bool,
            selector: Optional[str], sort_by: Optional[str], no_headers: bool, capacity: bool = False,
            containers: bool = False, total: bool = False) -> None:
    """Print the usage of Nodes (``kind`` = ``node``) or Pods (``pod``) of the chosen members; for Pods,
    ``containers`` prints one row per container (POD, then the container's NAME) and ``total`` adds
    kubectl's sum rows (``--sum``).

    Raises:
        CLIError: ``--sort-by`` other than cpu/memory, unknown clusters (exit 2).
        SystemExit: 3 when a member had no metrics or could not be read (its error printed).
    """
    from karmactl.cli import passthrough as pt
    from karmactl.cli.printers import align

    if sort_by not in (None, "cpu", "memory"):
        raise CLIError("--sort-by accepts only cpu or memory")
    snap = pt.load_for_members(c, None, namespace)
    names = pt.named_clusters(snap, pt.split_clusters(clusters)) or sorted(pt.registered_clusters(snap))
    known = pt.registered_clusters(snap)
    ns = None if (kind == "node" or all_namespaces) else namespace
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(names)))) as pool:
        results = list(pool.map(lambda n: _member_metrics(known[n], c.state, kind, name, ns, selector, capacity), names))
    rows, errors = [], []
    for cname, (items, available, error) in zip(names, results):
        if error:
            errors.append(error)
        for m in items:
            usage = (m.get("usage") if kind == "node" else _pod_usage(m)) or {}
            rows.append((cname, m, usage, available.get(m["metadata"]["name"]) or {}))
    _sort(rows, sort_by)
    if rows:
        table = _table(kind, rows, all_namespaces, no_headers, containers)
        if total:
            table += _sum_rows(rows, len(_header(kind, all_namespaces, containers)))
        out(align(table).rstrip("\n"))
    elif not errors:
        err("No resources found" if kind == "node" or all_namespaces else f"No resources found in {namespace} namespace.")
    for e in errors:
        err(f"error: {e}")
    if errors:
        raise SystemExit(int(ExitCode.MEMBER_FAILURE))


def _sort(rows: list, sort_by: Optional[str]) -> None:
    """``--sort-by cpu|memory``: the largest usage first; otherwise by namespace, name, cluster."""
    from karmactl.api.quantity import parse_quantity

    if sort_by:
        rows.sort(key=lambda r: parse_quantity(r[2].get(sort_by) or "0"), reverse=True)
    else:
        rows.sort(key=lambda r: ((r[1]["metadata"].get("namespace") or ""), r[1]["metadata"]["name"], r[0]))


def _table(kind: str, rows: list, all_namespaces: bool, no_headers: bool, containers: bool = False) -> list[list[str]]:
    """The printed rows: karmadactl's columns (NAME, CLUSTER, usage; percentages for Nodes; POD first
    and one row per container with ``containers``)."""
    table = [] if no_headers else [_header(kind, all_namespaces, containers)]
    for cname, m, usage, avail in rows:
        md = m["metadata"]
        if kind == "node":
            table.append([md["name"], cname, _cpu(usage.get("cpu")), _percent(usage.get("cpu"), avail.get("cpu")),
                          _mem(usage.get("memory")), _percent(usage.get("memory"), avail.get("memory"))])
            continue
        lead = [md.get("namespace") or ""] if all_namespaces else []
        if not containers:
            table.append(lead + [md["name"], cname, _cpu(usage.get("cpu")), _mem(usage.get("memory"))])
            continue
        for ctr in m.get("containers") or []:
            cu = ctr.get("usage") or {}
            table.append(lead + [md["name"], ctr.get("name") or "", cname, _cpu(cu.get("cpu")), _mem(cu.get("memory"))])
    return table


def _sum_rows(rows: list, width: int) -> list[list[str]]:
    """kubectl top pod ``--sum``: a rule under the usage columns, then the Pods' total CPU and memory."""
    from karmactl.api.quantity import parse_quantity

    cpu = sum(parse_quantity(r[2].get("cpu") or "0") for r in rows)
    mem = sum(parse_quantity(r[2].get("memory") or "0") for r in rows)
    blank = [""] * (width - 2)
    return [blank + ["________", "________"], blank + [_cpu(str(float(cpu))), _mem(str(float(mem)))]]


def _header(kind: str, all_namespaces: bool, containers: bool = False) -> list[str]:
    if kind == "node":
        return ["NAME", "CLUSTER", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%"]
    return (["NAMESPACE"] if all_namespaces else []) + (["POD"] if containers else []) + \
        ["NAME", "CLUSTER", "CPU(cores)", "MEMORY(bytes)"]


def _pod_usage(m: dict) -> dict:
    """A PodMetrics' usage: the sum of its containers' (cpu, memory), as kubectl top pod adds them."""
    from karmactl.api.quantity import parse_quantity

    total = {"cpu": Fraction(0), "memory": Fraction(0)}
    for ctr in m.get("containers") or []:
        for k in total:
            total[k] += parse_quantity((ctr.get("usage") or {}).get(k) or "0")
    return {k: str(float(v)) for k, v in total.items()}


def register(app: typer.Typer) -> None:
    """Add ``top node`` and ``top pod`` to the app."""
    top = typer.Typer(name="top", no_args_is_help=True, rich_markup_mode=None,
                      help="Display resource (CPU/memory) usage of member clusters (karmadactl top).")

    @top.command("node")
    def node(ctx: typer.Context,
             name: Optional[str] = typer.Argument(None, metavar="[NAME]"),
             clusters: List[str] = typer.Option([], "-C", "--clusters", help="Member clusters (comma-separated); "
                                                                             "default: every Cluster."),
             selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Nodes matching a label selector."),
             sort_by: Optional[str] = typer.Option(None, "--sort-by", help="cpu or memory."),
             no_headers: bool = typer.Option(False, "--no-headers", help="Print no header line."),
             show_capacity: bool = typer.Option(False, "--show-capacity",
                                                help="Percentages of the Nodes' capacity, not allocatable.")):
        """Display resource (CPU/memory) usage of nodes in member clusters."""
        top_cmd(ctx.obj, "node", name, clusters, "default", False, selector, sort_by, no_headers, show_capacity)

    @top.command("pod")
    def pod(ctx: typer.Context,
            name: Optional[str] = typer.Argument(None, metavar="[NAME]"),
            clusters: List[str] = typer.Option([], "-C", "--clusters", help="Member clusters (comma-separated); "
                                                                            "default: every Cluster."),
            namespace: str = typer.Option("default", "-n", "--namespace"),
            all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="Every namespace."),
            selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Pods matching a label selector."),
            sort_by: Optional[str] = typer.Option(None, "--sort-by", help="cpu or memory."),
            no_headers: bool = typer.Option(False, "--no-headers", help="Print no header line."),
            containers: bool = typer.Option(False, "--containers", help="One row per container of each Pod."),
            total: bool = typer.Option(False, "--sum", help="Print the sum of the Pods' usage.")):
        """Display resource (CPU/memory) usage of pods in member clusters."""
        top_cmd(ctx.obj, "pod", name, clusters, namespace, all_namespaces, selector, sort_by, no_headers,
                containers=containers, total=total)

    app.add_typer(top)
