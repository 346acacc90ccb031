"""The data of ``karmactl fleet`` from a snapshot and the stored Events: pure, JSON-ready dicts.

Every number is one ``get`` prints: a workload's READY is the template's aggregated
``status.readyReplicas``/``spec.replicas`` (``get deploy``), a cell's replicas are the binding's
``spec.clusters[].replicas`` (``get rb -o wide``) and its ready/health the binding's
``status.aggregatedStatus`` item for that cluster (what the member copy reported, ``karmactl/interpreter``).
"""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.kinds import group_of
from karmactl.api.templates import merged_view

BINDING_KINDS = ("ResourceBinding", "ClusterResourceBinding")


def _conditions(obj: dict) -> dict:
    return {c.get("type"): c.get("status") for c in ((obj.get("status") or {}).get("conditions") or [])
            if isinstance(c, dict)}


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def clusters_of(snap) -> list[dict]:
    """``[{name, ready: True|False|Unknown, taints: ["key=value:Effect"], syncMode}]`` by name."""
    out = []
    for key in sorted(k for k in snap.user if k[:2] == ("cluster.karmada.io", "Cluster")):
        obj = merged_view(snap.user[key], snap.overlays.get(key))
        spec = obj.get("spec") or {}
        taints = [f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}"
                  for t in spec.get("taints") or [] if isinstance(t, dict)]
        out.append({"name": key[3], "ready": _conditions(obj).get("Ready", "Unknown"), "taints": taints,
                    "syncMode": spec.get("syncMode") or "Push"})
    return out


def _policy_of(binding: dict) -> dict | None:
    ann = (binding.get("metadata") or {}).get("annotations") or {}
    if ann.get(C.PP_NAME_ANNOTATION):
        return {"kind": "PropagationPolicy", "namespace": ann.get(C.PP_NAMESPACE_ANNOTATION) or "",
                "name": ann[C.PP_NAME_ANNOTATION]}
    if ann.get(C.CPP_NAME_ANNOTATION):
        return {"kind": "ClusterPropagationPolicy", "namespace": "", "name": ann[C.CPP_NAME_ANNOTATION]}
    return None


def _template(snap, resource: dict) -> dict | None:
    key = (group_of(resource.get("apiVersion") or ""), resource.get("kind"), resource.get("namespace") or "",
           resource.get("name"))
    return merged_view(snap.user[key], snap.overlays.get(key)) if key in snap.user else None


def _cells(binding: dict) -> dict:
    """``{cluster: {replicas, ready, health, applied}}`` of one binding."""
    spec, status = binding.get("spec") or {}, binding.get("status") or {}
    items = {i.get("clusterName"): i for i in status.get("aggregatedStatus") or [] if isinstance(i, dict)}
    cells = {}
    for target in spec.get("clusters") or []:
        name = target.get("name")
        item = items.get(name) or {}
        cells[name] = {"replicas": _int(target.get("replicas")),
                       "ready": _int((item.get("status") or {}).get("readyReplicas")),
                       "health": item.get("health") or "Unknown", "applied": bool(item.get("applied"))}
    return cells


def _health(cells: dict, conditions: dict) -> str:
    """A workload's overall health: Healthy when scheduled, fully applied and every cell Healthy;
    Unhealthy when a cell is; else Progressing (or Unscheduled)."""
    if conditions.get("Scheduled") != "True" or not cells:
        return "Unscheduled"
    if any(c["health"] == "Unhealthy" for c in cells.values()):
        return "Unhealthy"
    if conditions.get("FullyApplied") == "True" and all(c["health"] == "Healthy" for c in cells.values()):
        return "Healthy"
    return "Progressing"


