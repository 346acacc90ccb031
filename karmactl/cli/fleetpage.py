"""``karmactl fleet --html``: one self-contained HTML page of a fleet view
(:func:`karmactl.cli.fleetview.fleet_view`'s document): the workload x cluster matrix, the failover
timeline and the propagation trees.

The page reaches nothing outside itself: CSS and the one script (a filter over the matrix; a
workload's link opens its tree) are
inline, and its Content-Security-Policy allows no other source (``default-src 'none'``, the script
by its SHA-256 only), so it can be kept as a CI artifact and opened anywhere. Every name, label and
message comes from a state directory that may be a stranger's merge request: each is HTML-escaped
(text and attribute values), element ids are karmactl's own (``t0``, ``t1``...), and the script
reads text, never writes markup. The same document gives the same bytes: nothing reads the clock.

Pure: a document in, a string out.
"""
from __future__ import annotations

import base64
import hashlib
from html import escape

from karmactl.cli.fleetview import replica_text, workload_label

_SCRIPT = """
(function () {
  var box = document.getElementById('filter');
  if (!box) { return; }
  box.addEventListener('input', function () {
    var q = box.value.toLowerCase();
    var rows = document.querySelectorAll('table.matrix tbody tr');
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var hit = !q || rows[i].getAttribute('data-workload').toLowerCase().indexOf(q) >= 0;
      rows[i].hidden = !hit;
      if (hit) { shown++; }
    }
    document.getElementById('shown').textContent = String(shown);
  });
  // following a workload's link opens its propagation tree
  function openTarget() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target && target.tagName === 'DETAILS') { target.open = true; }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
})();
"""
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
CSP = (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'; "
       "img-src 'none'; base-uri 'none'; form-action 'none'")

_CSS = """
:root { --ok: #1a7f37; --bad: #cf222e; --unk: #9a6700; --muted: #57606a; --line: #d0d7de; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; margin: 0; }
header { background: #24292f; color: #fff; padding: 14px 24px; }
header h1 { font-size: 20px; margin: 0; }
header .meta { color: #d0d7de; margin: 2px 0 0; }
nav { padding: 6px 24px; background: var(--bg); border-bottom: 1px solid var(--line); }
nav a { margin-right: 18px; color: #0969da; text-decoration: none; }
main { padding: 8px 24px 40px; }
h2 { font-size: 17px; margin: 22px 0 8px; }
.empty-note { color: var(--muted); font-style: italic; }
input#filter { padding: 4px 8px; width: 280px; border: 1px solid var(--line); border-radius: 6px; margin-bottom: 8px; }
.count { color: var(--muted); margin-left: 8px; }
table.matrix { border-collapse: collapse; }
table.matrix th, table.matrix td { border: 1px solid var(--line); padding: 5px 10px; vertical-align: top; }
table.matrix thead th { background: var(--bg); text-align: center; font-weight: 600; }
table.matrix thead th.wl { text-align: left; }
table.matrix tbody th { text-align: left; font-weight: normal; white-space: nowrap; }
.kind { color: var(--muted); }
.sub { color: var(--muted); font-size: 12px; }
.badge { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px; font-weight: 600; color: #fff; }
.r-True { background: var(--ok); } .r-False { background: var(--bad); } .r-Unknown { background: var(--unk); }
.taint { display: block; font-size: 11px; font-weight: normal; color: var(--bad); white-space: nowrap; }
td.cell { text-align: center; white-space: nowrap; min-width: 96px; }
td.cell .num { font-weight: 600; font-variant-numeric: tabular-nums; margin-right: 6px; }
td.cell .health { font-size: 12px; }
td.h-Healthy { background: #dafbe1; } td.h-Healthy .health { color: var(--ok); }
td.h-Unhealthy { background: #ffebe9; } td.h-Unhealthy .health { color: var(--bad); }
td.h-Unknown { background: #fff8c5; } td.h-Unknown .health { color: var(--unk); }
td.none { color: #afb8c1; text-align: center; }
.flag { display: block; font-size: 11px; color: var(--bad); }
td.total { text-align: right; font-variant-numeric: tabular-nums; }
ol.timeline { list-style: none; padding: 0 0 0 18px; border-left: 3px solid var(--line); margin: 0; }
ol.timeline li { position: relative; padding: 3px 0 7px 12px; }
ol.timeline li::before { content: ""; position: absolute; left: -27px; top: 8px; width: 13px; height: 13px;
  border-radius: 50%; background: #8c959f; border: 2px solid #fff; }
li.k-taint::before { background: #bc4c00 !important; } li.k-evict::before { background: var(--bad) !important; }
li.k-schedule::before { background: #0969da !important; } li.k-ready::before { background: var(--ok) !important; }
li.k-notready::before { background: var(--bad) !important; }
.t-time { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; color: var(--muted); margin-right: 8px; }
.t-reason { font-weight: 600; margin-right: 8px; }
li.warn .t-reason { color: var(--bad); }
.t-obj { margin-right: 8px; }
.t-note { display: block; color: #424a53; }
details.tree { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; padding: 4px 10px; }
details.tree > summary { cursor: pointer; font-weight: 600; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 20px; }
ul.tree { padding-left: 4px; }
ul.tree li { position: relative; padding: 2px 0 2px 14px; border-left: 1px solid var(--line); }
ul.tree li::before { content: ""; position: absolute; left: 0; top: 12px; width: 10px; border-top: 1px solid var(--line); }
.node-kind { display: inline-block; min-width: 0; font-size: 12px; font-weight: 600; color: #fff; background: #6e7781;
  border-radius: 4px; padding: 0 6px; margin-right: 6px; }
.nk-policy { background: #8250df; } .nk-template { background: #0969da; } .nk-binding { background: #1b7c83; }
.nk-work { background: #9a6700; } .nk-member { background: #57606a; }
.st { font-size: 12px; color: var(--muted); margin-left: 6px; }
.st b.True, .st b.Healthy { color: var(--ok); } .st b.False, .st b.Unhealthy { color: var(--bad); }
.st b.Unknown { color: var(--unk); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
"""


