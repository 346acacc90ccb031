"""statePreservation (gate StatefulFailoverInjection) offline: the evicted cluster's status, recorded
with ``karmactl observe``, becomes the task's ``preservedLabelState`` and the replacement Work's labels;
aggregatedStatus items show ``settled`` / ``creationTimestamp``."""
from __future__ import annotations

import json

import pytest
import yaml

from karmactl.controllers.binding import inject_preserved_label_state

from tests.conftest import cluster_yaml, write
from tests.core.test_offline_run import NGINX
from tests.failover.helpers import T0, at

WORK = "nginx-687f7fb96f"
LABEL = "failover.example.io/updated-replicas"


def setup(state, behaviour: str = "application", gate: str = "true", json_path: str = "{.updatedReplicas}",
          clusters: bool = True, toleration: int = 60) -> None:
    """A Deployment placed on one of member1/member2 (spread maxGroups 1), failover with purgeMode
    Directly and a statePreservation rule, the gate set; ``clusters``: write static Clusters too."""
    if clusters:
        write(state / "clusters.yaml", "---".join(cluster_yaml(f"member{i}") for i in (1, 2)))
    write(state / "nginx.yaml", NGINX.replace("  name: nginx\n", "  name: nginx\n  namespace: default\n", 1))
    failover = {
        "application": f"""
            application:
              decisionConditions: {{tolerationSeconds: {toleration}}}
              purgeMode: Directly
              statePreservation:
                rules: [{{aliasLabelName: {LABEL}, jsonPath: "{json_path}"}}]""",
        "cluster": f"""
            cluster:
              purgeMode: Directly
              statePreservation:
                rules: [{{aliasLabelName: {LABEL}, jsonPath: "{json_path}"}}]""",
    }[behaviour]
    write(state / "pp.yaml", f"""
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: nginx, namespace: default}}
        spec:
          propagateDeps: true
          resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: nginx}}]
          placement:
            clusterAffinity: {{clusterNames: [member1, member2]}}
            spreadConstraints: [{{spreadByField: cluster, maxGroups: 1, minGroups: 1}}]
            replicaScheduling: {{replicaSchedulingType: Duplicated}}
          failover:{failover}
        """)
    write(state / "settings.yaml", f"""
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: karmactl-config, namespace: karmada-system}}
        data: {{statefulFailoverInjection: "{gate}"}}
        """)


def reconcile(cli, now: str) -> str:
    code, _out, err = cli("reconcile", "--offline", "--now", now)
    assert code == 0, err
    return err


def rb(cli) -> dict:
    return yaml.safe_load(cli.ok("get", "rb", "nginx-deployment", "-n", "default", "-o", "yaml"))


def work_path(state, cluster: str):
    return state / "computed" / "works" / f"karmada-es-{cluster}" / f"{WORK}.json"


def manifest_labels(state, cluster: str) -> dict:
    work = json.loads(work_path(state, cluster).read_text())
    return work["spec"]["workload"]["manifests"][0]["metadata"]["labels"]


def observe(cli, tmp_path, cluster: str, now: str, health: str | None = None, updated: int = 2) -> None:
    status = tmp_path / "status.yaml"
    status.write_text(f"observedGeneration: 1\nreplicas: 3\nupdatedReplicas: {updated}\nreadyReplicas: 0\n"
                      "availableReplicas: 0\n")
    args = ["--now", now, "observe", "deploy/nginx", "-n", "default", "--cluster", cluster, "--status-file", str(status)]
    cli.ok(*args, *(["--health", health] if health else []))


def chosen(cli) -> tuple[str, str]:
    [name] = [c["name"] for c in rb(cli)["spec"]["clusters"]]
    return name, ("member2" if name == "member1" else "member1")


def unhealthy_where_placed(cli, state, tmp_path, **settings) -> tuple[str, str]:
    """Set up, place the workload, record it Unhealthy (2 of 3 replicas updated) where it runs at
    10 s, and return (that cluster, the other one)."""
    setup(state, **settings)
    reconcile(cli, T0)
    old, new = chosen(cli)
    observe(cli, tmp_path, old, at(10), health="Unhealthy")
    return old, new


def test_application_failover_preserves_the_state_and_injects_it_into_the_replacement(cli, state, tmp_path):
    old, new = unhealthy_where_placed(cli, state, tmp_path)
    reconcile(cli, at(20))
    item = rb(cli)["status"]["aggregatedStatus"][0]
    assert (item["clusterName"], item["health"], item["creationTimestamp"]) == (old, "Unhealthy", T0)
    assert "settled" not in item  # never Healthy there
    reconcile(cli, at(71))  # past the 60 s toleration since the observation
    spec = rb(cli)["spec"]
    [task] = spec["gracefulEvictionTasks"]
    assert (task["fromCluster"], task["purgeMode"], task["preservedLabelState"]) == (old, "Directly", {LABEL: "2"})
    assert task["clustersBeforeFailover"] == [old]
    assert [c["name"] for c in spec["clusters"]] == [new]
    # the old copy is deleted first (purgeMode Directly); once the execution layer has dropped its
    # Work, the replacement is rendered with the preserved state as labels
    assert json.loads(work_path(state, old).read_text())["metadata"]["deletionTimestamp"] == at(71)
    work_path(state, old).unlink()
    reconcile(cli, at(80))
    assert manifest_labels(state, new)[LABEL] == "2"
    assert not work_path(state, old).exists()


