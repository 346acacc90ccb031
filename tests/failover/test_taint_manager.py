"""Taint manager (§4.5, configurable cluster failover proposal): when a binding leaves a NoExecute cluster."""
from __future__ import annotations

import json

import pytest

from karmactl.controllers import taint_manager as tm
from karmactl.controllers.taint_manager import eviction_due, evict_binding, purge_options, tolerations_of

from tests.failover.helpers import T0, at, binding, cluster, ctx, ready, snapshot, taint

NR = "cluster.karmada.io/not-ready"
NE = "NoExecute"
TOL_EXISTS = {"key": NR, "operator": "Exists", "effect": NE}


def tol(seconds=None, **kw):
    t = dict(TOL_EXISTS, **kw)
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t


@pytest.mark.parametrize("taints, tolerations, now, expected", [
    ([], [], T0, (False, None)),                                          # nothing to evaluate
    ([taint(NR, NE, T0)], [], T0, (True, None)),                          # untolerated: evict now
    ([taint(NR, NE, T0)], [tol()], at(10**6), (False, None)),             # no tolerationSeconds: forever
    ([taint(NR, NE, T0)], [tol(120)], at(119), (False, at(120))),        # window still open
    ([taint(NR, NE, T0)], [tol(120)], at(120), (True, None)),             # now >= timeAdded + seconds
    ([taint(NR, NE, T0)], [tol(0)], T0, (True, None)),                    # 0: at once
    ([taint(NR, NE, T0)], [tol(-5)], T0, (True, None)),                   # negative: at once
    # the first tolerating toleration is the used one: a later one with seconds does not count
    ([taint(NR, NE, T0)], [tol(), tol(60)], at(100), (False, None)),
    ([taint(NR, NE, T0)], [tol(60), tol()], at(100), (True, None)),
    # every taint must be tolerated
    ([taint(NR, NE, T0), taint("other", NE, T0)], [tol(300)], T0, (True, None)),
    # earliest trigger over every (taint, used toleration that tolerates it) pair, as GetMinTolerationTime:
    # the catch-all toleration is used for "other" and also tolerates not-ready (T0 + 100)
    ([taint(NR, NE, T0), taint("other", NE, at(50))], [tol(300), {"operator": "Exists", "tolerationSeconds": 100}],
     at(10), (False, at(100))),
    # Equal operator compares values
    ([taint("k", NE, T0, value="a")], [{"key": "k", "operator": "Equal", "value": "b", "effect": NE}], T0, (True, None)),
    ([taint("k", NE, T0, value="a")], [{"key": "k", "operator": "Equal", "value": "a", "effect": NE}], T0, (False, None)),
    # a taint without timeAdded: the window starts now
    ([taint(NR, NE)], [tol(60)], at(500), (False, at(560))),
])
def test_eviction_due(taints, tolerations, now, expected):
    assert eviction_due(taints, tolerations, now) == expected


def test_tolerations_come_from_applied_placement_then_spec():
    b = binding(tolerations=[tol(60)])
    b["metadata"]["annotations"]["policy.karmada.io/applied-placement"] = json.dumps({"clusterTolerations": [tol(5)]})
    assert tolerations_of(b) == [tol(5)]
    assert tolerations_of(binding(tolerations=[tol(60)], applied_placement=False)) == [tol(60)]
    b["metadata"]["annotations"]["policy.karmada.io/applied-placement"] = "{not json"
    assert tolerations_of(b) == [tol(60)]


@pytest.mark.parametrize("failover, default, expected", [
    (None, "Gracefully", {"purgeMode": "Gracefully"}),
    (None, "Directly", {"purgeMode": "Directly"}),
    ({"cluster": {}}, "Directly", {"purgeMode": "Gracefully"}),            # failover.cluster set: its mode (default)
    ({"cluster": {"purgeMode": "Directly"}}, "Gracefully", {"purgeMode": "Directly"}),
    ({"cluster": {"purgeMode": "Gracefully", "gracePeriodSeconds": 100}}, "Gracefully",
     {"purgeMode": "Gracefully", "gracePeriodSeconds": 100}),
    ({"cluster": {"purgeMode": "Graciously"}}, "Gracefully", {"purgeMode": "Gracefully"}),
    ({"application": {"decisionConditions": {}}}, "Gracefully", {"purgeMode": "Gracefully"}),
])
def test_purge_options(failover, default, expected):
    got = purge_options(binding(failover=failover), default)
    assert got == dict(expected, reason="TaintUntolerated", producer="TaintManager")


