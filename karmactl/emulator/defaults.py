"""Defaulting of built-in kinds, as kube-apiserver's generated defaulters do on every write.

The OpenAPI schemas of built-in kinds carry no defaults (``kubernetes-validate``'s v1.31 set has two
``default`` keys in 635 definitions): kube-apiserver's defaults are Go functions. So the rules live
here as one small function per OpenAPI definition, following upstream's ``SetDefaults_<Type>``
functions in ``pkg/apis/core/v1/defaults.go``, ``pkg/apis/apps/v1/defaults.go`` and
``pkg/apis/batch/v1/defaults.go`` (Kubernetes v1.31, with the feature gates that are on by default
there), and :func:`apply_defaults` finds every nested type by walking the object along the schema
(:func:`karmactl.api.openapi.walk`): a Container is defaulted wherever a PodSpec embeds it.

Also here, because kube-apiserver's output shows them the same way: zero values of Go fields that
are not ``omitempty`` (``status: {}``, ``resources: {}``, ``creationTimestamp: null`` in templates)
and the Service IP and node port allocation.
"""
from __future__ import annotations

import random
from typing import Any, Callable

from karmactl.api import openapi as schemas


def _set(node: dict, key: str, value: Any) -> None:
    """Set ``key`` when missing or null (Go's nil pointer / empty string)."""
    if node.get(key) in (None, ""):
        node[key] = value


def _obj(node: dict, key: str) -> dict:
    """The mapping at ``key``, created when missing or null (a Go value struct)."""
    if not isinstance(node.get(key), dict):
        node[key] = {}
    return node[key]


# ---- core/v1 (pkg/apis/core/v1/defaults.go) ---------------------------------------------------------

def _image_pull_policy(image: str) -> str:
    # SetDefaults_Container: Always for ":latest" or an untagged image (a digest counts as a tag).
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _container(node: dict) -> None:
    _set(node, "terminationMessagePath", "/dev/termination-log")
    _set(node, "terminationMessagePolicy", "File")
    _set(node, "imagePullPolicy", _image_pull_policy(str(node.get("image") or "")))
    _obj(node, "resources")


def _container_port(node: dict) -> None:
    _set(node, "protocol", "TCP")


def _pod_spec(node: dict) -> None:
    _set(node, "dnsPolicy", "ClusterFirst")
    _set(node, "restartPolicy", "Always")
    _set(node, "terminationGracePeriodSeconds", 30)
    _obj(node, "securityContext")
    _set(node, "schedulerName", "default-scheduler")
    if node.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for container in node.get(key) or []:
                for port in (container or {}).get("ports") or []:
                    if isinstance(port, dict):
                        _set(port, "hostPort", port.get("containerPort"))


def _pod(node: dict) -> None:
    spec = node.get("spec")
    if isinstance(spec, dict):
        _set(spec, "enableServiceLinks", True)


def _probe(node: dict) -> None:
    _set(node, "timeoutSeconds", 1)
    _set(node, "periodSeconds", 10)
    _set(node, "successThreshold", 1)
    _set(node, "failureThreshold", 3)


def _http_get(node: dict) -> None:
    _set(node, "path", "/")
    _set(node, "scheme", "HTTP")


def _mode_420(node: dict) -> None:
    _set(node, "defaultMode", 420)


def _field_selector(node: dict) -> None:
    _set(node, "apiVersion", "v1")


def _template_meta(node: dict) -> None:
    # ObjectMeta.creationTimestamp is a Go struct: templates serialise it as null.
    meta = _obj(node, "metadata")
    meta.setdefault("creationTimestamp", None)


def _pvc(node: dict) -> None:
    _template_meta(node)
    _set(_obj(node, "status"), "phase", "Pending")


def _pvc_spec(node: dict) -> None:
    _set(node, "volumeMode", "Filesystem")


def _secret(node: dict) -> None:
    _set(node, "type", "Opaque")


def _service_port(node: dict) -> None:
    _set(node, "protocol", "TCP")
    if node.get("targetPort") in (None, 0, ""):
        node["targetPort"] = node.get("port")


