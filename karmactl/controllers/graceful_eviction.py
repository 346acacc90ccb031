"""Graceful eviction: the ``GracefulEvictCluster`` helper and the task assessment.

Follows ``binding_types_helper.go`` of the work.karmada.io v1alpha2 API (``GracefulEvictCluster``) and
``pkg/controllers/gracefuleviction/evictiontask.go``, ``rb_graceful_eviction_controller.go``,
``crb_graceful_eviction_controller.go`` (semantics §1.4, §5).

A task is ``{fromCluster, purgeMode, replicas?, reason, message?, producer, gracePeriodSeconds?,
suppressDeletion?, preservedLabelState?, clustersBeforeFailover?, creationTimestamp?}`` in ``spec.gracefulEvictionTasks``.
One assessment pass over the tasks of a binding, in order (§5.2):

1. no ``creationTimestamp`` -> stamp it with ``now`` and keep (no further assessment this pass);
2. ``suppressDeletion`` set: ``true`` -> keep (purgeMode ``Never`` until a user releases it),
   ``false`` -> drop (the user confirmed deletion);
3. timeout = the task's ``gracePeriodSeconds`` (seconds) if set, else ``settings.graceful_eviction_timeout``;
   ``now > creationTimestamp + timeout`` -> drop;
4. the binding is scheduled for its current generation (``status.schedulerObservedGeneration ==
   metadata.generation``) and every cluster in ``spec.clusters`` has an ``aggregatedStatus`` item with
   ``health: Healthy`` (karmactl aggregates the items from the Works at this point, see
   :func:`current_health`; in an online run only clusters whose workloads were read in this run
   count, ``ctx.observed``) -> drop (an empty ``spec.clusters`` satisfies this vacuously) — karmactl: only
   when ``now > creationTimestamp``. Upstream drops on the pass after stamping, which in real time is
   later, when the substitutes' status reflects their re-rendered Works; the passes of one karmactl
   run share one clock and start from statuses collected before the eviction (a substitute that was
   Healthy with 2 replicas is not yet known to be Healthy with 3), so health counts from the next run;
5. otherwise keep.

One clock per run also means a task is never dropped in the run that stamped it, so a whole
``compute`` cannot flap between "task" and "no task".

``purgeMode`` is not looked at, as upstream: a ``Directly`` task lives (and keeps its cluster out of
new placements, and keeps the binding controller from rendering while the old Work still exists)
until the substitutes are healthy or the timeout passes. The binding controller keeps the Works of
non-``Directly`` task clusters and deletes the others (``karmactl/controllers/binding.py``).
"""
from __future__ import annotations

from karmactl.api.objects import bump_generation, parse_time, seconds_between
from karmactl.controllers.helper.binding import aggregated_item, binding_id, binding_ref, works_by_binding

HEALTHY = "Healthy"


def _is_time(text) -> bool:
    try:
        parse_time(str(text))
    except ValueError:
        return False
    return True


def _all_targets_healthy(binding: dict, health: dict | None) -> bool:
    spec = binding.get("spec") or {}
    status = binding.get("status") or {}
    generation = (binding.get("metadata") or {}).get("generation")
    if status.get("schedulerObservedGeneration") != generation:
        return False
    if health is None:
        health = {i.get("clusterName"): i.get("health") for i in status.get("aggregatedStatus") or []}
    return all(health.get(t.get("name")) == HEALTHY for t in spec.get("clusters") or [])


def current_health(binding: dict, works: list) -> dict:
    """``{cluster: health}`` aggregated now from the binding's Works (``[(cluster, Work)]``, not terminating).

    The binding's own ``status.aggregatedStatus`` is written in phase ``status``, after this step, so
    at the start of a run it predates the member status collected since; the assessment reads the
    Works the way the binding status controller will (``binding_status.aggregated_item``).
    """

    resource = (binding.get("spec") or {}).get("resource") or {}
    out = {}
    for cluster, work in works:
        item = aggregated_item(cluster, work, resource)
        if item is not None:
            out[cluster] = item.get("health")
    return out


def assess_tasks(binding: dict, now: str, default_timeout: float, health: dict | None = None
                 ) -> tuple[list[dict], list[tuple[str, str]]]:
    """One assessment pass (module docs): ``(kept tasks, [(fromCluster, why dropped)])``.

    ``default_timeout`` is in seconds (``--graceful-eviction-timeout``); ``health`` is ``{cluster:
    health}`` of the targets (:func:`current_health`), or None to read ``status.aggregatedStatus``.
    Kept tasks are the input objects except newly stamped ones.
    """
    kept: list[dict] = []
    dropped: list[tuple[str, str]] = []
    healthy = None
    for task in (binding.get("spec") or {}).get("gracefulEvictionTasks") or []:
        created = task.get("creationTimestamp")
        if not created or not _is_time(created):
            # upstream stamps empty ones; an unreadable one (hand-edited) is treated the same
            kept.append(dict(task, creationTimestamp=now))
            continue
        suppress = task.get("suppressDeletion")
        if suppress is not None:
            if suppress:
                kept.append(task)
            else:
                dropped.append((task.get("fromCluster", ""), "deletion confirmed (suppressDeletion false)"))
            continue
        timeout = task.get("gracePeriodSeconds")
        timeout = float(timeout) if timeout is not None else float(default_timeout)
        if seconds_between(created, now) > timeout:
            dropped.append((task.get("fromCluster", ""), f"timed out after {timeout:g}s"))
            continue
        if healthy is None:
            healthy = _all_targets_healthy(binding, health)
        # health only counts from a later run than the task's: the statuses a run starts with were
        # collected before the eviction re-rendered the substitutes' Works (module docs)
        if healthy and parse_time(now) > parse_time(created):
            dropped.append((task.get("fromCluster", ""), "substitute clusters are healthy"))
            continue
        kept.append(task)
    return kept, dropped


def step(loaded, out, now: str, ctx) -> bool:
    """Phase ``scheduled``: assess the eviction tasks of every binding (module docs)."""

    changed = False
    by_binding = None
    for bkey in sorted(out.bindings):
        binding = out.bindings[bkey]
        spec = binding.get("spec") or {}
        tasks = spec.get("gracefulEvictionTasks")
        if not tasks or (binding.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if by_binding is None:
            by_binding = works_by_binding(out.works)
        health = current_health(binding, by_binding.get(binding_id(binding), []))
        if ctx.observed is not None:
            # online, only what this run read from the members is evidence that a substitute is healthy
            health = {cluster: h for cluster, h in health.items() if cluster in ctx.observed}
        kept, dropped = assess_tasks(binding, now, ctx.settings.graceful_eviction_timeout, health)
        if kept == tasks:
            continue
        new_spec = dict(spec)
        if kept:
            new_spec["gracefulEvictionTasks"] = kept
        else:
            new_spec.pop("gracefulEvictionTasks", None)
        new = dict(binding, spec=new_spec, metadata=dict(binding.get("metadata") or {}))
        bump_generation(binding, new)
        for cluster, why in dropped:
            ctx.event(f"eviction task of {binding_ref(bkey)} for {cluster} dropped: {why}")
        changed = out.set_binding(bkey, new) or changed
    return changed


def wake(snap, now: str, settings) -> list:
    """Bindings with eviction tasks: a task is dropped once its grace period has passed or, from a
    later run than its creation on, when the substitutes are healthy, so each is due at every run
    (``now``) while it has tasks: ``[(binding key, now)]``."""
    return [(bkey, now) for bkey, b in snap.bindings.items() if (b.get("spec") or {}).get("gracefulEvictionTasks")]