def test_evict_binding_builds_the_task_and_bumps_generation():
    b = binding(clusters=[("member1", 1), ("member2", 2)],
                failover={"cluster": {"purgeMode": "Gracefully", "gracePeriodSeconds": 100}})
    new, evicted = evict_binding(b, {"member1": [taint(NR, NE, T0)]}, at(1), "Gracefully")
    assert evicted == ["member1"]
    assert new["spec"]["clusters"] == [{"name": "member2", "replicas": 2}]
    assert new["spec"]["gracefulEvictionTasks"] == [{
        "fromCluster": "member1", "purgeMode": "Gracefully", "replicas": 1, "reason": "TaintUntolerated",
        "producer": "TaintManager", "gracePeriodSeconds": 100, "clustersBeforeFailover": ["member1", "member2"]}]
    assert new["metadata"]["generation"] == 2
    assert b["spec"]["clusters"] == [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}]


def test_no_replicas_field_for_zero_replica_targets_and_no_second_task():
    existing = [{"fromCluster": "member1", "reason": "ApplicationFailure", "producer": "x", "purgeMode": "Never"}]
    b = binding(clusters=[("member1", 0), ("member2", 0)], tasks=existing, replicas=0)
    new, evicted = evict_binding(b, {"member1": [taint(NR, NE, T0)], "member2": [taint(NR, NE, T0)]}, T0, "Gracefully")
    assert evicted == ["member1", "member2"]
    assert "clusters" not in new["spec"]
    tasks = new["spec"]["gracefulEvictionTasks"]
    assert tasks[0] == existing[0]  # already had a task: only removed from spec.clusters
    assert tasks[1] == {"fromCluster": "member2", "purgeMode": "Gracefully", "reason": "TaintUntolerated",
                        "producer": "TaintManager", "clustersBeforeFailover": ["member2"]}


def test_tolerated_binding_is_left_alone():
    b = binding(clusters=[("member1", 1)], tolerations=[tol(120)])
    assert evict_binding(b, {"member1": [taint(NR, NE, T0)]}, at(60), "Gracefully") == (b, [])
    assert evict_binding(b, {"member2": [taint(NR, NE, T0)]}, at(600), "Gracefully") == (b, [])


def _snap(**kw):
    overlay = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"},
               "status": ready("False"), "spec": {"taints": [taint(NR, "NoSchedule", T0), taint(NR, NE, T0)]}}
    return snapshot(clusters=[cluster("member1"), cluster("member2")],
                    bindings=[binding(clusters=[("member1", 1), ("member2", 2)], **kw)],
                    overlays={"member1": overlay})


def test_step_evicts_with_one_event_and_is_idempotent():
    snap, c = _snap(), ctx()
    assert tm.step(snap, snap, at(1), c) is True
    assert c.events == ["evicted default/nginx-deployment from member1: TaintUntolerated (purgeMode Gracefully)"]
    assert tm.step(snap, snap, at(1), c) is False


def test_step_uses_settings_purge_mode_and_does_nothing_when_failover_off():
    snap, c = _snap(), ctx(no_execute_purge_mode="Directly")
    tm.step(snap, snap, at(1), c)
    assert c.events == ["evicted default/nginx-deployment from member1: TaintUntolerated (purgeMode Directly)"]
    snap, c = _snap(), ctx(cluster_failover=False)
    assert tm.step(snap, snap, at(1), c) is False and c.events == []


def test_step_toleration_window_uses_time_added():
    snap, c = _snap(tolerations=[tol(120)]), ctx()
    assert tm.step(snap, snap, at(119), c) is False
    assert tm.step(snap, snap, at(120), c) is True


def test_user_no_execute_taint_in_file_evicts_too():
    snap = snapshot(clusters=[cluster("member1", taints=[taint("maintenance", NE, T0)])],
                    bindings=[binding(clusters=[("member1", 3)])])
    c = ctx()
    assert tm.step(snap, snap, T0, c) is True
    (b,) = snap.bindings.values()
    assert "clusters" not in b["spec"] and b["spec"]["gracefulEvictionTasks"][0]["fromCluster"] == "member1"


def test_crb_event_names_it_without_namespace():
    overlay = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"},
               "spec": {"taints": [taint(NR, NE, T0)]}}
    snap = snapshot(clusters=[cluster("member1")], overlays={"member1": overlay},
                    bindings=[binding(name="ns-namespace", kind="ClusterResourceBinding", clusters=[("member1", 0)])])
    c = ctx()
    tm.step(snap, snap, T0, c)
    assert c.events == ["evicted ns-namespace from member1: TaintUntolerated (purgeMode Gracefully)"]


def test_deleting_binding_is_skipped():
    snap = _snap()
    (key,) = snap.bindings
    snap.bindings[key]["metadata"]["deletionTimestamp"] = T0
    assert tm.step(snap, snap, at(1), ctx()) is False
