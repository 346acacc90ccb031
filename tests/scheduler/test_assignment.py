"""Replica assignment (pkg/scheduler/core/assignment.go, division_algorithm.go, common.go)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karmactl.scheduler.assignment import FRESH, STEADY, assign_dynamic, assign_replicas, assign_static_weight
from karmactl.scheduler.framework import SchedulingError, UnschedulableError
from karmactl.scheduler.selection import ClusterDetail, sort_key
from karmactl.scheduler.util import AGGREGATED_STRATEGY, DYNAMIC_WEIGHT_STRATEGY

from .helpers import DYNAMIC, divided, make_binding, make_cluster


def details(alloc: dict[str, int], scheduled: dict[str, int] | None = None, labels=None) -> list[ClusterDetail]:
    scheduled = scheduled or {}
    out = [ClusterDetail(n, 100 if n in scheduled else 0, 0, a + scheduled.get(n, 0), a,
                         make_cluster(n, labels=(labels or {}).get(n))) for n, a in alloc.items()]
    return sorted(out, key=sort_key)


def spec(replicas, placement, scheduled=None, uid="") -> dict:
    clusters = [{"name": n, "replicas": r} for n, r in (scheduled or {}).items()] or None
    return make_binding(replicas=replicas, placement=placement, clusters=clusters, uid=uid)["spec"]


def as_map(targets):
    return {t["name"]: t["replicas"] for t in targets}


# --- 3.6.6 static weight -------------------------------------------------------------------------

def static_list(**weights):
    return {"staticWeightList": [{"targetCluster": {"clusterNames": [n]}, "weight": w} for n, w in weights.items()]}


@pytest.mark.parametrize("replicas, weights, expected", [
    pytest.param(3, {"member1": 1, "member2": 2}, {"member1": 1, "member2": 2}, id="3 over 1:2"),
    pytest.param(9, {"A": 1, "B": 2}, {"A": 3, "B": 6}, id="9 over 1:2"),
    pytest.param(9, {"A": 1, "B": 3}, {"A": 2, "B": 7}, id="9 over 1:3"),
    pytest.param(4, {"a": 1, "b": 1, "c": 1}, {"a": 2, "b": 1, "c": 1}, id="4 over 1:1:1"),
    pytest.param(5, {"a": 1, "b": 1, "c": 1}, {"a": 2, "b": 2, "c": 1}, id="5 over 1:1:1"),
    pytest.param(12, {"A": 6, "B": 12, "C": 18}, {"A": 2, "B": 4, "C": 6}, id="12 over 6:12:18"),
    pytest.param(10, {"A": 8, "B": 6}, {"A": 6, "B": 4}, id="10 over 8:6"),
])
def test_static_weight_worked_examples(replicas, weights, expected):
    s = spec(replicas, divided(weight_preference=static_list(**weights)))
    assert as_map(assign_replicas(details({n: 0 for n in weights}), s, {})) == expected


def test_static_weight_max_of_matching_rules_and_unmatched_dropped():
    wp = {"staticWeightList": [
        {"targetCluster": {"labelSelector": {"matchLabels": {"env": "prod"}}}, "weight": 1},
        {"targetCluster": {"clusterNames": ["a"]}, "weight": 3},
    ]}
    ds = details({"a": 0, "b": 0, "c": 0}, labels={"a": {"env": "prod"}, "b": {"env": "prod"}})
    assert as_map(assign_replicas(ds, spec(8, divided(weight_preference=wp)), {})) == {"a": 6, "b": 2}


@pytest.mark.parametrize("wp", [
    pytest.param(None, id="no weightPreference -> weight 1 each"),
    pytest.param({"staticWeightList": [{"targetCluster": {"clusterNames": ["zzz"]}, "weight": 5}]},
                 id="no cluster matched -> weight 1 each"),
])
def test_static_weight_defaults_to_equal(wp):
    assert as_map(assign_replicas(details({"a": 0, "b": 0, "c": 0}), spec(6, divided(weight_preference=wp)), {})) == \
        {"a": 2, "b": 2, "c": 2}


def test_static_weight_ignores_previous_result_and_capacity():
    s = spec(4, divided(weight_preference=static_list(a=1, b=1)), scheduled={"a": 4})
    assert as_map(assign_static_weight(details({"a": 0, "b": 0}, {"a": 4}), s)) == {"a": 2, "b": 2}


# --- 3.6.7 dynamic weight and Aggregated ----------------------------------------------------------

def test_dynamic_first_schedule_example():
    s = spec(12, divided(weight_preference=DYNAMIC))
    assert as_map(assign_replicas(details({"A": 6, "B": 12, "C": 18}), s, {})) == {"A": 2, "B": 4, "C": 6}


def test_aggregated_first_schedule_example():
    s = spec(10, divided("Aggregated"))
    assert as_map(assign_replicas(details({"A": 8, "B": 6, "C": 3}), s, {})) == {"A": 6, "B": 4}


def test_aggregated_scale_up_example():
    s = spec(12, divided("Aggregated"), scheduled={"A": 6, "B": 4})
    assert as_map(assign_replicas(details({"A": 2, "B": 2, "C": 3}, {"A": 6, "B": 4}), s, {})) == {"A": 8, "B": 4}


def test_dynamic_scale_up_example():
    s = spec(12, divided(weight_preference=DYNAMIC), scheduled={"A": 6, "B": 4})
    assert as_map(assign_replicas(details({"A": 2, "B": 2, "C": 3}, {"A": 6, "B": 4}), s, {})) == {"A": 7, "B": 4, "C": 1}


@pytest.mark.parametrize("strategy, prev, replicas, expected", [
    pytest.param(DYNAMIC_WEIGHT_STRATEGY, {"A": 6, "B": 4}, 5, {"A": 3, "B": 2}, id="dynamic scale down proportional"),
    pytest.param(AGGREGATED_STRATEGY, {"A": 6, "B": 4}, 5, {"A": 5}, id="aggregated scale down keeps fewest clusters"),
    pytest.param(DYNAMIC_WEIGHT_STRATEGY, {"A": 6, "B": 4}, 10, {"A": 6, "B": 4}, id="equal keeps previous"),
    pytest.param(DYNAMIC_WEIGHT_STRATEGY, {"A": 6, "B": 4}, 0, {"A": 0, "B": 0}, id="scale to zero"),
])
def test_dynamic_scale_down_and_steady(strategy, prev, replicas, expected):
    s = spec(replicas, divided("Aggregated" if strategy == AGGREGATED_STRATEGY else "Weighted",
                               weight_preference=None if strategy == AGGREGATED_STRATEGY else DYNAMIC), scheduled=prev)
    out = assign_dynamic(details({"A": 10, "B": 10, "C": 10}, prev), s, strategy, STEADY)
    assert {k: v for k, v in as_map(out).items()} == expected


def test_dropped_candidate_replicas_are_placed_again():
    # B left the candidate set (e.g. evicted): its 4 replicas are scaled up onto A and C
    s = spec(10, divided(weight_preference=DYNAMIC), scheduled={"A": 6, "B": 4})
    out = assign_dynamic(details({"A": 2, "C": 2}, {"A": 6}), s, DYNAMIC_WEIGHT_STRATEGY, STEADY)
    assert as_map(out) == {"A": 8, "C": 2}


def test_fresh_mode_ignores_previous_distribution():
    s = spec(6, divided(weight_preference=DYNAMIC), scheduled={"A": 6})
    out = assign_dynamic(details({"A": 0, "B": 6}, {"A": 6}), s, DYNAMIC_WEIGHT_STRATEGY, FRESH)
    assert as_map(out) == {"A": 3, "B": 3}


@pytest.mark.parametrize("mode, prefix", [
    pytest.param(STEADY, "failed to scale up: ", id="steady"),
    pytest.param(FRESH, "failed to do fresh scale: ", id="fresh"),
])
def test_not_enough_capacity(mode, prefix):
    s = spec(10, divided(weight_preference=DYNAMIC))
    with pytest.raises(UnschedulableError) as err:
        assign_dynamic(details({"A": 2, "B": 1}), s, DYNAMIC_WEIGHT_STRATEGY, mode)
    assert str(err.value) == f"{prefix}Clusters available replicas 3 are not enough to schedule."


def test_duplicated_and_non_workload():
    assert as_map(assign_replicas(details({"a": 0, "b": 0}), spec(3, {}), {})) == {"a": 3, "b": 3}
    cm = make_binding(kind="ConfigMap", api_version="v1", placement=divided())["spec"]
    assert assign_replicas(details({"a": 0, "b": 0}), cm, {}) == [{"name": "a", "replicas": 0}, {"name": "b", "replicas": 0}]


def test_zero_replica_workload_with_requirements_gets_empty_result():
    s = make_binding(replicas=0, requirements={"resourceRequest": {"cpu": "1"}}, placement={})["spec"]
    assert assign_replicas(details({"a": 5}), s, {}) == []


def test_no_clusters():
    with pytest.raises(SchedulingError, match="^no clusters available to schedule$"):
        assign_replicas([], spec(1, {}), {})


# --- overflow tiers -----------------------------------------------------------------------------

def overflow_details(alloc: dict[str, tuple[int, int]]) -> list[ClusterDetail]:
    out = [ClusterDetail(n, 0, order, a, a, make_cluster(n)) for n, (order, a) in alloc.items()]
    return sorted(out, key=sort_key)


OVERFLOW_PLACEMENT = {**divided(weight_preference=DYNAMIC),
                      "clusterAffinities": [{"affinityName": "primary", "clusterNames": ["a", "b"],
                                             "overflowAffinities": [{"affinityName": "burst", "clusterNames": ["c"]}]}]}
OVERFLOW_STATUS = {"schedulerObservingAffinityName": "primary"}


@pytest.mark.parametrize("replicas, expected", [
    pytest.param(4, {"a": 2, "b": 2}, id="fits in primary tier"),
    pytest.param(9, {"a": 3, "b": 3, "c": 3}, id="overflows to burst tier"),
])
def test_overflow_tiers(replicas, expected):
    ds = overflow_details({"a": (0, 3), "b": (0, 3), "c": (1, 10)})
    assert as_map(assign_replicas(ds, spec(replicas, OVERFLOW_PLACEMENT), OVERFLOW_STATUS)) == expected


def test_overflow_not_enough():
    ds = overflow_details({"a": (0, 3), "b": (0, 3), "c": (1, 1)})
    with pytest.raises(UnschedulableError, match="^Clusters available replicas are not enough to schedule.$"):
        assign_replicas(ds, spec(9, OVERFLOW_PLACEMENT), OVERFLOW_STATUS)


# --- properties ---------------------------------------------------------------------------------

names = st.sampled_from(["m1", "m2", "m3", "m4", "m5", "m6"])


@settings(max_examples=50, deadline=None)
@given(weights=st.dictionaries(names, st.integers(1, 10), min_size=1), replicas=st.integers(0, 60),
       uid=st.sampled_from(["", "uid-1", "uid-2"]))
def test_static_sum_and_monotone(weights, replicas, uid):
    ds = details({n: 0 for n in weights})
    placement = divided(weight_preference=static_list(**weights))
    now = as_map(assign_replicas(ds, spec(replicas, placement, uid=uid), {})) if replicas else {}
    more = as_map(assign_replicas(ds, spec(replicas + 1, placement, uid=uid), {}))
    assert sum(now.values()) == replicas
    assert sum(more.values()) == replicas + 1
    assert all(more.get(n, 0) >= r for n, r in now.items())


@settings(max_examples=50, deadline=None)
@given(alloc=st.dictionaries(names, st.integers(0, 20), min_size=1), replicas=st.integers(1, 40),
       aggregated=st.booleans(), prev=st.dictionaries(names, st.integers(0, 10)))
def test_dynamic_sum_when_capacity_suffices(alloc, replicas, aggregated, prev):
    prev = {n: r for n, r in prev.items() if n in alloc and r > 0}
    s = spec(replicas, divided("Aggregated") if aggregated else divided(weight_preference=DYNAMIC), scheduled=prev)
    ds = details(alloc, prev)
    capacity = sum(alloc.values()) if sum(prev.values()) <= replicas else sum(prev.values())
    try:
        out = as_map(assign_replicas(ds, s, {}))
    except UnschedulableError:
        assert capacity < replicas - (sum(prev.values()) if sum(prev.values()) <= replicas else 0)
        return
    assert sum(out.values()) == replicas
    if sum(prev.values()) <= replicas:  # scale up never takes replicas away
        assert all(out.get(n, 0) >= r for n, r in prev.items())
