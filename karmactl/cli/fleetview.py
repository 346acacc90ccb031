"""What ``karmactl fleet`` shows, as plain data: pure functions from a loaded snapshot (and the
stored Events) to one JSON-ready document, which the terminal table, ``-o json`` and the HTML page
(:mod:`karmactl.cli.fleetpage`) all print.

The document (``-o json``; every list sorted, nothing read from the wall clock)::

    {"apiVersion": "karmactl.io/v1alpha1", "kind": "FleetView",
     "now": "2026-01-01T00:12:00Z" | null,          # the global --now, when given
     "namespace": "shop" | null,                    # null: -A (every namespace, cluster-scoped too)
     "clusters": [{"name", "labels": {..}, "ready": "True"|"False"|"Unknown",
                   "reason", "message", "lastTransitionTime",   # of the Ready condition ("" if none)
                   "taints": [{"key", "value", "effect", "timeAdded"}]}],       # spec.taints
     "workloads": [{"apiVersion", "kind", "namespace", "name",              # the resource template
                    "binding": {"kind", "namespace", "name"},              # its (Cluster)ResourceBinding
                    "policy": {"kind", "namespace", "name"} | null,        # the claiming policy
                    "replicas": int | null,                                # binding spec.replicas
                    "scheduled": "True"|"False"|"Unknown", "fullyApplied": same,   # binding conditions
                    "placements": [{"cluster",
                                    "desired": int | null,   # spec.clusters[].replicas (null: no replicas)
                                    "ready": int | null,     # aggregatedStatus[].status.readyReplicas
                                    "health": "Healthy"|"Unhealthy"|"Unknown",  # aggregatedStatus[].health
                                    "applied": bool,         # aggregatedStatus[].applied
                                    "scheduled": bool,       # named in spec.clusters
                                    "evicting": bool}]}],    # a gracefulEvictionTasks[].fromCluster
     "timeline": [{"time", "lastSeen", "count", "type": "Normal"|"Warning", "reason",
                   "object": {"kind", "namespace", "name"}, "note", "source": CONTROLLER | "condition"}],
     "trees": [{"workload": {apiVersion, kind, namespace, name, "labels": {..}, "found": bool},
                "policy": {"kind", "namespace", "name", "found": bool} | null,
                "binding": {"kind", "namespace", "name", "scheduled", "fullyApplied"},
                "works": [{"cluster", "namespace", "name", "applied": "True"|"False"|"Unknown",
                           "message", "dispatching": bool, "terminating": bool,
                           "objects": [{"apiVersion", "kind", "namespace", "name",
                                        "observed": bool, "observedAt": str | null,
                                        "health": "Healthy"|"Unhealthy"|"Unknown",
                                        "status": {..} | null}]}]}]}

A placement is a cluster the binding schedules to (``spec.clusters``), reports on
(``status.aggregatedStatus``) or is evicting from (``spec.gracefulEvictionTasks``), as Karmada's
binding status controller aggregates the Works (``pkg/controllers/status/rb_status_controller.go``);
``ready`` is null where the member's status was never observed or the kind reports no
``readyReplicas`` (zero is omitted by Kubernetes, so an observed status without it counts 0 when the
binding has replicas). The timeline holds the Events karmactl recorded
(:mod:`karmactl.pipeline.events`) that tell a failover: a cluster tainted (TaintClusterSucceed), a
binding's workload evicted (EvictWorkloadFromClusterSucceed), scheduled again
(ScheduleBindingSucceed/Failed), plus each Cluster's last Ready transition (its condition's
``lastTransitionTime``: Karmada records no Event for it). Events on the templates repeat those on the
bindings and are left out.
"""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.kinds import group_of
from karmactl.api.names import cluster_of_execution_namespace
from karmactl.api.objects import get_condition, parse_time
from karmactl.api.selectors import label_selector_matches
from karmactl.api.snapshot import Snapshot
from karmactl.api.templates import merged_view, template_view

API_VERSION = "karmactl.io/v1alpha1"
KIND = "FleetView"
BINDING_KINDS = ("ResourceBinding", "ClusterResourceBinding")
# the Events of a failover (karmactl/pipeline/events.py), on bindings and Clusters
TIMELINE_REASONS = ("TaintClusterSucceed", "EvictWorkloadFromClusterSucceed", "ScheduleBindingSucceed",
                    "ScheduleBindingFailed")
