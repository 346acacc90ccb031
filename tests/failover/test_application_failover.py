"""Application failover (§6 + proposals/application-failover.md), per rule, at the controller level."""
from __future__ import annotations

import json

import pytest

from karmactl.controllers import application_failover as af
from karmactl.controllers.application_failover import BOOKKEEPING_ANNOTATION, assess, expire_history, read_bookkeeping
from karmactl.scheduler.plugins.cluster_eviction import ClusterEviction

from tests.failover.helpers import T0, at, binding, ctx, snapshot

ANY_KIND = lambda api_version, kind: True  # noqa: E731
NO_HOOK = lambda api_version, kind: False  # noqa: E731


def app(toleration=300, purge="Gracefully", grace=600, block=600, pre=None):
    a = {"decisionConditions": {"tolerationSeconds": toleration}, "purgeMode": purge, "blockPredecessorSeconds": block}
    if grace is not None:
        a["gracePeriodSeconds"] = grace
    if pre is not None:
        a["preConditions"] = pre
    return {"application": a}


def rb(health1="Unhealthy", health2="Healthy", **kw):
    kw.setdefault("failover", app())
    return binding(clusters=[("member1", 1), ("member2", 2)], aggregated=[("member1", health1), ("member2", health2)], **kw)


def run(b, *times, hook=ANY_KIND):
    """assess at each time in turn; returns the last binding and every evicted list."""
    evicted = []
    for now in times:
        b, ev = assess(b, now, hook)
        evicted.append(ev)
    return b, evicted


def test_toleration_window_then_eviction():
    b, ev = run(rb(), T0, at(299), at(300))
    assert ev == [[], [], ["member1"]]
    assert b["spec"]["clusters"] == [{"name": "member2", "replicas": 2}]
    assert b["spec"]["gracefulEvictionTasks"] == [{
        "fromCluster": "member1", "purgeMode": "Gracefully", "replicas": 1, "reason": "ApplicationFailure",
        "producer": "resource-binding-application-failover-controller", "gracePeriodSeconds": 600,
        "clustersBeforeFailover": ["member1", "member2"]}]
    assert b["spec"]["activeEvictionHistory"] == [{"clusterName": "member1", "creationTimestamp": at(300)}]
    assert b["metadata"]["generation"] == 2


def test_first_unhealthy_time_is_persisted_in_the_annotation():
    b, _ = run(rb(), at(5))
    # only the toleration window lives there: settled / creationTimestamp are on the items
    assert json.loads(b["metadata"]["annotations"][BOOKKEEPING_ANNOTATION]) == {"member1": {"unhealthySince": at(5)}}
    # the same clock again changes nothing (fixpoint)
    again, ev = assess(b, at(5), ANY_KIND)
    assert again is b and ev == []


@pytest.mark.parametrize("interruption", ["Healthy", "Unknown"])
def test_healthy_or_unknown_resets_the_window(interruption):
    b, _ = run(rb(), T0, at(200))
    b["status"]["aggregatedStatus"][0]["health"] = interruption
    b, _ = run(b, at(250))
    assert "member1" not in read_bookkeeping(b)
    b["status"]["aggregatedStatus"][0]["health"] = "Unhealthy"
    b, ev = run(b, at(300), at(599), at(600))
    assert ev == [[], [], ["member1"]]


def test_toleration_zero_evicts_on_the_next_observation():
    b, ev = run(rb(failover=app(toleration=0)), T0, T0)
    assert ev == [[], ["member1"]]


def test_default_toleration_is_300():
    f = app()
    del f["application"]["decisionConditions"]["tolerationSeconds"]
    b, ev = run(rb(failover=f), T0, at(299), at(300))
    assert ev == [[], [], ["member1"]]


@pytest.mark.parametrize("purge, extra", [
    ("Gracefully", {"gracePeriodSeconds": 120}),
    ("Never", {"suppressDeletion": True}),
    ("Directly", {}),
    ("Immediately", {}),   # proposal spelling
])
def test_purge_modes(purge, extra):
    b, _ = run(rb(failover=app(toleration=0, purge=purge, grace=120 if purge == "Gracefully" else None)), T0, T0)
    task = b["spec"]["gracefulEvictionTasks"][0]
    mode = {"Immediately": "Directly"}.get(purge, purge)
    assert task["purgeMode"] == mode
    for key in ("gracePeriodSeconds", "suppressDeletion"):
        assert task.get(key) == extra.get(key)


def test_crb_producer():
    b = rb(kind="ClusterResourceBinding", propagate_deps=False, failover=app(toleration=0))
    b, _ = run(b, T0, T0)
    assert b["spec"]["gracefulEvictionTasks"][0]["producer"] == "cluster-resource-binding-application-failover-controller"


