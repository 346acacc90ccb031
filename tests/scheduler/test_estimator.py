"""General estimator (pkg/estimator/client/general.go)."""
from __future__ import annotations

import pytest

from karmactl.scheduler.estimator import MAX_INT32, cal_available_replicas, max_available_replicas

from .helpers import make_binding, make_cluster

REQ = {"resourceRequest": {"cpu": "500m", "memory": "1Gi"}}
MODELS = [
    {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}, {"name": "memory", "min": "0", "max": "4Gi"}]},
    {"grade": 1, "ranges": [{"name": "cpu", "min": "1", "max": "2"}, {"name": "memory", "min": "4Gi", "max": "16Gi"}]},
    {"grade": 2, "ranges": [{"name": "cpu", "min": "2", "max": "4"}, {"name": "memory", "min": "16Gi", "max": "32Gi"}]},
]


@pytest.mark.parametrize("cluster, requirements, expected", [
    pytest.param(make_cluster("m", summary=False), REQ, 0, id="no resourceSummary"),
    pytest.param(make_cluster("m", pods=None, cpu=8, memory="16Gi"), REQ, 0, id="no pods entry"),
    pytest.param(make_cluster("m", pods=10, allocated={"pods": "10"}), None, 0, id="pods exhausted"),
    pytest.param(make_cluster("m", pods=10, allocated={"pods": "3"}), None, 7, id="no requirements -> allowed pods"),
    pytest.param(make_cluster("m", pods=100, cpu=4, memory="16Gi"), REQ, 8, id="cpu bound (millicores)"),
    pytest.param(make_cluster("m", pods=100, cpu=8, memory="3Gi"), REQ, 3, id="memory bound"),
    pytest.param(make_cluster("m", pods=5, cpu=8, memory="16Gi"), REQ, 5, id="pod bound"),
    pytest.param(make_cluster("m", pods=100, cpu=4), REQ, 0, id="requested resource not in allocatable"),
    pytest.param(make_cluster("m", pods=100, cpu=4, memory="16Gi", allocated={"cpu": "3500m", "memory": "1Gi"}),
                 REQ, 1, id="allocated deducted"),
    pytest.param(make_cluster("m", pods=100, cpu=4, memory="16Gi", allocated={"cpu": "4"}), REQ, 0, id="cpu used up"),
    pytest.param(make_cluster("m", pods=100, cpu=4), {"resourceRequest": {"cpu": "0"}}, 100, id="zero request ignored"),
    pytest.param(make_cluster("m", pods=100, cpu=4), {"resourceRequest": {"nvidia.com/gpu": "1"}}, 0, id="extended resource absent"),
])
def test_summary_estimate(cluster, requirements, expected):
    assert max_available_replicas(cluster, requirements) == expected


@pytest.mark.parametrize("modelings, pods, expected", [
    # grade 1 nodes: 1 cpu / 4Gi min -> 2 replicas of 500m/1Gi each; grade 2: 2 cpu/16Gi -> 4 each
    pytest.param([{"grade": 1, "count": 3}], 100, 6, id="three grade-1 nodes"),
    pytest.param([{"grade": 1, "count": 1}, {"grade": 2, "count": 2}], 100, 10, id="mixed grades"),
    pytest.param([{"grade": 0, "count": 10}], 100, 0, id="grade 0 has zero capacity"),
    pytest.param([{"grade": 2, "count": 5}], 7, 7, id="capped by allowed pods"),
    pytest.param([{"grade": 1, "count": 0}], 100, 0, id="zero count, no nodes"),
])
def test_model_estimate(modelings, pods, expected):
    cluster = make_cluster("m", pods=pods, cpu=1000, memory="1000Gi", models=MODELS, modelings=modelings)
    assert max_available_replicas(cluster, REQ) == expected


def test_model_estimate_falls_back_without_models():
    cluster = make_cluster("m", pods=100, cpu=4, memory="16Gi", modelings=[{"grade": 1, "count": 3}])
    assert max_available_replicas(cluster, REQ) == 8


def test_model_estimate_pod_limit_per_virtual_node():
    cluster = make_cluster("m", pods=1000, cpu=1000, memory="1000Gi", models=MODELS, modelings=[{"grade": 2, "count": 2}])
    # no positive request: each virtual node holds 110 pods
    assert max_available_replicas(cluster, {"resourceRequest": {}}) == 220


def test_non_workload_is_unlimited():
    spec = make_binding(kind="ConfigMap", api_version="v1")["spec"]
    assert cal_available_replicas([make_cluster("m", summary=False)], spec) == {"m": MAX_INT32}


def test_workload_estimates():
    spec = make_binding(replicas=3, requirements=REQ)["spec"]
    clusters = [make_cluster("a", pods=100, cpu=4, memory="16Gi"), make_cluster("b", summary=False)]
    assert cal_available_replicas(clusters, spec) == {"a": 8, "b": 0}