def _service_spec(node: dict) -> None:
    _set(node, "type", "ClusterIP")
    _set(node, "sessionAffinity", "None")
    kind = node["type"]
    if kind in ("NodePort", "LoadBalancer"):
        _set(node, "externalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        _set(node, "allocateLoadBalancerNodePorts", True)
    if kind != "ExternalName":
        _set(node, "internalTrafficPolicy", "Cluster")
        _set(node, "ipFamilyPolicy", "SingleStack")
        _set(node, "ipFamilies", ["IPv4"])


DEFINITION_DEFAULTS: dict[str, Callable[[dict], None]] = {
    "io.k8s.api.core.v1.Container": _container,
    "io.k8s.api.core.v1.EphemeralContainer": _container,
    "io.k8s.api.core.v1.ContainerPort": _container_port,
    "io.k8s.api.core.v1.Pod": _pod,
    "io.k8s.api.core.v1.PodSpec": _pod_spec,
    "io.k8s.api.core.v1.PodTemplateSpec": _template_meta,
    "io.k8s.api.core.v1.Probe": _probe,
    "io.k8s.api.core.v1.HTTPGetAction": _http_get,
    "io.k8s.api.core.v1.ConfigMapVolumeSource": _mode_420,
    "io.k8s.api.core.v1.SecretVolumeSource": _mode_420,
    "io.k8s.api.core.v1.ProjectedVolumeSource": _mode_420,
    "io.k8s.api.core.v1.DownwardAPIVolumeSource": _mode_420,
    "io.k8s.api.core.v1.ObjectFieldSelector": _field_selector,
    "io.k8s.api.core.v1.PersistentVolumeClaim": _pvc,
    "io.k8s.api.core.v1.PersistentVolumeClaimSpec": _pvc_spec,
    "io.k8s.api.core.v1.Secret": _secret,
    "io.k8s.api.core.v1.ServicePort": _service_port,
    "io.k8s.api.core.v1.ServiceSpec": _service_spec,
}


# ---- apps/v1 (pkg/apis/apps/v1/defaults.go) --------------------------------------------------------

def _deployment_spec(node: dict) -> None:
    _set(node, "replicas", 1)
    strategy = _obj(node, "strategy")
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _obj(strategy, "rollingUpdate")
        _set(rolling, "maxUnavailable", "25%")
        _set(rolling, "maxSurge", "25%")
    _set(node, "revisionHistoryLimit", 10)
    _set(node, "progressDeadlineSeconds", 600)


def _stateful_set_spec(node: dict) -> None:
    _set(node, "podManagementPolicy", "OrderedReady")
    strategy = _obj(node, "updateStrategy")
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        _set(_obj(strategy, "rollingUpdate"), "partition", 0)
    retention = _obj(node, "persistentVolumeClaimRetentionPolicy")
    _set(retention, "whenDeleted", "Retain")
    _set(retention, "whenScaled", "Retain")
    _set(node, "replicas", 1)
    _set(node, "revisionHistoryLimit", 10)
    for claim in node.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            _set(claim, "apiVersion", "v1")
            _set(claim, "kind", "PersistentVolumeClaim")


def _daemon_set_spec(node: dict) -> None:
    strategy = _obj(node, "updateStrategy")
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _obj(strategy, "rollingUpdate")
        _set(rolling, "maxUnavailable", 1)
        _set(rolling, "maxSurge", 0)
    _set(node, "revisionHistoryLimit", 10)


def _replica_set_spec(node: dict) -> None:
    _set(node, "replicas", 1)


DEFINITION_DEFAULTS.update({
    "io.k8s.api.apps.v1.DeploymentSpec": _deployment_spec,
    "io.k8s.api.apps.v1.StatefulSetSpec": _stateful_set_spec,
    "io.k8s.api.apps.v1.DaemonSetSpec": _daemon_set_spec,
    "io.k8s.api.apps.v1.ReplicaSetSpec": _replica_set_spec,
})


# ---- batch/v1 (pkg/apis/batch/v1/defaults.go) ------------------------------------------------------

def _job(job: dict) -> None:
    # SetDefaults_Job works on a Job, so a CronJob's jobTemplate is not defaulted this way.
    if not isinstance(job.get("spec"), dict):
        return
    node = job["spec"]
    if node.get("completions") is None and node.get("parallelism") is None:
        node["completions"] = 1
    _set(node, "parallelism", 1)
    indexed = node.get("completionMode") == "Indexed"
    if node.get("backoffLimit") is None:
        node["backoffLimit"] = 2147483647 if indexed and node.get("backoffLimitPerIndex") is not None else 6
    _set(node, "completionMode", "NonIndexed")
    _set(node, "suspend", False)
    _set(node, "podReplacementPolicy", "Failed" if node.get("podFailurePolicy") else "TerminatingOrFailed")


def _cron_job_spec(node: dict) -> None:
    _set(node, "concurrencyPolicy", "Allow")
    _set(node, "suspend", False)
    _set(node, "successfulJobsHistoryLimit", 3)
    _set(node, "failedJobsHistoryLimit", 1)


DEFINITION_DEFAULTS.update({
    "io.k8s.api.batch.v1.Job": _job,
    "io.k8s.api.batch.v1.JobTemplateSpec": _template_meta,
    "io.k8s.api.batch.v1.CronJobSpec": _cron_job_spec,
})


# ---- the walk -------------------------------------------------------------------------------------

def _zero_status(definition: str, obj: dict) -> None:
    """``status`` as Go serialises a zero struct: ``{}`` plus its non-omitempty integers (the fields
    the schema lists as required, e.g. DaemonSetStatus' four counters)."""
    _, schema = schemas.resolve(schemas.definitions()[definition])
    status_schema = (schema.get("properties") or {}).get("status")
    if status_schema is None:
        return
    _, status_schema = schemas.resolve(status_schema)
    status = _obj(obj, "status")
    for field in status_schema.get("required") or []:
        prop = (status_schema.get("properties") or {}).get(field) or {}
        if "integer" in (prop.get("type") or []):
            status.setdefault(field, 0)


def apply_defaults(obj: dict, definition: str) -> None:
    """Default ``obj`` (a built-in kind's object, definition name from
    :func:`karmactl.api.openapi.definition_name`) in place, nested types included."""

    def visit(name: str | None, _schema: dict, node: dict, _path: str) -> None:
        fn = DEFINITION_DEFAULTS.get(name or "")
        if fn is not None:
            fn(node)

    schemas.walk(obj, {"$ref": "#/$defs/" + definition}, visit)
    if definition in ZERO_STATUS:
        _zero_status(definition, obj)
    if definition == "io.k8s.api.core.v1.Service":
        _obj(_obj(obj, "status"), "loadBalancer")


# Kinds whose ``status`` is a value struct kube-apiserver always serialises.
ZERO_STATUS = {
    "io.k8s.api.apps.v1.Deployment", "io.k8s.api.apps.v1.StatefulSet", "io.k8s.api.apps.v1.DaemonSet",
    "io.k8s.api.apps.v1.ReplicaSet", "io.k8s.api.batch.v1.Job", "io.k8s.api.batch.v1.CronJob",
}


def allocate_service(spec: dict, old_spec: dict | None, used_node_ports: set[int], rng: random.Random) -> None:
    """Service IP and node port allocation (``pkg/registry/core/service/storage``): a ClusterIP from
    10.96.0.0/12 (kept across updates) unless ``clusterIP: None`` or ExternalName, and node ports from
    30000-32767 for NodePort and LoadBalancer ports that have none."""
    old_spec = old_spec or {}
    kind = spec.get("type", "ClusterIP")
    if kind == "ExternalName":
        return
    if not spec.get("clusterIP"):
        ip = old_spec.get("clusterIP") or f"10.{rng.randint(96, 111)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        spec["clusterIP"] = ip
    if not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    if kind in ("NodePort", "LoadBalancer"):
        old_ports = {(p.get("port"), p.get("protocol")): p.get("nodePort")
                     for p in old_spec.get("ports") or [] if isinstance(p, dict)}
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort"):
                node_port = old_ports.get((port.get("port"), port.get("protocol")))
                while not node_port or node_port in used_node_ports:
                    node_port = rng.randint(30000, 32767)
                used_node_ports.add(node_port)
                port["nodePort"] = node_port
