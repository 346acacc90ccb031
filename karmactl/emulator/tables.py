"""Server-side printing: ``meta.k8s.io/v1`` Table answers for ``kubectl get``."""
from __future__ import annotations

import datetime as _dt
import json

from karmactl.api.objects import human_duration

from .resources import ResourceType


def human_age(ts: str | None, now: _dt.datetime | None = None) -> str:
    """kubectl's short duration (``5s``, ``3m2s``, ``4h``, ``2d``) since an RFC 3339 timestamp."""
    if not ts:
        return "<unknown>"
    try:
        then = _dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=_dt.timezone.utc)
    except ValueError:
        return "<unknown>"
    return human_duration(((now or _dt.datetime.now(_dt.timezone.utc)) - then).total_seconds())


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


def _svc_cells(obj: dict) -> list:
    spec = obj.get("spec") or {}
    ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    external = ",".join(i.get("ip") or i.get("hostname", "") for i in ingress) or (
        "<pending>" if spec.get("type") == "LoadBalancer" else "<none>")
    ports = ",".join(f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol', 'TCP')}"
                     for p in spec.get("ports") or []) or "<none>"
    return [spec.get("type", "ClusterIP"), spec.get("clusterIP", "<none>"), external, ports]


def _jsonpath_cell(obj: dict, path: str):
    # CRD printer columns are almost always plain field paths (".spec.size"); richer JSONPath
    # expressions print empty, which is what kubectl shows for a missing value.
    node = obj
    for part in path.strip().lstrip(".").split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    if isinstance(node, (dict, list)):
        return json.dumps(node)
    return node


# key -> (extra columns before AGE, cell function)
COLUMNS = {
    ("apps", "deployments"): ([_col("Ready"), _col("Up-to-date", "integer"), _col("Available", "integer")],
                              _deploy_cells),
    ("apps", "statefulsets"): ([_col("Ready")], _sts_cells),
    ("", "pods"): ([_col("Ready"), _col("Status"), _col("Restarts", "integer")], _pod_cells),
    ("", "nodes"): ([_col("Status")], _node_cells),
    ("", "namespaces"): ([_col("Status")], _ns_cells),
    ("", "configmaps"): ([_col("Data", "integer")], _cm_cells),
    ("", "services"): ([_col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)")], _svc_cells),
}


def _cell(obj: dict, column: dict):
    value = _jsonpath_cell(obj, column["jsonPath"])
    if column.get("type") == "date" and isinstance(value, str):
        return human_age(value)
    return value


def partial(obj: dict) -> dict:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def table(rt: ResourceType, objects: list[dict], resource_version: str, include_object: str = "Metadata") -> dict:
    """A Table with NAME, kind-specific columns and AGE; each row carries the object (partial metadata
    unless ``include_object`` is ``Object``, none for ``None``) as kubectl expects."""
    extra, cells = COLUMNS.get(rt.key, ([], lambda o: []))
    age = [_col("Age", desc="CreationTimestamp is a timestamp representing the server time when this object "
                            "was created.")]
    custom = [c for c in rt.printer_columns if int(c.get("priority", 0) or 0) == 0 and c.get("jsonPath")]
    if custom:
        # As for a real CRD: NAME plus the declared columns (AGE only when declared).
        extra = [_col(c.get("name", ""), c.get("type", "string"), c.get("format", ""), c.get("description", ""))
                 for c in custom]
        age = []

        def cells(o: dict) -> list:
            return [_cell(o, c) for c in custom]
    cols = [_col("Name", fmt="name", desc="Name must be unique within a namespace.")] + extra + age
    rows = []
    for obj in objects:
        md = obj.get("metadata") or {}
        row = {"cells": [md.get("name", "")] + cells(obj) + ([human_age(md.get("creationTimestamp"))] if age else [])}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = partial(obj)
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": resource_version},
            "columnDefinitions": cols, "rows": rows}
