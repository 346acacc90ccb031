"""Multi-component workloads behind ``MultiplePodTemplatesScheduling``: the binding records the
built-in rules' components instead of replicas, the scheduler places a whole set on the one
cluster where one fits (the general estimator's component sets), FederatedResourceQuota counts
each component per scheduled cluster, and ``interpret --operation InterpretComponent`` shows them."""
from __future__ import annotations

import json

import pytest
import yaml

from karmactl.scheduler.estimator import max_available_component_sets
from tests.conftest import NOW, write
from tests.scheduler.helpers import make_cluster

FLINK_COMPONENTS = [
    {"name": "jobmanager", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "1", "memory": "2Gi"}}},
    {"name": "taskmanager", "replicas": 2, "replicaRequirements": {"resourceRequest": {"cpu": "1", "memory": "2Gi"}}},
]


@pytest.mark.parametrize("cluster, sets", [
    pytest.param(make_cluster("m", pods=100, cpu=8, memory="64Gi"), 2, id="cpu bound: 8 of 3 per set"),
    pytest.param(make_cluster("m", pods=100, cpu=64, memory="13Gi"), 2, id="memory bound: 13Gi of 6Gi per set"),
    pytest.param(make_cluster("m", pods=7, cpu=64, memory="64Gi"), 2, id="pods bound: 7 of 3 per set"),
    pytest.param(make_cluster("m", pods=100, cpu=8, memory="64Gi", allocated={"cpu": "6"}), 0, id="2 cpu left"),
    pytest.param(make_cluster("m", pods=100, memory="64Gi"), 0, id="cpu not allocatable"),
    pytest.param(make_cluster("m", summary=False), 0, id="no resource summary"),
])
def test_component_sets_that_fit_a_cluster(cluster, sets):
    assert max_available_component_sets(cluster, FLINK_COMPONENTS) == sets


def cluster(name: str, cpu: str) -> str:
    return f"""
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {{name: {name}}}
spec: {{syncMode: Push, apiEndpoint: "https://{name}.example:6443"}}
status:
  conditions:
  - {{type: Ready, status: "True", reason: ClusterReady, message: ready, lastTransitionTime: "2025-12-31T00:00:00Z"}}
  apiEnablements:
  - groupVersion: flink.apache.org/v1beta1
    resources: [{{name: flinkdeployments, kind: FlinkDeployment}}]
  resourceSummary:
    allocatable: {{cpu: "{cpu}", memory: 64Gi, pods: "110"}}
"""


CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: flinkdeployments.flink.apache.org}
spec:
  group: flink.apache.org
  names: {kind: FlinkDeployment, plural: flinkdeployments, singular: flinkdeployment, listKind: FlinkDeploymentList}
  scope: Namespaced
  versions:
  - {name: v1beta1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
"""
SETTINGS = """
apiVersion: v1
kind: ConfigMap
metadata: {name: karmactl-config, namespace: karmada-system}
data: {multiplePodTemplatesScheduling: "true", federatedQuotaEnforcement: "true"}
"""
POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: flink, namespace: default}
spec:
  resourceSelectors: [{apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    spreadConstraints: [{spreadByField: cluster, minGroups: 1, maxGroups: 1}]
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}  # capacity counts
"""
QUOTA = """
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: team, namespace: default}
spec:
  overall: {cpu: "10", memory: 20Gi}
"""


def flink(task_managers: int) -> str:
    """A FlinkDeployment: a JobManager and ``task_managers`` TaskManagers of 1 CPU and 2 GiB each."""
    return f"""
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {{name: wordcount, namespace: default}}
spec:
  image: flink:1.17
  jobManager: {{resource: {{cpu: 1, memory: 2048m}}}}
  taskManager: {{replicas: {task_managers}, resource: {{cpu: 1, memory: 2g}}}}
  job: {{jarURI: "local:///opt/flink/examples/WordCount.jar", parallelism: 2}}
"""


def test_a_flinkdeployment_is_scheduled_as_a_whole_set_where_one_fits(cli, state):
    write(state / "fleet.yaml", cluster("member1", "2") + "---" + cluster("member2", "4") + "---" + CRD + "---"
          + SETTINGS + "---" + POLICY + "---" + QUOTA)
    write(state / "flink.yaml", flink(2))
    cli.ok("reconcile", "--offline", "--now", NOW)
    rb = json.loads(cli.ok("get", "rb", "wordcount-flinkdeployment", "-n", "default", "-o", "json"))
    assert rb["spec"]["components"] == FLINK_COMPONENTS
    assert "replicas" not in rb["spec"] and "replicaRequirements" not in rb["spec"]
    # one set asks for 3 CPUs: only member2 (4 CPUs) has room; the target records the whole set
    assert rb["spec"]["clusters"] == [{"name": "member2", "components": [{"name": "jobmanager", "replicas": 1},
                                                                          {"name": "taskmanager", "replicas": 2}]}]
    works = json.loads(cli.ok("get", "works", "-A", "-o", "json"))["items"]
    placed = {w["metadata"]["namespace"] for w in works if w["metadata"]["name"].startswith("wordcount-")}
    assert placed == {"karmada-es-member2"}
    quota = yaml.safe_load(cli.ok("get", "federatedresourcequota", "team", "-n", "default", "-o", "yaml"))
    assert quota["status"]["overallUsed"] == {"cpu": "3", "memory": "6Gi"}  # every component, once per cluster

    # four TaskManagers: a set of 5 CPUs fits no cluster
    write(state / "big.yaml", flink(4).replace("name: wordcount", "name: big"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    rb = json.loads(cli.ok("get", "rb", "big-flinkdeployment", "-n", "default", "-o", "json"))
    scheduled = next(c for c in rb["status"]["conditions"] if c["type"] == "Scheduled")
    assert scheduled["status"] == "False" and "no enough resource" in scheduled["message"]
    assert "clusters" not in rb["spec"]


def test_interpret_runs_the_built_in_component_rule(cli, state, tmp_path):
    write(tmp_path / "flink.yaml", flink(2))
    out = cli.ok("interpret", "--operation", "InterpretComponent", "--desired-file", str(tmp_path / "flink.yaml"))
    assert yaml.safe_load(out.split("# [1/1] components:\n", 1)[1]) == FLINK_COMPONENTS
    out = cli.ok("interpret", "--operation", "InterpretReplica", "--desired-file", str(tmp_path / "flink.yaml"))
    assert "# [1/2] replica:\n3\n" in out
    code, _out, err = cli("interpret", "--operation", "ReviseReplica", "--desired-file", str(tmp_path / "flink.yaml"))
    assert code == 2 and "rule is not enabled" in err
