"""Extra sections ``describe`` adds for Karmada kinds (scheduling diagnostics, eviction tasks...)."""
from __future__ import annotations


def describe_view(info, obj: dict) -> dict:
    """The object ``describe`` renders: a Secret without its values (``data``, ``stringData``), which
    :func:`describe_extra` lists as sizes, as ``kubectl describe secret`` does
    (``staging/src/k8s.io/kubectl/pkg/describe/describe.go``, ``describeSecret``); others as they are."""
    if _is_secret(info):
        return {k: v for k, v in obj.items() if k not in ("data", "stringData")}
    return obj


def _is_secret(info) -> bool:
    return info.kind == "Secret" and info.group == ""


def _secret_extra(secret: dict) -> str:
    """``Data`` / ``====`` and one ``key:  N bytes`` line per key (decoded size; stringData counted as text)."""
    import base64
    import binascii

    sizes = {}
    for key, value in ((secret.get("stringData") or {}) if isinstance(secret.get("stringData"), dict) else {}).items():
        sizes[key] = len(str(value).encode())
    for key, value in ((secret.get("data") or {}) if isinstance(secret.get("data"), dict) else {}).items():
        try:
            sizes.setdefault(key, len(base64.b64decode(str(value), validate=True)))
        except (binascii.Error, ValueError):
            sizes.setdefault(key, len(str(value).encode()))
    lines = ["Data", "===="]
    lines += [f"{key}:  {size} bytes" for key, size in sorted(sizes.items())]
    return "\n".join(lines) + "\n"


def describe_extra(snap, info, obj: dict, now: str) -> str:
    """Additional text for ``describe`` of one object ("" when the kind has nothing to add)."""
    if _is_secret(info):
        return _secret_extra(obj)
    if info.kind in ("ResourceBinding", "ClusterResourceBinding"):
        return _binding_extra(snap, obj, now)
    if info.kind == "Cluster" and info.group == "cluster.karmada.io":
        return _cluster_extra(snap, obj, now)
    if info.kind == "Work" and info.group == "work.karmada.io":
        return _work_extra(snap, obj)
    return ""


def _work_extra(snap, work: dict) -> str:
    """``Sync Mode:`` for a Work of a Pull mode Cluster: who applies it (karmactl does not)."""
    from karmactl.api.names import cluster_of_execution_namespace
    from karmactl.controllers.helper.cluster import is_pull

    name = cluster_of_execution_namespace((work.get("metadata") or {}).get("namespace") or "")
    if name is None or not is_pull(snap.user.get(("cluster.karmada.io", "Cluster", "", name))):
        return ""
    return (f"Sync Mode:  Pull: cluster {name} applies this Work with its own karmada-agent; karmactl never "
            f"contacts it, so nothing here reports it applied\n")


def _cluster_extra(snap, cluster: dict, now: str) -> str:
    """``Sync Mode:`` for a Pull mode Cluster (who applies its Works), and ``Remedy Actions:`` each
    action of ``status.remedyActions`` with the Remedies producing it (``observed.remedySources``
    kept by ``karmactl/controllers/remedy.py``)."""
    from karmactl.api.names import execution_namespace
    from karmactl.controllers.helper.cluster import is_pull

    name = cluster["metadata"]["name"]
    overlay = snap.overlays.get(("cluster.karmada.io", "Cluster", "", name)) or {}
    actions = (cluster.get("status") or {}).get("remedyActions") or []
    pull = ""
    if is_pull(cluster):
        pull = (f"Sync Mode:  Pull: karmactl never contacts this member; the Works in namespace "
                f"{execution_namespace(name)} wait for its own karmada-agent, and its status is what was "
                f"reported in its file or with `karmactl cluster condition set`\n")
    if not actions:
        return pull
    sources = (overlay.get("observed") or {}).get("remedySources") or {}
    width = max(len(a) for a in actions)
    lines = ["Remedy Actions:"]
    for action in actions:
        names = sources.get(action) or []
        origin = ("from Remedy " + ", ".join(names)) if names else "source unknown (not computed by karmactl)"
        lines.append(f"  {action.ljust(width)}  {origin}")
    return pull + "\n".join(lines) + "\n"


def _binding_extra(snap, binding: dict, now: str) -> str:
    """A binding's extra sections: Cluster Filtering (the scheduler's filter verdicts), Graceful
    Eviction Tasks and Active Eviction History (what keeps each alive)."""
    from karmactl.controllers.helper.cluster import clusters_of
    from karmactl.scheduler import explain_filters

    lines = []
    reasons = explain_filters(binding, clusters_of(snap))
    if reasons:
        lines.append("Cluster Filtering:")
        width = max(len(n) for n in reasons)
        for name, reason in sorted(reasons.items()):
            lines.append(f"  {name.ljust(width)}  {reason or 'fits'}")
    spec = binding.get("spec") or {}
    tasks = spec.get("gracefulEvictionTasks") or []
    if tasks:
        lines += _eviction_task_lines(snap, tasks)
    history = list(spec.get("activeEvictionHistory") or []) + list((binding.get("status") or {}).get("activeEvictionHistory") or [])
    if history:
        lines += _eviction_history_lines(spec, history, now)
    return ("\n".join(lines) + "\n") if lines else ""


def _eviction_task_lines(snap, tasks: list) -> list[str]:
    """``Graceful Eviction Tasks:`` and what keeps each task alive (karmactl/controllers/graceful_eviction.py)."""
    from karmactl.api.objects import add_seconds
    from karmactl.api.snapshot import Settings

    try:
        default_timeout = Settings.from_snapshot(snap).graceful_eviction_timeout
    except ValueError:
        default_timeout = Settings.graceful_eviction_timeout
    lines = ["Graceful Eviction Tasks:"]
    for t in tasks:
        if t.get("suppressDeletion") is not None:
            until = "until a user sets suppressDeletion: false" if t["suppressDeletion"] else "released (dropped next run)"
        elif t.get("creationTimestamp"):
            grace = t.get("gracePeriodSeconds")
            timeout, source = (grace, "gracePeriodSeconds") if grace is not None else (default_timeout, "gracefulEvictionTimeout")
            try:
                end = add_seconds(t["creationTimestamp"], float(timeout))
            except ValueError:
                end = "?"
            until = f"until substitutes are healthy or {end} ({source} {float(timeout):g}s)"
        else:
            until = "new (stamped next run)"
        replicas = f" replicas={t['replicas']}" if t.get("replicas") is not None else ""
        lines.append(f"  {t.get('fromCluster')}: reason={t.get('reason')} producer={t.get('producer')} "
                     f"purgeMode={t.get('purgeMode', '')}{replicas} created={t.get('creationTimestamp', '')}")
        lines.append(f"    kept {until}")
    return lines


def _eviction_history_lines(spec: dict, history: list, now: str) -> list[str]:
    """``Active Eviction History:`` with application failover's blockPredecessorSeconds
    (karmactl/controllers/application_failover.py)."""
    from karmactl.api.objects import add_seconds, parse_time

    app = (spec.get("failover") or {}).get("application") or {}
    block = app.get("blockPredecessorSeconds", 600)
    lines = ["Active Eviction History:"]
    for e in history:
        created = e.get("creationTimestamp", "")
        if block == 0:
            blocked = "blocked for good (blockPredecessorSeconds 0)"
        else:
            try:
                end = add_seconds(created, block)
                blocked = f"blocked until {end}" if parse_time(now) < parse_time(end) else f"expired at {end}"
            except ValueError:
                blocked = "blocked"
        lines.append(f"  {e.get('clusterName')}: evicted {created}, {blocked}")
    return lines