def workloads_of(snap, namespace: str | None) -> list[dict]:
    """One row per ResourceBinding (in ``namespace``, or all when None) and ClusterResourceBinding, by
    namespace, kind and name: the template it binds, its policy, replicas, per-cluster cells and its
    Works with the member objects (the propagation tree policy → template → binding → Work → object)."""
    from karmactl.controllers.helper.binding import works_by_binding

    by_binding = works_by_binding(snap.works)
    rows = []
    for key in sorted(k for k in snap.bindings if k[1] in BINDING_KINDS):
        binding = snap.bindings[key]
        resource = (binding.get("spec") or {}).get("resource") or {}
        ns = resource.get("namespace") or ""
        if namespace is not None and ns and ns != namespace:  # cluster-scoped workloads are in every view
            continue
        template = _template(snap, resource) or {}
        tspec, tstatus = template.get("spec") or {}, template.get("status") or {}
        conditions = _conditions(binding)
        cells = _cells(binding)
        desired = _int(tspec.get("replicas")) if "replicas" in tspec else _int((binding.get("spec") or {}).get("replicas"))
        rows.append({
            "kind": resource.get("kind"), "apiVersion": resource.get("apiVersion"), "namespace": ns,
            "name": resource.get("name"),
            "binding": {"kind": key[1], "namespace": key[2], "name": key[3]},
            "policy": _policy_of(binding),
            "replicas": desired, "ready": _int(tstatus.get("readyReplicas")) if desired is not None else None,
            "scheduled": conditions.get("Scheduled", "Unknown"), "fullyApplied": conditions.get("FullyApplied", "Unknown"),
            "health": _health(cells, conditions), "clusters": cells, "works": _works(binding, by_binding)})
    rows.sort(key=lambda r: (r["namespace"], r["kind"] or "", r["name"] or ""))
    return rows


def timeline(events: list[dict], limit: int = 500) -> list[dict]:
    """The Events, oldest first, as ``{time, type, reason, object, namespace, message, controller, count}``
    (the newest ``limit``): taints, evictions, scheduling and applying read in order."""
    from karmactl.pipeline.events import last_seen

    rows = []
    for e in sorted(events, key=last_seen)[-limit:]:
        reg = e.get("regarding") or e.get("involvedObject") or {}
        rows.append({"time": last_seen(e), "type": e.get("type") or "Normal", "reason": e.get("reason") or "",
                     "object": f"{(reg.get('kind') or '').lower()}/{reg.get('name') or ''}",
                     "namespace": reg.get("namespace") or "", "message": e.get("note") or e.get("message") or "",
                     "controller": e.get("reportingController") or "",
                     "count": ((e.get("series") or {}).get("count")) or 1})
    return rows


def _works(binding: dict, by_binding: dict) -> list[dict]:
    """The Works of a binding, by cluster: ``[{cluster, name, namespace, applied, objects: [{kind,
    namespace, name, health, ready}]}]`` (the member objects as their manifest statuses report them)."""
    from karmactl.controllers.helper.binding import binding_id

    works = []
    for cluster, work in by_binding.get(binding_id(binding), []):
        objects = []
        for ms in (work.get("status") or {}).get("manifestStatuses") or []:
            ident = ms.get("identifier") or {}
            objects.append({"kind": ident.get("kind"), "namespace": ident.get("namespace") or "",
                            "name": ident.get("name"), "health": ms.get("health") or "Unknown",
                            "ready": _int((ms.get("status") or {}).get("readyReplicas"))})
        works.append({"cluster": cluster, "name": work["metadata"]["name"], "namespace": work["metadata"]["namespace"],
                      "applied": _conditions(work).get("Applied", "Unknown"), "objects": objects})
    return works


def fleet_data(snap, events: list[dict], now: str, namespace: str | None = None) -> dict:
    """Everything ``fleet`` shows: ``{generatedAt, clusters, workloads, timeline}``."""
    return {"generatedAt": now, "clusters": clusters_of(snap), "workloads": workloads_of(snap, namespace),
            "timeline": timeline(events)}


def find_row(rows: list[dict], kind_info, name: str, namespace: str) -> int | None:
    """The index of template ``kind_info``/``name``'s row (``namespace`` for namespaced kinds), or None."""
    ns = namespace if kind_info.namespaced else ""
    for i, r in enumerate(rows):
        if r["kind"] == kind_info.kind and group_of(r["apiVersion"] or "") == kind_info.group \
                and r["name"] == name and r["namespace"] == ns:
            return i
    return None
