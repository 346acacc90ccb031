"""Command implementations (kept apart from argument parsing so tests can call them directly)."""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from karmactl.api.selectors import label_selector_matches
from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.objects import find, not_found, objects_of, resolve_kind
from karmactl.cli.printers import describe_text, render
from karmactl.cli.selectors import parse_field_selector, parse_label_selector
from karmactl.store.fsio import state_lock
from karmactl.store.state import InputError, StateStore, key_of, parse_documents, check_object, Source


def store_of(c: Context) -> StateStore:
    return StateStore(c.state)


def load_snapshot(c: Context):
    from karmactl.reconcile import load
    return load(store_of(c))


def load_for_reading(c: Context, kinds_of):
    """The snapshot ``get`` and ``describe`` read: when every user file is as the last load left it,
    from the parse cache with the computed files of only the kinds or objects ``kinds_of(registry) ->
    iterable of (group, kind) or (group, kind, namespace, name)`` names (:meth:`StateStore.load_cached`: a 10,000-binding state directory
    holds some 40,000 computed files); otherwise the whole state directory, checked
    (:func:`load_snapshot`).

    Raises:
        InputError: the state directory does not load (exit 2).
        whatever ``kinds_of`` raises (CLIError for an unknown kind).
    """
    from karmactl.store.state import validation_tag

    snap = store_of(c).load_cached(validation_tag(), kinds_of)
    return snap if snap is not None else load_snapshot(c)


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


# ---------------------------------------------------------------------------- apply
URL_TIMEOUT = 30.0  # seconds for `apply -f URL`, as kubectl's default request timeout is unbounded


