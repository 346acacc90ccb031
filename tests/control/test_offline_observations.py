"""Offline what-if runs from recorded observations (``karmactl observe``), and offline/online parity
of the control plane's conditions (issue: one reconcile is one honest control loop)."""
from __future__ import annotations

import json

import yaml

from tests.conftest import app_failover_policy, cluster_yaml, write

T0 = "2026-01-01T00:00:00Z"


def at(seconds: float) -> str:
    from karmactl.api.objects import add_seconds
    return add_seconds(T0, seconds)


def fleet(state, toleration: int = 300, purge: str = "Gracefully", suspend: str = "") -> None:
    for name in ("member1", "member2"):
        write(state / "clusters" / f"{name}.yaml", cluster_yaml(name))
    write(state / "app.yaml", """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: nginx, namespace: default, labels: {app: nginx}}
        spec:
          replicas: 2
          selector: {matchLabels: {app: nginx}}
          template:
            metadata: {labels: {app: nginx}}
            spec: {containers: [{name: nginx, image: nginx:1.25}]}
        """)
    write(state / "policy.yaml", app_failover_policy(toleration, purge, suspend))


def rb(state) -> dict:
    return json.loads((state / "computed" / "resourcebindings" / "default" / "nginx-deployment.json").read_text())


def work(state, cluster: str) -> dict:
    return json.loads((state / "computed" / "works" / f"karmada-es-{cluster}" / "nginx-687f7fb96f.json").read_text())


def test_observed_unhealthy_workload_is_evicted_once_the_toleration_has_passed(cli, state):
    fleet(state, toleration=300)
    cli.ok("reconcile", "--offline", "--now", at(0))
    for cluster in ("member1", "member2"):
        cli.ok("--now", at(10), "observe", "deploy/nginx", "--cluster", cluster, "--health", "Healthy")
    cli.ok("reconcile", "--offline", "--now", at(20))
    assert [i["health"] for i in rb(state)["status"]["aggregatedStatus"]] == ["Healthy", "Healthy"]

    out = cli.ok("--now", at(30), "observe", "deploy/nginx", "--cluster", "member1", "--health", "Unhealthy")
    assert "observed on member1: health Unhealthy" in out
    assert work(state, "member1")["metadata"]["annotations"]["karmactl.io/observed-at"] == at(30)

    # before the toleration has passed since the observation: nothing is evicted
    cli.ok("reconcile", "--offline", "--now", at(300))
    assert not rb(state)["spec"].get("gracefulEvictionTasks")
    # past it: member1, and only member1, is evicted, as an online run observing it would
    cli.ok("reconcile", "--offline", "--now", at(331))
    tasks = rb(state)["spec"]["gracefulEvictionTasks"]
    assert [(t["fromCluster"], t["reason"], t["producer"]) for t in tasks] == [
        ("member1", "ApplicationFailure", "resource-binding-application-failover-controller")]
    assert [c["name"] for c in rb(state)["spec"]["clusters"]] == ["member2"]


def test_a_single_offline_run_past_the_toleration_evicts_from_the_observation_time(cli, state):
    fleet(state, toleration=60, purge="Immediately")
    cli.ok("reconcile", "--offline", "--now", at(0))
    cli.ok("--now", at(5), "observe", "deploy/nginx", "--cluster", "member2", "--health", "Unhealthy")
    cli.ok("reconcile", "--offline", "--now", at(66))
    assert [t["fromCluster"] for t in rb(state)["spec"]["gracefulEvictionTasks"]] == ["member2"]


def test_observe_status_file_is_reflected_and_health_interpreted(cli, state, tmp_path):
    fleet(state)
    cli.ok("reconcile", "--offline", "--now", at(0))
    status = tmp_path / "status.yaml"
    status.write_text("observedGeneration: 1\nreplicas: 2\nupdatedReplicas: 2\nreadyReplicas: 2\navailableReplicas: 2\n")
    cli.ok("--now", at(1), "observe", "deploy/nginx", "--cluster", "member1", "--status-file", str(status))
    entry = work(state, "member1")["status"]["manifestStatuses"][0]
    assert entry["health"] == "Healthy"
    assert entry["status"]["readyReplicas"] == 2
    cli.ok("reconcile", "--offline", "--now", at(2))
    got = yaml.safe_load(cli.ok("get", "deploy", "nginx", "-o", "yaml"))
    assert got["status"]["readyReplicas"] == 2


def test_observe_refuses_what_it_cannot_record(cli, state):
    fleet(state)
    cli.ok("reconcile", "--offline", "--now", at(0))
    code, _out, err = cli("observe", "deploy/nginx", "--cluster", "member3", "--health", "Unhealthy")
    assert code == 1 and "has no Work on cluster member3" in err
    code, _out, err = cli("observe", "deploy/nginx", "--cluster", "member1", "--health", "Sick")
    assert code == 2 and "--health" in err
    code, _out, err = cli("observe", "deploy/missing", "--cluster", "member1", "--health", "Healthy")
    assert code == 1 and "not found" in err


def test_apply_refuses_a_hand_written_binding_and_points_to_observe(cli, state, tmp_path):
    fleet(state)
    path = write(tmp_path / "rb.yaml", """
        apiVersion: work.karmada.io/v1alpha2
        kind: ResourceBinding
        metadata: {name: nginx-deployment, namespace: default}
        spec:
          resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: nginx}
        """)
    code, _out, err = cli("apply", "-f", str(path))
    assert code == 2
    assert "karmactl observe" in err and "rb.yaml" in err and "ResourceBinding nginx-deployment" in err
    assert not any(p.name == "rb.yaml" for p in state.rglob("*"))


def test_offline_run_sets_dispatching_false_for_a_suspended_policy(cli, state):
    fleet(state, suspend="  suspension: {dispatching: true}")
    cli.ok("reconcile", "--offline", "--now", at(0))
    for cluster in ("member1", "member2"):
        cond = next(c for c in work(state, cluster)["status"]["conditions"] if c["type"] == "Dispatching")
        assert (cond["status"], cond["reason"]) == ("False", "SuspendDispatching")
    # resumed: True/Dispatching, with a new transition time
    fleet(state)
    cli.ok("reconcile", "--offline", "--now", at(60))
    cond = next(c for c in work(state, "member1")["status"]["conditions"] if c["type"] == "Dispatching")
    assert (cond["status"], cond["reason"], cond["lastTransitionTime"]) == ("True", "Dispatching", at(60))
