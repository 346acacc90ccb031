"""schedule_binding / needs_schedule end to end (pkg/scheduler/scheduler.go, helper.go)."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karmactl.api import constants as C
from karmactl.scheduler import needs_schedule, schedule_binding
from karmactl.scheduler.core import placement_changed

from .helpers import DYNAMIC, LATER, NOW, condition, divided, make_binding, make_cluster, targets

REQ = {"resourceRequest": {"cpu": "1"}}


def applied(placement: dict) -> dict:
    return {C.APPLIED_PLACEMENT_ANNOTATION: json.dumps(placement, sort_keys=True, separators=(",", ":"))}


def capacity_clusters(**cpus):
    return [make_cluster(n, cpu=c, pods=110) for n, c in cpus.items()]


# --- eligibility ---------------------------------------------------------------------------------

@pytest.mark.parametrize("binding", [
    pytest.param(make_binding(schedulerName="other-scheduler"), id="other scheduler"),
    pytest.param(make_binding(suspension={"scheduling": True}), id="scheduling suspended"),
    pytest.param(make_binding(labels={}), id="no policy label (attached binding)"),
])
def test_ineligible_bindings_untouched(binding, three_clusters):
    out = schedule_binding(binding, three_clusters, NOW)
    assert not out.attempted and out.binding == binding


@pytest.mark.parametrize("labels", [
    pytest.param({C.CPP_PERMANENT_ID_LABEL: "x"}, id="cpp label"),
    pytest.param({"binding.karmada.io/managed-by": "x"}, id="managed-by label"),
])
def test_eligible_labels(labels, three_clusters):
    assert schedule_binding(make_binding(labels=labels), three_clusters, NOW).attempted


# --- first schedule and write-back ---------------------------------------------------------------

def test_first_schedule_writes_everything(three_clusters):
    placement = divided(weight_preference={"staticWeightList": [
        {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1},
        {"targetCluster": {"clusterNames": ["member2"]}, "weight": 2}]})
    b = make_binding(replicas=3, placement=placement)
    out = schedule_binding(b, three_clusters, NOW)
    nb = out.binding
    assert out.attempted and out.error is None
    assert out.result == [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}]
    assert nb["spec"]["clusters"] == out.result
    assert nb["metadata"]["annotations"][C.APPLIED_PLACEMENT_ANNOTATION] == \
        json.dumps(placement, sort_keys=True, separators=(",", ":"))
    assert nb["metadata"]["generation"] == 2
    assert nb["status"]["schedulerObservedGeneration"] == 2
    assert nb["status"]["lastScheduledTime"] == NOW
    assert condition(nb) == {"type": "Scheduled", "status": "True", "reason": "Success",
                             "message": "Binding has been scheduled successfully.", "lastTransitionTime": NOW}
    assert b["spec"].get("clusters") is None  # input not modified


def test_second_run_is_identical(three_clusters):
    first = schedule_binding(make_binding(replicas=2), three_clusters, NOW).binding
    second = schedule_binding(first, three_clusters, LATER)
    assert second.attempted  # Duplicated is always scheduled
    assert second.binding == first


def test_non_workload_gets_zero_replica_targets(three_clusters):
    out = schedule_binding(make_binding(kind="ConfigMap", api_version="v1"), three_clusters, NOW)
    assert out.binding["spec"]["clusters"] == [{"name": "member1"}, {"name": "member2"}, {"name": "member3"}]


def test_empty_workload_propagation(three_clusters):
    b = make_binding(replicas=0, requirements=REQ)
    assert "clusters" not in schedule_binding(b, three_clusters, NOW).binding["spec"]
    out = schedule_binding(b, three_clusters, NOW, enable_empty_workload_propagation=True)
    assert targets(out.binding) == {"member1": 0, "member2": 0, "member3": 0}


# --- failures ------------------------------------------------------------------------------------

def test_no_cluster_fit_clears_clusters():
    clusters = [make_cluster("a", taints=[{"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}]),
                make_cluster("b"), make_cluster("c", deleting=True)]
    placement = {"clusterAffinity": {"clusterNames": ["a", "c"]}}
    b = make_binding(replicas=1, placement=placement, clusters=[{"name": "c", "replicas": 1}],
                     status={"schedulerObservedGeneration": 1, "lastScheduledTime": NOW})
    out = schedule_binding(b, clusters, LATER)
    text = ("0/3 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, "
            "1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}.")
    assert out.error == text
    assert out.filtered == {"a": "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}",
                            "b": "cluster(s) did not match the placement cluster affinity constraint"}
    nb = out.binding
    assert "clusters" not in nb["spec"] and nb["metadata"]["generation"] == 2
    assert C.APPLIED_PLACEMENT_ANNOTATION in nb["metadata"]["annotations"]
    assert condition(nb)["reason"] == "NoClusterFit" and condition(nb)["message"] == text
    assert nb["status"]["schedulerObservedGeneration"] == 1 and nb["status"]["lastScheduledTime"] == NOW
    assert out.result == []


def test_no_clusters_at_all():
    out = schedule_binding(make_binding(), [], NOW)
    assert out.error == "0/0 clusters are available: no cluster exists."


def test_unschedulable_keeps_clusters():
    b = make_binding(replicas=10, requirements=REQ, placement=divided(weight_preference=DYNAMIC),
                     clusters=[{"name": "a", "replicas": 2}],
                     annotations=applied({}))
    out = schedule_binding(b, capacity_clusters(a=1, b=2), NOW)
    assert out.error == "failed to assign replicas: failed to scale up: Clusters available replicas 3 are not enough to schedule."
    assert condition(out.binding)["reason"] == "Unschedulable"
    assert out.binding["spec"] == b["spec"]
    assert out.binding["metadata"]["annotations"] == b["metadata"]["annotations"]


def test_scheduler_error_from_spread_selection(three_clusters):
    placement = {**divided(weight_preference=DYNAMIC),
                 "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 5, "maxGroups": 5}]}
    out = schedule_binding(make_binding(replicas=2, placement=placement), three_clusters, NOW)
    assert out.error == "failed to select clusters: the number of feasible clusters is less than spreadConstraint.MinGroups"
    assert condition(out.binding)["reason"] == "SchedulerError"
    assert "clusters" not in out.binding["spec"]
    assert C.APPLIED_PLACEMENT_ANNOTATION not in (out.binding["metadata"].get("annotations") or {})


# --- 3.2 decision ---------------------------------------------------------------------------------

def scheduled_divided(**over):
    placement = over.pop("placement", divided(weight_preference=DYNAMIC))
    kw = dict(replicas=4, requirements=REQ, placement=placement, clusters=[{"name": "a", "replicas": 2},
              {"name": "b", "replicas": 2}], annotations=applied(placement),
              status={"schedulerObservedGeneration": 1, "lastScheduledTime": NOW})
    kw.update(over)
    return make_binding(**kw)


@pytest.mark.parametrize("binding, clusters, expected", [
    pytest.param(scheduled_divided(), {}, False, id="nothing changed"),
    pytest.param(scheduled_divided(annotations=None), {}, True, id="applied placement missing"),
    pytest.param(scheduled_divided(annotations={C.APPLIED_PLACEMENT_ANNOTATION: "{not json"}), {}, False,
                 id="undecodable applied placement ignored"),
    pytest.param(scheduled_divided(annotations=applied(divided("Aggregated"))), {}, True, id="placement changed"),
    pytest.param(scheduled_divided(replicas=5), {}, True, id="replicas changed"),
    pytest.param(scheduled_divided(clusters=[{"name": "a", "replicas": 2}]), {}, True, id="eviction removed a target"),
    pytest.param(scheduled_divided(rescheduleTriggeredAt=LATER), {}, True, id="rescheduleTriggeredAt later"),
    pytest.param(scheduled_divided(rescheduleTriggeredAt=NOW), {}, False, id="rescheduleTriggeredAt not later"),
    pytest.param(scheduled_divided(placement={}, annotations=applied({}), clusters=[{"name": "a", "replicas": 4}]), {}, True,
                 id="duplicated always"),
    pytest.param(scheduled_divided(replicas=0, requirements=None, clusters=[{"name": "a"}]), {}, True,
                 id="non-workload always"),
    pytest.param(scheduled_divided(), {"b": make_cluster("b", deleting=True)}, True, id="target cluster deleting"),
])
def test_needs_schedule(binding, clusters, expected):
    assert needs_schedule(binding, clusters) is expected


def test_no_schedule_only_fixes_observed_generation():
    b = scheduled_divided(generation=3)
    out = schedule_binding(b, capacity_clusters(a=10, b=10), LATER)
    assert not out.attempted
    assert out.binding["status"]["schedulerObservedGeneration"] == 3
    out.binding["status"]["schedulerObservedGeneration"] = 1
    assert out.binding == b


@pytest.mark.parametrize("old, new, observed, changed", [
    pytest.param({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["x"]},
                                        {"affinityName": "b", "clusterNames": ["y"]}]},
                 {"clusterAffinities": [{"affinityName": "a", "clusterNames": ["x"]},
                                        {"affinityName": "b", "clusterNames": ["z"]}]}, "a", False,
                 id="inactive term edit ignored"),
    pytest.param({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["x"]}]},
                 {"clusterAffinities": [{"affinityName": "a", "clusterNames": ["w"]}]}, "a", True, id="active term edited"),
    pytest.param({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["x"]}]},
                 {"clusterAffinities": [{"affinityName": "b", "clusterNames": ["x"]}]}, "a", True, id="active term removed"),
    pytest.param({"workloadAffinity": {"affinity": {"groupByLabelKey": "k"}}}, {}, "", True,
                 id="other field without observed term"),
    pytest.param({"clusterTolerations": []}, {}, "", False, id="empty list equals absent"),
])
def test_placement_changed(old, new, observed, changed):
    assert placement_changed(new, json.dumps(old), observed) is changed


# --- reschedule triggers -------------------------------------------------------------------------

def test_scale_up_and_down_are_incremental():
    clusters = capacity_clusters(a=10, b=10, c=10)
    b = scheduled_divided(replicas=6)
    up = schedule_binding(b, clusters, LATER)
    assert targets(up.binding) == {"a": 3, "b": 3}  # 2 more over equal capacities: a and b (score 100 first)
    down = schedule_binding({**up.binding, "spec": {**up.binding["spec"], "replicas": 3}}, clusters, LATER)
    assert sum(targets(down.binding).values()) == 3 and set(targets(down.binding)) <= {"a", "b"}


def test_eviction_moves_replicas_to_remaining_clusters():
    b = scheduled_divided(clusters=[{"name": "a", "replicas": 2}],
                          eviction_tasks=[{"fromCluster": "b", "reason": "TaintUntolerated", "producer": "TaintManager"}])
    out = schedule_binding(b, capacity_clusters(a=10, b=10, c=10), LATER)
    assert targets(out.binding) == {"a": 3, "c": 1}
    assert out.filtered == {"b": "cluster(s) is in the process of eviction"}


def test_explicit_reschedule_is_fresh_and_stamps_time():
    b = scheduled_divided(clusters=[{"name": "a", "replicas": 4}], rescheduleTriggeredAt=LATER)
    out = schedule_binding(b, capacity_clusters(a=4, b=10), "2026-01-01T02:00:00Z")
    assert targets(out.binding) == {"a": 2, "b": 2}  # weights 4+4 (a: allocatable + previous) and 10
    assert out.binding["status"]["lastScheduledTime"] == "2026-01-01T02:00:00Z"
    assert not needs_schedule(out.binding, {})


def test_placement_change_with_same_result_does_not_stamp_time():
    b = scheduled_divided(annotations=applied({"clusterTolerations": [{"operator": "Exists"}]}))
    out = schedule_binding(b, capacity_clusters(a=10, b=10), LATER)
    assert out.attempted and targets(out.binding) == {"a": 2, "b": 2}
    assert out.binding["status"]["lastScheduledTime"] == NOW
    assert out.binding["metadata"]["generation"] == 1


def test_new_matching_cluster_added_for_duplicated_only():
    dup = schedule_binding(make_binding(replicas=1), [make_cluster("a")], NOW).binding
    assert targets(schedule_binding(dup, [make_cluster("a"), make_cluster("b")], LATER).binding) == {"a": 1, "b": 1}
    div = schedule_binding(make_binding(replicas=2, requirements=REQ, placement=divided(weight_preference=DYNAMIC)),
                           capacity_clusters(a=10), NOW).binding
    out = schedule_binding(div, capacity_clusters(a=10, b=10), LATER)
    assert not out.attempted and targets(out.binding) == {"a": 2}


def test_tainted_existing_target_kept():
    taint = {"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}
    first = schedule_binding(make_binding(replicas=1), [make_cluster("a"), make_cluster("b")], NOW).binding
    out = schedule_binding(first, [make_cluster("a", taints=[taint]), make_cluster("b"),
                                   make_cluster("c", taints=[taint])], LATER)
    assert targets(out.binding) == {"a": 1, "b": 1}
    assert out.filtered == {"c": "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}"}


# --- clusterAffinities -----------------------------------------------------------------------------

AFFINITIES = {**divided(weight_preference=DYNAMIC), "clusterAffinities": [
    {"affinityName": "primary", "clusterNames": ["p1", "p2"]},
    {"affinityName": "backup", "clusterNames": ["b1"]}]}


def test_affinities_first_term_used():
    out = schedule_binding(make_binding(replicas=4, requirements=REQ, placement=AFFINITIES),
                           capacity_clusters(p1=10, p2=10, b1=10), NOW)
    assert targets(out.binding) == {"p1": 2, "p2": 2}
    assert out.binding["status"]["schedulerObservingAffinityName"] == "primary"


@pytest.mark.parametrize("clusters, reason", [
    pytest.param(capacity_clusters(p1=1, p2=1, b1=10), "capacity", id="falls through on capacity"),
    pytest.param(capacity_clusters(b1=10), "no fit", id="falls through on no fit"),
])
def test_affinities_fall_through_to_next_term(clusters, reason):
    out = schedule_binding(make_binding(replicas=4, requirements=REQ, placement=AFFINITIES), clusters, NOW)
    assert targets(out.binding) == {"b1": 4}
    assert out.binding["status"]["schedulerObservingAffinityName"] == "backup"
    assert out.filtered.keys() == {c["metadata"]["name"] for c in clusters} - {"b1"}


def test_affinities_stay_on_backup_and_restart_on_explicit_reschedule():
    b = make_binding(replicas=4, requirements=REQ, placement=AFFINITIES)
    on_backup = schedule_binding(b, capacity_clusters(b1=10), NOW).binding
    # primary is back, but the scheduler never moves back on its own
    again = schedule_binding(on_backup, capacity_clusters(p1=10, p2=10, b1=10), LATER)
    assert again.binding == on_backup
    trig = {**on_backup, "spec": {**on_backup["spec"], "rescheduleTriggeredAt": LATER}}
    back = schedule_binding(trig, capacity_clusters(p1=10, p2=10, b1=10), "2026-01-01T02:00:00Z").binding
    assert targets(back) == {"p1": 2, "p2": 2}
    assert back["status"]["schedulerObservingAffinityName"] == "primary"


def test_affinities_all_fail_with_fit_error_first():
    out = schedule_binding(make_binding(replicas=4, requirements=REQ, placement=AFFINITIES),
                           capacity_clusters(x=10), NOW)
    assert condition(out.binding)["reason"] == "NoClusterFit"
    assert out.error == "0/1 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint."
    assert "schedulerObservingAffinityName" not in out.binding["status"]
    assert C.APPLIED_PLACEMENT_ANNOTATION in out.binding["metadata"]["annotations"]


def test_affinities_all_fail_with_capacity_first():
    out = schedule_binding(make_binding(replicas=40, requirements=REQ, placement=AFFINITIES),
                           capacity_clusters(p1=10, p2=10), NOW)
    assert condition(out.binding)["reason"] == "Unschedulable"
    assert out.error == "failed to assign replicas: failed to scale up: Clusters available replicas 20 are not enough to schedule."
    assert C.APPLIED_PLACEMENT_ANNOTATION not in (out.binding["metadata"].get("annotations") or {})


def test_overflow_affinities_end_to_end():
    placement = {**divided(weight_preference=DYNAMIC), "clusterAffinities": [
        {"affinityName": "primary", "clusterNames": ["p1"],
         "overflowAffinities": [{"affinityName": "burst", "clusterNames": ["b1", "b2"]}]}]}
    out = schedule_binding(make_binding(replicas=8, requirements=REQ, placement=placement),
                           capacity_clusters(p1=4, b1=10, b2=10), NOW)
    assert targets(out.binding) == {"p1": 4, "b1": 2, "b2": 2}


# --- idempotence ---------------------------------------------------------------------------------

cluster_st = st.lists(st.tuples(st.sampled_from(["m1", "m2", "m3", "m4"]), st.integers(0, 8)), min_size=1,
                      max_size=4, unique_by=lambda t: t[0])
placement_st = st.sampled_from([
    {}, divided(), divided("Aggregated"), divided(weight_preference=DYNAMIC),
    divided(weight_preference={"staticWeightList": [{"targetCluster": {"clusterNames": ["m1"]}, "weight": 2},
                                                    {"targetCluster": {"clusterNames": ["m2", "m3"]}, "weight": 1}]}),
    {**divided(weight_preference=DYNAMIC), "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}]},
])


@settings(max_examples=40, deadline=None)
@given(clusters=cluster_st, placement=placement_st, replicas=st.integers(0, 12), workload=st.booleans())
def test_schedule_twice_is_identical(clusters, placement, replicas, workload):
    cs = capacity_clusters(**dict(clusters))
    b = make_binding(replicas=replicas, requirements=REQ if workload else None, placement=placement, uid="u-1")
    first = schedule_binding(b, cs, NOW)
    second = schedule_binding(first.binding, cs, LATER)
    assert second.binding == first.binding


# --- worked examples through the estimator ---------------------------------------------------------

@pytest.mark.parametrize("placement, expected", [
    pytest.param(divided("Aggregated"), {"A": 6, "B": 4}, id="aggregated 10 over 8,6,3"),
    pytest.param(divided(weight_preference=DYNAMIC), {"A": 5, "B": 3, "C": 2}, id="dynamic 10 over 8,6,3"),
])
def test_estimator_drives_division(placement, expected):
    out = schedule_binding(make_binding(replicas=10, requirements=REQ, placement=placement),
                           capacity_clusters(A=8, B=6, C=3), NOW)
    assert targets(out.binding) == expected


def test_cluster_resource_binding_same_shape(three_clusters):
    crb = make_binding(kind="ClusterRole", api_version="rbac.authorization.k8s.io/v1",
                       labels={C.CPP_PERMANENT_ID_LABEL: "x"})
    crb["kind"] = "ClusterResourceBinding"
    del crb["metadata"]["namespace"]
    rbac = [{"groupVersion": "rbac.authorization.k8s.io/v1", "resources": [{"name": "clusterroles", "kind": "ClusterRole"}]}]
    clusters = [make_cluster("member1", apis=rbac), make_cluster("member2")]
    out = schedule_binding(crb, clusters, NOW)
    assert targets(out.binding) == {"member1": 0}
    assert out.filtered == {"member2": "cluster(s) did not have the API resource"}
