"""One sample object per kind of the built-in third-party interpreter, the status each of two
member clusters reports for it (member1 healthy, member2 not), and what Karmada's rules make of
them once propagated: the binding's replicas and their split, the Work's revised field, each
member's health and fields of the aggregated template status."""
from __future__ import annotations

from dataclasses import dataclass, field

POD = {"metadata": {"labels": {"app": "sample"}},
       "spec": {"containers": [{"name": "main", "image": "busybox",
                                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
                                "envFrom": [{"configMapRef": {"name": "sample-config"}}]}]}}


@dataclass
class Sample:
    """A kind's sample and its expected propagation.

    Attributes:
        divided: propagated Divided with static weights 1:1 (else Duplicated).
        replicas: the binding's ``spec.replicas`` (None: not a workload).
        split: the binding's target replicas per cluster (Divided) as a sorted list.
        revised: where ReviseReplica writes (the Work manifest's field), when the kind has it;
        revised_less: how many of a target's replicas that field does not count (a Ray head).
        status: what member1 and member2 report.
        health: the health each member's status gives.
        aggregated: fields the template's aggregated status must have (a subset).
        dependencies: the ``(kind, name)`` the object depends on.
    """

    api_version: str
    kind: str
    plural: str
    spec: dict
    status: dict
    health: dict
    aggregated: dict
    namespaced: bool = True
    divided: bool = False
    replicas: int | None = None
    split: list = field(default_factory=list)
    revised: tuple = ()
    revised_less: int = 0
    dependencies: list = field(default_factory=list)

    @property
    def group(self) -> str:
        return self.api_version.split("/")[0]

    @property
    def resource(self) -> str:
        return f"{self.plural}.{self.group}"

    def object(self) -> dict:
        md = {"name": "sample"}
        if self.namespaced:
            md["namespace"] = "default"
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": md, "spec": self.spec}


