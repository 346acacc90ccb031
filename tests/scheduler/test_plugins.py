"""Filter and score plugins (pkg/scheduler/framework/plugins/*)."""
from __future__ import annotations

import pytest

from karmactl.scheduler.framework import fit_error_message, run_filter_plugins
from karmactl.scheduler.plugins import FILTER_PLUGINS, SCORE_PLUGINS
from karmactl.scheduler.plugins.api_enablement import APIEnablement
from karmactl.scheduler.plugins.cluster_affinity import ClusterAffinity
from karmactl.scheduler.plugins.cluster_eviction import ClusterEviction
from karmactl.scheduler.plugins.cluster_locality import ClusterLocality
from karmactl.scheduler.plugins.spread_constraint import SpreadConstraint
from karmactl.scheduler.plugins.taint_toleration import TaintToleration

from .helpers import make_binding, make_cluster


def spec_of(**kw) -> dict:
    return make_binding(**kw)["spec"]


NOT_READY = {"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}
NO_EXEC = {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}


def test_registry_order():
    assert [p.name for p in FILTER_PLUGINS] == ["APIEnablement", "TaintToleration", "ClusterAffinity",
                                                "SpreadConstraint", "ClusterEviction"]
    assert [p.name for p in SCORE_PLUGINS] == ["ClusterLocality", "ClusterAffinity"]


@pytest.mark.parametrize("spec, cluster, ok", [
    pytest.param(spec_of(), make_cluster("m1"), True, id="api enabled"),
    pytest.param(spec_of(kind="CronTab", api_version="stable.example.com/v1"), make_cluster("m1"), False, id="api missing"),
    pytest.param(spec_of(), make_cluster("m1", apis=None), False, id="no apiEnablements at all"),
    pytest.param(spec_of(kind="ConfigMap", api_version="v1"), make_cluster("m1"), True, id="core group version v1"),
    pytest.param(spec_of(clusters=[{"name": "m1"}]), make_cluster("m1", apis=None), True, id="already scheduled cluster exempt"),
])
def test_api_enablement(spec, cluster, ok):
    result = APIEnablement().filter(spec, {}, cluster)
    assert result.ok is ok
    assert result.reason == ("" if ok else "cluster(s) did not have the API resource")


@pytest.mark.parametrize("taints, tolerations, scheduled, reason", [
    pytest.param([], [], [], None, id="no taints"),
    pytest.param([NOT_READY], [], [], "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}",
                 id="taint NoSchedule untolerated"),
    pytest.param([NO_EXEC], [], [], "cluster(s) had untolerated taint {dedicated=gpu:NoExecute}", id="taint NoExecute untolerated"),
    pytest.param([{"key": "x", "effect": "PreferNoSchedule"}], [], [], None, id="PreferNoSchedule ignored"),
    pytest.param([NOT_READY], [{"key": "cluster.karmada.io/not-ready", "operator": "Exists"}], [], None, id="Exists tolerates"),
    pytest.param([NO_EXEC], [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoExecute"}], [], None,
                 id="Equal with value tolerates"),
    pytest.param([NO_EXEC], [{"key": "dedicated", "operator": "Equal", "value": "cpu"}], [],
                 "cluster(s) had untolerated taint {dedicated=gpu:NoExecute}", id="Equal wrong value"),
    pytest.param([NO_EXEC], [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}], [],
                 "cluster(s) had untolerated taint {dedicated=gpu:NoExecute}", id="wrong effect"),
    pytest.param([NOT_READY, NO_EXEC], [{"operator": "Exists"}], [], None, id="empty key Exists tolerates all"),
    pytest.param([NOT_READY, NO_EXEC], [{"key": "cluster.karmada.io/not-ready", "operator": "Exists"}], [],
                 "cluster(s) had untolerated taint {dedicated=gpu:NoExecute}", id="first untolerated reported"),
    pytest.param([NO_EXEC], [], [{"name": "m1", "replicas": 1}], None, id="already scheduled cluster exempt"),
])
def test_taint_toleration(taints, tolerations, scheduled, reason):
    spec = spec_of(placement={"clusterTolerations": tolerations}, clusters=scheduled)
    result = TaintToleration().filter(spec, {}, make_cluster("m1", taints=taints))
    assert (result.ok, result.reason or None) == (reason is None, reason)


EU = make_cluster("eu1", labels={"geo": "eu"}, region="eu-west", zones=["z1", "z2"], provider="aws")
US = make_cluster("us1", labels={"geo": "us"}, region="us-east")


@pytest.mark.parametrize("placement, status, cluster, replicas, ok", [
    pytest.param({}, {}, EU, 0, True, id="no affinity matches all"),
    pytest.param({"clusterAffinity": {"clusterNames": ["eu1"]}}, {}, EU, 0, True, id="clusterNames hit"),
    pytest.param({"clusterAffinity": {"clusterNames": ["us1"]}}, {}, EU, 0, False, id="clusterNames miss"),
    pytest.param({"clusterAffinity": {"exclude": ["eu1"]}}, {}, EU, 0, False, id="excluded"),
    pytest.param({"clusterAffinity": {"labelSelector": {"matchLabels": {"geo": "eu"}}}}, {}, EU, 0, True, id="label hit"),
    pytest.param({"clusterAffinity": {"labelSelector": {"matchLabels": {"geo": "eu"}}}}, {}, US, 0, False, id="label miss"),
    pytest.param({"clusterAffinity": {"fieldSelector": {"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["z2"]}]}}}, {}, EU, 0, True, id="field zone In"),
    pytest.param({"clusterAffinity": {"fieldSelector": {"matchExpressions": [
        {"key": "region", "operator": "NotIn", "values": ["eu-west"]}]}}}, {}, EU, 0, False, id="field region NotIn"),
    pytest.param({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["us1"]},
                                        {"affinityName": "b", "clusterNames": ["eu1"]}]},
                 {"schedulerObservingAffinityName": "b"}, EU, 0, True, id="affinities active term b"),
    pytest.param({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["us1"]},
                                        {"affinityName": "b", "clusterNames": ["eu1"]}]},
                 {"schedulerObservingAffinityName": "a"}, EU, 0, False, id="affinities active term a"),
    pytest.param({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["us1"],
                                         "overflowAffinities": [{"affinityName": "o", "clusterNames": ["eu1"]}]}]},
                 {"schedulerObservingAffinityName": "a"}, EU, 3, True, id="overflow tier matches for workload"),
    pytest.param({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["us1"],
                                         "overflowAffinities": [{"affinityName": "o", "clusterNames": ["eu1"]}]}]},
                 {"schedulerObservingAffinityName": "a"}, EU, 0, False, id="overflow tier ignored for non-workload"),
])
def test_cluster_affinity(placement, status, cluster, replicas, ok):
    result = ClusterAffinity().filter(spec_of(placement=placement, replicas=replicas), status, cluster)
    assert result.ok is ok
    if not ok:
        assert result.reason == "cluster(s) did not match the placement cluster affinity constraint"
    assert ClusterAffinity().score(spec_of(), cluster) == 0


