"""The HTML page of ``karmactl fleet --html FILE``: one self-contained file (inline CSS and script, no
request to any network or file), readable as a CI artifact:

* the matrix of workloads × member clusters (``ready/replicas`` coloured by health, each cluster's Ready
  condition and taints in its header), with a filter box;
* the failover timeline: the Events on a time axis (Warnings red) and in a table, oldest first;
* the propagation tree policy → template → binding → Work → member object of one workload (``--workload``
  or the first), and of any other chosen in the page (drawn by the script from the embedded data).

The page is rendered on the server side (it reads without script); the data is embedded as JSON for the
tree's chooser and for ``-o json`` readers. Every text is HTML-escaped (names come from the state
directory, which may be a stranger's merge request).
"""
from __future__ import annotations

import json
from html import escape

from karmactl.api.objects import parse_time
from karmactl.cli.fleet.terminal import cell_text, ready_text

CSS = """
:root{--ok:#1a7f37;--bad:#cf222e;--wait:#9a6700;--line:#d0d7de;--muted:#57606a;font-family:system-ui,sans-serif}
body{margin:1.5rem;color:#1f2328}h1{font-size:1.4rem;margin:0}h2{font-size:1.1rem;margin:1.6rem 0 .5rem}
.meta{color:var(--muted);font-size:.85rem}.summary span{margin-right:1.2rem}
table{border-collapse:collapse;font-size:.85rem}th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left}
th{background:#f6f8fa;position:sticky;top:0}td.cell{text-align:center;font-variant-numeric:tabular-nums}
.h-Healthy{background:#dafbe1;color:var(--ok)}.h-Unhealthy{background:#ffebe9;color:var(--bad)}
.h-Unknown,.h-Progressing,.h-Unscheduled{background:#fff8c5;color:var(--wait)}.none{color:#8c959f}
.c-True{color:var(--ok)}.c-False{color:var(--bad)}.c-Unknown{color:var(--wait)}
.scroll{max-height:32rem;overflow:auto;border:1px solid var(--line);display:inline-block;max-width:100%}
svg .Warning{fill:var(--bad)}svg .Normal{fill:#0969da}svg text{font-size:10px;fill:var(--muted)}
.tree ul{list-style:none;margin:0;padding-left:1.4rem;border-left:1px dashed var(--line)}
.tree li{margin:.3rem 0}.node{display:inline-block;border:1px solid var(--line);border-radius:6px;padding:.2rem .5rem;background:#fff}
.node b{font-weight:600}.kind{color:var(--muted);font-size:.75rem;margin-right:.3rem}
input,select{font-size:.85rem;padding:.2rem}#filter{display:block;margin-bottom:.4rem}.empty{color:var(--muted);font-style:italic}
"""

SCRIPT = """
(function(){
const data=JSON.parse(document.getElementById('fleet-data').textContent);
const esc=s=>String(s==null?'':s).replace(/[&<>"']/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]));
function node(kind,name,extra,cls){return '<span class="node '+(cls||'')+'"><span class="kind">'+esc(kind)+'</span><b>'+esc(name)+'</b>'+(extra?' '+extra:'')+'</span>';}
function tree(w){
 const ref=(n,o)=>o?(o.namespace?o.namespace+'/':'')+o.name:n;
 let h='<ul><li>'+(w.policy?node(w.policy.kind,ref('',w.policy)):node('policy','none',''))+'<ul><li>'+
  node(w.kind,ref('',w),w.replicas==null?'':esc((w.ready||0)+'/'+w.replicas),'h-'+w.health)+'<ul><li>'+
  node(w.binding.kind,ref('',w.binding),'Scheduled='+esc(w.scheduled)+' FullyApplied='+esc(w.fullyApplied))+'<ul>';
 if(!w.works.length){h+='<li class="empty">no Work yet</li>';}
 for(const wk of w.works){h+='<li>'+node('Work',wk.namespace+'/'+wk.name,'Applied='+esc(wk.applied)+' → '+esc(wk.cluster))+'<ul>';
  for(const o of wk.objects){h+='<li>'+node(o.kind,ref('',o),esc(o.health)+(o.ready==null?'':' ready='+esc(o.ready)),'h-'+o.health)+'</li>';}
  if(!wk.objects.length){h+='<li class="empty">no member status collected</li>';}
  h+='</ul></li>';}
 return h+'</ul></li></ul></li></ul></li></ul>';}
const pick=document.getElementById('workload');
if(pick){pick.addEventListener('change',()=>{document.getElementById('tree').innerHTML=tree(data.workloads[+pick.value]);});}
const filter=document.getElementById('filter');
if(filter){filter.addEventListener('input',()=>{const q=filter.value.toLowerCase();
 for(const tr of document.querySelectorAll('#matrix tbody tr')){tr.hidden=q&&!tr.dataset.name.toLowerCase().includes(q);}});}
})();
"""


