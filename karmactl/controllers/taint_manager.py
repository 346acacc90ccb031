"""Taint manager: evict bindings from clusters with NoExecute taints they do not tolerate.

Follows ``pkg/controllers/cluster/taint_manager.go`` and ``pkg/util/helper/taint.go``
(``GetNoExecuteTaints``, ``GetMatchingTolerations``, ``GetMinTolerationTime``), semantics §4.5, with
the configurable cluster failover proposal (``proposals/configurable-cluster-failover.md``) and
cluster failover on by default (DESIGN §3.4). Runs only while ``settings.cluster_failover``
(Karmada's ``--enable-taint-manager`` + gate ``Failover`` + ``--enable-no-execute-taint-eviction``).

For every binding (RB and CRB) not being deleted, for every cluster in ``spec.clusters`` that has
NoExecute taints (user taints and controller taints alike, :func:`cluster_taints.effective_taints`):

1. tolerations: ``clusterTolerations`` of the placement in the ``policy.karmada.io/applied-placement``
   annotation (the placement last scheduled with). Deviation: when the annotation is absent or not
   a JSON object, ``spec.placement`` is used (upstream errors out and evicts nothing, which in a
   file-backed tool would only mean "never");
2. every NoExecute taint must be tolerated; the first toleration (list order) tolerating a taint is
   "used"; an untolerated taint -> evict now;
3. otherwise, over every used toleration with ``tolerationSeconds`` and every NoExecute taint it
   tolerates, trigger = ``taint.timeAdded + tolerationSeconds`` (seconds); evict when
   ``now >= earliest trigger``; no used toleration has ``tolerationSeconds`` -> tolerated forever.
   A taint without ``timeAdded`` counts as added ``now`` (the toleration window starts now).
4. eviction = ``GracefulEvictCluster`` (:func:`graceful_eviction.graceful_evict_cluster`) with
   ``reason: TaintUntolerated``, ``producer: TaintManager``, ``purgeMode`` =
   ``spec.failover.cluster.purgeMode`` (empty -> ``Gracefully``) when ``failover.cluster`` is set, else
   ``settings.no_execute_purge_mode``; ``gracePeriodSeconds`` = ``failover.cluster.gracePeriodSeconds``
   when set (the proposal's field; Karmada has none and uses the global timeout), and
   ``clustersBeforeFailover``. ``metadata.generation`` is bumped (the spec changed); one event line
   per eviction. With gate ``StatefulFailoverInjection`` (``settings.stateful_failover_injection``,
   off by default) and ``failover.cluster.statePreservation`` rules, the task gets
   ``preservedLabelState`` read from the evicted cluster's status item (``extractStateForEviction``);
   when that status was never collected or a path finds nothing, the cluster is not evicted in
   this pass (upstream's error and retry) and a warning says why.

The scheduler then reschedules (replica sum mismatch for Divided, always for Duplicated) while the
ClusterEviction filter keeps the evicted cluster out as long as the task lives.
"""
from __future__ import annotations

import json

from karmactl.api import constants as C
from karmactl.api.objects import add_seconds, bump_generation, deepcopy, parse_time
from karmactl.api.selectors import toleration_tolerates
from karmactl.controllers.helper.binding import binding_ref
from karmactl.controllers.helper.cluster import CLUSTER_GK, effective_taints
from karmactl.controllers.helper.eviction import GATE_OFF_MESSAGE, graceful_evict_cluster, has_state_preservation, preserved_label_state


def tolerations_of(binding: dict) -> list[dict]:
    """``clusterTolerations`` of the applied placement (annotation), else of ``spec.placement``."""
    raw = ((binding.get("metadata") or {}).get("annotations") or {}).get(C.APPLIED_PLACEMENT_ANNOTATION)
    placement = None
    if raw:
        try:
            placement = json.loads(raw)
        except ValueError:
            placement = None
    if not isinstance(placement, dict):
        placement = (binding.get("spec") or {}).get("placement") or {}
    return list(placement.get("clusterTolerations") or [])


def eviction_due(no_execute_taints: list[dict], tolerations: list[dict], now: str) -> tuple[bool, str | None]:
    """Whether a binding must leave a cluster with these NoExecute taints now.

    Returns:
        ``(True, None)`` evict now (an untolerated taint, or a toleration window is over);
        ``(False, trigger)`` evict at ``trigger`` (RFC 3339, the earliest window end);
        ``(False, None)`` tolerated forever (or no NoExecute taint at all).
    """
    if not no_execute_taints:
        return False, None
    used: list[dict] = []
    for taint in no_execute_taints:
        first = next((t for t in tolerations if toleration_tolerates(t, taint)), None)
        if first is None:
            return True, None
        if first not in used:
            used.append(first)
    earliest = None
    for taint in no_execute_taints:
        for tol in used:
            if tol.get("tolerationSeconds") is None or not toleration_tolerates(tol, taint):
                continue
            trigger = add_seconds(taint.get("timeAdded") or now, float(tol["tolerationSeconds"]))
            if earliest is None or parse_time(trigger) < parse_time(earliest):
                earliest = trigger
    if earliest is None:
        return False, None
    if parse_time(now) >= parse_time(earliest):
        return True, None
    return False, earliest


