"""What a plan or a run changes, for a reviewer: a summary table, a JSON document, a Markdown comment.

``karmactl plan`` prints a summary first, one row per changed object (as kapp's change table:
action, kind, namespace/name, cluster and the fields that matter: replicas per cluster, images,
placement), then the diffs (``karmactl/cli/diffing.py``) without bookkeeping fields.
``plan -o json`` prints the same as one document of the versioned schema
``karmactl/cli/schemas/plan-v1.json`` (``apiVersion: plan.karmactl.io/v1``, ``kind: Plan``);
``plan -o markdown`` a merge-request comment. ``reconcile`` prints the summary of what a run
changed (:func:`run_summary`).

An object whose only changes are bookkeeping (generations, resource versions, observation and
transition times, karmactl's ``observed`` section: :func:`karmactl.cli.diffing.without_bookkeeping`)
gets no row and no diff; the footer counts it, and ``--show-managed`` shows it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from karmactl.cli.diffing import ObjectDiff
from karmactl.cli.printers import align

PLAN_API_VERSION = "plan.karmactl.io/v1"
PLAN_KIND = "Plan"
SCHEMA_FILE = "schemas/plan-v1.json"  # relative to this package

MAX_CHANGES_TEXT = 110  # characters of a row's CHANGES cell before "…"
MAX_FIELDS = 50  # field changes listed per object in JSON before ``fieldsTruncated``
RUN_SUMMARY_ROWS = 50  # rows of the summary after a run (a cold run changes every object: -v lists them)
MARKDOWN_LIMIT = 60_000  # characters of a Markdown comment (GitHub refuses more than 65,536)

WORKLOAD_KINDS = frozenset(("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job", "CronJob", "Pod"))
BINDING_KINDS = frozenset(("ResourceBinding", "ClusterResourceBinding"))


@dataclass
class Row:
    """One changed object as the summary shows it.

    Attributes:
        diff: the object's diff (both sides, bookkeeping already left out unless shown).
        changes: the fields that matter, each a short phrase (``replicas 3 → 6``).
        fields: every changed leaf ``{"path", "before", "after"}`` (updates only; ``before`` /
            ``after`` absent where the field is missing on that side).
        clusters: the member clusters the object concerns (a Work's or member copy's cluster,
            a binding's target clusters, a Cluster's name).
    """

    diff: ObjectDiff
    changes: list[str] = field(default_factory=list)
    fields: list[dict] = field(default_factory=list)
    clusters: list[str] = field(default_factory=list)

    def kind_cell(self) -> str:
        kind = self.diff.ref()[1]
        return f"{kind} (status)" if self.diff.scope == "status" else kind

    def name_cell(self) -> str:
        _api, _kind, namespace, name = self.diff.ref()
        return f"{namespace}/{name}" if namespace else name

    def changes_cell(self, limit: int = MAX_CHANGES_TEXT) -> str:
        text = "; ".join(self.changes)
        return text if len(text) <= limit else text[:limit - 1] + "…"


@dataclass
class Plan:
    """The rows of a plan and what has no row.

    Attributes:
        rows: the objects with changes a reviewer reads, in diff order.
        bookkeeping_only: the objects whose only changes are bookkeeping (no row unless shown).
        show_managed: bookkeeping fields kept (``--show-managed``).
    """

    rows: list[Row]
    bookkeeping_only: list[ObjectDiff]
    show_managed: bool = False

    def counts(self) -> dict:
        """``{"create": n, "update": n, "delete": n, "bookkeepingOnly": n}``."""
        out = {a: sum(1 for r in self.rows if r.diff.action == a) for a in ("create", "update", "delete")}
        out["bookkeepingOnly"] = len(self.bookkeeping_only)
        return out

    def differs(self) -> bool:
        """Whether the run would change any file (bookkeeping included)."""
        return bool(self.rows or self.bookkeeping_only)


def build(diffs: list[ObjectDiff], show_managed: bool = False) -> Plan:
    """The plan of ``diffs`` (as ``karmactl/cli/diffing.py`` builds them, Secrets masked): each diff
    without bookkeeping (unless ``show_managed``), a :class:`Row` for each that still differs."""
    rows, quiet = [], []
    for d in diffs:
        shown = d if show_managed else d.without_bookkeeping()
        if not shown.differs():
            if d.differs():
                quiet.append(d)
            continue
        rows.append(_row(shown))
    return Plan(rows, quiet, show_managed)


# ---------------------------------------------------------------------------- one row
def _row(d: ObjectDiff) -> Row:
    row = Row(d)
    if d.action == "update":
        row.fields = leaf_changes(d.old, d.new)
    kind = d.ref()[1]
    obj = d.new if d.new is not None else d.old
    if kind in BINDING_KINDS:
        row.clusters = sorted({c.get("name") for side in (d.old, d.new) for c in _target_clusters(side) if c.get("name")})
        row.changes = _binding_changes(d)
    elif kind == "Work":
        row.clusters = [d.cluster] if d.cluster else []
        row.changes = _workload_changes(_manifests(d.old), _manifests(d.new), d.action)
    elif kind == "Cluster":
        row.clusters = [d.ref()[3]]
        row.changes = _cluster_changes(d)
    else:
        row.clusters = [d.cluster] if d.cluster else []
        if d.scope == "status":
            row.changes = _status_changes(d, row.fields)
        else:
            row.changes = _workload_changes([d.old] if d.old else [], [d.new] if d.new else [], d.action)
    if not row.changes:
        row.changes = _generic_changes(row.fields, d.action, obj)
    return row


def leaf_changes(old, new, path: str = "") -> list[dict]:
    """Every changed leaf between two JSON values: ``[{"path": "spec.clusters[0].replicas",
    "before": 1, "after": 2}]``; a side where the field is missing has no ``before`` / ``after``.
    Maps are compared key by key, lists item by item."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in sorted(set(old) | set(new), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in old:
                out.append({"path": sub, "after": new[k]})
            elif k not in new:
                out.append({"path": sub, "before": old[k]})
            elif old[k] != new[k]:
                out.extend(leaf_changes(old[k], new[k], sub))
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for i in range(max(len(old), len(new))):
            sub = f"{path}[{i}]"
            if i >= len(old):
                out.append({"path": sub, "after": new[i]})
            elif i >= len(new):
                out.append({"path": sub, "before": old[i]})
            elif old[i] != new[i]:
                out.extend(leaf_changes(old[i], new[i], sub))
        return out
    return [] if old == new else [{"path": path, "before": old, "after": new}]


