"""``karmactl describe``: kubectl's describe text of objects of the state directory, with their Events
and the extra sections of :mod:`karmactl.cli.describers`.

Runs without typer on the light path (see :mod:`karmactl.cli.cmd.get`).
"""
import sys
from typing import Optional

from karmactl.cli.context import CLIError, Context
from karmactl.cli.objects import find, not_found, objects_of, resolve_kind
from karmactl.cli.printers import describe_text
from karmactl.cli.stores import event_rows, load_for_reading


def describe_from_args(c: Context, kind: str, name: str | None, namespace: str, all_namespaces: bool,
                       operation_scope: str = "karmada", cluster: Optional[str] = None) -> None:
    """``karmactl describe TYPE [NAME]`` or ``describe TYPE/NAME`` from its parsed arguments: :func:`describe_cmd`,
    or with ``-s members --cluster C`` (karmadactl) :func:`describe_member`.

    Raises:
        CLIError: ``TYPE/NAME`` given with a separate NAME; karmadactl's scope errors (exit 2).
    """
    if "/" in kind:
        if name is not None:
            raise CLIError("there is no need to specify a resource type as a separate argument when passing "
                           "arguments in resource/name form")
        kind, name = kind.split("/", 1)
    if operation_scope not in ("karmada", "members"):
        raise CLIError(f'operation scope "{operation_scope}" is not supported; the optional values are karmada and members')
    if operation_scope == "members":
        if not cluster:
            raise CLIError("must specify a member cluster")
        describe_member(c, kind, name, namespace, all_namespaces, cluster)
        return
    describe_cmd(c, kind, name, namespace, all_namespaces)


def describe_member(c: Context, kind: str, name: str | None, namespace: str, all_namespaces: bool, cluster: str) -> None:
    """karmadactl's ``describe -s members --cluster C``: kubectl's describe text of the objects as member
    ``cluster`` holds them (read through the member layer's client, :mod:`karmactl.cli.members_view`).

    Raises:
        CLIError: an unregistered cluster (exit 2), the member unreachable (exit 3), the object not found
            there (exit 1).
    """
    from karmactl.api.templates import merged_view
    from karmactl.cli.context import ExitCode
    from karmactl.cli.members_view import _read_member

    snap = load_for_reading(c, lambda _r: [("cluster.karmada.io", "Cluster")])
    info = resolve_kind(snap, kind)
    key = ("cluster.karmada.io", "Cluster", "", cluster)
    if key not in snap.user:
        raise CLIError(f"clusters don't exist: {cluster}")
    objs, error = _read_member(merged_view(snap.user[key], snap.overlays.get(key)), c.state, info, name, namespace,
                               all_namespaces, None)
    if error:
        raise CLIError(error, ExitCode.MEMBER_FAILURE)
    if name and not objs:
        raise not_found(info, name)
    texts = [describe_text(o) for o in objs]
    sys.stdout.write("\n\n".join(t.rstrip("\n") for t in texts) + ("\n" if texts else ""))


def describe_cmd(c: Context, kind: str, name: str | None, namespace: str, all_namespaces: bool) -> None:
    """``karmactl describe``: kubectl's describe text of the objects of a kind (one by name), with their
    Events and the extra sections of :mod:`karmactl.cli.describers`.

    Raises:
        CLIError: bad input (exit 2), the object not found (exit 1).
    """
    from karmactl.gcpause import cyclic_gc_paused

    with cyclic_gc_paused():
        _describe(c, kind, name, namespace, all_namespaces)


def _describe(c: Context, kind: str, name: str | None, namespace: str, all_namespaces: bool) -> None:
    from karmactl.cli.describers import describe_extra, describe_view
    from karmactl.cli.printers import event_lines
    from karmactl.store.events import events_regarding

    def kinds_of(registry):
        info = resolve_kind(registry, kind)
        return [(info.group, info.kind, namespace if info.namespaced else "", name)] if name \
            else [(info.group, info.kind)]

    snap = load_for_reading(c, kinds_of)
    info = resolve_kind(snap, kind)
    is_event = (info.group, info.kind) == ("events.k8s.io", "Event")
    if is_event:
        objs = event_rows(c, name, namespace, all_namespaces)
    elif name:
        obj = find(snap, info, name, namespace)
        objs = [obj] if obj is not None else []
    else:
        objs = [o for o in objects_of(snap, info)
                if all_namespaces or not info.namespaced or o["metadata"].get("namespace") == namespace]
    if name and not objs:
        raise not_found(info, name)

    def key(o: dict) -> tuple:
        return (info.group, info.kind, o["metadata"].get("namespace") or "", o["metadata"]["name"])

    events = {} if is_event else events_regarding(c.state, {key(o) for o in objs})
    texts = [describe_text(describe_view(info, o), events=event_lines(events.get(key(o), []), c.now),
                           extra="" if is_event else describe_extra(snap, info, o, c.now)) for o in objs]
    sys.stdout.write("\n\n".join(t.rstrip("\n") for t in texts) + ("\n" if texts else ""))


def register(app) -> None:
    """Add ``describe`` to the typer ``app``."""
    import typer

    @app.command()
    def describe(ctx: typer.Context, kind: str = typer.Argument(..., metavar="TYPE | TYPE/NAME"),
                 name: Optional[str] = typer.Argument(None),
                 namespace: str = typer.Option("default", "-n", "--namespace"),
                 all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces"),
                 operation_scope: str = typer.Option("karmada", "-s", "--operation-scope",
                                                     help="karmada (the state directory) or members (with --cluster)."),
                 cluster: Optional[str] = typer.Option(None, "-C", "--cluster",
                                                       help="The member cluster of --operation-scope members.")):
        """Show an object in detail."""
        describe_from_args(ctx.obj, kind=kind, name=name, namespace=namespace, all_namespaces=all_namespaces,
                           operation_scope=operation_scope, cluster=cluster)
