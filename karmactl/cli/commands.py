"""Command implementations (kept apart from argument parsing so tests can call them directly)."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from karmactl.api.selectors import label_selector_matches
from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.objects import find, not_found, objects_of, resolve_kind
from karmactl.cli.printers import describe_text, render
from karmactl.store import yamlio
from karmactl.store.fsio import state_lock
from karmactl.store.state import InputError, StateStore, key_of, parse_documents, check_object, Source


def store_of(c: Context) -> StateStore:
    return StateStore(c.state)


def load_snapshot(c: Context):
    from karmactl.reconcile import load
    return load(store_of(c))


# ---------------------------------------------------------------------------- apply
def read_inputs(paths: list[str], recursive: bool, errors: list | None = None) -> list[tuple[dict, str, int, int]]:
    """Objects from files, directories or stdin: ``[(obj, display, doc_index, line)]``.

    With an ``errors`` list, a file that cannot be read or parsed is recorded there and the
    others are still read (``apply`` reports every bad file of a directory); without one the
    first raises.

    Raises:
        InputError: unreadable or malformed inputs (without ``errors``).
    """
    found = []

    def parse(text: str, display: str) -> None:
        try:
            found.extend((o, display, i, ln) for o, i, ln in parse_documents(text, display))
        except InputError as exc:
            if errors is None:
                raise
            errors.append(exc)

    for p in paths:
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
def delete_cmd(c: Context, kind: str | None, names: list[str], files: list[str], namespace: str,
               ignore_not_found: bool) -> None:
    from karmactl.store import edit

    store = store_of(c)
    with state_lock(store.root):
        index = edit.index_user_objects(store)
        targets = []
        if files:
            for obj, display, _i, line in read_inputs(files, True):
                info = check_object(obj, store.registry, display, line)
                targets.append((info, key_of(obj)))
        elif kind and names:
            info = resolve_kind(store.registry, kind)
            for name in names:
                targets.append((info, (info.group, info.kind, namespace if info.namespaced else "", name)))
        else:
            raise CLIError("you must provide one or more resources by argument or filename (KIND NAME or -f FILE)")
        missing = []
        # delete from the highest document index first so indexes of the rest stay valid
        found = [(info, key, index[key]) for info, key in targets if key in index]
        missing = [(info, key) for info, key in targets if key not in index]
        for info, key, src in sorted(found, key=lambda t: (t[2].path, -t[2].index)):
            edit.remove_object(store, src)
            edit.remove_overlay(store, key)
            out(f'{info.singular}{"." + info.group if info.group else ""} "{key[3]}" deleted')
        if missing and not ignore_not_found:
            info, key = missing[0]
            raise not_found(info, key[3])


# ---------------------------------------------------------------------------- get / describe
def parse_label_selector(text: str) -> dict:
    """``k=v,k!=v,k,!k,k in (a,b)`` -> a LabelSelector dict.

    Raises:
        CLIError: unparseable selector.
    """
    exprs, labels = [], {}
    for part in re.split(r",(?![^()]*\))", text):
        part = part.strip()
        if not part:
            continue
        m = re.match(r"^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$", part)
        if m:
            exprs.append({"key": m.group(1), "operator": "In" if m.group(2) == "in" else "NotIn",
                          "values": [v.strip() for v in m.group(3).split(",") if v.strip()]})
        elif "!=" in part:
            k, v = part.split("!=", 1)
            exprs.append({"key": k.strip(), "operator": "NotIn", "values": [v.strip()]})
        elif "=" in part:
            k, v = part.split("==", 1) if "==" in part else part.split("=", 1)
            labels[k.strip()] = v.strip()
        elif part.startswith("!"):
            exprs.append({"key": part[1:], "operator": "DoesNotExist"})
        elif re.match(r"^[\w./-]+$", part):
            exprs.append({"key": part, "operator": "Exists"})
        else:
            raise CLIError(f'unable to parse requirement: "{part}"')
    return {"matchLabels": labels, "matchExpressions": exprs}


_OBJECT_FIELDS = ("metadata.name", "metadata.namespace")
_EVENT_FIELDS = _OBJECT_FIELDS + tuple(f"{p}.{f}" for p in ("regarding", "involvedObject")
                                       for f in ("apiVersion", "kind", "namespace", "name", "uid")) + (
    "reason", "type", "reportingController")


def parse_field_selector(text: str, fields: tuple) -> list[tuple[str, bool, str]]:
    """``f=v,f!=v`` (``==`` too) -> ``[(field, equal, value)]``; ``involvedObject.*`` reads ``regarding.*``.

    Raises:
        CLIError: unparseable, or a field the kind cannot be selected by (kubectl's wording).
    """
    reqs = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        m = re.fullmatch(r"([A-Za-z.]+)\s*(==|!=|=)\s*(.*)", part)
        if not m:
            raise CLIError(f'invalid field selector: "{part}"')
        if m.group(1) not in fields:
            raise CLIError(f'field label not supported: {m.group(1)}')
        reqs.append((m.group(1).replace("involvedObject.", "regarding."), m.group(2) != "!=", m.group(3).strip()))
    return reqs


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


def get_cmd(c: Context, kind: str, name: str | None, namespace: str, all_namespaces: bool, output: str | None,
            selector: str | None, scope: str, clusters: str | None, ignore_not_found: bool,
            field_selector: str | None = None) -> None:
    if scope not in ("karmada", "members", "all"):
        raise CLIError(f'invalid --operation-scope "{scope}": must be karmada, members or all')
    if clusters and scope == "karmada":
        raise CLIError("--clusters is only allowed with --operation-scope members or all")
    snap = load_snapshot(c)
    info = resolve_kind(snap, kind)
    is_event = (info.group, info.kind) == ("events.k8s.io", "Event")
    if is_event and scope != "karmada":
        raise CLIError("Events are recorded by karmactl runs only: use --operation-scope karmada")
    fields = parse_field_selector(field_selector, _EVENT_FIELDS if is_event else _OBJECT_FIELDS) if field_selector else []
    rows: list[tuple] = []
    if scope in ("karmada", "all"):
        if is_event:
            found = _event_rows(c, name, namespace, all_namespaces)
        elif name:
            obj = find(snap, info, name, namespace)
            found = [obj] if obj is not None else []
        else:
            found = [obj for obj in objects_of(snap, info)
                     if not info.namespaced or all_namespaces or obj["metadata"].get("namespace") == namespace]
        sel = parse_label_selector(selector) if selector and not name else None
        for obj in found:
            if sel is not None and not label_selector_matches(sel, obj["metadata"].get("labels")):
                continue
            if fields and not field_selector_matches(fields, obj):
                continue
            rows.append((info, obj, "Karmada"))
    member_errors = []
    if scope in ("members", "all"):
        from karmactl.cli.members_view import member_rows
        mrows, member_errors = member_rows(c, snap, info, name, namespace, all_namespaces, selector, clusters)
        rows.extend(mrows)
        if scope == "members" and not snap.keys_of_kind("cluster.karmada.io", "Cluster"):
            return  # "No member Clusters found in Karmada control plane" was said; karmadactl stops there
    for e in member_errors:
        err(e)
    if not rows:
        if member_errors:
            raise CLIError("some member clusters could not be read", ExitCode.MEMBER_FAILURE)
        if name and not ignore_not_found:
            raise not_found(info, name)
        if not name and output in (None, "", "wide"):
            err(f"No resources found in {namespace} namespace." if info.namespaced and not all_namespaces
                else "No resources found")
            return
    extra = None
    if scope != "karmada" and output in (None, "", "wide"):
        extra = [(1, "CLUSTER", lambda o: o.get("__cluster__", "Karmada")),
                 (None, "ADOPTION", lambda o: o.get("__adoption__", "-"))]
        rows = [(i, dict(o, __cluster__=cl, __adoption__=("-" if cl == "Karmada" else
                 ("Y" if (o["metadata"].get("labels") or {}).get("karmada.io/managed") == "true" else "N")))) for i, o, cl in rows]
    else:
        rows = [(i, o) for i, o, _cl in rows]
    try:
        text = render(rows, output, c.now, single=bool(name) and len(rows) == 1, namespaces=all_namespaces, extra=extra)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    sys.stdout.write(text)
    if member_errors:
        raise CLIError("some member clusters could not be read", ExitCode.MEMBER_FAILURE)


def describe_cmd(c: Context, kind: str, name: str | None, namespace: str, all_namespaces: bool) -> None:
    from karmactl.cli.describers import describe_extra
    from karmactl.cli.printers import event_lines
    from karmactl.store.events import events_regarding

    snap = load_snapshot(c)
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
    texts = [describe_text(o, events=event_lines(events.get(key(o), []), c.now),
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


def reconcile_cmd(c: Context, offline: bool, dry_run: bool, wait: bool, timeout: str) -> None:
    from karmactl.reconcile import RunOptions, run

    store = store_of(c)
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