def _short(value) -> str:
    if isinstance(value, (dict, list)):
        text = json.dumps(value, separators=(",", ":"), sort_keys=True)
        return text if len(text) <= 30 else text[:29] + "…"
    return "null" if value is None else str(value)


def _arrow(before, after) -> str:
    return f"{_short(before)} → {_short(after)}"


def _target_clusters(binding: dict | None) -> list[dict]:
    return [c for c in ((binding or {}).get("spec") or {}).get("clusters") or [] if isinstance(c, dict)]


def _binding_changes(d: ObjectDiff) -> list[str]:
    """Replicas in total and per cluster, clusters added and removed, placement, suspension."""
    old_spec, new_spec = ((s or {}).get("spec") or {} for s in (d.old, d.new))
    out = []
    if d.action != "update":
        total = (new_spec or old_spec).get("replicas")
        if total is not None:
            out.append(f"replicas {total}")
        clusters = _target_clusters(d.new if d.new is not None else d.old)
        if clusters:
            out.append("clusters " + ", ".join(_cluster_replicas(c) for c in clusters))
        return out
    if old_spec.get("replicas") != new_spec.get("replicas"):
        out.append(f"replicas {_arrow(old_spec.get('replicas'), new_spec.get('replicas'))}")
    before = {c.get("name"): c.get("replicas") for c in _target_clusters(d.old)}
    after = {c.get("name"): c.get("replicas") for c in _target_clusters(d.new)}
    moved = []
    for name in sorted(set(before) | set(after), key=str):
        if name not in before:
            moved.append(f"+{name}" + (f" {after[name]}" if after[name] is not None else ""))
        elif name not in after:
            moved.append(f"-{name}")
        elif before[name] != after[name]:
            moved.append(f"{name} {_arrow(before[name], after[name])}")
    if moved:
        out.append(", ".join(moved))
    for key, word in (("placement", "placement changed"), ("suspension", "suspension changed"),
                      ("resource", "resource template changed")):
        if old_spec.get(key) != new_spec.get(key):
            out.append(word)
    out.extend(_health_changes(d.old, d.new))
    return out


def _cluster_replicas(c: dict) -> str:
    return f"{c.get('name')}:{c['replicas']}" if c.get("replicas") is not None else str(c.get("name"))