def _e(value) -> str:
    """Text or attribute value, escaped (``& < > " '``)."""
    return escape("" if value is None else str(value), quote=True)


def _ready_word(status: str) -> str:
    return {"True": "Ready", "False": "NotReady"}.get(status, "Unknown")


def _taint_text(t: dict) -> str:
    return f"{t['key']}={t['value']}:{t['effect']}" if t["value"] else f"{t['key']}:{t['effect']}"


def _cluster_header(c: dict) -> str:
    ready = c["ready"] if c["ready"] in ("True", "False") else "Unknown"
    taints = "".join(f'<span class="taint">{_e(_taint_text(t))}</span>' for t in c["taints"])
    title = f"Ready={c['ready']} {c['reason']}: {c['message']}".strip(": ")
    return (f'<th class="cluster" data-cluster="{_e(c["name"])}" data-ready="{_e(c["ready"])}" title="{_e(title)}">'
            f'<div class="cname">{_e(c["name"])}</div>'
            f'<span class="badge r-{ready}">{_ready_word(c["ready"])}</span>{taints}</th>')


def _cell(p: dict | None) -> str:
    if p is None:
        return '<td class="none">&middot;</td>'
    health = p["health"] if p["health"] in ("Healthy", "Unhealthy") else "Unknown"
    flags = ""
    if p["evicting"]:
        flags += '<span class="flag">evicting</span>'
    elif not p["scheduled"]:
        flags += '<span class="flag">not scheduled</span>'
    if not p["applied"]:
        flags += '<span class="flag">not applied</span>'
    return (f'<td class="cell h-{health}" data-cluster="{_e(p["cluster"])}" data-ready="{_e(p["ready"])}" '
            f'data-desired="{_e(p["desired"])}" data-health="{_e(p["health"])}">'
            f'<span class="num">{_e(replica_text(p))}</span><span class="health">{_e(p["health"])}</span>{flags}</td>')