def _fetch(url: str) -> str:
    """The body of ``apply -f URL`` (kubectl reads manifests from http(s) URLs), at most
    ``yamlio.MAX_INPUT_BYTES``, as UTF-8 text.

    Raises:
        InputError: the server cannot be reached or answers with an error (status named).
    """
    import urllib.error
    import urllib.request

    from karmactl.store import yamlio

    try:
        with urllib.request.urlopen(url, timeout=URL_TIMEOUT) as resp:  # noqa: S310 - a user-given URL, as kubectl
            data = resp.read(yamlio.MAX_INPUT_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise InputError(f"unable to read URL, server reported {exc.code} {exc.reason}", url) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise InputError(f"unable to read URL: {getattr(exc, 'reason', exc)}", url) from None
    try:
        return yamlio.decode_input(data, url)
    except yamlio.YAMLSyntaxError as exc:
        raise InputError(str(exc), url, exc.line) from None


def read_inputs(paths: list[str], recursive: bool, errors: list | None = None) -> list[tuple[dict, str, int, int]]:
    """Objects from files, directories or stdin: ``[(obj, display, doc_index, line)]``.

    With an ``errors`` list, a file that cannot be read or parsed is recorded there and the
    others are still read (``apply`` reports every bad file of a directory); without one the
    first raises.

    Raises:
        InputError: unreadable or malformed inputs (without ``errors``).
    """
    from karmactl.store import yamlio

    found = []

    def parse(text: str, display: str) -> None:
        try:
            found.extend((o, display, i, ln) for o, i, ln in parse_documents(text, display))
        except InputError as exc:
            if errors is None:
                raise
            errors.append(exc)

    for p in paths:
        if p.startswith(("http://", "https://")):
            parse(_fetch(p), p)
            continue
        if p == "-":
            data = sys.stdin.buffer.read(yamlio.MAX_INPUT_BYTES + 1)
            try:
                text = yamlio.decode_input(data)
            except yamlio.YAMLSyntaxError as exc:
                raise InputError(str(exc), "<stdin>", exc.line) from None
            parse(text, "<stdin>")
            continue
        path = Path(p)
        if path.is_dir():
            files = sorted(f for f in (path.rglob("*") if recursive else path.glob("*"))
                           if f.is_file() and f.suffix in (".yaml", ".yml", ".json") and not f.name.startswith("."))
        elif os.path.lexists(path):
            files = [path]
        else:
            raise InputError("the path does not exist", p)
        for f in files:
            try:
                text = yamlio.read_input_file(f)
            except (OSError, yamlio.YAMLSyntaxError) as exc:
                if isinstance(exc, OSError):
                    parse_error = InputError(f"cannot read file: {exc.strerror or exc}", str(f))
                else:
                    parse_error = InputError(str(exc), str(f), exc.line)
                if errors is None:
                    raise parse_error from None
                errors.append(parse_error)
                continue
            parse(text, str(f))
    return found


COMPUTED_KINDS = {("work.karmada.io", "ResourceBinding"), ("work.karmada.io", "ClusterResourceBinding"),
                  ("work.karmada.io", "Work")}


def apply_cmd(c: Context, paths: list[str], recursive: bool, dry_run: bool) -> None:
    """Store the objects of ``paths`` in the state directory (``kubectl apply``).

    What a server or controller fills in (``status``, ``uid``, Karmada's claim labels...:
    ``karmactl.api.objects.strip_server_fields``) is dropped first, so the output of ``get -o
    yaml`` applies cleanly. Every object is checked before anything is written; every error of
    every file is reported (one :class:`InputError` carrying them all) and nothing is stored.

    Raises:
        InputError: exit 2, listing every bad file, object and field.
    """
    from karmactl.api.objects import strip_server_fields
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit

    store = store_of(c)
    with state_lock(store.root) if not dry_run else _nullcontext():
        index = edit.index_user_objects(store)
        errors: list[InputError] = []
        inputs = read_inputs(paths, recursive, errors)
        for obj, display, _i, line in inputs:  # CRDs among the inputs define kinds for the rest
            if obj.get("kind") == "CustomResourceDefinition":
                store.registry.add_crd(obj)
        staged = []
        seen = {}
        for obj, display, i, line in inputs:
            try:
                obj, removed = strip_server_fields(obj)
                info = check_object(obj, store.registry, display, line)
                key = key_of(obj)
                if key[:2] in COMPUTED_KINDS:
                    raise InputError(f"{info.kind}s are computed by `karmactl reconcile` and cannot be applied; to "
                                     f"record what a member reports about a workload, use `karmactl observe KIND/NAME "
                                     f"--cluster CLUSTER --health Healthy|Unhealthy [--status-file F]`", display, line,
                                     f"{info.kind} {key[3]}", "kind")
                if key in seen:
                    raise InputError(f"duplicate object: also in {seen[key]}", display, line, f"{info.kind} {key[3]}")
                seen[key] = f"{display}:{line}"
                normalize_object(obj, Source(display, i, line), store.registry, strict=True)  # validate; store as written
            except InputError as exc:
                errors.append(exc)
                continue
            if removed and c.verbose:
                err(f"note: {display}:{line}: not stored (filled in by karmactl or a server): {', '.join(removed)}")
            staged.append((info, key, obj))
        if errors:
            raise InputError.several(errors)
        for info, key, obj in staged:
            ref = f"{info.singular}{'.' + info.group if info.group else ''}/{key[3]}"
            if key in index:
                changed = edit.replace_object(store, index[key], obj) if not dry_run else True
                out(f"{ref} {'configured' if changed else 'unchanged'}{' (dry run)' if dry_run else ''}")
            else:
                if not dry_run:
                    edit.append_new(store, info, obj)
                    edit.stamp_creation(store, key, obj, c.now)
                out(f"{ref} created{' (dry run)' if dry_run else ''}")


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


# ---------------------------------------------------------------------------- delete
def delete_cmd(c: Context, resources: list[str], files: list[str], namespace: str, ignore_not_found: bool,
               selector: str | None = None, all_objects: bool = False, all_namespaces: bool = False,
               dry_run: bool = False) -> None:
    """``karmactl delete``: remove objects from their files (the next reconcile removes what they propagated).

    Objects by ``TYPE NAME...``, ``TYPE/NAME...``, ``-f FILE``, ``TYPE -l SELECTOR`` or ``TYPE --all``
    (``-A``: every namespace); ``--dry-run`` prints what would go and writes nothing (kubectl ``delete``).

    Raises:
        CLIError: bad arguments (exit 2); objects not found (exit 1) unless ``--ignore-not-found``.
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.cli.verbs import select_targets
    from karmactl.store import edit

    store = store_of(c)
    with state_lock(store.root) if not dry_run else _nullcontext():
        index = edit.index_user_objects(store)
        if files:
            if resources or selector or all_objects:
                raise CLIError("cannot mix -f with resource arguments, -l or --all")
            targets, missing = [], []
            for obj, display, _i, line in read_inputs(files, True):
                info = check_object(obj, store.registry, display, line)
                key = key_of(obj)
                (targets.append((info, key, index[key])) if key in index else missing.append((info, key[3])))
        elif resources:
            targets, missing = select_targets(store, index, resources, namespace, all_objects, selector,
                                              all_namespaces, "deleted")
        else:
            raise CLIError("you must provide one or more resources by argument or filename (TYPE NAME, TYPE/NAME, "
                           "TYPE -l SELECTOR, TYPE --all or -f FILE)")
        if not targets and not missing and not files:
            err(f"No resources found in {namespace} namespace." if not all_namespaces else "No resources found")
        # delete from the highest document index first so indexes of the rest stay valid
        for info, key, src in sorted(targets, key=lambda t: (t[2].path, -t[2].index)):
            if not dry_run:
                edit.remove_object(store, src)
                edit.remove_overlay(store, key)
        for info, key, _src in targets:
            out(f'{kind_prefix(info)} "{key[3]}" deleted{" (dry run)" if dry_run else ""}')
    # the objects found are deleted (the lock's batch is committed) even when others were not found
    if missing and not ignore_not_found:
        for info, name in missing:
            err(not_found(info, name).args[0])
        raise SystemExit(int(ExitCode.NOT_FOUND))


# ---------------------------------------------------------------------------- get / describe
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


def _event_rows(c: Context, name: str | None, namespace: str, all_namespaces: bool) -> list[dict]:
    """Stored Events (karmactl/store/events.py), oldest last seen first, as kubectl lists them."""
    from karmactl.controllers.events import last_seen
    from karmactl.store.events import load_events

    events = load_events(c.state, None if all_namespaces and not name else namespace)
    if name:
        events = [e for e in events if e["metadata"]["name"] == name]
    return sorted(events, key=lambda e: (last_seen(e), e["metadata"]["namespace"], e["metadata"]["name"]))


# kubectl's "all" category: the workload kinds and Services (k8s.io/kubernetes pkg/registry categories)
ALL_CATEGORY = ("pods", "services", "daemonsets", "deployments", "replicasets", "statefulsets",
                "horizontalpodautoscalers", "cronjobs", "jobs")


def parse_get_args(registry, args: list[str]) -> list[tuple]:
    """kubectl's resource arguments -> ``[(KindInfo, [names])]`` (no names: every object of the kind).

    Accepts ``TYPE [NAME...]``, ``TYPE1,TYPE2 [NAME...]``, ``all``, ``TYPE/NAME [TYPE/NAME...]`` and full
    names such as ``deployments.apps`` or ``deployment.v1.apps`` (kubectl's ``resource.Builder``).

    Raises:
        CLIError: no type, an unknown type, or ``TYPE/NAME`` mixed with plain arguments (exit 2).
    """
    if not args:
        raise CLIError('You must specify the type of resource to get. Use "karmactl api-resources" for a complete '
                       'list of supported resources.')
    if any("/" in a for a in args):
        if not all("/" in a for a in args):
            raise CLIError("there is no need to specify a resource type as a separate argument when passing "
                           "arguments in resource/name form (e.g. 'karmactl get resource/<resource_name>' instead "
                           "of 'karmactl get resource resource/<resource_name>'")
        pairs: list[tuple] = []
        for a in args:
            kind, name = a.split("/", 1)
            if not kind or not name:
                raise CLIError(f'arguments in resource/name form must have a single resource and name: "{a}"')
            info = resolve_kind(registry, kind)
            if pairs and pairs[-1][0] == info:
                pairs[-1][1].append(name)
            else:
                pairs.append((info, [name]))
        return pairs
    kinds = []
    for word in args[0].split(","):
        if not word:
            raise CLIError(f'invalid resource type list "{args[0]}"')
        if word == "all":
            kinds += [registry.resolve(k) for k in ALL_CATEGORY if registry.resolve(k)]
        else:
            kinds.append(resolve_kind(registry, word))
    return [(info, list(args[1:])) for info in dict.fromkeys(kinds)]


def multiple_types(args: list[str]) -> bool:
    """kubectl's ``MultipleTypesRequested``: ``a,b``, ``all``, or TYPE/NAME of more than one type."""
    if args and ("," in args[0] or args[0] == "all"):
        return True
    return len({a.split("/", 1)[0] for a in args if "/" in a}) > 1


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
        found = _event_rows(c, None, o.namespace, o.all_namespaces)
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
        is_event = (info.group, info.kind) == ("events.k8s.io", "Event")
        if is_event and o.scope != "karmada":
            raise CLIError("Events are recorded by karmactl runs only: use --operation-scope karmada")
        fields = parse_field_selector(o.field_selector, _EVENT_FIELDS if is_event else _OBJECT_FIELDS) \
            if o.field_selector else []
        kind_rows: list[tuple] = []
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
        rows += kind_rows
    if o.scope != "karmada" and o.output in (None, "", "wide"):
        rows = [(i, dict(obj, __cluster__=cl, __adoption__=("-" if cl == "Karmada" else
                ("Y" if (obj["metadata"].get("labels") or {}).get("karmada.io/managed") == "true" else "N"))))
                for i, obj, cl in rows]
    else:
        rows = [(i, obj) for i, obj, _cl in rows]
    if o.sort_by:
        rows = _sort_rows(rows, o.sort_by)
    single = len(requests) == 1 and len(requests[0][1]) == 1 and len(rows) == 1 and not multiple_types(args)
    return rows, member_errors, missing, single, snap


def start_context(state: Path, now: str | None, verbose: int, lock_timeout: str, command: str | None,
                  kubeconfig_dir: Path | str | None = None, allow_exec_plugins=False) -> Context:
    """The :class:`Context` of a command from the global flags (``--state``, ``--now``, ``-v``,
    ``--lock-timeout``, ``--kubeconfig-dir``, ``--allow-exec-plugins``), as the typer app's callback and
    :mod:`karmactl.cli.light` build it; sets the store's lock timeout, the member credential policy
    (:func:`karmactl.members.kubeconfig.configure`) and where loader notes go.

    Raises:
        CLIError: a malformed ``--lock-timeout`` (exit 2).
    """
    from karmactl.cli.context import show_notes
    from karmactl.members import kubeconfig
    from karmactl.store import fsio

    kubeconfig.configure(kubeconfig_dir, allow_exec_plugins)
    fsio.LOCK_TIMEOUT = parse_duration(lock_timeout)
    c = Context(state=state, now_text=now, verbose=verbose, command=command)
    show_notes(verbose)
    return c


def get_from_flags(c: Context, resources: list[str] | None, namespace: str, all_namespaces: bool,
                   output: str | None, selector: str | None, field_selector: str | None, operation_scope: str,
                   clusters: str | None, ignore_not_found: bool, show_labels: bool, label_columns: list[str] | None,
                   sort_by: str | None, no_headers: bool, watch: bool, watch_only: bool) -> None:
    """``karmactl get`` from its parsed flags (named as the typer command's parameters; lists may be None
    when not given; ``-L a,b`` splits at commas): :func:`get_cmd`."""
    get_cmd(c, list(resources or []), GetOptions(
        namespace=namespace, all_namespaces=all_namespaces, output=output, selector=selector,
        field_selector=field_selector, scope=operation_scope, clusters=clusters, ignore_not_found=ignore_not_found,
        show_labels=show_labels, label_columns=[k for v in label_columns or [] for k in v.split(",") if k],
        sort_by=sort_by, no_headers=no_headers, watch=watch, watch_only=watch_only))


def describe_from_args(c: Context, kind: str, name: str | None, namespace: str, all_namespaces: bool) -> None:
    """``karmactl describe TYPE [NAME]`` or ``describe TYPE/NAME`` from its parsed arguments: :func:`describe_cmd`.

    Raises:
        CLIError: ``TYPE/NAME`` given with a separate NAME (exit 2).
    """
    if "/" in kind:
        if name is not None:
            raise CLIError("there is no need to specify a resource type as a separate argument when passing "
                           "arguments in resource/name form")
        kind, name = kind.split("/", 1)
    describe_cmd(c, kind, name, namespace, all_namespaces)


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
        objs = _event_rows(c, name, namespace, all_namespaces)
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


# ---------------------------------------------------------------------------- reconcile / plan
def parse_duration(text: str) -> float:
    """``90s``, ``5m``, ``1h30m``, ``10`` (seconds) -> seconds.

    Raises:
        CLIError: not a duration.
    """
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s?)?", text.strip())
    if not m or not any(m.groups()):
        raise CLIError(f'invalid duration "{text}" (examples: 90s, 5m, 1h)')
    h, mi, s = m.groups()
    return int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0)