def _ready(reason: str, ok: bool, **extra) -> dict:
    return dict({"observedGeneration": 1, "conditions": [
        {"type": "Ready", "status": "True" if ok else "False", "reason": reason if ok else "Failed",
         "message": "done" if ok else "failed", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}, **extra)


FLUX_SOURCE = {"interval": "1m", "url": "https://example.com/repo", "secretRef": {"name": "sample-auth"}}

SAMPLES = [
    # --- OpenKruise -------------------------------------------------------------------------
    Sample("apps.kruise.io/v1alpha1", "CloneSet", "clonesets",
           {"replicas": 4, "selector": {"matchLabels": {"app": "sample"}}, "template": POD},
           divided=True, replicas=4, split=[2, 2], revised=("spec", "replicas"),
           status={"member1": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2,
                               "availableReplicas": 2, "updatedReadyReplicas": 2, "expectedUpdatedReplicas": 2,
                               "updateRevision": "sample-1", "currentRevision": "sample-1"},
                   "member2": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 0, "readyReplicas": 2,
                               "availableReplicas": 2, "updatedReadyReplicas": 0, "expectedUpdatedReplicas": 2}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"replicas": 4, "updatedReplicas": 2, "readyReplicas": 4, "availableReplicas": 4,
                       "updateRevision": "sample-1", "observedGeneration": 1},
           dependencies=[("ConfigMap", "sample-config")]),
    Sample("apps.kruise.io/v1beta1", "StatefulSet", "statefulsets",
           {"replicas": 3, "serviceName": "sample", "selector": {"matchLabels": {"app": "sample"}}, "template": POD},
           divided=True, replicas=3, split=[1, 2], revised=("spec", "replicas"),
           status={"member1": {"observedGeneration": 1, "replicas": 2, "readyReplicas": 2, "currentReplicas": 2,
                               "updatedReplicas": 2, "availableReplicas": 2, "updatedReadyReplicas": 2},
                   "member2": {"observedGeneration": 1, "replicas": 1, "readyReplicas": 0, "currentReplicas": 1,
                               "updatedReplicas": 1, "availableReplicas": 0, "updatedReadyReplicas": 0}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"replicas": 3, "readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 3},
           dependencies=[("ConfigMap", "sample-config")]),
    Sample("apps.kruise.io/v1alpha1", "DaemonSet", "daemonsets",
           {"selector": {"matchLabels": {"app": "sample"}}, "template": POD},
           status={"member1": {"observedGeneration": 1, "currentNumberScheduled": 2, "desiredNumberScheduled": 2,
                               "numberReady": 2, "updatedNumberScheduled": 2, "numberAvailable": 2,
                               "daemonSetHash": "abc"},
                   "member2": {"observedGeneration": 1, "currentNumberScheduled": 3, "desiredNumberScheduled": 3,
                               "numberReady": 1, "updatedNumberScheduled": 1, "numberAvailable": 1,
                               "numberUnavailable": 2}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"desiredNumberScheduled": 5, "numberReady": 3, "numberUnavailable": 2, "daemonSetHash": "abc"},
           dependencies=[("ConfigMap", "sample-config")]),
    Sample("apps.kruise.io/v1alpha1", "BroadcastJob", "broadcastjobs",
           {"parallelism": 4, "template": POD, "completionPolicy": {"type": "Always"}},
           divided=True, replicas=4, split=[2, 2], revised=("spec", "parallelism"),
           status={"member1": {"active": 0, "succeeded": 2, "failed": 0, "desired": 2, "phase": "completed",
                               "conditions": [{"type": "Complete", "status": "True"}]},
                   "member2": {"active": 1, "succeeded": 0, "failed": 1, "desired": 2, "phase": "failed",
                               "conditions": [{"type": "Failed", "status": "True"}]}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"succeeded": 2, "failed": 1, "desired": 4, "conditions": [
               {"type": "Failed", "status": "True", "reason": "JobFailed",
                "message": "Job executed failed in member clusters: member2"}]},
           dependencies=[("ConfigMap", "sample-config")]),
    Sample("apps.kruise.io/v1alpha1", "AdvancedCronJob", "advancedcronjobs",
           {"schedule": "*/5 * * * *", "template": {"jobTemplate": {"spec": {"template": POD}}}},
           status={"member1": {"type": "Job", "active": [{"kind": "Job", "name": "sample-1"}],
                               "lastScheduleTime": "2026-01-01T00:00:00Z"},
                   "member2": {"type": "Job", "active": [{"kind": "Job", "name": "sample-2"}]}},
           health={"member1": "Healthy", "member2": "Healthy"},
           aggregated={"type": "Job", "active": [{"kind": "Job", "name": "sample-1"}, {"kind": "Job", "name": "sample-2"}],
                       "lastScheduleTime": "2026-01-01T00:00:00Z"},
           dependencies=[("ConfigMap", "sample-config")]),
    Sample("apps.kruise.io/v1alpha1", "SidecarSet", "sidecarsets",
           {"selector": {"matchLabels": {"app": "sample"}},
            "containers": [{"name": "sidecar", "image": "busybox", "envFrom": [{"secretRef": {"name": "sidecar-env"}}]}]},
           namespaced=False,
           status={"member1": {"matchedPods": 3, "updatedPods": 3, "readyPods": 3},
                   "member2": {"matchedPods": 2, "updatedPods": 1, "readyPods": 1}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"matchedPods": 5, "updatedPods": 4, "readyPods": 4}),
    Sample("apps.kruise.io/v1alpha1", "UnitedDeployment", "uniteddeployments",
           {"replicas": 6, "selector": {"matchLabels": {"app": "sample"}},
            "template": {"deploymentTemplate": {"metadata": {"labels": {"app": "sample"}}, "spec": {
                "selector": {"matchLabels": {"app": "sample"}}, "template": POD}}},
            "topology": {"subsets": [{"name": "a"}]}},
           divided=True, replicas=6, split=[3, 3], revised=("spec", "replicas"),
           status={"member1": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
                               "availableReplicas": 3},
                   "member2": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 1,
                               "availableReplicas": 1, "unavailableReplicas": 2}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"replicas": 6, "availableReplicas": 4, "unavailableReplicas": 2}),
    # --- Argo -------------------------------------------------------------------------------
    Sample("argoproj.io/v1alpha1", "Workflow", "workflows",
           {"entrypoint": "main", "parallelism": 2, "serviceAccountName": "sample-runner",
            "templates": [{"name": "main", "container": {"image": "busybox"}}]},
           divided=True, replicas=2, split=[1, 1], revised=("spec", "parallelism"),
           status={"member1": {"phase": "Running"}, "member2": {"phase": "Failed"}},
           health={"member1": "Healthy", "member2": "Unhealthy"}, aggregated={},
           dependencies=[("ServiceAccount", "sample-runner")]),
    # --- Flux -------------------------------------------------------------------------------
    Sample("helm.toolkit.fluxcd.io/v2beta1", "HelmRelease", "helmreleases",
           {"interval": "5m", "chart": {"spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository",
                                                                                 "name": "podinfo"}}},
            "valuesFrom": [{"kind": "ConfigMap", "name": "podinfo-values"}]},
           status={"member1": _ready("ReconciliationSucceeded", True, lastAppliedRevision="6.5.0", helmChart="default/podinfo"),
                   "member2": _ready("ReconciliationSucceeded", False, lastAttemptedRevision="6.5.0")},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"lastAppliedRevision": "6.5.0", "helmChart": "default/podinfo", "conditions": [
               {"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded", "message": "member1=done",
                "lastTransitionTime": "2026-01-01T00:00:00Z"},
               {"type": "Ready", "status": "False", "reason": "Failed", "message": "member2=failed",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
           dependencies=[("ConfigMap", "podinfo-values")]),
    Sample("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "kustomizations",
           {"interval": "5m", "path": "./deploy", "prune": True, "sourceRef": {"kind": "GitRepository", "name": "sample"},
            "decryption": {"provider": "sops", "secretRef": {"name": "sops-keys"}}},
           status={"member1": _ready("ReconciliationSucceeded", True, lastAppliedRevision="main@sha1:abc"),
                   "member2": _ready("ReconciliationSucceeded", False)},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"lastAppliedRevision": "main@sha1:abc", "observedGeneration": 1},
           dependencies=[("Secret", "sops-keys")]),
    Sample("source.toolkit.fluxcd.io/v1", "GitRepository", "gitrepositories", dict(FLUX_SOURCE, ref={"branch": "main"}),
           status={"member1": _ready("Succeeded", True, artifact={"revision": "main@sha1:abc"}),
                   "member2": _ready("Succeeded", False)},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"artifact": {"revision": "main@sha1:abc"}}, dependencies=[("Secret", "sample-auth")]),
    Sample("source.toolkit.fluxcd.io/v1beta2", "Bucket", "buckets",
           {"interval": "1m", "bucketName": "sample", "endpoint": "minio.example.com", "secretRef": {"name": "sample-auth"}},
           status={"member1": _ready("Succeeded", True, url="http://source-controller/bucket/sample.tar.gz"),
                   "member2": _ready("Succeeded", False)},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"url": "http://source-controller/bucket/sample.tar.gz"},
           dependencies=[("Secret", "sample-auth")]),
    Sample("source.toolkit.fluxcd.io/v1beta2", "HelmChart", "helmcharts",
           {"interval": "1m", "chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "podinfo"},
            "verify": {"provider": "cosign", "secretRef": {"name": "cosign-keys"}}},
           status={"member1": _ready("ChartPullSucceeded", True, observedChartName="podinfo"),
                   "member2": _ready("ChartPullSucceeded", False)},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"observedChartName": "podinfo"}, dependencies=[("Secret", "cosign-keys")]),
    Sample("source.toolkit.fluxcd.io/v1beta2", "HelmRepository", "helmrepositories", FLUX_SOURCE,
           status={"member1": _ready("Succeeded", True, url="http://source-controller/helmrepository/index.yaml"),
                   "member2": _ready("Succeeded", False)},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"url": "http://source-controller/helmrepository/index.yaml"},
           dependencies=[("Secret", "sample-auth")]),
    Sample("source.toolkit.fluxcd.io/v1beta2", "OCIRepository", "ocirepositories",
           dict(FLUX_SOURCE, url="oci://ghcr.io/example/manifests", serviceAccountName="puller"),
           status={"member1": _ready("Succeeded", True, url="http://source-controller/oci/sample.tar.gz"),
                   "member2": _ready("Succeeded", False)},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"url": "http://source-controller/oci/sample.tar.gz"},
           dependencies=[("Secret", "sample-auth"), ("ServiceAccount", "puller")]),
    # --- Kyverno ----------------------------------------------------------------------------
    Sample("kyverno.io/v1", "Policy", "policies",
           {"rules": [{"name": "labels", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                       "validate": {"message": "label app required", "pattern": {"metadata": {"labels": {"app": "?*"}}}}}]},
           status={"member1": {"ready": True, "rulecount": {"validate": 1, "generate": 0, "mutate": 0, "verifyimages": 0}},
                   "member2": {"ready": False, "rulecount": {"validate": 1, "generate": 0, "mutate": 0, "verifyimages": 0}}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"ready": False, "rulecount": {"validate": 2, "generate": 0, "mutate": 0, "verifyimages": 0}}),
    Sample("kyverno.io/v1", "ClusterPolicy", "clusterpolicies",
           {"rules": [{"name": "labels", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                       "validate": {"message": "label app required", "pattern": {"metadata": {"labels": {"app": "?*"}}}}}]},
           namespaced=False,
           status={"member1": {"conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "ok"}]},
                   "member2": {"conditions": [{"type": "Ready", "status": "False", "reason": "Failed", "message": "bad"}]}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "member1=ok"},
                                      {"type": "Ready", "status": "False", "reason": "Failed", "message": "member2=bad"}]}),
    # --- Kubeflow ---------------------------------------------------------------------------
    Sample("kubeflow.org/v1", "Notebook", "notebooks", {"template": POD},
           divided=True, replicas=1, split=[1],
           status={"member1": {"readyReplicas": 1, "containerState": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}},
           health={"member1": "Healthy"},
           aggregated={"readyReplicas": 1, "containerState": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}),
    Sample("kubeflow.org/v1", "PyTorchJob", "pytorchjobs",
           {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": POD}, "Worker": {"replicas": 2, "template": POD}}},
           status={"member1": {"startTime": "2026-01-01T00:00:00Z", "replicaStatuses": {"Master": {"active": 1},
                                                                                         "Worker": {"active": 2}},
                               "conditions": [{"type": "Created", "status": "True"},
                                              {"type": "Running", "status": "True"}]},
                   "member2": {"startTime": "2026-01-01T00:01:00Z", "replicaStatuses": {"Master": {"failed": 1}},
                               "conditions": [{"type": "Created", "status": "True"},
                                              {"type": "Failed", "status": "True"}]}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"startTime": "2026-01-01T00:00:00Z",
                       "replicaStatuses": {"Master": {"active": 1, "failed": 1}, "Worker": {"active": 2}}},
           dependencies=[("ConfigMap", "sample-config")]),
    Sample("kubeflow.org/v1", "TFJob", "tfjobs",
           {"tfReplicaSpecs": {"PS": {"replicas": 1, "template": POD}, "Worker": {"replicas": 2, "template": POD}}},
           status={"member1": {"replicaStatuses": {"Worker": {"succeeded": 2}},
                               "conditions": [{"type": "Succeeded", "status": "True"}]},
                   "member2": {"replicaStatuses": {"Worker": {"failed": 2}},
                               "conditions": [{"type": "Failed", "status": "True"}]}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"replicaStatuses": {"Worker": {"succeeded": 2, "failed": 2}}},
           dependencies=[("ConfigMap", "sample-config")]),
    Sample("kubeflow.org/v2beta1", "MPIJob", "mpijobs",
           {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": POD}, "Worker": {"replicas": 2, "template": POD}}},
           status={"member1": {"replicaStatuses": {"Launcher": {"active": 1}},
                               "conditions": [{"type": "Running", "status": "True",
                                               "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
                   "member2": {"replicaStatuses": {"Launcher": {"failed": 1}},
                               "conditions": [{"type": "Failed", "status": "True",
                                               "lastTransitionTime": "2026-01-01T00:01:00Z"}]}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"replicaStatuses": {"Launcher": {"active": 1, "succeeded": 0, "failed": 1}}}),
    # --- Volcano, Flink, Ray, Spark ---------------------------------------------------------
    Sample("batch.volcano.sh/v1alpha1", "Job", "jobs",
           {"minAvailable": 3, "schedulerName": "volcano",
            "tasks": [{"name": "ps", "replicas": 1, "minAvailable": 1, "template": POD},
                      {"name": "worker", "replicas": 2, "minAvailable": 2, "template": POD}]},
           status={"member1": {"state": {"phase": "Running"}, "running": 3, "minAvailable": 3},
                   "member2": {"state": {"phase": "Failed"}, "failed": 3, "minAvailable": 3}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"running": 3, "failed": 3, "minAvailable": 6,
                       "state": {"phase": "Failed", "reason": "VolcanoJobFailed", "message": "Job failed in clusters: member2",
                                 "lastTransitionTime": "2026-01-01T00:00:00Z"}}),
    Sample("flink.apache.org/v1beta1", "FlinkDeployment", "flinkdeployments",
           {"image": "flink:1.17", "flinkVersion": "v1_17", "jobManager": {"resource": {"cpu": 1, "memory": "2048m"}},
            "taskManager": {"replicas": 2, "resource": {"cpu": 1, "memory": "2048m"}},
            "job": {"jarURI": "local:///opt/flink/examples/WordCount.jar", "parallelism": 2}},
           divided=True, replicas=3, split=[1, 2],
           status={"member1": {"jobStatus": {"state": "RUNNING"}, "lifecycleState": "STABLE",
                               "jobManagerDeploymentStatus": "READY"},
                   "member2": {"jobStatus": {"state": "RECONCILING"}, "lifecycleState": "DEPLOYED"}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"jobStatus": {"state": "RECONCILING"}, "lifecycleState": "DEPLOYED"}),
    Sample("ray.io/v1", "RayCluster", "rayclusters",
           {"headGroupSpec": {"rayStartParams": {}, "template": POD},
            "workerGroupSpecs": [{"groupName": "small", "replicas": 2, "rayStartParams": {}, "template": POD}]},
           status={"member1": {"readyWorkerReplicas": 2, "desiredCPU": "750m", "conditions": [
               {"type": "HeadPodReady", "status": "True"}, {"type": "RayClusterProvisioned", "status": "True"}]},
                   "member2": {"readyWorkerReplicas": 0, "desiredCPU": "750m", "conditions": [
                       {"type": "HeadPodReady", "status": "False"}]}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"readyWorkerReplicas": 2, "desiredCPU": "1500m"}),
    Sample("ray.io/v1", "RayJob", "rayjobs",
           {"entrypoint": "python job.py", "rayClusterSpec": {
               "headGroupSpec": {"rayStartParams": {}, "template": POD},
               "workerGroupSpecs": [{"groupName": "small", "replicas": 1, "rayStartParams": {}, "template": POD}]}},
           status={"member1": {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"},
                   "member2": {"jobDeploymentStatus": "Failed", "jobStatus": "FAILED", "reason": "DeadlineExceeded"}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"jobDeploymentStatus": "Failed", "jobStatus": "FAILED", "reason": "DeadlineExceeded"},
           dependencies=[("ConfigMap", "sample-config")]),
    Sample("ray.io/v1", "RayService", "rayservices",
           {"serveConfigV2": "applications: []", "rayClusterConfig": {
               "headGroupSpec": {"rayStartParams": {}, "template": POD},
               "workerGroupSpecs": [{"groupName": "small", "replicas": 3, "rayStartParams": {}, "template": POD}]}},
           divided=True, replicas=4, split=[2, 2], revised=("spec", "rayClusterConfig", "workerGroupSpecs", 0, "replicas"),
           revised_less=1,
           status={"member1": {"numServeEndpoints": 2, "conditions": [{"type": "Ready", "status": "True"}]},
                   "member2": {"numServeEndpoints": 0, "conditions": [{"type": "Ready", "status": "False"}]}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"numServeEndpoints": 2}, dependencies=[("ConfigMap", "sample-config")]),
    Sample("sparkoperator.k8s.io/v1beta2", "SparkApplication", "sparkapplications",
           {"type": "Scala", "mode": "cluster", "image": "spark:3.5.0", "mainClass": "org.apache.spark.examples.SparkPi",
            "mainApplicationFile": "local:///opt/spark/examples/jars/spark-examples.jar", "sparkVersion": "3.5.0",
            "driver": {"cores": 1, "memory": "512m"}, "executor": {"cores": 1, "instances": 2, "memory": "512m"}},
           status={"member1": {"applicationState": {"state": "RUNNING"}, "executionAttempts": 1},
                   "member2": {"applicationState": {"state": "FAILED"}, "executionAttempts": 1}},
           health={"member1": "Healthy", "member2": "Unhealthy"},
           aggregated={"applicationState": {"state": "FAILED"}, "executionAttempts": 2}),
]