def _ref(obj: dict | None) -> str:
    if not obj:
        return "none"
    return f"{obj['namespace']}/{obj['name']}" if obj.get("namespace") else obj["name"]


def _node(kind: str, name: str, extra: str = "", cls: str = "") -> str:
    return (f'<span class="node {escape(cls)}"><span class="kind">{escape(kind)}</span><b>{escape(name)}</b>'
            f"{' ' + extra if extra else ''}</span>")


def _object_html(o: dict) -> str:
    extra = escape(o["health"]) + ("" if o["ready"] is None else f" ready={o['ready']}")
    return f"<li>{_node(o['kind'] or '', _ref(o), extra, 'h-' + o['health'])}</li>"


def _work_html(wk: dict) -> str:
    objs = "".join(_object_html(o) for o in wk["objects"]) or '<li class="empty">no member status collected</li>'
    head = _node("Work", f"{wk['namespace']}/{wk['name']}", f"Applied={escape(wk['applied'])} → {escape(wk['cluster'])}")
    return f"<li>{head}<ul>{objs}</ul></li>"


def tree_html(w: dict) -> str:
    """The propagation tree of one workload row (the script draws the same for another choice)."""
    policy = _node(w["policy"]["kind"], _ref(w["policy"])) if w["policy"] else _node("policy", "none")
    ready = "" if w["replicas"] is None else escape(f"{w['ready'] or 0}/{w['replicas']}")
    binding = _node(w["binding"]["kind"], _ref(w["binding"]),
                    f"Scheduled={escape(w['scheduled'])} FullyApplied={escape(w['fullyApplied'])}")
    works = "".join(_work_html(wk) for wk in w["works"]) or '<li class="empty">no Work yet</li>'
    return (f"<ul><li>{policy}<ul><li>{_node(w['kind'] or '', _ref(w), ready, 'h-' + w['health'])}<ul><li>{binding}"
            f"<ul>{works}</ul></li></ul></li></ul></li></ul>")


