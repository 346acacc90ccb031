"""Binding controller rules (semantics §5.3, §9.1, §9.2), pure."""
from __future__ import annotations

import pytest

from karmactl import interpreter
from karmactl.controllers import binding as ctl
from karmactl.controllers.helper.work import RenderHooks
from karmactl.api.names import binding_name, work_name

NOW = "2026-01-01T00:00:00Z"
HOOKS = RenderHooks(revise_replica=interpreter.revise_replica, prune=interpreter.prune_manifest,
                        split_job_completions=interpreter.split_job_completions)


def view():
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "nginx", "namespace": "default", "uid": "u1", "generation": 3},
            "spec": {"replicas": 3, "template": {}}}


def rb(clusters, tasks=None, **spec):
    b = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
         "metadata": {"name": "nginx-deployment", "namespace": "default",
                      "labels": {"resourcebinding.karmada.io/permanent-id": "rb-1"}},
         "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                               "name": "nginx", "uid": "u1"},
                  "replicas": 3, "clusters": clusters, **spec}}
    if tasks:
        b["spec"]["gracefulEvictionTasks"] = tasks
    return b


VIEWS = {("apps", "Deployment", "default", "nginx"): view()}


def wkey(cluster):
    return ("work.karmada.io", "Work", f"karmada-es-{cluster}", "nginx-687f7fb96f")


@pytest.mark.parametrize("name, kind, ns, expected", [
    ("nginx", "Deployment", "default", "nginx-687f7fb96f"),
    ("system:foo", "ClusterRole", "", None),
])
def test_names(name, kind, ns, expected):
    got = work_name(ns, name, kind)
    if expected:
        assert got == expected
    assert got.startswith(name.replace(":", ".").lower() + "-")
    assert binding_name("system:foo", "ClusterRole") == "system.foo-clusterrole"


def test_one_work_per_target_with_revised_replicas_and_annotations():
    res = ctl.reconcile({("b",): rb([{"name": "m1", "replicas": 1}, {"name": "m2", "replicas": 2}])}, {}, VIEWS, NOW, HOOKS)
    assert sorted(res.works) == [wkey("m1"), wkey("m2")]
    m2 = res.works[wkey("m2")]["spec"]["workload"]["manifests"][0]
    assert m2["spec"]["replicas"] == 2
    assert m2["metadata"]["annotations"]["resourcetemplate.karmada.io/generation"] == "3"
    assert res.works[wkey("m2")]["spec"]["suspendDispatching"] is False


def test_orphan_work_removed_and_applied_orphan_terminates():
    first = ctl.reconcile({("b",): rb([{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 0}])}, {}, VIEWS, NOW, HOOKS).works
    applied = dict(first[wkey("m2")], status={"conditions": [{"type": "Applied", "status": "True"}]})
    works = {wkey("m1"): first[wkey("m1")], wkey("m2"): applied}
    res = ctl.reconcile({("b",): rb([{"name": "m1", "replicas": 3}])}, works, VIEWS, NOW, HOOKS)
    assert res.works[wkey("m2")]["metadata"]["deletionTimestamp"] == NOW
    never_applied = {wkey("m1"): first[wkey("m1")], wkey("m2"): first[wkey("m2")]}
    res = ctl.reconcile({("b",): rb([{"name": "m1", "replicas": 3}])}, never_applied, VIEWS, NOW, HOOKS)
    assert res.works[wkey("m2")] is None


@pytest.mark.parametrize("purge, kept", [("Gracefully", True), ("Never", True), ("Directly", False)])
def test_eviction_task_keeps_old_work_unless_directly(purge, kept):
    first = ctl.reconcile({("b",): rb([{"name": "m1", "replicas": 3}])}, {}, VIEWS, NOW, HOOKS).works
    old = dict(first[wkey("m1")], status={"conditions": [{"type": "Applied", "status": "True"}]})
    task = [{"fromCluster": "m1", "purgeMode": purge, "reason": "TaintUntolerated", "producer": "TaintManager"}]
    res = ctl.reconcile({("b",): rb([{"name": "m2", "replicas": 3}], task)}, {wkey("m1"): old}, VIEWS, NOW, HOOKS)
    assert (wkey("m1") not in res.works) is kept
    # Directly: no Work is rendered while the old copy remains (semantics §9.1 step 2)
    assert (wkey("m2") in res.works) is kept


def test_suspension_per_cluster():
    b = rb([{"name": "m1", "replicas": 1}, {"name": "m2", "replicas": 2}],
           suspension={"dispatchingOnClusters": {"clusterNames": ["m2"]}})
    works = ctl.reconcile({("b",): b}, {}, VIEWS, NOW, HOOKS).works
    assert works[wkey("m1")]["spec"]["suspendDispatching"] is False
    assert works[wkey("m2")]["spec"]["suspendDispatching"] is True
    b["spec"]["suspension"] = {"dispatching": True}
    works = ctl.reconcile({("b",): b}, {}, VIEWS, NOW, HOOKS).works
    assert all(w["spec"]["suspendDispatching"] for w in works.values())


def test_conflict_resolution_annotation():
    works = ctl.reconcile({("b",): rb([{"name": "m1", "replicas": 3}], conflictResolution="Overwrite")}, {}, VIEWS, NOW, HOOKS).works
    assert works[wkey("m1")]["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] == "overwrite"


def test_unchanged_render_returns_the_same_object():
    b = {("b",): rb([{"name": "m1", "replicas": 3}])}
    first = ctl.reconcile(b, {}, VIEWS, NOW, HOOKS).works
    again = ctl.reconcile(b, dict(first), VIEWS, "2026-02-01T00:00:00Z", HOOKS)
    assert again.works == {}