@pytest.mark.parametrize("change", ["no_failover", "no_status", "no_hook", "no_propagate_deps", "deleting"])
def test_bindings_not_handled(change):
    kw = {}
    if change == "no_failover":
        kw["failover"] = None
    if change == "no_propagate_deps":
        kw["propagate_deps"] = False
    b = binding(clusters=[("member1", 1)], aggregated=None if change == "no_status" else [("member1", "Unhealthy")],
                failover=kw.get("failover", app(toleration=0)), propagate_deps=kw.get("propagate_deps", True))
    if change == "deleting":
        b["metadata"]["deletionTimestamp"] = T0
    out, ev = run(b, T0, at(1000), hook=NO_HOOK if change == "no_hook" else ANY_KIND)
    assert ev == [[], []] and out is b


def test_bookkeeping_removed_when_no_longer_handled():
    b, _ = run(rb(), T0)
    del b["spec"]["failover"]
    out, _ = run(b, at(1))
    assert BOOKKEEPING_ANNOTATION not in (out["metadata"].get("annotations") or {})


def test_clusters_with_a_task_or_outside_spec_clusters_are_not_judged():
    task = {"fromCluster": "member1", "reason": "TaintUntolerated", "producer": "TaintManager", "purgeMode": "Gracefully"}
    b = binding(clusters=[("member2", 3)], tasks=[task], failover=app(toleration=0),
                aggregated=[("member1", "Unhealthy"), ("member2", "Healthy")])
    out, ev = run(b, T0, at(10))
    assert ev == [[], []] and "member1" not in read_bookkeeping(out)


# ------------------------------------------------------------------ preConditions (design document)


def test_delay_seconds_after_first_collection():
    b = rb(failover=app(toleration=0, pre={"delaySeconds": 100}))
    for item in b["status"]["aggregatedStatus"]:  # as the binding status controller stamps them
        item["creationTimestamp"] = T0
    b, ev = run(b, T0, at(50), at(99))
    assert ev == [[], [], []] and "member1" not in read_bookkeeping(b)
    b, ev = run(b, at(100), at(101))
    assert ev == [[], ["member1"]]


def test_item_creation_timestamp_wins_for_delay():
    b = rb(failover=app(toleration=0, pre={"delaySeconds": 100}))
    b["status"]["aggregatedStatus"][0]["creationTimestamp"] = at(-500)
    _, ev = run(b, T0, T0)
    assert ev == [[], ["member1"]]


def test_healthy_state_only_fails_over_once_settled():
    b = rb(failover=app(toleration=0, pre={"healthyState": "Healthy"}))
    b, ev = run(b, T0, at(1), at(2))
    assert ev == [[], [], []]  # never Healthy: solved in the single cluster
    b["status"]["aggregatedStatus"][0]["health"] = "Healthy"
    b, _ = run(b, at(3))
    # Healthy once: the binding status controller keeps ``settled`` on the item from now on
    b["status"]["aggregatedStatus"][0].update(health="Unhealthy", settled=True)
    _, ev = run(b, at(4), at(5))
    assert ev == [[], ["member1"]]


def test_item_settled_flag_counts():
    b = rb(failover=app(toleration=0, pre={"healthyState": "Healthy"}))
    b["status"]["aggregatedStatus"][0]["settled"] = True
    _, ev = run(b, T0, T0)
    assert ev == [[], ["member1"]]


# ------------------------------------------------------------------ blockPredecessorSeconds / eviction history


@pytest.mark.parametrize("block, now, kept", [
    (600, at(599), True), (600, at(600), False), (0, at(10**8), True), (60, at(61), False),
])
def test_history_expiry(block, now, kept):
    b = binding(clusters=[("member2", 3)], failover=app(block=block),
                history=[{"clusterName": "member1", "creationTimestamp": T0}])
    out = expire_history(b, now)
    assert bool((out.get("spec") or {}).get("activeEvictionHistory")) == kept


def test_history_default_600_without_application_failover():
    b = binding(clusters=[("member2", 3)], history=[{"clusterName": "member1", "creationTimestamp": T0}])
    assert assess(b, at(599), ANY_KIND)[0] is b
    assert "activeEvictionHistory" not in assess(b, at(600), ANY_KIND)[0]["spec"]


def test_cluster_eviction_filter_honours_history_in_status_or_spec_and_tasks():
    member1 = {"metadata": {"name": "member1"}}
    f = ClusterEviction()
    hist = [{"clusterName": "member1", "creationTimestamp": T0}]
    assert f.filter({}, {"activeEvictionHistory": hist}, member1).reason == "cluster(s) is in the active eviction history"
    assert not f.filter({"activeEvictionHistory": hist}, {}, member1).ok
    assert f.filter({"gracefulEvictionTasks": [{"fromCluster": "member1"}]}, {}, member1).reason == \
        "cluster(s) is in the process of eviction"
    assert f.filter({}, {"activeEvictionHistory": [{"clusterName": "member2"}]}, member1).ok


def test_step_events_and_idempotence():
    snap = snapshot(bindings=[rb(failover=app(toleration=0))])
    c = ctx()
    assert af.step(snap, snap, T0, c) is True  # bookkeeping written
    assert af.step(snap, snap, T0, c) is True  # eviction
    assert c.events == ["evicted default/nginx-deployment from member1: ApplicationFailure (purgeMode Gracefully)"]
    assert af.step(snap, snap, T0, c) is False