CLUSTER_KEY = ("cluster.karmada.io", "Cluster")


def _ref(kind: str, namespace: str | None, name: str) -> dict:
    return {"kind": kind, "namespace": namespace or "", "name": name}


def _cond_status(obj: dict | None, ctype: str) -> str:
    cond = get_condition(obj, ctype) if obj else None
    return (cond or {}).get("status") or "Unknown"


def cluster_rows(snap: Snapshot) -> list[dict]:
    """Every Cluster as the view shows it (name, labels, Ready condition, taints), by name."""
    rows = []
    for key in snap.keys_of_kind(*CLUSTER_KEY):
        view = merged_view(snap.user[key], snap.overlays.get(key))
        ready = get_condition(view, C.COND_READY) or {}
        rows.append({
            "name": key[3],
            "labels": dict(view["metadata"].get("labels") or {}),
            "ready": ready.get("status") or "Unknown",
            "reason": ready.get("reason") or "",
            "message": ready.get("message") or "",
            "lastTransitionTime": ready.get("lastTransitionTime") or "",
            "taints": [{"key": t.get("key") or "", "value": t.get("value") or "", "effect": t.get("effect") or "",
                        "timeAdded": t.get("timeAdded") or ""} for t in (view.get("spec") or {}).get("taints") or []],
        })
    return rows


def template_key(snap: Snapshot, resource: dict) -> tuple:
    """The snapshot key ``(group, kind, namespace, name)`` of a binding's ``spec.resource``."""
    return (group_of(resource.get("apiVersion") or ""), resource.get("kind") or "",
            resource.get("namespace") or "", resource.get("name") or "")


def _policy_of(binding: dict) -> dict | None:
    ann = binding["metadata"].get("annotations") or {}
    if ann.get(C.PP_NAME_ANNOTATION):
        return _ref("PropagationPolicy", ann.get(C.PP_NAMESPACE_ANNOTATION) or "", ann[C.PP_NAME_ANNOTATION])
    if ann.get(C.CPP_NAME_ANNOTATION):
        return _ref("ClusterPropagationPolicy", "", ann[C.CPP_NAME_ANNOTATION])
    return None


def _placements(binding: dict) -> list[dict]:
    """The binding's placements (see the module docstring), by cluster name."""
    spec = binding.get("spec") or {}
    wants_replicas = spec.get("replicas") is not None
    desired = {c.get("name"): c.get("replicas") for c in spec.get("clusters") or [] if c.get("name")}
    evicting = {t.get("fromCluster") for t in spec.get("gracefulEvictionTasks") or []}
    items = {i.get("clusterName"): i for i in (binding.get("status") or {}).get("aggregatedStatus") or []
             if i.get("clusterName")}
    out = []
    for cluster in sorted(set(desired) | set(items) | (evicting - {None})):
        item = items.get(cluster) or {}
        status = item.get("status") if isinstance(item.get("status"), dict) else None
        ready = status.get("readyReplicas", 0 if wants_replicas else None) if status is not None else None
        want = desired.get(cluster)
        out.append({"cluster": cluster,
                    "desired": want if want is not None or cluster not in desired else (0 if wants_replicas else None),
                    "ready": ready if isinstance(ready, int) and not isinstance(ready, bool) else None,
                    "health": item.get("health") or "Unknown",
                    "applied": bool(item.get("applied")),
                    "scheduled": cluster in desired,
                    "evicting": cluster in evicting})
    return out


def selected_bindings(snap: Snapshot, namespace: str | None, selector: dict | None) -> list[tuple]:
    """``[(binding key, binding, template key, template view or None)]`` of the bindings whose
    template is in ``namespace`` (None: every namespace and the cluster-scoped templates) and whose
    labels match ``selector`` (a LabelSelector dict, None: all), by template key."""
    out = []
    for bkey, binding in snap.bindings.items():
        if bkey[1] not in BINDING_KINDS:
            continue
        tkey = template_key(snap, (binding.get("spec") or {}).get("resource") or {})
        if namespace is not None and (not tkey[2] or tkey[2] != namespace):
            continue
        obj = snap.user.get(tkey)
        view = template_view(obj, snap.overlays.get(tkey)) if obj is not None else None
        labels = (view or {}).get("metadata", {}).get("labels") if view else None
        if selector is not None and not label_selector_matches(selector, labels or {}):
            continue
        out.append((bkey, binding, tkey, view))
    return sorted(out, key=lambda row: (row[2], row[0]))


