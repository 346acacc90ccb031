"""``karmactl wait``: wait for a condition on objects of the state directory (kubectl ``pkg/cmd/wait``):
``--for=condition=TYPE[=STATUS]``, ``--for=delete``, ``--for=jsonpath={.path}[=VALUE]``.

Objects are seen as ``get`` shows them (templates with their computed status, bindings, Works, Clusters).
By default online passes run between checks (the state lock held per pass, as ``rollout status``), since
the state changes only through runs; ``--reconcile=false`` only re-reads the files (another karmactl, such
as ``reconcile --watch``, runs the passes). Messages as kubectl's: ``<kind>/<name> condition met``, and on
timeout ``timed out waiting for the condition on <resource>/<name>`` (exit 4).
"""
from __future__ import annotations

import time
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, out


PASS_INTERVAL = 0.25  # seconds between checks (each online check runs a pass)


def parse_for(spec: str):
    """``--for`` -> a predicate ``f(obj or None) -> bool`` (None: the object does not exist).

    Raises:
        CLIError: kubectl's ``unrecognized condition`` for anything else (exit 2); a malformed JSONPath.
    """
    from karmactl.api.jsonpath import JSONPathError, compile_expr, find, scalar

    if spec == "delete":
        return lambda obj: obj is None
    low = spec.lower()
    if low.startswith("condition="):
        ctype, _sep, want = spec[len("condition="):].partition("=")
        want = want or "True"
        if not ctype:
            raise CLIError(f'unrecognized condition: "{spec}"')

        def condition(obj):
            conds = ((obj or {}).get("status") or {}).get("conditions") or []
            return any(str(c.get("type", "")).lower() == ctype.lower() and str(c.get("status", "")).lower() == want.lower()
                       for c in conds if isinstance(c, dict))
        return condition
    if low.startswith("jsonpath="):
        rest = spec[len("jsonpath="):]
        if rest.startswith("{"):
            end = rest.find("}")
            if end < 0:
                raise CLIError(f'unrecognized condition: "{spec}": the JSONPath expression is not closed')
            expr, value = rest[1:end], rest[end + 2:]
            has_value = rest[end + 1:end + 2] == "="
        else:
            expr, sep, value = rest.partition("=")
            has_value = bool(sep)
        try:
            compile_expr(expr.lstrip("$").lstrip("@") or ".")
        except JSONPathError as exc:
            raise CLIError(str(exc)) from None

        def jsonpath(obj):
            if obj is None:
                return False
            found = find(expr, obj)
            if not has_value:
                return bool(found)
            return len(found) == 1 and scalar(found[0]) == value
        return jsonpath
    raise CLIError(f'unrecognized condition: "{spec}"')


def _targets(c: Context, snap, args: list[str], namespace: str, all_objects: bool, selector: Optional[str],
             all_namespaces: bool) -> list[tuple]:
    """``[(KindInfo, namespace, name)]`` the arguments name (listing the snapshot for ``--all``/``-l``)."""
    from karmactl.api.selectors import label_selector_matches
    from karmactl.cli.objects import objects_of, parse_get_args
    from karmactl.cli.selectors import parse_label_selector

    sel = parse_label_selector(selector) if selector else None
    found = []
    for info, names in parse_get_args(snap.registry, args):
        ns = namespace if info.namespaced else ""
        if names:
            if all_objects or sel is not None:
                raise CLIError("names cannot be provided when a selector or --all is specified")
            found += [(info, ns, n) for n in names]
            continue
        if not (all_objects or sel is not None):
            raise CLIError("resource(s) were provided, but no name, label selector, or --all flag specified")
        for obj in objects_of(snap, info):
            md = obj.get("metadata") or {}
            if (all_namespaces or (md.get("namespace") or "") == ns) and \
                    (sel is None or label_selector_matches(sel, md.get("labels") or {})):
                found.append((info, md.get("namespace") or "", md["name"]))
    if not found:
        raise CLIError("no matching resources found", ExitCode.NOT_FOUND)
    return found


def wait_cmd(c: Context, args: list[str], namespace: str, for_: str, timeout: float, reconcile: bool,
             all_objects: bool, selector: Optional[str], all_namespaces: bool) -> None:
    """Wait until ``--for`` holds for every named object (module docstring).

    Raises:
        CLIError: bad ``--for`` (exit 2); an object not found for a condition (exit 1, kubectl's
            ``Error from server (NotFound)``); the timeout (exit 4).
    """
    from karmactl.cli.converging import online_pass
    from karmactl.cli.objects import find
    from karmactl.cli.printers import kind_prefix
    from karmactl.cli.stores import load_snapshot, member_layer

    holds = parse_for(for_)
    snap = load_snapshot(c)
    pending = _targets(c, snap, args, namespace, all_objects, selector, all_namespaces)
    members = member_layer(c) if reconcile else None
    deadline = time.monotonic() + timeout
    said: set = set()
    first = True
    while True:
        still = []
        for info, ns, name in pending:
            obj = find(snap, info, name, ns)
            if obj is None and for_ != "delete" and first:
                raise CLIError(f'Error from server (NotFound): {info.resource_ref} "{name}" not found', ExitCode.NOT_FOUND)
            if holds(obj):
                out(f"{kind_prefix(info)}/{name} condition met")
            else:
                still.append((info, ns, name))
        pending, first = still, False
        if not pending:
            return
        if time.monotonic() >= deadline:
            info, _ns, name = pending[0]
            raise CLIError(f"timed out waiting for the condition on {info.plural}/{name}", ExitCode.NOT_CONVERGED)
        time.sleep(PASS_INTERVAL)
        if members is not None:
            report = online_pass(c, members, said)
            snap = report.after if report.after is not None else load_snapshot(c)
        else:
            snap = load_snapshot(c)


def register(app: typer.Typer) -> None:
    """Add ``wait`` to the app."""
    from karmactl.cli.flags import parse_duration

    @app.command(no_args_is_help=True)
    def wait(ctx: typer.Context,
             args: List[str] = typer.Argument(..., metavar="(TYPE NAME | TYPE/NAME | TYPE -l SELECTOR | TYPE --all)"),
             for_: str = typer.Option(..., "--for", help="condition=TYPE[=STATUS], delete, or jsonpath={.path}[=VALUE]."),
             namespace: str = typer.Option("default", "-n", "--namespace"),
             all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="With --all or -l: every namespace."),
             all_objects: bool = typer.Option(False, "--all", help="Every object of the type (in the namespace)."),
             selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Objects matching a label selector."),
             timeout: str = typer.Option("30s", "--timeout", help="Give up after this long (kubectl's default 30s)."),
             reconcile: str = typer.Option("true", "--reconcile", metavar="true|false",
                                           help="Run online passes between checks (false: only re-read the files).")):
        """Wait for a condition on objects of the state directory (kubectl wait)."""
        if reconcile not in ("true", "false"):
            raise CLIError(f'invalid argument "{reconcile}" for "--reconcile" flag: expected true or false')
        wait_cmd(ctx.obj, args, namespace, for_, parse_duration(timeout, "--timeout"), reconcile == "true", all_objects, selector,
                 all_namespaces)