def _health_changes(old: dict | None, new: dict | None) -> list[str]:
    """``member1 Unhealthy → Healthy`` from a binding's ``aggregatedStatus``."""
    def health(obj):
        items = ((obj or {}).get("status") or {}).get("aggregatedStatus") or []
        return {i.get("clusterName"): i.get("health") for i in items if isinstance(i, dict)}

    before, after = health(old), health(new)
    return [f"{c} {before.get(c) or 'none'} → {after.get(c) or 'none'}"
            for c in sorted(set(before) | set(after), key=str) if before.get(c) != after.get(c)]


def _manifests(work: dict | None) -> list[dict]:
    items = ((((work or {}).get("spec") or {}).get("workload") or {}).get("manifests")) or []
    return [m for m in items if isinstance(m, dict)]


def _images(obj: dict) -> list[str]:
    spec = obj.get("spec") or {}
    pod = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") if obj.get("kind") == "CronJob" else \
        spec.get("template") if obj.get("kind") != "Pod" else {"spec": spec}
    pod_spec = (pod or {}).get("spec") or {}
    return [str(c.get("image")) for c in (pod_spec.get("initContainers") or []) + (pod_spec.get("containers") or [])
            if isinstance(c, dict) and c.get("image") is not None]


def _workload_changes(olds: list[dict], news: list[dict], action: str) -> list[str]:
    """Replicas and images of the workload manifests (a Work's, or a member copy)."""
    out = []
    by_ref = lambda items: {(m.get("kind"), (m.get("metadata") or {}).get("namespace"),  # noqa: E731
                             (m.get("metadata") or {}).get("name")): m for m in items}
    before, after = by_ref(olds), by_ref(news)
    for ref in list(after) + [r for r in before if r not in after]:
        o, n = before.get(ref), after.get(ref)
        prefix = f"{ref[0]} " if len(before) + len(after) > 2 else ""
        if o is None or n is None or action != "update":
            word = "" if action != "update" else ("+" if o is None else "-")
            phrase = _whole_workload(n if n is not None else o, ref, word, prefix)
            if phrase:
                out.append(phrase)
        else:
            out.extend(_workload_updates(o, n, prefix))
    return out


def _whole_workload(obj: dict, ref: tuple, word: str, prefix: str) -> str:
    """A created or deleted manifest (``word``: ``+`` / ``-`` inside a Work that stays): its
    replicas and images, or its kind and name."""
    bits = []
    if (obj.get("spec") or {}).get("replicas") is not None:
        bits.append(f"replicas {obj['spec']['replicas']}")
    if ref[0] in WORKLOAD_KINDS and _images(obj):
        bits.append("image " + ", ".join(_images(obj)))
    if bits:
        return word + prefix + "; ".join(bits)
    return f"{word}{ref[0]} {ref[2]}" if word else ""


def _workload_updates(o: dict, n: dict, prefix: str) -> list[str]:
    """``replicas 1 → 2``, ``image nginx:1.0 → nginx:1.1`` of one manifest."""
    out = []
    ro, rn = (o.get("spec") or {}).get("replicas"), (n.get("spec") or {}).get("replicas")
    if ro != rn:
        out.append(f"{prefix}replicas {_arrow(ro, rn)}")
    io, in_ = _images(o), _images(n)
    if io != in_:
        changed = [f"{a} → {b}" for a, b in zip(io, in_) if a != b] if len(io) == len(in_) else \
            [f"{', '.join(io) or 'none'} → {', '.join(in_) or 'none'}"]
        out.append(f"{prefix}image " + ", ".join(changed))
    return out


def _cluster_changes(d: ObjectDiff) -> list[str]:
    """The Cluster's conditions (``Ready True → False``) and its taints."""
    def conds(obj):
        items = ((obj or {}).get("status") or {}).get("conditions") or []
        return {c.get("type"): c.get("status") for c in items if isinstance(c, dict)}

    def taints(obj):
        items = ((obj or {}).get("spec") or {}).get("taints") or []
        return sorted(f"{t.get('key')}:{t.get('effect')}" for t in items if isinstance(t, dict))

    before, after = conds(d.old), conds(d.new)
    if d.action != "update":
        return [f"{t} {s}" for t, s in sorted((after or before).items(), key=str)]
    out = [f"{t} {before.get(t) or 'none'} → {after.get(t) or 'none'}"
           for t in sorted(set(before) | set(after), key=str) if before.get(t) != after.get(t)]
    if taints(d.old) != taints(d.new):
        out.append("taints " + (", ".join(taints(d.new)) or "none"))
    return out


