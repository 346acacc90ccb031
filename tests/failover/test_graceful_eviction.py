"""Graceful eviction (§1.4 helper, §5.2 assessment), per rule."""
from __future__ import annotations

import pytest

from karmactl.controllers import graceful_eviction as ge
from karmactl.controllers.graceful_eviction import assess_tasks
from karmactl.controllers.helper.eviction import graceful_evict_cluster

from tests.failover.helpers import T0, at, binding, ctx, snapshot, work

TASK = {"fromCluster": "member1", "purgeMode": "Gracefully", "reason": "TaintUntolerated", "producer": "TaintManager"}


def task(**kw):
    return dict(TASK, creationTimestamp=T0, **kw)


@pytest.mark.parametrize("t, aggregated, observed, now, kept", [
    # 1. no creationTimestamp: stamped and kept, whatever else holds
    (dict(TASK), [("member2", "Healthy")], 1, at(10**6), True),
    # 2. suppressDeletion
    (task(suppressDeletion=True), [("member2", "Healthy")], 1, at(10**6), True),
    (task(suppressDeletion=False), [], 1, at(1), False),
    # 3. timeout: the task's gracePeriodSeconds, else the default (600): strictly after
    (task(), [], 1, at(600), True),
    (task(), [], 1, at(601), False),
    (task(gracePeriodSeconds=100), [], 1, at(100), True),
    (task(gracePeriodSeconds=100), [], 1, at(101), False),
    # 4. substitutes healthy, scheduled for the current generation
    (task(), [("member2", "Healthy")], 1, at(1), False),
    (task(), [("member2", "Healthy")], 0, at(1), True),           # not scheduled for this generation yet
    (task(), [("member2", "Unknown")], 1, at(1), True),
    (task(), [("member3", "Healthy")], 1, at(1), True),           # member2 has no status item
    # purgeMode is not looked at (Directly lives until healthy/timeout, as upstream)
    (task(purgeMode="Directly"), [], 1, at(1), True),
    (task(purgeMode="Directly"), [("member2", "Healthy")], 1, at(1), False),
    # healthy counts only from a later run than the task's creation (one clock per run)
    (task(), [("member2", "Healthy")], 1, T0, True),
])
def test_assessment(t, aggregated, observed, now, kept):
    b = binding(clusters=[("member2", 3)], tasks=[t], aggregated=aggregated, observed_generation=observed)
    tasks, dropped = assess_tasks(b, now, 600)
    assert bool(tasks) == kept and bool(dropped) == (not kept)
    if "creationTimestamp" not in t:
        assert tasks == [dict(t, creationTimestamp=now)]


def test_empty_clusters_are_vacuously_healthy():
    b = binding(clusters=None, tasks=[task()], aggregated=[])
    assert assess_tasks(b, at(1), 600) == ([], [("member1", "substitute clusters are healthy")])


def test_unreadable_creation_timestamp_is_restamped():
    b = binding(clusters=[("member2", 3)], tasks=[dict(TASK, creationTimestamp="yesterday")])
    assert assess_tasks(b, at(5), 600)[0] == [dict(TASK, creationTimestamp=at(5))]


def test_graceful_evict_cluster_helper():
    spec = {"clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}]}
    assert graceful_evict_cluster(spec, "member3", {"reason": "R"}) is False
    assert graceful_evict_cluster(spec, "member1", {"reason": "R", "producer": "P", "purgeMode": "Never",
                                                    "suppressDeletion": True, "message": ""}) is True
    assert spec == {"clusters": [{"name": "member2", "replicas": 2}],
                    "gracefulEvictionTasks": [{"fromCluster": "member1", "purgeMode": "Never", "replicas": 1,
                                               "reason": "R", "producer": "P", "suppressDeletion": True,
                                               "clustersBeforeFailover": ["member1", "member2"]}]}


def test_step_stamps_then_drops_with_events_and_generation():
    # the binding's own aggregatedStatus is stale (Unknown); the Works say Healthy: the Works count
    snap = snapshot(bindings=[binding(clusters=[("member2", 3)], tasks=[dict(TASK)], aggregated=[("member2", "Unknown")])])
    snap.works.update([work("member2", "Healthy"), work("member1", "Healthy")])
    c = ctx()
    assert ge.step(snap, snap, T0, c) is True
    (key,) = snap.bindings
    b = snap.bindings[key]
    assert b["spec"]["gracefulEvictionTasks"][0]["creationTimestamp"] == T0
    assert b["metadata"]["generation"] == 2 and c.events == []
    # same clock again: nothing (a run never drops what it stamped) -> no flapping
    assert ge.step(snap, snap, T0, c) is False
    # the scheduler observed the new generation; substitutes healthy: dropped
    b["status"]["schedulerObservedGeneration"] = 2
    assert ge.step(snap, snap, at(30), c) is True
    assert "gracefulEvictionTasks" not in snap.bindings[key]["spec"]
    assert c.events == ["eviction task of default/nginx-deployment for member1 dropped: substitute clusters are healthy"]


def test_step_uses_settings_timeout():
    snap = snapshot(bindings=[binding(clusters=[("member2", 3)], tasks=[task()])])
    c = ctx(graceful_eviction_timeout=60)
    assert ge.step(snap, snap, at(60), c) is False
    assert ge.step(snap, snap, at(61), c) is True
    assert c.events == ["eviction task of default/nginx-deployment for member1 dropped: timed out after 60s"]


def test_step_reads_fresh_health_from_works_not_the_stale_aggregated_status():
    snap = snapshot(bindings=[binding(clusters=[("member2", 3)], tasks=[task()], aggregated=[("member2", "Healthy")])])
    snap.works.update([work("member2", "Unhealthy")])
    assert ge.step(snap, snap, at(30), ctx()) is False
    snap.works.update([work("member2", None)])  # not applied (yet): Unknown
    assert ge.step(snap, snap, at(30), ctx()) is False


def test_online_only_substitutes_observed_in_this_run_count_as_healthy():
    snap = snapshot(bindings=[binding(clusters=[("member2", 3)], tasks=[task()])])
    snap.works.update([work("member2", "Healthy")])
    c = ctx()
    c.observed = frozenset({"member1"})  # member2 could not be read: its Healthy is from an earlier run
    assert ge.step(snap, snap, at(30), c) is False
    c.observed = frozenset({"member1", "member2"})
    assert ge.step(snap, snap, at(30), c) is True
    assert "gracefulEvictionTasks" not in snap.bindings[("work.karmada.io", "ResourceBinding", "default",
                                                         "nginx-deployment")]["spec"]


def test_never_task_kept_until_released():
    snap = snapshot(bindings=[binding(clusters=[("member2", 3)], tasks=[task(suppressDeletion=True)],
                                      aggregated=[("member2", "Healthy")])])
    c = ctx()
    assert ge.step(snap, snap, at(10**7), c) is False
    (key,) = snap.bindings
    snap.bindings[key]["spec"]["gracefulEvictionTasks"][0]["suppressDeletion"] = False
    assert ge.step(snap, snap, at(10**7), c) is True
    assert c.events == ["eviction task of default/nginx-deployment for member1 dropped: deletion confirmed (suppressDeletion false)"]
