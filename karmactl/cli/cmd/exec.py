"""``karmactl exec``: run a command in a container of a member cluster (karmadactl
``pkg/karmadactl/exec``), through the real ``kubectl exec`` with the member's kubeconfig
(:mod:`karmactl.cli.passthrough`).

karmadactl takes ``--operation-scope members --cluster NAME``; karmactl also takes ``-C/--cluster``
alone (its control plane runs no Pods, so ``members`` is the only scope), and for a template named
``TYPE/NAME`` without ``-C`` the clusters its binding placed it on: the command runs on each (its
lines prefixed ``[<cluster>] ``); ``-i``/``-t`` need exactly one member.
"""
from __future__ import annotations

from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context


def exec_cmd(c: Context, target: str, command: list[str], clusters: list[str], namespace: str, scope: Optional[str],
             container: Optional[str], stdin: bool, tty: bool, quiet: bool, pod_running_timeout: Optional[str]) -> None:
    """Run ``command`` in ``target`` (``POD`` or ``TYPE/NAME``) on the chosen members (module docstring).

    Raises:
        CLIError: no command, a scope other than members, ``-i``/``-t`` with several members, and the
            member resolution errors of :func:`karmactl.cli.passthrough.resolve_members` (exit 2).
        SystemExit: kubectl's exit code (one member), 3 when it failed on any of several.
    """
    from karmactl.cli import passthrough as pt

    pt.check_scope(scope)
    if not command:
        raise CLIError("you must specify at least one command for the container (after --)")
    flags = pt.session_flags(namespace, container, stdin, tty, quiet, pod_running_timeout)
    pt.run_session(c, target, clusters, namespace, "exec", ["exec", target, *flags, "--", *command], stdin or tty)


def register(app: typer.Typer) -> None:
    """Add ``exec`` to the app."""
    from karmactl.cli.passthrough import session_options

    opts = session_options()

    @app.command("exec", no_args_is_help=True)
    def exec_(ctx: typer.Context,
              target: str = typer.Argument(..., metavar="(POD | TYPE/NAME)"),
              command: Optional[List[str]] = typer.Argument(None, metavar="-- COMMAND [args...]"),
              clusters: List[str] = opts["clusters"],
              scope: Optional[str] = opts["scope"],
              namespace: str = opts["namespace"],
              container: Optional[str] = opts["container"],
              stdin: bool = opts["stdin"],
              tty: bool = opts["tty"],
              quiet: bool = opts["quiet"],
              pod_running_timeout: Optional[str] = opts["pod_running_timeout"]):
        """Execute a command in a container in a member cluster (karmadactl exec), through kubectl."""
        exec_cmd(ctx.obj, target, list(command or []), clusters, namespace, scope, container, stdin, tty, quiet,
                 pod_running_timeout)