def _status_changes(d: ObjectDiff, fields: list[dict]) -> list[str]:
    """A template's or policy's status: the changed scalar fields under ``status`` (of a new or
    removed overlay: its scalar fields)."""
    if d.action == "update":
        out = [f"{f['path'][len('status.'):]} {_arrow(f.get('before'), f.get('after'))}" for f in fields
               if f["path"].startswith("status.") and not isinstance(f.get("before", f.get("after")), (dict, list))]
    else:
        status = ((d.new if d.new is not None else d.old) or {}).get("status") or {}
        out = [f"{k} {_short(v)}" for k, v in status.items() if not isinstance(v, (dict, list))]
    return out[:4] + ([f"+{len(out) - 4} more"] if len(out) > 4 else [])


def _generic_changes(fields: list[dict], action: str, obj: dict | None) -> list[str]:
    """The changed fields' paths (at most three, then a count) when nothing specific applies."""
    if action != "update":
        return []
    paths = []
    for f in fields:
        top = f["path"].split("[", 1)[0]
        if top not in paths:
            paths.append(top)
    return paths[:3] + ([f"+{len(paths) - 3} more"] if len(paths) > 3 else [])


# ---------------------------------------------------------------------------- renderings
def summary_table(plan: Plan, done: bool = False, max_rows: int | None = None) -> str:
    """The summary as text: a table (ACTION, KIND, NAME, CLUSTER, CHANGES) and one footer line,
    ``Plan: 0 to create, 3 to update, 0 to delete; 1 object(s) with bookkeeping changes only
    (--show-managed shows them)`` (``done``: ``Changed: 0 created, 3 updated, 0 deleted`` after a
    run); only the footer when no object has a row. ``max_rows``: at most so many rows, then a
    line saying how many more."""
    lines = ""
    rows = plan.rows if max_rows is None else plan.rows[:max_rows]
    if rows:
        table = [["ACTION", "KIND", "NAME", "CLUSTER", "CHANGES"]] + [
            [r.diff.action, r.kind_cell(), r.name_cell(), ",".join(r.clusters) or "-", r.changes_cell()]
            for r in rows]
        lines = align(table)
        if len(rows) < len(plan.rows):
            lines += f"... and {len(plan.rows) - len(rows)} more object(s)\n"
    return lines + footer(plan, done) + "\n"


def footer(plan: Plan, done: bool = False) -> str:
    """``Plan: 1 to create, 3 to update, 0 to delete`` (``done``: ``Changed: 1 created, ...``) and
    what has no row."""
    c = plan.counts()
    text = (f"Changed: {c['create']} created, {c['update']} updated, {c['delete']} deleted" if done else
            f"Plan: {c['create']} to create, {c['update']} to update, {c['delete']} to delete")
    if c["bookkeepingOnly"] and not done:
        text += (f"; {c['bookkeepingOnly']} object(s) with bookkeeping changes only "
                 "(--show-managed shows them)")
    return text