def _matrix_html(data: dict) -> str:
    clusters = data["clusters"]
    head = "".join(f'<th data-cluster="{escape(c["name"])}">{escape(c["name"])}<br><span class="c-{escape(c["ready"])}">'
                   f'Ready={escape(c["ready"])}</span>{"<br>" + escape(", ".join(c["taints"])) if c["taints"] else ""}</th>'
                   for c in clusters)
    rows = []
    for i, w in enumerate(data["workloads"]):
        name = f"{(w['kind'] or '').lower()}/{w['name']}"
        cells = []
        for c in clusters:
            cell = w["clusters"].get(c["name"])
            cls = f"cell h-{escape(cell['health'])}" if cell else "cell none"
            cells.append(f'<td class="{cls}" data-cluster="{escape(c["name"])}">{escape(cell_text(cell))}</td>')
        rows.append(f'<tr data-index="{i}" data-name="{escape(w["namespace"] + "/" + name)}"><td>{escape(w["namespace"])}</td>'
                    f'<td class="workload">{escape(name)}</td><td class="ready">{escape(ready_text(w))}</td>'
                    f'<td class="health h-{escape(w["health"])}">{escape(w["health"])}</td>{"".join(cells)}</tr>')
    if not rows:
        return '<p class="empty" id="no-workloads">No workloads: no ResourceBinding yet.</p>'
    return ('<input id="filter" placeholder="filter workloads"><div class="scroll"><table id="matrix"><thead><tr>'
            f'<th>NAMESPACE</th><th>WORKLOAD</th><th>READY</th><th>HEALTH</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _timeline_html(events: list[dict]) -> str:
    if not events:
        return '<p class="empty" id="no-events">No Events recorded.</p>'
    times = [parse_time(e["time"]).timestamp() if e["time"] else 0.0 for e in events]
    lo, hi = min(times), max(times)
    span = (hi - lo) or 1.0
    width = 900
    dots = "".join(f'<circle class="{escape(e["type"])}" cx="{20 + (t - lo) / span * (width - 40):.1f}" '
                   f'cy="{20 + (i % 4) * 10}" r="4"><title>{escape(e["time"] + " " + e["reason"] + " " + e["object"] + ": " + e["message"])}'
                   f"</title></circle>" for i, (e, t) in enumerate(zip(events, times)))
    axis = (f'<line x1="20" y1="62" x2="{width - 20}" y2="62" stroke="#d0d7de"/>'
            f'<text x="20" y="76">{escape(events[0]["time"])}</text>'
            f'<text x="{width - 20}" y="76" text-anchor="end">{escape(events[-1]["time"])}</text>')
    rows = "".join(f'<tr class="event {escape(e["type"])}"><td>{escape(e["time"])}</td><td>{escape(e["type"])}</td>'
                   f'<td>{escape(e["reason"])}</td><td>{escape((e["namespace"] + "/" if e["namespace"] else "") + e["object"])}</td>'
                   f'<td>{escape(e["message"])}</td><td>{e["count"]}</td></tr>' for e in events)
    return (f'<svg id="timeline" width="{width}" height="82" role="img" aria-label="Events over time">{dots}{axis}</svg>'
            '<div class="scroll"><table id="events"><thead><tr><th>TIME</th><th>TYPE</th><th>REASON</th><th>OBJECT</th>'
            f"<th>MESSAGE</th><th>COUNT</th></tr></thead><tbody>{rows}</tbody></table></div>")


def _tree_section(data: dict, chosen: int | None) -> str:
    rows = data["workloads"]
    if not rows:
        return '<p class="empty" id="no-tree">No workload to show.</p>'
    chosen = chosen or 0
    options = "".join(f'<option value="{i}"{" selected" if i == chosen else ""}>'
                      f'{escape((w["namespace"] + "/" if w["namespace"] else "") + (w["kind"] or "").lower() + "/" + w["name"])}'
                      f"</option>" for i, w in enumerate(rows))
    return f'<select id="workload">{options}</select><div class="tree" id="tree">{tree_html(rows[chosen])}</div>'


def render_page(data: dict, chosen: int | None = None) -> str:
    """The whole page for :func:`karmactl.cli.fleet.data.fleet_data`'s ``data``; ``chosen`` is the index
    of the workload whose tree is shown first (default the first)."""
    rows = data["workloads"]
    healthy = sum(1 for w in rows if w["health"] == "Healthy")
    embedded = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")  # no "</script>" can end it
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>karmactl fleet</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head><body>'
            f'<h1>karmactl fleet</h1><p class="meta">generated {escape(data["generatedAt"])}</p>'
            f'<p class="summary"><span id="count-workloads">{len(rows)} workloads</span>'
            f'<span id="count-healthy">{healthy} healthy</span><span id="count-clusters">{len(data["clusters"])} clusters</span></p>'
            f'<h2>Workloads × clusters</h2>{_matrix_html(data)}'
            f'<h2>Failover timeline (Events)</h2>{_timeline_html(data["timeline"])}'
            f'<h2>Propagation tree</h2>{_tree_section(data, chosen)}'
            f'<script type="application/json" id="fleet-data">{embedded}</script><script>{SCRIPT}</script>'
            "</body></html>\n")
