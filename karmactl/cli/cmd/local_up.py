"""``karmactl local-up`` and ``local-down``: start and stop local members (emulators, real
kube-apiservers with ``--kube-apiserver PATH``, or whole real clusters from a cluster launcher with
``--kube-cluster LAUNCHER``) through :mod:`karmactl.emulator.local`, which
supervises the processes; starting and joining them is :mod:`karmactl.cli.membership`'s."""
from __future__ import annotations

from typing import Optional

import typer

from karmactl.cli.context import Context, err, out
from karmactl.cli.membership import KUBE_APISERVER_HELP, KUBE_CLUSTER_HELP, local_up


def node_shape(cpu: int | None, memory: str | None, labels: str | None):
    """The ``launcher.NodeShape`` of the ``--node-*`` flags (``labels`` ``k=v,k2=v2``).

    Raises:
        CLIError: a label without ``=`` or a memory that is not a quantity (exit 2).
    """
    from karmactl.api.quantity import QuantityError, parse_quantity
    from karmactl.cli.context import CLIError
    from karmactl.emulator.launcher import NodeShape

    pairs = []
    for item in (labels or "").split(","):
        if not item.strip():
            continue
        key, eq, value = item.strip().partition("=")
        if not eq or not key:
            raise CLIError(f'--node-labels: "{item}" is not KEY=VALUE')
        pairs.append((key, value))
    if memory is not None:
        try:
            parse_quantity(memory)
        except QuantityError:
            raise CLIError(f'--node-memory: "{memory}" is not a quantity (e.g. 32Gi)') from None
    if cpu is not None and cpu < 1:
        raise CLIError(f"--node-cpu must be at least 1, not {cpu}")
    return NodeShape(cpu=cpu, memory=memory, labels=tuple(pairs))


def local_down(c: Context, purge: bool = False) -> list[str]:
    """Stop every local member (:func:`karmactl.emulator.local.local_down`); data kept unless ``purge``.

    Returns the names of the members that were running.

    Raises:
        RuntimeDirError: ``.karmactl`` is a symlink or tracked by git (its members' pid files and,
            with ``purge``, their directories are never taken from the repository).
    """
    from karmactl.emulator import local
    from karmactl.store.fsio import check_runtime_dir

    check_runtime_dir(c.state)
    return local.local_down(c.state, purge)


def register(app: typer.Typer) -> None:
    """Add ``local-up`` and ``local-down`` to the app."""
    kube_apiserver_option = typer.Option(None, "--kube-apiserver", envvar="KARMACTL_KUBE_APISERVER", metavar="PATH",
                                         help=KUBE_APISERVER_HELP)

    @app.command("local-up", rich_help_panel="Local members")
    def local_up_command(ctx: typer.Context,
                         members: int = typer.Option(3, "--members", help="Number of members (member1..N)."),
                         port_base: Optional[int] = typer.Option(None, "--port-base", help="member<i> listens on PORT_BASE+i-1 (default: free ports)."),
                         kube_apiserver: Optional[str] = kube_apiserver_option,
                         kube_cluster: Optional[str] = typer.Option(None, "--kube-cluster", envvar="KARMACTL_KUBE_CLUSTER",
                                                                    metavar="LAUNCHER", help=KUBE_CLUSTER_HELP),
                         nodes: Optional[int] = typer.Option(None, "--nodes", help="Nodes per member (default 3; 2 with --kube-cluster)."),
                         node_cpu: Optional[int] = typer.Option(None, "--node-cpu", help="With --kube-cluster: whole cores per node."),
                         node_memory: Optional[str] = typer.Option(None, "--node-memory", help="With --kube-cluster: memory per node (e.g. 32Gi)."),
                         node_labels: Optional[str] = typer.Option(None, "--node-labels", metavar="K=V,...", help="With --kube-cluster: labels of every node."),
                         zones: Optional[str] = typer.Option(None, "--zones", metavar="Z1,Z2,...", help="With --kube-cluster: one zone per member (node label topology.kubernetes.io/zone).")):
        """Start local member clusters (emulated, real kube-apiservers, or whole real clusters) in the background and join them."""
        from karmactl.cli.context import CLIError

        c = ctx.obj
        if not kube_cluster and (node_cpu or node_memory or node_labels or zones):
            raise CLIError("--node-cpu, --node-memory, --node-labels and --zones need --kube-cluster")
        if nodes is not None and nodes < (1 if kube_cluster else 0):
            raise CLIError(f"--nodes must be at least 1, not {nodes}")
        shape = node_shape(node_cpu, node_memory, node_labels) if kube_cluster else None
        zone_list = [z.strip() for z in zones.split(",")] if zones else None
        if kube_cluster and nodes is None:
            nodes = 2
        for m in local_up(c, members, port_base, nodes, kube_apiserver=kube_apiserver, kube_cluster=kube_cluster,
                          shape=shape, zones=zone_list):
            out(f"{m['name']}\t{m['url']}\t{m['kubeconfig']}")

    @app.command("local-down", rich_help_panel="Local members")
    def local_down_command(ctx: typer.Context,
                           purge: bool = typer.Option(False, "--purge", help="Also delete the members' data.")):
        """Stop the member clusters started by local-up."""
        stopped = local_down(ctx.obj, purge)
        for name in stopped:
            out(f"{name} stopped")
        if not stopped:
            err("no local member was running")
