"""Extra sections ``describe`` adds for Karmada kinds (scheduling diagnostics, eviction tasks...)."""
from __future__ import annotations


def describe_extra(snap, info, obj: dict, now: str) -> str:
    """Additional text for ``describe`` of one object ("" when the kind has nothing to add)."""
    if info.kind in ("ResourceBinding", "ClusterResourceBinding"):
        return _binding_extra(snap, obj, now)
    if info.kind == "Cluster" and info.group == "cluster.karmada.io":
        return _cluster_extra(snap, obj, now)
    return ""


def _cluster_extra(snap, cluster: dict, now: str) -> str:
    """``Remedy Actions:`` each action of ``status.remedyActions`` with the Remedies producing it
    (``observed.remedySources`` kept by ``karmactl/controllers/remedy.py``)."""
    name = cluster["metadata"]["name"]
    overlay = snap.overlays.get(("cluster.karmada.io", "Cluster", "", name)) or {}
    actions = (cluster.get("status") or {}).get("remedyActions") or []
    if not actions:
        return ""
    sources = (overlay.get("observed") or {}).get("remedySources") or {}
    width = max(len(a) for a in actions)
    lines = ["Remedy Actions:"]
    for action in actions:
        names = sources.get(action) or []
        origin = ("from Remedy " + ", ".join(names)) if names else "source unknown (not computed by karmactl)"
        lines.append(f"  {action.ljust(width)}  {origin}")
    return "\n".join(lines) + "\n"


def _binding_extra(snap, binding: dict, now: str) -> str:
    from karmactl.reconcile import clusters_of
    from karmactl.scheduler import explain_filters

    lines = []
    reasons = explain_filters(binding, clusters_of(snap))
    if reasons:
        lines.append("Cluster Filtering:")
        width = max(len(n) for n in reasons)
        for name, reason in sorted(reasons.items()):
            lines.append(f"  {name.ljust(width)}  {reason or 'fits'}")
    tasks = (binding.get("spec") or {}).get("gracefulEvictionTasks") or []
    if tasks:
        lines.append("Graceful Eviction Tasks:")
        for t in tasks:
            lines.append(f"  {t.get('fromCluster')}: reason={t.get('reason')} producer={t.get('producer')} "
                         f"purgeMode={t.get('purgeMode', '')} created={t.get('creationTimestamp', '')}")
    return ("\n".join(lines) + "\n") if lines else ""
