"""Listing objects as ``kubectl get`` prints them (the ``get`` command, and ``demo``'s tour):
collect the rows of the state directory (status merged) and, with ``--operation-scope``, of the
members; print them with :mod:`karmactl.cli.printers`; ``--watch`` re-prints rows as files change.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from karmactl.api.selectors import label_selector_matches
from karmactl.cli.context import CLIError, Context, ExitCode, err
from karmactl.cli.objects import find, multiple_types, not_found, objects_of, parse_get_args
from karmactl.cli.printers import render
from karmactl.cli.selectors import parse_field_selector, parse_label_selector
from karmactl.cli.stores import event_rows, load_for_reading, load_snapshot
from karmactl.store.state import InputError


def _kinds_of_get(args: list[str], namespace: str):
    """``kinds_of`` for :func:`load_for_reading`: the kinds ``get``'s arguments name, or the objects
    when names are given (looked up in ``namespace``, as :func:`karmactl.cli.objects.find` does)."""
    def kinds_of(registry):
        out = []
        for info, names in parse_get_args(registry, args):
            ns = namespace if info.namespaced else ""
            out += [(info.group, info.kind, ns, n) for n in names] if names else [(info.group, info.kind)]
        return out
    return kinds_of


_OBJECT_FIELDS = ("metadata.name", "metadata.namespace")


_EVENT_FIELDS = _OBJECT_FIELDS + tuple(f"{p}.{f}" for p in ("regarding", "involvedObject")
                                       for f in ("apiVersion", "kind", "namespace", "name", "uid")) + (
    "reason", "type", "reportingController")


def field_selector_matches(reqs: list, obj: dict) -> bool:
    for path, equal, value in reqs:
        cur = obj
        for part in path.split("."):
            cur = cur.get(part) if isinstance(cur, dict) else None
        if ((cur or "") == value) != equal:
            return False
    return True


@dataclass
class GetOptions:
    """``get``'s flags (kubectl names): see :func:`get_cmd`."""

    namespace: str = "default"
    all_namespaces: bool = False
    output: str | None = None
    selector: str | None = None
    field_selector: str | None = None
    scope: str = "karmada"
    clusters: str | None = None
    ignore_not_found: bool = False
    show_labels: bool = False
    label_columns: list = field(default_factory=list)
    sort_by: str | None = None
    no_headers: bool = False
    watch: bool = False
    watch_only: bool = False


def _karmada_rows(c: Context, snap, info, names: list[str], o: GetOptions, sel, fields) -> tuple[list, list]:
    """The state directory's objects of one kind -> ``(rows, missing names)``."""
    is_event = (info.group, info.kind) == ("events.k8s.io", "Event")
    found, missing = [], []
    if is_event:
        found = event_rows(c, None, o.namespace, o.all_namespaces)
        if names:
            missing = [n for n in names if not any(e["metadata"]["name"] == n for e in found)]
            found = [e for e in found if e["metadata"]["name"] in names]
    elif names:
        for n in names:
            obj = find(snap, info, n, o.namespace)
            found.append(obj) if obj is not None else missing.append(n)
    else:
        found = [obj for obj in objects_of(snap, info)
                 if not info.namespaced or o.all_namespaces or obj["metadata"].get("namespace") == o.namespace]
    rows = [obj for obj in found
            if (sel is None or names or label_selector_matches(sel, obj["metadata"].get("labels")))
            and (not fields or field_selector_matches(fields, obj))]
    return rows, missing


def _sort_rows(rows: list, sort_by: str) -> list:
    """kubectl's ``--sort-by``: by a JSONPath field; numbers numerically, missing values first.

    Raises:
        CLIError: a malformed expression.
    """
    from karmactl.api import jsonpath

    expr = sort_by.strip()
    if expr.startswith("{") and expr.endswith("}"):
        expr = expr[1:-1]
    try:
        jsonpath.compile_expr(expr)
    except ValueError as exc:
        raise CLIError(f"couldn't parse --sort-by: {exc}") from None

    def key(row):
        vals = jsonpath.find(expr, row[1])
        if not vals or vals[0] is None:
            return (0, 0, "")
        v = vals[0]
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return (1, v, "")
        return (2, 0, jsonpath.scalar(v))
    return sorted(rows, key=key)


