"""``karmactl local-up`` and ``local-down``: start and stop local members (emulators, or real
kube-apiservers with ``--kube-apiserver PATH``) through :mod:`karmactl.emulator.local`, which
supervises the processes; starting and joining them is :mod:`karmactl.cli.membership`'s."""
from __future__ import annotations

from typing import Optional

import typer

from karmactl.cli.context import Context, err, out
from karmactl.cli.membership import KUBE_APISERVER_HELP, local_up


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
                         kube_apiserver: Optional[str] = kube_apiserver_option):
        """Start local member clusters (emulated, or real kube-apiservers) in the background and join them."""
        c = ctx.obj
        for m in local_up(c, members, port_base, kube_apiserver=kube_apiserver):
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