def _matrix(doc: dict, tree_ids: dict) -> str:
    clusters = doc["clusters"]
    known = {c["name"] for c in clusters}
    gone = sorted({p["cluster"] for w in doc["workloads"] for p in w["placements"]} - known)
    columns = [c["name"] for c in clusters] + gone
    rows = []
    for w in doc["workloads"]:
        by_cluster = {p["cluster"]: p for p in w["placements"]}
        label = workload_label(w)
        name = f'<a href="#{tree_ids[label]}">{_e(w["name"])}</a>' if label in tree_ids else _e(w["name"])
        policy = w["policy"]
        sub = f'<div class="sub">{_e(w["binding"]["kind"])} {_e(w["binding"]["name"])}'
        sub += f' &larr; {_e(policy["kind"])} {_e(policy["name"])}</div>' if policy else "</div>"
        where = f'{_e(w["namespace"])}/' if w["namespace"] else ""
        total = "-" if w["replicas"] is None else w["replicas"]
        rows.append(f'<tr data-workload="{_e(label)}"><th scope="row"><span class="kind">{_e(w["kind"])}</span> '
                    f'{where}{name}{sub}</th><td class="total">{_e(total)}</td>'
                    + "".join(_cell(by_cluster.get(n)) for n in columns) + "</tr>")
    heads = "".join(_cluster_header(c) for c in clusters) + "".join(
        f'<th class="cluster" data-cluster="{_e(n)}" data-ready="Unknown"><div class="cname">{_e(n)}</div>'
        f'<span class="badge r-Unknown">no Cluster</span></th>' for n in gone)
    empty = "" if doc["workloads"] else '<p class="empty-note">No resource template has a binding here.</p>'
    n = len(doc["workloads"])
    return ('<section id="matrix"><h2>Workloads &times; clusters</h2>'
            '<input id="filter" type="search" placeholder="filter workloads" aria-label="filter workloads">'
            f'<span class="count"><span id="shown">{n}</span> of {n} shown</span>'
            f'<table class="matrix"><thead><tr><th class="wl">Workload</th><th>Replicas</th>{heads}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>{empty}</section>')


def _moment_kind(t: dict) -> str:
    if t["source"] == "condition":
        return "ready" if t["type"] == "Normal" else "notready"
    return {"TaintClusterSucceed": "taint", "EvictWorkloadFromClusterSucceed": "evict"}.get(t["reason"], "schedule")


def _short_time(text: str) -> str:
    """``2026-01-01T00:06:00.000001Z`` -> ``2026-01-01 00:06:00`` (to the second, UTC)."""
    return text[:19].replace("T", " ") if len(text) >= 19 else text


def _timeline(doc: dict) -> str:
    items = []
    for t in doc["timeline"]:
        o = t["object"]
        obj = "/".join(p for p in (o["namespace"], o["name"]) if p)
        count = f' <span class="sub">&times;{_e(t["count"])}, last {_e(_short_time(t["lastSeen"]))}</span>' \
            if t["count"] > 1 else ""
        warn = " warn" if t["type"] == "Warning" else ""
        items.append(f'<li class="k-{_moment_kind(t)}{warn}"><time class="t-time" datetime="{_e(t["time"])}">'
                     f'{_e(_short_time(t["time"]))}</time><span class="t-reason">{_e(t["reason"])}</span>'
                     f'<span class="t-obj"><span class="kind">{_e(o["kind"])}</span> {_e(obj)}</span>'
                     f'<span class="sub">{_e(t["source"])}</span>{count}<span class="t-note">{_e(t["note"])}</span></li>')
    body = f'<ol class="timeline">{"".join(items)}</ol>' if items else \
        '<p class="empty-note">No taint, eviction, scheduling or Ready change recorded.</p>'
    return f'<section id="timeline"><h2>Failover timeline</h2>{body}</section>'


def _st(label: str, value) -> str:
    return f' <span class="st">{_e(label)} <b class="{_e(value)}">{_e(value)}</b></span>'


def _status_summary(status) -> str:
    if not isinstance(status, dict):
        return ""
    scalars = [(k, v) for k, v in sorted(status.items()) if isinstance(v, (int, float, str, bool)) and k not in (
        "generation", "resourceTemplateGeneration")]
    return " ".join(f"<code>{_e(k)}: {_e(v)}</code>" for k, v in scalars)


def _member_object(o: dict) -> str:
    where = "/".join(p for p in (o["namespace"], o["name"]) if p)
    seen = (_st("health", o["health"]) + (f' <span class="st">observed {_e(o["observedAt"])}</span>' if o["observedAt"] else "")
            if o["observed"] else ' <span class="st">not observed yet</span>')
    summary = _status_summary(o["status"])
    return (f'<li class="member"><span class="node-kind nk-member">{_e(o["kind"])}</span> {_e(where)}{seen}'
            + (f'<div class="sub">{summary}</div>' if summary else "") + "</li>")