def _kind_rows(c: Context, snap, info, names: list[str], o: GetOptions, sel) -> tuple[list, list[str], list[str]]:
    """The rows of one kind of ``get``'s arguments -> ``([(KindInfo, obj, "Karmada" | cluster)], member
    errors, not-found messages)``, from the state directory and/or the members as ``--operation-scope`` says.

    Raises:
        CLIError: Events asked of the members, a bad field selector (exit 2).
    """
    is_event = (info.group, info.kind) == ("events.k8s.io", "Event")
    if is_event and o.scope != "karmada":
        raise CLIError("Events are recorded by karmactl runs only: use --operation-scope karmada")
    fields = parse_field_selector(o.field_selector, _EVENT_FIELDS if is_event else _OBJECT_FIELDS) \
        if o.field_selector else []
    kind_rows: list[tuple] = []
    member_errors: list[str] = []
    missing: list[str] = []
    if o.scope in ("karmada", "all"):
        found, lost = _karmada_rows(c, snap, info, names, o, sel, fields)
        kind_rows += [(info, obj, "Karmada") for obj in found]
        if o.scope == "karmada":
            missing += [not_found(info, n).args[0] for n in lost]
    if o.scope in ("members", "all"):
        from karmactl.cli.members_view import member_rows
        for name in names or [None]:
            mrows, errs = member_rows(c, snap, info, name, o.namespace, o.all_namespaces, o.selector, o.clusters)
            kind_rows += mrows
            member_errors += errs
            if name and not mrows and o.scope == "members":
                missing.append(not_found(info, name).args[0])
    return kind_rows, member_errors, missing


def _with_cluster_columns(rows: list, o: GetOptions) -> list:
    """``[(KindInfo, obj)]`` of ``[(KindInfo, obj, cluster)]``: in a table of members' objects each object
    carries its CLUSTER and ADOPTION (karmadactl's columns; ``Y``: a copy Karmada manages)."""
    if o.scope != "karmada" and o.output in (None, "", "wide"):
        return [(i, dict(obj, __cluster__=cl, __adoption__=("-" if cl == "Karmada" else
                ("Y" if (obj["metadata"].get("labels") or {}).get("karmada.io/managed") == "true" else "N"))))
                for i, obj, cl in rows]
    return [(i, obj) for i, obj, _cl in rows]


def collect_get(c: Context, args: list[str], o: GetOptions) -> tuple[list, list[str], list[str], bool, object]:
    """What ``get`` shows: ``(rows [(KindInfo, obj)], member errors, not-found messages, single, snapshot)``.

    Raises:
        CLIError: bad arguments or flags (exit 2).
    """
    if o.scope not in ("karmada", "members", "all"):
        raise CLIError(f'invalid --operation-scope "{o.scope}": must be karmada, members or all')
    if o.clusters and o.scope == "karmada":
        raise CLIError("--clusters is only allowed with --operation-scope members or all")
    snap = load_for_reading(c, _kinds_of_get(args, o.namespace)) if o.scope == "karmada" else load_snapshot(c)
    requests = parse_get_args(snap.registry, args)
    sel = parse_label_selector(o.selector) if o.selector else None
    rows: list[tuple] = []
    member_errors: list[str] = []
    missing: list[str] = []
    for info, names in requests:
        kind_rows, errs, lost = _kind_rows(c, snap, info, names, o, sel)
        rows += kind_rows
        member_errors += errs
        missing += lost
    rows = _with_cluster_columns(rows, o)
    if o.sort_by:
        rows = _sort_rows(rows, o.sort_by)
    single = len(requests) == 1 and len(requests[0][1]) == 1 and len(rows) == 1 and not multiple_types(args)
    return rows, member_errors, missing, single, snap


def get_cmd(c: Context, args: list[str], o: GetOptions) -> None:
    """``karmactl get``: kubectl's printers over the state directory (status merged) and, with
    ``--operation-scope``, the members (karmadactl's ``get``); ``--watch`` re-prints rows as the state
    directory changes until interrupted.

    Raises:
        CLIError: bad input (exit 2), objects not found (exit 1), unreadable members (exit 3).
    """
    if o.watch or o.watch_only:  # runs until interrupted: the collector stays on
        return _get(c, args, o)
    from karmactl.gcpause import cyclic_gc_paused

    with cyclic_gc_paused():
        return _get(c, args, o)