def _members_layer(c: Context, offline: bool):
    if offline:
        return None
    try:
        from karmactl.members.layer import MemberLayer
    except ModuleNotFoundError:
        raise CLIError("member support is not installed; use --offline") from None
    return MemberLayer.from_context(c)


def reconcile_cmd(c: Context, offline: bool, dry_run: bool, wait: bool, timeout: str, watch: bool = False,
                  resync: str = "30m", metrics_addr: str | None = None) -> None:
    from karmactl.reconcile import RunOptions, run

    store = store_of(c)
    if watch:
        from karmactl.cli.watch_cmd import watch_cmd

        for flag, given in (("--dry-run", dry_run), ("--wait", wait), ("--now", bool(c.now_text))):
            if given:
                raise CLIError(f"--watch runs until stopped on the wall clock: it cannot be combined with {flag}",
                               ExitCode.INPUT_ERROR)
        watch_cmd(c, _members_layer(c, offline), offline=offline, resync=parse_duration(resync),
                  metrics_addr=metrics_addr)
        return
    members = _members_layer(c, offline)
    if wait and not dry_run:
        report = wait_converged(c, members, parse_duration(timeout), offline=offline, verbose_runs=True)
    else:
        with state_lock(store.root) if not dry_run else _nullcontext():
            report = run(store, RunOptions(now=c.now, offline=offline, dry_run=dry_run), members)
        _print_report(c, report, dry_run)
    if report.member_errors:
        raise CLIError(f"{len(report.member_errors)} member cluster(s) failed: " +
                       ", ".join(sorted(report.member_errors)), ExitCode.MEMBER_FAILURE)