def test_cluster_failover_preserves_the_state_of_the_not_ready_cluster(cli, state, tmp_path):
    setup(state, behaviour="cluster")
    reconcile(cli, T0)
    old, new = chosen(cli)
    observe(cli, tmp_path, old, at(5), updated=3)  # health interpreted from the status: Unhealthy is fine too
    reconcile(cli, at(10))
    cli.ok("cluster", "condition", "set", old, "Ready=False", "--now", at(60))
    err = reconcile(cli, at(60))
    assert f"evicted default/nginx-deployment from {old}: TaintUntolerated (purgeMode Directly)" in err
    [task] = rb(cli)["spec"]["gracefulEvictionTasks"]
    assert (task["producer"], task["preservedLabelState"]) == ("TaintManager", {LABEL: "3"})
    work_path(state, old).unlink()  # what the execution layer does once the member is back
    reconcile(cli, at(90))
    assert manifest_labels(state, new)[LABEL] == "3"


def test_gate_off_evicts_without_state_and_says_so(cli, state, tmp_path):
    old, new = unhealthy_where_placed(cli, state, tmp_path, gate="false")
    err = reconcile(cli, at(71))
    assert ("warning: default/nginx-deployment: failover.application.statePreservation has no effect: the feature "
            "gate StatefulFailoverInjection is off") in err
    [task] = rb(cli)["spec"]["gracefulEvictionTasks"]
    assert "preservedLabelState" not in task
    work_path(state, old).unlink()
    reconcile(cli, at(80))
    assert LABEL not in manifest_labels(state, new)


def test_a_path_the_status_lacks_holds_the_eviction_back(cli, state, tmp_path):
    old, _new = unhealthy_where_placed(cli, state, tmp_path, json_path="{.jobStatus.id}")
    err = reconcile(cli, at(71))
    assert (f"warning: default/nginx-deployment: eviction from {old} waits: statePreservation rule {LABEL} "
            f"({{.jobStatus.id}}) on the status from Cluster({old}): {{.jobStatus.id}} is not found") in err
    assert not rb(cli)["spec"].get("gracefulEvictionTasks")


@pytest.mark.parametrize("expr, detail", [
    ("{.jobStatus.id", "unbalanced braces"),
    (".jobStatus.id", "has no {...} expression"),
    ("{range .items[*]}{.id}{end}", "range/end blocks are not supported"),
    ("{.a[?(@.x==}", ""),
])
def test_an_invalid_json_path_is_refused_at_load(cli, state, expr, detail):
    setup(state, json_path=expr)
    code, _out, err = cli("reconcile", "--offline", "--now", T0)
    assert code == 2, err
    assert "pp.yaml" in err and "spec.failover.application.statePreservation.rules[0].jsonPath" in err
    assert detail in err


def test_settled_stays_once_healthy(cli, state, tmp_path):
    setup(state)
    reconcile(cli, T0)
    old, _new = chosen(cli)
    observe(cli, tmp_path, old, at(10), health="Healthy")
    reconcile(cli, at(20))
    observe(cli, tmp_path, old, at(30), health="Unhealthy")
    reconcile(cli, at(40))
    [item] = rb(cli)["status"]["aggregatedStatus"]
    assert (item["health"], item["settled"], item["creationTimestamp"]) == ("Unhealthy", True, T0)


@pytest.mark.parametrize("case, clusters, task, target, injected", [
    ("moved to one cluster", ["m2"], {"purgeMode": "Directly", "clustersBeforeFailover": ["m1"]}, "m2", True),
    ("two targets", ["m2", "m3"], {"purgeMode": "Directly", "clustersBeforeFailover": ["m1"]}, "m2", False),
    ("not Directly", ["m2"], {"purgeMode": "Gracefully", "clustersBeforeFailover": ["m1"]}, "m2", False),
    ("ran there before", ["m1"], {"purgeMode": "Directly", "clustersBeforeFailover": ["m1", "m2"]}, "m1", False),
])
def test_injection_rules(case, clusters, task, target, injected):
    spec = {"clusters": [{"name": c} for c in clusters],
            "gracefulEvictionTasks": [dict(task, fromCluster="m1", preservedLabelState={"jobID": "42"})]}
    labels = {"app": "x"}
    inject_preserved_label_state(spec, target, labels)
    assert (labels.get("jobID") == "42") is injected, case
