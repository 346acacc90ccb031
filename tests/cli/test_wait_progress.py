"""``reconcile --wait`` says what it waits for (issue 28, item 5): a heartbeat line on long waits,
per binding and cluster, in words that tell a rollout in progress from a cluster that is not Ready."""
from __future__ import annotations

import shutil
from pathlib import Path

from karmactl.api.kinds import KindRegistry
from karmactl.api.snapshot import Snapshot
from karmactl.cli import converging
from karmactl.reconcile import converged, waiting_for

from tests.e2e.conftest import members  # noqa: F401 - the fixture

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"


def test_wait_prints_a_heartbeat_naming_the_rollout_per_cluster(cli, state, members, monkeypatch):  # noqa: F811
    monkeypatch.setattr(converging, "HEARTBEAT_SECONDS", 0.2)
    shutil.copytree(MANIFESTS / "nginx", state / "nginx")
    for name in ("member1", "member2"):
        members.start(name, fake_delay=2.0)  # the member's Deployments become ready 2 s after each change
    code, _out, err = cli("reconcile", "--wait", "--timeout", "60s")
    assert code == 0, err
    beats = [line for line in err.splitlines() if line.startswith("still waiting (")]
    assert beats, err
    assert any("Deployment default/nginx on member1: " in b and "Deployment default/nginx on member2: " in b
               and ("rollout not yet started" in b or "replicas" in b) for b in beats), beats
    assert "is Unhealthy" not in err and "not Ready" not in err  # a rollout is not a sick cluster
    # the runs' changes together, at the end: each object once, its first and last state compared
    table = err[err.index("ACTION "):].splitlines()
    assert sum(1 for line in table if " ResourceBinding " in line) == 1
    assert any(line.split()[:2] == ["create", "Work"] and "replicas 1; image nginx" in line for line in table), table
    assert any(line.split()[:3] == ["create", "Cluster", "(status)"] and "Ready True" in line for line in table), table
    assert table[-1].startswith("Changed: ")


def _snapshot(cluster_ready: str, item: dict) -> Snapshot:
    key = ("cluster.karmada.io", "Cluster", "", "member1")
    snap = Snapshot(registry=KindRegistry())
    snap.user[key] = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"}}
    snap.overlays[key] = {"status": {"conditions": [{"type": "Ready", "status": cluster_ready, "reason": "ClusterNotReachable",
                                                     "message": "cluster is not reachable"}]}}
    snap.bindings[("work.karmada.io", "ResourceBinding", "default", "nginx-deployment")] = {
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"},
                 "clusters": [{"name": "member1", "replicas": 3}]},
        "status": {"conditions": [{"type": "Scheduled", "status": "True"}, {"type": "FullyApplied", "status": "True"}],
                   "aggregatedStatus": [dict(item, clusterName="member1")]}}
    return snap


def test_waiting_words_tell_a_rollout_from_a_sick_cluster():
    rolling = {"applied": True, "health": "Unhealthy",
               "status": {"generation": 2, "observedGeneration": 2, "replicas": 3, "updatedReplicas": 2,
                          "readyReplicas": 2, "availableReplicas": 2}}
    assert waiting_for(_snapshot("True", rolling)) == ["Deployment default/nginx on member1: 2/3 replicas updated"]
    assert converged(_snapshot("True", rolling)) == (False, "Deployment default/nginx on member1: 2/3 replicas updated")
    unseen = dict(rolling, status=dict(rolling["status"], observedGeneration=1))
    assert waiting_for(_snapshot("True", unseen)) == [
        "Deployment default/nginx on member1: rollout not yet started by member1 (generation 2, observed 1)"]
    assert waiting_for(_snapshot("False", rolling)) == [
        "Deployment default/nginx on member1: cluster member1 is not Ready (ClusterNotReachable: cluster is not reachable)"]
    done = dict(rolling, health="Healthy")
    assert waiting_for(_snapshot("True", done)) == [] and converged(_snapshot("True", done)) == (True, "")
