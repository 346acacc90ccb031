"""Server-side printing: ``meta.k8s.io/v1`` Table answers for ``kubectl get``."""
from __future__ import annotations

import datetime as _dt

from .resources import ResourceType


def human_age(ts: str | None, now: _dt.datetime | None = None) -> str:
    """kubectl's short duration (``5s``, ``3m2s``, ``4h``, ``2d``) since an RFC 3339 timestamp."""
    if not ts:
        return "<unknown>"
    try:
        then = _dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=_dt.timezone.utc)
    except ValueError:
        return "<unknown>"
    secs = int(((now or _dt.datetime.now(_dt.timezone.utc)) - then).total_seconds())
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    mins = secs // 60
    if mins < 10:
        return f"{mins}m{secs % 60}s" if secs % 60 else f"{mins}m"
    if mins < 180:
        return f"{mins}m"
    hours = mins // 60
    if hours < 48:
        return f"{hours}h"
    return f"{hours // 24}d"


def _col(name: str, typ: str = "string", fmt: str = "", desc: str = "") -> dict:
    return {"name": name, "type": typ, "format": fmt, "description": desc or name, "priority": 0}


def _deploy_cells(obj: dict) -> list:
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    return [f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 0)}", st.get("updatedReplicas", 0),
            st.get("availableReplicas", 0)]


def _pod_cells(obj: dict) -> list:
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    cs = st.get("containerStatuses") or []
    ready = sum(1 for c in cs if c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in cs)
    return [f"{ready}/{len(spec.get('containers') or [])}", st.get("phase", "Pending"), restarts]


def _sts_cells(obj: dict) -> list:
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    return [f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 0)}"]


def _node_cells(obj: dict) -> list:
    conds = (obj.get("status") or {}).get("conditions") or []
    ready = next((c.get("status") for c in conds if c.get("type") == "Ready"), "Unknown")
    return ["Ready" if ready == "True" else "NotReady"]


def _ns_cells(obj: dict) -> list:
    return [(obj.get("status") or {}).get("phase", "Active")]


def _cm_cells(obj: dict) -> list:
    return [len(obj.get("data") or {}) + len(obj.get("binaryData") or {})]


# key -> (extra columns before AGE, cell function)
COLUMNS = {
    ("apps", "deployments"): ([_col("Ready"), _col("Up-to-date", "integer"), _col("Available", "integer")],
                              _deploy_cells),
    ("apps", "statefulsets"): ([_col("Ready")], _sts_cells),
    ("", "pods"): ([_col("Ready"), _col("Status"), _col("Restarts", "integer")], _pod_cells),
    ("", "nodes"): ([_col("Status")], _node_cells),
    ("", "namespaces"): ([_col("Status")], _ns_cells),
    ("", "configmaps"): ([_col("Data", "integer")], _cm_cells),
}


def partial(obj: dict) -> dict:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def table(rt: ResourceType, objects: list[dict], resource_version: str, include_object: str = "Metadata") -> dict:
    """A Table with NAME, kind-specific columns and AGE; each row carries the object (partial metadata
    unless ``include_object`` is ``Object``, none for ``None``) as kubectl expects."""
    extra, cells = COLUMNS.get(rt.key, ([], lambda o: []))
    cols = [_col("Name", fmt="name", desc="Name must be unique within a namespace.")] + extra + [
        _col("Age", desc="CreationTimestamp is a timestamp representing the server time when this object was created.")]
    rows = []
    for obj in objects:
        md = obj.get("metadata") or {}
        row = {"cells": [md.get("name", "")] + cells(obj) + [human_age(md.get("creationTimestamp"))]}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = partial(obj)
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": resource_version},
            "columnDefinitions": cols, "rows": rows}