def purge_options(binding: dict, default_purge_mode: str) -> dict:
    """Task fields for a taint eviction: reason, producer, purgeMode and the proposal's gracePeriodSeconds;
    purgeMode ``Never`` (proposal configurable-cluster-failover.md) sets ``suppressDeletion: true``,
    as application failover does: the evicted cluster keeps its copy until a user releases the task."""
    failover_cluster = ((binding.get("spec") or {}).get("failover") or {}).get("cluster")
    if failover_cluster is not None:
        mode = failover_cluster.get("purgeMode") or "Gracefully"
        mode = {"Immediately": "Directly", "Graciously": "Gracefully"}.get(mode, mode)
    else:
        mode = default_purge_mode or "Gracefully"
    opts = {"purgeMode": mode, "reason": C.EVICTION_REASON_TAINT_UNTOLERATED,
            "producer": C.EVICTION_PRODUCER_TAINT_MANAGER}
    if failover_cluster is not None and failover_cluster.get("gracePeriodSeconds") is not None:
        opts["gracePeriodSeconds"] = int(failover_cluster["gracePeriodSeconds"])
    if mode == "Never":
        opts["suppressDeletion"] = True
    return opts


def evict_binding(binding: dict, no_execute: dict[str, list[dict]], now: str, default_purge_mode: str,
                  inject: bool = False, problems: list | None = None) -> tuple[dict, list[str]]:
    """Evaluate one binding against ``{cluster: NoExecute taints}``.

    ``inject`` is the gate ``StatefulFailoverInjection``; ``problems`` receives one line per
    cluster whose eviction waits because its state could not be read.

    Returns:
        (the binding, or a new one with the evictions applied and its generation bumped,
        the evicted cluster names in ``spec.clusters`` order).
    """
    spec = binding.get("spec") or {}
    targets = [t.get("name") for t in spec.get("clusters") or []]
    candidates = [c for c in targets if no_execute.get(c)]
    if not candidates:
        return binding, []
    tolerations = tolerations_of(binding)
    due = [c for c in candidates if eviction_due(no_execute[c], tolerations, now)[0]]
    if not due:
        return binding, []
    opts = purge_options(binding, default_purge_mode)
    per_cluster = {}
    rules = ((spec.get("failover") or {}).get("cluster") or {}).get("statePreservation")
    for cluster in list(due):
        per_cluster[cluster] = opts
        if not inject:
            continue
        try:
            state = preserved_label_state(rules, binding, cluster)
        except ValueError as exc:
            if problems is not None:
                problems.append(f"eviction from {cluster} waits: {exc}")
            due.remove(cluster)
            continue
        if state is not None:
            per_cluster[cluster] = dict(opts, preservedLabelState=state)
    if not due:
        return binding, []
    new = deepcopy(binding)
    for cluster in due:
        graceful_evict_cluster(new["spec"], cluster, per_cluster[cluster])
    bump_generation(binding, new)
    return new, due


def no_execute_taints(snap) -> dict[str, list[dict]]:
    """``{cluster name: its NoExecute taints}`` for every Cluster that has some."""
    out: dict[str, list[dict]] = {}
    for key in snap.keys_of_kind(*CLUSTER_GK):
        taints = [t for t in effective_taints(snap.user[key], snap.overlays.get(key))
                  if t.get("effect") == C.EFFECT_NO_EXECUTE]
        if taints:
            out[key[3]] = taints
    return out


def step(loaded, out, now: str, ctx) -> bool:
    """Phase ``bindings``: NoExecute evictions (module docs); nothing while cluster failover is off."""
    if not ctx.settings.cluster_failover:
        return False
    tainted = no_execute_taints(out)
    if not tainted:
        return False
    changed = False
    for bkey in sorted(out.bindings):
        binding = out.bindings[bkey]
        if (binding.get("metadata") or {}).get("deletionTimestamp"):
            continue
        inject = ctx.settings.stateful_failover_injection
        if not inject and has_state_preservation(binding, "cluster") and any(
                tainted.get(t.get("name")) for t in (binding.get("spec") or {}).get("clusters") or []):
            ctx.warn(f"{binding_ref(bkey)}: {GATE_OFF_MESSAGE.format(kind='cluster')}")
        problems: list = []
        new, evicted = evict_binding(binding, tainted, now, ctx.settings.no_execute_purge_mode, inject, problems)
        for line in problems:
            ctx.warn(f"{binding_ref(bkey)}: {line}")
        if not evicted:
            continue
        tasks = {t.get("fromCluster"): t for t in new["spec"].get("gracefulEvictionTasks") or []}
        for cluster in evicted:
            mode = (tasks.get(cluster) or {}).get("purgeMode", "")
            ctx.event(f"evicted {binding_ref(bkey)} from {cluster}: {C.EVICTION_REASON_TAINT_UNTOLERATED} (purgeMode {mode})")
        changed = out.set_binding(bkey, new) or changed
    return changed


def wake(snap, now: str, settings) -> list:
    """When the taint manager could evict without any input changing: for each binding targeting a
    cluster with NoExecute taints, the earliest toleration window end (:func:`eviction_due`), or
    ``now`` when an eviction is due but still waits (its state could not be read).

    Returns ``[(binding key, RFC 3339 time)]`` (``karmactl/incremental/runindex.py`` recomputes a binding
    from that time on); nothing while cluster failover is off.
    """
    if not settings.cluster_failover:
        return []
    tainted = no_execute_taints(snap)
    if not tainted:
        return []
    out = []
    for bkey, binding in snap.bindings.items():
        if (binding.get("metadata") or {}).get("deletionTimestamp"):
            continue
        candidates = [t.get("name") for t in (binding.get("spec") or {}).get("clusters") or []
                      if tainted.get(t.get("name"))]
        if not candidates:
            continue
        tolerations = tolerations_of(binding)
        for cluster in candidates:
            due, trigger = eviction_due(tainted[cluster], tolerations, now)
            if due or trigger is not None:
                out.append((bkey, now if due else trigger))
    return out
