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

    @app.command(no_args_is_help=True)
    def attach(ctx: typer.Context,
               target: str = typer.Argument(..., metavar="(POD | TYPE/NAME)"),
               clusters: List[str] = typer.Option([], "-C", "--cluster",
                                                  help="Member cluster(s); default: where the template's binding "
                                                       "placed it."),
               scope: Optional[str] = typer.Option(None, "-s", "--operation-scope",
                                                   help="karmadactl's scope: members (the only one with Pods)."),
               namespace: str = typer.Option("default", "-n", "--namespace"),
               container: Optional[str] = typer.Option(None, "-c", "--container", help="Container name."),
               stdin: bool = typer.Option(False, "-i", "--stdin", help="Pass stdin to the container."),
               tty: bool = typer.Option(False, "-t", "--tty", help="Stdin is a TTY."),
               quiet: bool = typer.Option(False, "-q", "--quiet", help="Only print output from the remote session."),
               pod_running_timeout: Optional[str] = typer.Option(None, "--pod-running-timeout",
                                                                 help="Wait this long for a Pod to run.")):
        """Attach to a running container in a member cluster (karmadactl attach), through kubectl."""
        attach_cmd(ctx.obj, target, clusters, namespace, scope, container, stdin, tty, quiet, pod_running_timeout)
