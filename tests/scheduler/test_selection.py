"""Cluster ordering and spread selection (pkg/scheduler/core/spreadconstraint/)."""
from __future__ import annotations

import pytest

from karmactl.scheduler.framework import SchedulingError
from karmactl.scheduler.selection import ClusterDetail, select_best_clusters, sort_key

from .helpers import DYNAMIC, divided, make_binding, make_cluster


def d(name, available, score=0, region=None, order=0):
    return ClusterDetail(name, score, order, available, available, make_cluster(name, region=region))


def names(selected):
    return [c.name for c in selected]


def spec(replicas, placement):
    return make_binding(replicas=replicas, placement=placement)["spec"]


def by_cluster(min_groups=1, max_groups=2):
    return [{"spreadByField": "cluster", "minGroups": min_groups, "maxGroups": max_groups}]


def test_sort_order():
    ds = [d("b", 5), d("a", 5), d("c", 9), d("z", 1, score=100), d("y", 99, order=1)]
    assert names(sorted(ds, key=sort_key)) == ["z", "c", "a", "b", "y"]


@pytest.mark.parametrize("placement, replicas, expected", [
    pytest.param({}, 3, ["a", "b", "c"], id="no constraints selects all"),
    pytest.param({**divided(), "spreadConstraints": by_cluster(1, 1)}, 3, ["a", "b", "c"],
                 id="static weight ignores spread constraints"),
    pytest.param({"spreadConstraints": by_cluster(1, 2)}, 300, ["a", "b"], id="duplicated takes first k, capacity ignored"),
    pytest.param({"spreadConstraints": by_cluster(1, 0)}, 3, [], id="maxGroups 0 selects none"),
    pytest.param({**divided(weight_preference=DYNAMIC), "spreadConstraints": by_cluster(1, 2)}, 70, ["a", "b"],
                 id="capacity covered by first k"),
    pytest.param({**divided(weight_preference=DYNAMIC), "spreadConstraints": by_cluster(1, 2)}, 80, ["a", "c"],
                 id="swap in the largest remaining cluster from the back"),
])
def test_select_by_cluster(placement, replicas, expected):
    # upstream's example: a and b score higher, but only a + c hold 80 replicas
    ds = sorted([d("a", 40, score=100), d("b", 30, score=100), d("c", 60)], key=sort_key)
    assert names(select_best_clusters(spec(replicas, placement), ds, replicas)) == expected


@pytest.mark.parametrize("placement, replicas, message", [
    pytest.param({"spreadConstraints": by_cluster(4, 5)}, 1,
                 "the number of feasible clusters is less than spreadConstraint.MinGroups", id="minGroups too large"),
    pytest.param({**divided(weight_preference=DYNAMIC), "spreadConstraints": by_cluster(1, 2)}, 100,
                 "no enough resource when selecting 2 clusters", id="not enough capacity"),
    pytest.param({**divided(weight_preference=DYNAMIC), "spreadConstraints": by_cluster(1, 0)}, 1,
                 "no enough resource when selecting 0 clusters", id="maxGroups 0 with capacity"),
    pytest.param({"spreadConstraints": [{"spreadByLabel": "team", "minGroups": 1, "maxGroups": 1}]}, 1,
                 "just support cluster and region spread constraint", id="label only"),
    pytest.param({"spreadConstraints": [{"spreadByField": "zone", "minGroups": 1, "maxGroups": 1}]}, 1,
                 "just support cluster and region spread constraint", id="zone only"),
])
def test_select_errors(placement, replicas, message):
    ds = sorted([d("a", 40), d("b", 30), d("c", 20)], key=sort_key)
    with pytest.raises(SchedulingError) as err:
        select_best_clusters(spec(replicas, placement), ds, replicas)
    assert str(err.value) == message


REGION_CLUSTERS = [d("e1", 10, region="eu"), d("e2", 10, region="eu"), d("u1", 10, region="us"),
                   d("u2", 10, region="us"), d("u3", 10, region="us"), d("a1", 10, region="ap")]


def region_spec(rmin, rmax, cmin=None, cmax=None, replicas=3, placement=None):
    constraints = [{"spreadByField": "region", "minGroups": rmin, "maxGroups": rmax}]
    if cmin is not None:
        constraints.append({"spreadByField": "cluster", "minGroups": cmin, "maxGroups": cmax})
    return spec(replicas, {**(placement or {}), "spreadConstraints": constraints})


@pytest.mark.parametrize("s, expected", [
    # duplicated region score = clusters able to hold the replicas * 1000: us 3000, eu 2000, ap 1000
    pytest.param(region_spec(1, 1), ["u1"], id="best region, one cluster without a cluster constraint"),
    pytest.param(region_spec(2, 2), ["e1", "u1"], id="two best regions"),
    pytest.param(region_spec(1, 1, 3, 3), ["u1", "u2", "u3"], id="cluster minGroups needs the big region"),
    pytest.param(region_spec(2, 3, 3, 4), ["e1", "e2", "u1", "u2"], id="fill up to cluster maxGroups"),
    pytest.param(region_spec(1, 2, 2, 2), ["u1", "u2"], id="feasible one-region prefix beats two-region path"),
])
def test_select_by_region(s, expected):
    ds = sorted(REGION_CLUSTERS, key=sort_key)
    assert sorted(names(select_best_clusters(s, ds, 3))) == sorted(expected)


@pytest.mark.parametrize("s, message", [
    pytest.param(region_spec(4, 4), "the number of feasible region is less than spreadConstraint.MinGroups", id="too few regions"),
    pytest.param(region_spec(1, 1, 4, 4), "the number of clusters is less than the cluster spreadConstraint.MinGroups",
                 id="no region combination has enough clusters"),
    pytest.param(region_spec(1, 0), "the number of clusters is less than the cluster spreadConstraint.MinGroups",
                 id="region maxGroups 0 admits no path"),
])
def test_select_by_region_errors(s, message):
    with pytest.raises(SchedulingError) as err:
        select_best_clusters(s, sorted(REGION_CLUSTERS, key=sort_key), 3)
    assert str(err.value) == message


def test_region_scores_prefer_capacity_for_divided():
    # divided 20 replicas over one region: "big" can hold them, "small" cannot although it has more clusters
    ds = sorted([d("s1", 5, region="small"), d("s2", 5, region="small"), d("b1", 30, region="big")], key=sort_key)
    s = region_spec(1, 1, replicas=20, placement=divided(weight_preference=DYNAMIC))
    assert names(select_best_clusters(s, ds, 20)) == ["b1"]
