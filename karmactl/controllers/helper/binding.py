"""Helpers on ResourceBindings shared by controllers (``pkg/util/helper/binding.go``,
``binding_types_helper.go`` of the work.karmada.io v1alpha2 API)."""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.kinds import group_of
from karmactl.api.names import cluster_of_execution_namespace
from karmactl.api.objects import deepcopy, get_condition

DEPENDED_BY_LABEL_PREFIX = "resourcebinding.karmada.io/depended-by-"
# Spec fields other controllers own: never rebuilt from the policy (activeEvictionHistory is the
# application failover design document's, written by that controller).
SCHEDULER_OWNED = ("clusters", "gracefulEvictionTasks", "requiredBy", "rescheduleTriggeredAt", "activeEvictionHistory")


def binding_id(binding: dict) -> tuple[str, str]:
    """(label key, permanent id) linking a binding and its Works."""
    label = C.RB_PERMANENT_ID_LABEL if binding["kind"] == "ResourceBinding" else C.CRB_PERMANENT_ID_LABEL
    return label, ((binding["metadata"].get("labels") or {}).get(label) or "")


def binding_ref(bkey) -> str:
    """``namespace/name`` of a ResourceBinding, ``name`` of a ClusterResourceBinding (event text)."""
    return f"{bkey[2]}/{bkey[3]}" if bkey[2] else bkey[3]


def works_by_binding(works: dict) -> dict:
    """``(label key, permanent id) -> [(cluster, Work)]`` for Works that are not terminating, sorted by cluster."""
    out: dict = {}
    for wkey in sorted(works):
        work = works[wkey]
        md = work.get("metadata") or {}
        if md.get("deletionTimestamp"):
            continue
        labels = md.get("labels") or {}
        cluster = cluster_of_execution_namespace(wkey[2])
        if cluster is None:
            continue
        for label in (C.RB_PERMANENT_ID_LABEL, C.CRB_PERMANENT_ID_LABEL):
            if labels.get(label):
                out.setdefault((label, labels[label]), []).append((cluster, work))
    return out


def _matches(identifier: dict, resource: dict) -> bool:
    api_version = resource.get("apiVersion") or ""
    return (identifier.get("group", "") == group_of(api_version)
            and identifier.get("version", "") == api_version.rsplit("/", 1)[-1]
            and identifier.get("kind") == resource.get("kind")
            and (identifier.get("namespace") or "") == (resource.get("namespace") or "")
            and identifier.get("name") == resource.get("name"))


def aggregated_item(cluster: str, work: dict, resource: dict) -> dict | None:
    """One ``aggregatedStatus`` entry (§9.8 steps 1–4), or None when no manifest matches the resource.

    ``{clusterName, applied, appliedMessage?, status?, health}``: not applied -> health Unknown and
    the Applied condition's message; applied -> status and health of the matching manifest status
    (Unknown until one is collected).
    """
    manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
    ordinal = None
    for i, m in enumerate(manifests):
        md = m.get("metadata") or {}
        if (m.get("apiVersion") == resource.get("apiVersion") and m.get("kind") == resource.get("kind")
                and (md.get("namespace") or "") == (resource.get("namespace") or "") and md.get("name") == resource.get("name")):
            ordinal = i
            break
    if ordinal is None:
        return None
    cond = get_condition(work, C.COND_APPLIED)
    if cond is None or cond.get("status") != "True":
        item = {"clusterName": cluster, "applied": False}
        if cond is not None and cond.get("message"):
            item["appliedMessage"] = cond["message"]
        item["health"] = C.UNKNOWN
        return item
    item = {"clusterName": cluster, "applied": True, "health": C.UNKNOWN}
    for ms in (work.get("status") or {}).get("manifestStatuses") or []:
        if _matches(ms.get("identifier") or {}, resource):
            if ms.get("status") is not None:
                item = {"clusterName": cluster, "status": deepcopy(ms["status"]), "applied": True,
                        "health": ms.get("health") or C.UNKNOWN}
            else:
                item["health"] = ms.get("health") or C.UNKNOWN
            break
    return item


def claimed_by_policy(binding: dict) -> bool:
    """Whether a binding is the detector's (its template is claimed by a policy)."""
    labels = (binding.get("metadata") or {}).get("labels") or {}
    return bool(labels.get(C.PP_PERMANENT_ID_LABEL) or labels.get(C.CPP_PERMANENT_ID_LABEL))


def is_attached(binding: dict) -> bool:
    """An attached binding: made by this controller (depended-by labels, no policy claim)."""
    labels = (binding.get("metadata") or {}).get("labels") or {}
    return not claimed_by_policy(binding) and any(k.startswith(DEPENDED_BY_LABEL_PREFIX) for k in labels)
