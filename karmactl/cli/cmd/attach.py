"""``karmactl attach``: attach to a running container in a member cluster (karmadactl
``pkg/karmadactl/attach``), through the real ``kubectl attach`` with the member's kubeconfig
(:mod:`karmactl.cli.passthrough`); members chosen as for ``exec`` (``-C``, or ``-s members --cluster``,
or the clusters a ``TYPE/NAME`` template was placed on; ``-i``/``-t`` need one member).
"""
from __future__ import annotations

from typing import List, Optional

import typer

from karmactl.cli.context import Context


def attach_cmd(c: Context, target: str, clusters: list[str], namespace: str, scope: Optional[str],
               container: Optional[str], stdin: bool, tty: bool, quiet: bool, pod_running_timeout: Optional[str]) -> None:
    """Attach to ``target`` (``POD`` or ``TYPE/NAME``) on the chosen members.

    Raises:
        CLIError: a scope other than members, ``-i``/``-t`` with several members, the member
            resolution errors of :func:`karmactl.cli.passthrough.resolve_members` (exit 2).
        SystemExit: kubectl's exit code (one member), 3 when it failed on any of several.
    """
    from karmactl.cli import passthrough as pt

    pt.check_scope(scope)
    flags = pt.session_flags(namespace, container, stdin, tty, quiet, pod_running_timeout)
    pt.run_session(c, target, clusters, namespace, "attach", ["attach", target, *flags], stdin or tty)


def register(app: typer.Typer) -> None:
    """Add ``attach`` to the app."""
    from karmactl.cli.passthrough import session_options

    opts = session_options()

    @app.command(no_args_is_help=True)
    def attach(ctx: typer.Context,
               target: str = typer.Argument(..., metavar="(POD | TYPE/NAME)"),
               clusters: List[str] = opts["clusters"],
               scope: Optional[str] = opts["scope"],
               namespace: str = opts["namespace"],
               container: Optional[str] = opts["container"],
               stdin: bool = opts["stdin"],
               tty: bool = opts["tty"],
               quiet: bool = opts["quiet"],
               pod_running_timeout: Optional[str] = opts["pod_running_timeout"]):
        """Attach to a running container in a member cluster (karmadactl attach), through kubectl."""
        attach_cmd(ctx.obj, target, clusters, namespace, scope, container, stdin, tty, quiet, pod_running_timeout)