def wait_converged(c: Context, members, timeout: float, offline: bool = False, verbose_runs: bool = False):
    """Online runs until the members have settled (``reconcile --wait``, ``demo``): every binding
    scheduled, fully applied and healthy, and a run that changes nothing
    (``karmactl.reconcile.run_until_converged``). Each warning or member error is printed once.

    Returns the last run's report. Raises CLIError (exit 4) on timeout.
    """
    from karmactl.reconcile import run_until_converged

    said: set = set()
    last: list = []

    def on_run(runs, report, ok, why):
        last[:] = [report]
        if verbose_runs:
            for e in report.events:
                err(e)
        for line in [f"warning: {w}" for w in report.warnings] + \
                [f"member {cl}: {msg}" for cl, msg in sorted(report.member_errors.items())]:
            if line not in said:  # each problem once, not once a run
                said.add(line)
                err(line)
        if report.changes or why not in said:
            said.add(why)
            err(f"reconcile #{runs}: {len(report.changes)} file(s) changed" + ("" if ok else f"; waiting: {why}"))

    try:
        run_until_converged(store_of(c), lambda: _wall_now(c), members, timeout, interval=1.0 if offline else 0.5,
                            on_run=on_run, locked=lambda: state_lock(store_of(c).root), offline=offline)
    except TimeoutError as exc:
        raise CLIError(f"did not converge within {timeout:g}s: {exc}", ExitCode.NOT_CONVERGED) from None
    return last[0]