def workload_row(binding_key: tuple, binding: dict) -> dict:
    """One row of the matrix: the template, its binding and policy, and its placements."""
    res = (binding.get("spec") or {}).get("resource") or {}
    return {"apiVersion": res.get("apiVersion") or "", "kind": res.get("kind") or "",
            "namespace": res.get("namespace") or "", "name": res.get("name") or "",
            "binding": _ref(binding_key[1], binding_key[2], binding_key[3]),
            "policy": _policy_of(binding),
            "replicas": (binding.get("spec") or {}).get("replicas"),
            "scheduled": _cond_status(binding, C.COND_SCHEDULED),
            "fullyApplied": _cond_status(binding, C.COND_FULLY_APPLIED),
            "placements": _placements(binding)}


def _time_key(text: str) -> tuple:
    try:
        return (0, parse_time(text).timestamp())
    except (TypeError, ValueError):
        return (1, 0.0)


def timeline(events: list[dict], clusters: list[dict]) -> list[dict]:
    """The failover timeline: the Events of :data:`TIMELINE_REASONS` among ``events`` (stored Events,
    ``events.k8s.io/v1``) and each cluster row's last Ready transition, oldest first (ties: object,
    reason). Times are RFC 3339 as recorded (Events carry microseconds)."""
    out = []
    for e in events:
        if e.get("reason") not in TIMELINE_REASONS:
            continue
        reg = e.get("regarding") or {}
        series = e.get("series") or {}
        time = e.get("eventTime") or ""
        out.append({"time": time, "lastSeen": series.get("lastObservedTime") or time,
                    "count": series.get("count") or 1, "type": e.get("type") or "Normal", "reason": e["reason"],
                    "object": _ref(reg.get("kind") or "", reg.get("namespace"), reg.get("name") or ""),
                    "note": e.get("note") or "", "source": e.get("reportingController") or ""})
    for c in clusters:
        if c["lastTransitionTime"]:
            out.append({"time": c["lastTransitionTime"], "lastSeen": c["lastTransitionTime"], "count": 1,
                        "type": "Normal" if c["ready"] == "True" else "Warning",
                        "reason": c["reason"] or f"Ready{c['ready']}",
                        "object": _ref("Cluster", "", c["name"]),
                        "note": f"Ready={c['ready']}" + (f": {c['message']}" if c["message"] else ""),
                        "source": "condition"})
    return sorted(out, key=lambda t: (_time_key(t["time"]), t["object"]["kind"], t["object"]["namespace"],
                                      t["object"]["name"], t["reason"], t["note"]))


def timeline_objects(snap: Snapshot, rows: list[tuple]) -> set:
    """The objects whose Events the timeline reads: the selected bindings (``rows`` of
    :func:`selected_bindings`) and every Cluster, as ``(group, kind, namespace, name)``
    (:func:`karmactl.store.events.events_regarding`)."""
    return {bkey for bkey, *_rest in rows} | set(snap.keys_of_kind(*CLUSTER_KEY))


def _works_by_binding(snap: Snapshot) -> dict:
    """``binding key -> [(cluster, Work key, Work)]`` by cluster, terminating Works included."""
    from karmactl.controllers.helper.work import work_binding_key

    out: dict = {}
    for wkey in sorted(snap.works):
        bkey = work_binding_key(snap.works[wkey])
        cluster = cluster_of_execution_namespace(wkey[2])
        if bkey is not None and cluster is not None:
            out.setdefault(bkey, []).append((cluster, wkey, snap.works[wkey]))
    return out


def _identifier_matches(ident: dict, manifest: dict) -> bool:
    md = manifest.get("metadata") or {}
    return (ident.get("kind") == manifest.get("kind") and ident.get("name") == md.get("name")
            and (ident.get("namespace") or "") == (md.get("namespace") or "")
            and (ident.get("group") or "") == group_of(manifest.get("apiVersion") or ""))