def _work(w: dict) -> str:
    flags = (' <span class="flag">terminating</span>' if w["terminating"] else "") + (
        "" if w["dispatching"] else ' <span class="st">dispatching suspended</span>')
    objects = "".join(_member_object(o) for o in w["objects"])
    msg = f'<div class="sub">{_e(w["message"])}</div>' if w["message"] and w["applied"] != "True" else ""
    return (f'<li class="work" data-cluster="{_e(w["cluster"])}"><span class="node-kind nk-work">Work</span> '
            f'{_e(w["namespace"])}/{_e(w["name"])} <span class="st">on <b>{_e(w["cluster"])}</b></span>'
            f'{_st("Applied", w["applied"])}{flags}{msg}<ul>{objects}</ul></li>')


def _tree(tree: dict, tid: str, open_: bool) -> str:
    wl, b, p = tree["workload"], tree["binding"], tree["policy"]
    label = workload_label(wl)
    works = "".join(_work(w) for w in tree["works"]) or '<li class="sub">no Works</li>'
    binding = (f'<li><span class="node-kind nk-binding">{_e(b["kind"])}</span> '
               f'{_e("/".join(x for x in (b["namespace"], b["name"]) if x))}'
               f'{_st("Scheduled", b["scheduled"])}{_st("FullyApplied", b["fullyApplied"])}<ul>{works}</ul></li>')
    labels = ", ".join(f"{k}={v}" for k, v in sorted(wl["labels"].items()))
    template = (f'<li><span class="node-kind nk-template">{_e(wl["kind"])}</span> '
                f'{_e("/".join(x for x in (wl["namespace"], wl["name"]) if x))} <span class="sub">{_e(wl["apiVersion"])}'
                + ("" if wl["found"] else '</span> <span class="flag">not in the state directory')
                + (f'</span><div class="sub">labels: {_e(labels)}</div>' if labels else "</span>")
                + f'<ul>{binding}</ul></li>')
    if p is not None:
        missing = "" if p["found"] else ' <span class="flag">not in the state directory</span>'
        inner = (f'<li><span class="node-kind nk-policy">{_e(p["kind"])}</span> '
                 f'{_e("/".join(x for x in (p["namespace"], p["name"]) if x))}{missing}<ul>{template}</ul></li>')
    else:
        inner = template
    return (f'<details class="tree" id="{tid}" data-workload="{_e(label)}"{" open" if open_ else ""}>'
            f'<summary>{_e(label)} <span class="sub">{len(tree["works"])} Work(s)</span></summary>'
            f'<ul class="tree">{inner}</ul></details>')


def _trees(doc: dict, tree_ids: dict) -> str:
    trees = doc["trees"]
    body = "".join(_tree(t, tree_ids[workload_label(t["workload"])], len(trees) == 1) for t in trees) or \
        '<p class="empty-note">No workload to show.</p>'
    return f'<section id="propagation"><h2>Propagation</h2>{body}</section>'


def render_page(doc: dict) -> str:
    """The page of ``doc`` (:func:`karmactl.cli.fleetview.fleet_view`), as one HTML string."""
    tree_ids = {workload_label(t["workload"]): f"t{i}" for i, t in enumerate(doc["trees"])}
    scope = f'namespace {_e(doc["namespace"])}' if doc["namespace"] is not None else "all namespaces"
    when = f' &middot; as of {_e(doc["now"])}' if doc["now"] else ""
    meta = (f'{len(doc["clusters"])} cluster(s) &middot; {len(doc["workloads"])} workload(s) &middot; {scope}{when}')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>karmactl fleet</title><style>{_CSS}</style></head><body>"
            f'<header><h1>karmactl fleet</h1><p class="meta">{meta}</p></header>'
            '<nav><a href="#matrix">Workloads &times; clusters</a><a href="#timeline">Failover timeline</a>'
            '<a href="#propagation">Propagation</a></nav><main>'
            + _matrix(doc, tree_ids) + _timeline(doc) + _trees(doc, tree_ids)
            + f"</main><script>{_SCRIPT}</script></body></html>\n")


__all__ = ["CSP", "render_page"]