@pytest.mark.parametrize("field, cluster, reason", [
    pytest.param("cluster", US, None, id="cluster needs nothing"),
    pytest.param("region", US, None, id="region present"),
    pytest.param("region", make_cluster("x"), "cluster(s) did not have region property", id="region missing"),
    pytest.param("zone", US, "cluster(s) did not have zones property", id="zones missing"),
    pytest.param("zone", EU, None, id="zones present"),
    pytest.param("provider", US, "cluster(s) did not have provider property", id="provider missing"),
    pytest.param("provider", EU, None, id="provider present"),
])
def test_spread_constraint(field, cluster, reason):
    spec = spec_of(placement={"spreadConstraints": [{"spreadByField": field, "minGroups": 1, "maxGroups": 2}]})
    result = SpreadConstraint().filter(spec, {}, cluster)
    assert (result.ok, result.reason or None) == (reason is None, reason)


@pytest.mark.parametrize("tasks, ok", [
    pytest.param([], True, id="no tasks"),
    pytest.param([{"fromCluster": "eu1", "reason": "TaintUntolerated", "producer": "TaintManager"}], False, id="eviction task blocks"),
    pytest.param([{"fromCluster": "us1", "reason": "TaintUntolerated", "producer": "TaintManager"}], True, id="other cluster's task"),
])
def test_cluster_eviction(tasks, ok):
    result = ClusterEviction().filter(spec_of(eviction_tasks=tasks), {}, EU)
    assert result.ok is ok
    if not ok:
        assert result.reason == "cluster(s) is in the process of eviction"


@pytest.mark.parametrize("scheduled, score", [
    pytest.param(None, 0, id="nothing scheduled"),
    pytest.param([{"name": "eu1", "replicas": 1}], 100, id="already there"),
    pytest.param([{"name": "us1", "replicas": 1}], 0, id="elsewhere"),
])
def test_cluster_locality(scheduled, score):
    assert ClusterLocality().score(spec_of(clusters=scheduled), EU) == score


def test_first_failing_filter_is_reported():
    spec = spec_of(placement={"clusterAffinity": {"clusterNames": ["x"]}}, kind="CronTab", api_version="x/v1")
    cluster = make_cluster("m1", taints=[NOT_READY])
    assert run_filter_plugins(FILTER_PLUGINS, spec, {}, cluster).reason == "cluster(s) did not have the API resource"


@pytest.mark.parametrize("n, diagnosis, text", [
    pytest.param(0, {}, "0/0 clusters are available: no cluster exists.", id="no clusters"),
    pytest.param(2, {}, "0/2 clusters are available: no cluster exists.", id="all deleting"),
    pytest.param(3, {"a": "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}",
                     "b": "cluster(s) did not match the placement cluster affinity constraint"},
                 "0/3 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, "
                 "1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}.", id="doc example"),
    pytest.param(3, {"a": "r", "b": "r", "c": "q"}, "0/3 clusters are available: 1 q, 2 r.", id="histogram counts"),
    pytest.param(12, {str(i): ("x" if i < 10 else "y") for i in range(12)},
                 "0/12 clusters are available: 10 x, 2 y.", id="sorted as strings"),
])
def test_fit_error_text(n, diagnosis, text):
    assert fit_error_message(n, diagnosis) == text