def plan_document(plan: Plan, offline: bool, warnings: list[str], member_errors: dict) -> dict:
    """The plan as one JSON document of the schema ``schemas/plan-v1.json`` (see there for every field)."""
    changes = []
    for r in plan.rows:
        api_version, kind, namespace, name = r.diff.ref()
        fields = r.fields[:MAX_FIELDS]
        changes.append({
            "action": r.diff.action, "scope": r.diff.scope, "apiVersion": api_version, "kind": kind,
            "namespace": namespace, "name": name, "clusters": r.clusters, "file": r.diff.path or None,
            "summary": r.changes, "fields": fields, "fieldsTruncated": len(r.fields) > len(fields),
            "diff": "\n".join(r.diff.unified()) + "\n"})
    return {"apiVersion": PLAN_API_VERSION, "kind": PLAN_KIND, "offline": offline, "showManaged": plan.show_managed,
            "counts": plan.counts(), "changes": changes,
            "bookkeepingOnly": [{"scope": d.scope, "file": d.path or None, **dict(zip(
                ("apiVersion", "kind", "namespace", "name"), d.ref()))} for d in plan.bookkeeping_only],
            "warnings": list(warnings), "memberErrors": dict(sorted(member_errors.items()))}


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (no HTML, no column break, no line break, no
    @mention: a merge request's names and images are a stranger's text)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
            .replace("\n", " ").replace("`", "'").replace("@", "&#64;"))


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def markdown(plan: Plan, offline: bool, warnings: list[str], member_errors: dict, limit: int = MARKDOWN_LIMIT) -> str:
    """A merge-request comment: a heading with the counts, the summary as a Markdown table, then
    the diffs folded in ``<details>``, cut to ``limit`` characters (the job log has them all)."""
    c = plan.counts()
    head = [f"### karmactl plan: {c['create']} to create, {c['update']} to update, {c['delete']} to delete",
            ""]
    if not plan.differs():
        head.append("No changes: merging this leaves the members as they are.")
    if plan.rows:
        head += ["| Action | Kind | Name | Cluster | Changes |", "|---|---|---|---|---|"]
        head += [f"| {r.diff.action} | {_cell(r.kind_cell())} | {_cell(r.name_cell())} | "
                 f"{_cell(', '.join(r.clusters) or '-')} | {_cell('; '.join(r.changes))} |" for r in plan.rows]
    if c["bookkeepingOnly"]:
        head += ["", f"{c['bookkeepingOnly']} more object(s) with bookkeeping changes only."]
    for w in warnings:
        head += ["", f"> warning: {_cell(w)}"]
    for cluster, msg in sorted(member_errors.items()):
        head += ["", f"> member {_cell(cluster)}: {_cell(msg)}"]
    head.append(f"\n<sub>{'offline: computed from the files' if offline else 'online: member copies read'}"
                "</sub>")
    text = "\n".join(head) + "\n"
    if plan.rows:
        body = "\n".join(line for r in plan.rows for line in r.diff.unified()) + "\n"
        fence = _fence(body)
        room = limit - len(text) - 200
        if len(body) > room:
            body = body[:max(room, 0)].rsplit("\n", 1)[0] + "\n… (cut: the job log has the whole plan)\n"
        text += (f"\n<details><summary>Diffs of {len(plan.rows)} object(s)</summary>\n\n{fence}diff\n{body}{fence}\n"
                 "</details>\n")
    return text


def invalid_markdown(errors: list[dict]) -> str:
    """A merge-request comment for a state directory that is not valid: one line per error."""
    lines = ["### karmactl plan: invalid input", ""]
    for e in errors:
        where = e["file"] + (f":{e['line']}" if e.get("line") else "") if e.get("file") else "state directory"
        lines.append(f"- `{_cell(where)}`: {_cell(e['message'])}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- after a run
@dataclass
class RunChanges:
    """The changes of several runs (``reconcile --wait``) folded into one plan: each computed
    object's first ``before`` and last ``after`` side, so an object changed back and forth has no row.

    Attributes:
        first: relative path → the diff of the first run that changed it.
        last: relative path → the diff of the last run that changed it.
        unsummarized: files changed by runs that kept no snapshot (large offline runs).
    """

    first: dict = field(default_factory=dict)
    last: dict = field(default_factory=dict)
    unsummarized: int = 0

    def add(self, diffs: list[ObjectDiff]) -> None:
        for d in diffs:
            self.first.setdefault(d.path, d)
            self.last[d.path] = d

    def diffs(self) -> list[ObjectDiff]:
        out = []
        for path, first in self.first.items():
            last = self.last[path]
            action = ("create" if first.old is None else "delete" if last.new is None else "update")
            if first.old is None and last.new is None:
                continue
            out.append(ObjectDiff(last.name, first.from_label, last.to_label, first.old, last.new, action=action,
                                  scope=last.scope, path=path, cluster=last.cluster))
        return out


def run_summary(store, report, into: RunChanges) -> None:
    """Add a run's changes to ``into`` (nothing for a dry run or a run without changes).

    Raises:
        InputError: from :func:`karmactl.cli.diffing.computed_diffs`.
    """
    from karmactl.cli.diffing import computed_diffs

    if not report.changes:
        return
    if report.before is None or (report.after is None and getattr(report, "partial_after", None) is None):
        into.unsummarized += len(report.changes)
        return
    into.add(computed_diffs(store, report, before=report.before))


def run_summary_text(into: RunChanges) -> str:
    """The summary of the runs folded into ``into`` (:func:`summary_table`), ``""`` when they changed
    nothing a reviewer reads; files of large runs are counted, not shown."""
    plan = build(into.diffs())
    if not plan.rows and not into.unsummarized:
        return ""
    text = summary_table(plan, done=True, max_rows=RUN_SUMMARY_ROWS) if plan.rows else ""
    if into.unsummarized:
        text += f"{into.unsummarized} file change(s) of large runs are not summarized (-v lists them)\n"
    return text
