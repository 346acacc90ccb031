"""The Clusters as the control plane sees them in a pass: status and taints merged from their
overlays (``pkg/util/helper/cluster.go``, ``taint.go``)."""
from __future__ import annotations

from karmactl.api.templates import merged_view, new_overlay

CLUSTER_GK = ("cluster.karmada.io", "Cluster")


def effective_status(cluster: dict, overlay: dict | None) -> dict:
    """The Cluster's status as the control plane sees it (overlay if present, else the file's)."""
    if overlay is not None and "status" in overlay:
        return overlay["status"]
    return cluster.get("status") or {}


def is_pull(cluster: dict | None) -> bool:
    """Whether a Cluster is a Pull mode member cluster (``spec.syncMode: Pull``): its own karmada-agent
    applies its Works and reports its status; the control plane never contacts it (the execution and
    work status controllers take only Works of Push clusters: ``pkg/util/helper/predicate.go:
    WorkWithinPushClusterPredicate``; the cluster status controller only Push clusters)."""
    return ((cluster or {}).get("spec") or {}).get("syncMode") == "Pull"


def pull_cluster_names(snap) -> frozenset:
    """The names of the Pull mode Clusters of ``snap`` (:func:`is_pull`)."""
    return frozenset(key[3] for key in snap.keys_of_kind(*CLUSTER_GK) if is_pull(snap.user[key]))


def stamp_creation(key, cluster: dict, overlay: dict | None, now: str) -> dict:
    """The overlay with ``metadata.creationTimestamp`` (the first run that saw the Cluster, unless
    its file sets one), as the API server stamps it on create; ``overlay`` itself when present."""
    if overlay is not None and (overlay.get("metadata") or {}).get("creationTimestamp"):
        return overlay
    new = dict(overlay) if overlay is not None else new_overlay(key, cluster)
    new["metadata"] = dict(new.get("metadata") or {},
                           creationTimestamp=(cluster.get("metadata") or {}).get("creationTimestamp") or now)
    return new


def clusters_of(snap) -> list[dict]:
    """Every Cluster of ``snap`` as the control plane sees it (status from the overlay, taints
    merged), sorted by name."""

    return [merged_view(snap.user[key], snap.overlays.get(key)) for key in snap.keys_of_kind("cluster.karmada.io", "Cluster")]


def taint_id(taint: dict) -> str:
    return f"{taint.get('key')}:{taint.get('effect')}"


def effective_taints(cluster: dict, overlay: dict | None) -> list[dict]:
    """Every taint of a Cluster (the user's, then the controller's) with ``timeAdded`` filled in for
    user NoExecute taints from ``observed.taintsTimeAdded`` (used by the taint manager)."""
    recorded = ((overlay or {}).get("observed") or {}).get("taintsTimeAdded") or {}
    out = []
    for t in (merged_view(cluster, overlay).get("spec") or {}).get("taints") or []:
        if not t.get("timeAdded") and taint_id(t) in recorded:
            t = dict(t, timeAdded=recorded[taint_id(t)])
        out.append(t)
    return out
