"""``karmactl logs``: the logs of a container in a member cluster (karmadactl ``pkg/karmadactl/logs``),
through the real ``kubectl logs`` with the member's kubeconfig (:mod:`karmactl.cli.passthrough`).

``-C/--cluster`` names the members; without it, a template named ``TYPE/NAME`` (``deploy/web``) is read
on every cluster its ResourceBinding was scheduled to, each line prefixed ``[<cluster>] ``.
"""
from __future__ import annotations

from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context

USAGE = "logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER] (-C CLUSTER)"


def kubectl_flags(container: Optional[str], follow: bool, previous: bool, selector: Optional[str],
                  tail: Optional[int], since: Optional[str], since_time: Optional[str], timestamps: bool,
                  all_containers: bool, prefix: bool, limit_bytes: Optional[int], max_log_requests: Optional[int],
                  ignore_errors: bool, pod_running_timeout: Optional[str]) -> list[str]:
    """kubectl logs' own flags, as given, for the kubectl command line."""
    flags = [f"--container={container}"] if container else []
    for on, flag in ((follow, "--follow"), (previous, "--previous"), (timestamps, "--timestamps"),
                     (all_containers, "--all-containers"), (prefix, "--prefix"), (ignore_errors, "--ignore-errors")):
        if on:
            flags.append(flag)
    for value, flag in ((selector, "--selector"), (tail, "--tail"), (since, "--since"), (since_time, "--since-time"),
                        (limit_bytes, "--limit-bytes"), (max_log_requests, "--max-log-requests"),
                        (pod_running_timeout, "--pod-running-timeout")):
        if value is not None:
            flags.append(f"{flag}={value}")
    return flags


def logs_cmd(c: Context, args: list[str], clusters: list[str], namespace: str, selector: Optional[str],
             flags: list[str]) -> None:
    """Print the logs of a Pod (``POD``, ``pod/NAME``), of a workload's first Pod (``TYPE/NAME``) or of
    the Pods a selector (``-l``) matches, on the chosen members (module docstring).

    Raises:
        CLIError: kubectl logs' usage errors; ``must specify a cluster`` (a Pod or a selector without
            ``-C``); unknown clusters, templates or bindings (:mod:`karmactl.cli.passthrough`); exit 2.
        SystemExit: kubectl's exit code (one member), 3 when it failed on any of several.
    """
    from karmactl.cli import passthrough as pt

    if not args and not selector:
        raise CLIError(f"expected '{USAGE}'.\nPOD or TYPE/NAME is a required argument for the logs command")
    if args and selector:
        raise CLIError("only a selector (-l) or a POD name is allowed")
    if len(args) > 2:
        raise CLIError(f"expected '{USAGE}'.\nPOD or TYPE/NAME is a required argument for the logs command")
    target = args[0] if args else None
    snap, names = pt.resolve_members(c, target, clusters, namespace, "logs")
    argv = ["logs", *args, f"--namespace={namespace}", *flags]
    code = pt.run_kubectl(pt.targets_for(c, snap, names), argv)
    if code:
        raise SystemExit(code)


def register(app: typer.Typer) -> None:
    """Add ``logs`` to the app."""

    @app.command(no_args_is_help=True)
    def logs(ctx: typer.Context,
             args: Optional[List[str]] = typer.Argument(None, metavar="(POD | TYPE/NAME) [CONTAINER]"),
             clusters: List[str] = typer.Option([], "-C", "--cluster", "--clusters",
                                                help="Member cluster(s) (comma-separated); default: where the "
                                                     "template's binding placed it."),
             namespace: str = typer.Option("default", "-n", "--namespace"),
             container: Optional[str] = typer.Option(None, "-c", "--container", help="Print the logs of this container."),
             follow: bool = typer.Option(False, "-f", "--follow", help="Stream the logs."),
             previous: bool = typer.Option(False, "-p", "--previous",
                                           help="The logs of the previous instance of the container."),
             selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Pods matching a label selector."),
             tail: Optional[int] = typer.Option(None, "--tail", help="Lines of recent log to show."),
             since: Optional[str] = typer.Option(None, "--since", help="Only logs newer than a duration (5s, 2m, 3h)."),
             since_time: Optional[str] = typer.Option(None, "--since-time", help="Only logs after a date (RFC 3339)."),
             timestamps: bool = typer.Option(False, "--timestamps", help="Include timestamps on each line."),
             all_containers: bool = typer.Option(False, "--all-containers", help="Every container of the Pod(s)."),
             prefix: bool = typer.Option(False, "--prefix", help="Prefix each line with the Pod and container."),
             limit_bytes: Optional[int] = typer.Option(None, "--limit-bytes", help="Bytes of logs to return at most."),
             max_log_requests: Optional[int] = typer.Option(None, "--max-log-requests",
                                                            help="Concurrent logs to follow with a selector."),
             ignore_errors: bool = typer.Option(False, "--ignore-errors", help="With -f, tolerate errors."),
             pod_running_timeout: Optional[str] = typer.Option(None, "--pod-running-timeout",
                                                               help="Wait this long for a Pod to run.")):
        """Print the logs of a container in a member cluster (karmadactl logs), through kubectl."""
        flags = kubectl_flags(container, follow, previous, selector, tail, since, since_time, timestamps,
                              all_containers, prefix, limit_bytes, max_log_requests, ignore_errors, pod_running_timeout)
        logs_cmd(ctx.obj, list(args or []), clusters, namespace, selector, flags)