def _get(c: Context, args: list[str], o: GetOptions) -> None:
    if o.output:
        # a malformed template or unknown format fails before anything is read (exit 2)
        try:
            render([], o.output, c.now, single=False)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
    mark = _fingerprint(c.state) if o.watch or o.watch_only else ()  # before reading: no change slips through
    rows, member_errors, missing, single, snap = collect_get(c, args, o)
    for e in member_errors:
        err(e)
    extra = None
    if o.scope != "karmada" and o.output in (None, "", "wide"):
        extra = [(1, "CLUSTER", lambda obj: obj.get("__cluster__", "Karmada")),
                 (None, "ADOPTION", lambda obj: obj.get("__adoption__", "-"))]
    kw = dict(namespaces=o.all_namespaces, extra=extra, no_headers=o.no_headers, label_columns=o.label_columns,
              show_labels=o.show_labels, with_kind=multiple_types(args))
    _print_rows(c, args, o, snap, rows, missing, member_errors, single, kw)
    if o.watch or o.watch_only:
        _watch(c, args, o, rows, kw, mark)
        return
    for m in missing:
        if not o.ignore_not_found:
            err(m)
    if member_errors:
        raise CLIError("some member clusters could not be read", ExitCode.MEMBER_FAILURE)
    if missing and not o.ignore_not_found:
        raise SystemExit(int(ExitCode.NOT_FOUND))


def _print_rows(c: Context, args: list[str], o: GetOptions, snap, rows: list, missing: list, member_errors: list,
                single: bool, kw: dict) -> None:
    """The first listing of ``get`` on stdout, or kubectl's ``No resources found`` on stderr.

    Raises:
        CLIError: the rows cannot be printed in the ``-o`` format (exit 2).
    """
    if o.scope == "members" and not snap.keys_of_kind("cluster.karmada.io", "Cluster"):
        pass  # member_rows said "No member Clusters found in Karmada control plane"; karmadactl stops there
    elif not rows and not missing and not member_errors and o.output in (None, "", "wide") and not o.watch_only:
        info = parse_get_args(snap.registry, args)[0][0]
        err(f"No resources found in {o.namespace} namespace." if info.namespaced and not o.all_namespaces
            and not multiple_types(args) else "No resources found")
    elif not o.watch_only:
        try:
            sys.stdout.write(render(rows, o.output, c.now, single=single, **kw))
        except ValueError as exc:
            raise CLIError(str(exc)) from None


WATCH_INTERVAL_SECONDS = 1.0


def _fingerprint(root: Path) -> tuple:
    """Paths, sizes and modification times of every file under the state directory (its runtime
    directory ``.karmactl/``, which reading itself writes, left out)."""
    if not root.is_dir():
        return ()
    return tuple(sorted((str(p), st.st_size, st.st_mtime_ns) for p in root.rglob("*")
                        if p.is_file() and p.relative_to(root).parts[0] != ".karmactl" and (st := p.stat())))


def _watch(c: Context, args: list[str], o: GetOptions, rows: list, kw: dict, mark: tuple) -> None:
    """Poll the state directory; print a row (no header) for each object that appears, changes or goes,
    as ``kubectl get --watch`` prints watch events. Returns on Ctrl-C."""
    import time

    def key(row):
        info, obj = row
        m = obj["metadata"]
        return (info.group, info.kind, obj.get("__cluster__", ""), m.get("namespace") or "", m["name"])

    def shown(row) -> str:
        return render([row], o.output, c.now, single=True, **dict(kw, no_headers=True)) \
            if o.output in (None, "", "wide") else render([row], o.output, c.now, single=True, **kw)

    last = {key(r): (r, shown(r)) for r in rows}
    sys.stdout.flush()
    try:
        while True:
            time.sleep(WATCH_INTERVAL_SECONDS)
            now_mark = _fingerprint(c.state)
            if now_mark == mark:
                continue
            mark = now_mark
            try:
                current, _errs, _missing, _single, _snap = collect_get(c, args, o)
            except InputError as exc:  # a half-written file: say so and keep watching
                err(f"error: {exc}")
                continue
            seen = {}
            for r in current:
                k, text = key(r), shown(r)
                seen[k] = (r, text)
                if k not in last or last[k][1] != text:
                    sys.stdout.write(text)
            for k, (_r, text) in last.items():
                if k not in seen:
                    sys.stdout.write(text)
            last = seen
            sys.stdout.flush()
    except KeyboardInterrupt:
        return