def _member_objects(work: dict) -> list[dict]:
    """The Work's manifests as the member last reported them (its ``manifestStatuses``)."""
    from karmactl.controllers.helper.work import observed_at

    statuses = (work.get("status") or {}).get("manifestStatuses") or []
    out = []
    for manifest in ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []:
        md = manifest.get("metadata") or {}
        entry = next((s for s in statuses if _identifier_matches(s.get("identifier") or {}, manifest)), None)
        out.append({"apiVersion": manifest.get("apiVersion") or "", "kind": manifest.get("kind") or "",
                    "namespace": md.get("namespace") or "", "name": md.get("name") or "",
                    "observed": entry is not None,
                    "observedAt": observed_at(work) if entry is not None else None,
                    "health": (entry or {}).get("health") or "Unknown",
                    "status": (entry or {}).get("status")})
    return out


def propagation_tree(snap: Snapshot, binding_key: tuple, binding: dict, works: list) -> dict:
    """PropagationPolicy -> template -> binding -> Work per cluster -> member object, for one binding
    (``works``: its ``[(cluster, Work key, Work)]``)."""
    res = (binding.get("spec") or {}).get("resource") or {}
    policy = _policy_of(binding)
    if policy is not None:
        pkey = ("policy.karmada.io", policy["kind"], policy["namespace"], policy["name"])
        policy["found"] = pkey in snap.user
    tree_works = []
    for cluster, wkey, work in works:
        applied = get_condition(work, C.COND_APPLIED) or {}
        tree_works.append({"cluster": cluster, "namespace": wkey[2], "name": wkey[3],
                           "applied": applied.get("status") or "Unknown", "message": applied.get("message") or "",
                           "dispatching": _cond_status(work, C.COND_DISPATCHING) != "False",
                           "terminating": bool(work["metadata"].get("deletionTimestamp")),
                           "objects": _member_objects(work)})
    tkey = template_key(snap, res)
    template = snap.user.get(tkey)
    labels = template_view(template, snap.overlays.get(tkey))["metadata"].get("labels") if template else None
    return {"workload": {"apiVersion": res.get("apiVersion") or "", "kind": res.get("kind") or "",
                         "namespace": res.get("namespace") or "", "name": res.get("name") or "",
                         "labels": dict(labels or {}), "found": template is not None},
            "policy": policy,
            "binding": dict(_ref(binding_key[1], binding_key[2], binding_key[3]),
                            scheduled=_cond_status(binding, C.COND_SCHEDULED),
                            fullyApplied=_cond_status(binding, C.COND_FULLY_APPLIED)),
            "works": tree_works}


def fleet_view(snap: Snapshot, rows: list[tuple], events: list[dict], namespace: str | None,
               now: str | None, focus: tuple | None = None) -> dict:
    """The whole document (module docstring) of the selected ``rows``
    (:func:`selected_bindings`); ``events``: the stored Events of :func:`timeline_objects`;
    ``focus``: a binding key whose tree alone is given (its binding need not be among ``rows``),
    else every row's tree.

    Raises:
        KeyError: ``focus`` names no binding of ``snap``.
    """
    clusters = cluster_rows(snap)
    by_binding = _works_by_binding(snap)
    tree_of = [(focus, snap.bindings[focus])] if focus is not None else [(bkey, b) for bkey, b, *_r in rows]
    return {"apiVersion": API_VERSION, "kind": KIND, "now": now, "namespace": namespace,
            "clusters": clusters,
            "workloads": [workload_row(bkey, binding) for bkey, binding, *_rest in rows],
            "timeline": timeline(events, clusters),
            "trees": [propagation_tree(snap, bkey, b, by_binding.get(bkey, [])) for bkey, b in tree_of]}


def replica_text(placement: dict) -> str:
    """``ready/desired`` of a placement (``?`` for an unknown count), "" when the workload has no
    replicas; what the terminal table and the page print."""
    if placement["desired"] is None and placement["ready"] is None:
        return ""
    ready = "?" if placement["ready"] is None else str(placement["ready"])
    desired = "-" if placement["desired"] is None else str(placement["desired"])
    return f"{ready}/{desired}"


def workload_label(row: dict) -> str:
    """``Kind/namespace/name`` (``Kind/name`` when cluster-scoped)."""
    return "/".join(p for p in (row["kind"], row["namespace"], row["name"]) if p)


__all__ = ["API_VERSION", "KIND", "TIMELINE_REASONS", "cluster_rows", "fleet_view", "propagation_tree",
           "replica_text", "selected_bindings", "template_key", "timeline", "timeline_objects", "workload_label",
           "workload_row"]