def _wall_now(c: Context) -> str:
    """Later runs of --wait read the wall clock again, unless --now pinned it."""
    if c.now_text:
        return c.now
    from datetime import datetime, timezone
    from karmactl.api.objects import format_time
    return format_time(datetime.now(timezone.utc))


def _print_report(c: Context, report, dry_run: bool) -> None:
    for w in report.warnings:
        err(f"warning: {w}")
    for e in report.events:
        err(e)
    for cluster, msg in sorted(report.member_errors.items()):
        err(f"member {cluster}: {msg}")
    if dry_run:
        for action, path in report.changes:
            out(f"{action:7} {path}")
        err(f"dry run: {len(report.changes)} change(s) planned, nothing written")
    else:
        if c.verbose:
            if report.incremental:
                err(f"run: {report.incremental}")
            for action, path in report.changes:
                err(f"{action:7} {path}")
        err(f"reconciled: {len(report.changes)} file(s) changed in {report.passes} pass(es)")


def plan_cmd(c: Context, offline: bool, output: str | None = None) -> None:
    """``karmactl plan`` / ``diff``: a dry run, printed as ``kubectl diff`` prints (one unified
    diff per changed computed object and, online, per member copy; ``karmactl/cli/diffing.py``).

    Args:
        offline: compute from the files only; online also reads the members.
        output: None (diffs, or ``KARMACTL_EXTERNAL_DIFF``'s output) or ``name`` (the changed
            objects' kubectl diff file names, one per line).

    Raises:
        SystemExit: code 1 when there are differences (kubectl diff's convention).
        CLIError: a bad ``-o`` (exit 2) or external diff program (exit 2).
        InputError: an invalid state directory (exit 2).
    """
    import os

    from karmactl.cli import diffing
    from karmactl.reconcile import RunOptions, run

    if output not in (None, "name"):
        raise CLIError(f'unable to match a printer suitable for the output format "{output}", allowed formats are: name')
    store = store_of(c)
    report = run(store, RunOptions(now=c.now, offline=offline, dry_run=True), _members_layer(c, offline))
    for w in report.warnings:
        err(f"warning: {w}")
    for cluster, msg in sorted(report.member_errors.items()):
        err(f"member {cluster}: {msg}")
    diffs = diffing.computed_diffs(store, report) + diffing.member_diffs(report.member_changes)
    external = os.environ.get(diffing.EXTERNAL_DIFF_ENV)
    if output == "name":
        names = [d.name for d in diffs if d.differs()]
        for name in names:
            out(name)
        differs = bool(names)
    elif external:
        differs = bool(diffs) and diffing.run_external(external, diffs)
    else:
        differs = diffing.print_unified(diffs, colour=c.stdout_tty and not os.environ.get("NO_COLOR"))
    if differs:
        raise SystemExit(int(ExitCode.CHANGES))


