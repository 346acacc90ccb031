"""A Flink-style job fails over with its state: a custom resource whose health is a Lua rule
(ResourceInterpreterCustomization), application failover judging that health, and
statePreservation carrying the job's ``jobID`` from the evicted cluster to the replacement (offline,
observations recorded with ``karmactl observe``)."""
from __future__ import annotations

import json

import yaml

from tests.conftest import write
from tests.failover.helpers import T0, at

WORK_DIR = "computed/works"


def cluster(name: str) -> str:
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
"""


def fleet(state) -> None:
    write(state / "clusters.yaml", "---".join(cluster(f"member{i}") for i in (1, 2)))
    write(state / "crd.yaml", """
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {name: flinkdeployments.flink.apache.org}
        spec:
          group: flink.apache.org
          names: {kind: FlinkDeployment, plural: flinkdeployments, singular: flinkdeployment, listKind: FlinkDeploymentList}
          scope: Namespaced
          versions:
          - name: v1beta1
            served: true
            storage: true
            schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
        """)
    write(state / "job.yaml", """
        apiVersion: flink.apache.org/v1beta1
        kind: FlinkDeployment
        metadata: {name: wordcount, namespace: default}
        spec: {image: flink:1.17, job: {jarURI: "local:///opt/flink/examples/WordCount.jar", parallelism: 2}}
        """)
    write(state / "customization.yaml", """
        apiVersion: config.karmada.io/v1alpha1
        kind: ResourceInterpreterCustomization
        metadata: {name: flinkdeployment}
        spec:
          target: {apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment}
          customizations:
            healthInterpretation:
              luaScript: |
                function InterpretHealth(observed)
                  if observed.status == nil or observed.status.jobStatus == nil then
                    return false
                  end
                  return observed.status.jobStatus.state ~= "FAILED"
                end
        """)
    write(state / "policy.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: wordcount, namespace: default}
        spec:
          propagateDeps: true
          resourceSelectors: [{apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment, name: wordcount}]
          placement:
            clusterAffinity: {clusterNames: [member1, member2]}
            spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]
          failover:
            application:
              decisionConditions: {tolerationSeconds: 30}
              purgeMode: Directly
              statePreservation:
                rules: [{aliasLabelName: flink.apache.org/job-id, jsonPath: "{.jobStatus.jobId}"}]
        """)
    write(state / "settings.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: karmactl-config, namespace: karmada-system}
        data: {statefulFailoverInjection: "true"}
        """)


def reconcile(cli, now: str) -> None:
    code, _out, err = cli("reconcile", "--offline", "--now", now)
    assert code == 0, err


def binding(cli) -> dict:
    return yaml.safe_load(cli.ok("get", "rb", "wordcount-flinkdeployment", "-o", "yaml"))


def work_file(state, cluster: str):
    [path] = (state / WORK_DIR / f"karmada-es-{cluster}").glob("wordcount-*.json")
    return path


def test_a_failed_flink_job_fails_over_and_its_replacement_carries_the_job_id(cli, state, tmp_path):
    fleet(state)
    reconcile(cli, T0)
    [old] = [c["name"] for c in binding(cli)["spec"]["clusters"]]
    new = "member2" if old == "member1" else "member1"
    status = tmp_path / "status.yaml"
    status.write_text("jobStatus: {jobId: 8f3a2c, state: RUNNING}\n")
    cli.ok("--now", at(5), "observe", "flinkdeployment/wordcount", "--cluster", old, "--status-file", str(status))
    reconcile(cli, at(6))
    assert [i["health"] for i in binding(cli)["status"]["aggregatedStatus"]] == ["Healthy"]  # the Lua rule

    status.write_text("jobStatus: {jobId: 8f3a2c, state: FAILED}\n")
    out = cli.ok("--now", at(10), "observe", "flinkdeployment/wordcount", "--cluster", old, "--status-file", str(status))
    assert "health Unhealthy" in out   # interpreted by the customization's healthInterpretation
    reconcile(cli, at(20))
    assert not binding(cli)["spec"].get("gracefulEvictionTasks")
    reconcile(cli, at(41))             # 30 s after the failure was observed
    spec = binding(cli)["spec"]
    [task] = spec["gracefulEvictionTasks"]
    assert (task["fromCluster"], task["reason"], task["preservedLabelState"]) == (
        old, "ApplicationFailure", {"flink.apache.org/job-id": "8f3a2c"})
    assert [c["name"] for c in spec["clusters"]] == [new]
    # purgeMode Directly: the old copy goes first (the execution layer drops its Work), then the
    # replacement is rendered with the job's ID as a label
    work_file(state, old).unlink()
    reconcile(cli, at(50))
    manifest = json.loads(work_file(state, new).read_text())["spec"]["workload"]["manifests"][0]
    assert manifest["metadata"]["labels"]["flink.apache.org/job-id"] == "8f3a2c"