# ---------------------------------------------------------------------------- cluster condition
def condition_cmd(c: Context, name: str, ctype: str, status: str | None, reason: str | None, message: str | None) -> None:
    from karmactl.controllers import cluster_status
    from karmactl.store.fsio import write_atomic
    from karmactl.store.state import dump_computed

    if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9_.\-/]*[A-Za-z0-9])?", ctype):
        raise CLIError(f'invalid condition type "{ctype}"')
    if reason is not None and not re.fullmatch(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?", reason):
        raise CLIError(f'invalid --reason "{reason}": must be CamelCase (letters, digits, _ , :)')
    store = store_of(c)
    with state_lock(store.root):
        snap = load_snapshot(c)
        key = ("cluster.karmada.io", "Cluster", "", name)
        cluster = snap.user.get(key)
        if cluster is None:
            raise not_found(resolve_kind(snap, "cluster"), name)
        # fold any newer report from the file in first, so this one is the newest
        overlay = cluster_status.ingest_file_status(key, cluster, snap.overlays.get(key), c.now)
        new = cluster_status.report_condition(key, cluster, overlay, ctype, status, reason, message, c.now)
        if new != snap.overlays.get(key):
            write_atomic(store.computed_path(key), dump_computed(new))  # computed files are JSON
    verb = "set" if status is not None else "unset"
    out(f"cluster.cluster.karmada.io/{name} condition {ctype} {verb}")
