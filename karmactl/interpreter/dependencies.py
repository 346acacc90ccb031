"""Objects a workload depends on (``GetDependencies``), semantics §10.5.

Follows ``pkg/resourceinterpreter/default/native/dependencies.go``, ``pkg/util/helper/pod.go``
(``GetDependenciesFromPodTemplate``), ``pkg/util/lifted/visitpod.go`` and
``pkg/util/interpreter/validation/validation.go`` (``VerifyDependencies``).
"""
from __future__ import annotations

from ._common import (CRONJOB, DAEMONSET, DEPLOYMENT, INGRESS, JOB, POD, REPLICASET, SERVICE_IMPORT,
                      STATEFULSET, InterpreterError, describe, get_dict, get_list, get_str, gvk)

_POD_SPEC_PATH = {
    DEPLOYMENT: ("spec", "template", "spec"),
    REPLICASET: ("spec", "template", "spec"),
    DAEMONSET: ("spec", "template", "spec"),
    STATEFULSET: ("spec", "template", "spec"),
    JOB: ("spec", "template", "spec"),
    CRONJOB: ("spec", "jobTemplate", "spec", "template", "spec"),
    POD: ("spec",),
}

# Volume sources that reference a Secret, and the key under which the reference sits
# (``VisitPodSecretNames``). The first source present in a volume decides, as Go's switch does.
_SECRET_VOLUME_REFS = (
    ("azureFile", "secretName"),
    ("cephfs", ("secretRef", "name")),
    ("cinder", ("secretRef", "name")),
    ("flexVolume", ("secretRef", "name")),
    ("projected", None),
    ("rbd", ("secretRef", "name")),
    ("secret", "secretName"),
    ("scaleIO", ("secretRef", "name")),
    ("iscsi", ("secretRef", "name")),
    ("storageos", ("secretRef", "name")),
    ("csi", ("nodePublishSecretRef", "name")),
)


def _containers(pod_spec: dict) -> list[dict]:
    out = []
    for field in ("initContainers", "containers", "ephemeralContainers"):
        out.extend(c for c in get_list(pod_spec, field) if isinstance(c, dict))
    return out


def _ref_name(value, key) -> str:
    if isinstance(key, tuple):
        value = (value or {}).get(key[0])
        key = key[1]
    return ((value or {}).get(key) or "") if isinstance(value, dict) else ""


def _secret_names(pod_spec: dict) -> set[str]:
    names = {(ref or {}).get("name") or "" for ref in get_list(pod_spec, "imagePullSecrets")}
    for container in _containers(pod_spec):
        for env_from in container.get("envFrom") or []:
            names.add(((env_from or {}).get("secretRef") or {}).get("name") or "")
        for env in container.get("env") or []:
            names.add((((env or {}).get("valueFrom") or {}).get("secretKeyRef") or {}).get("name") or "")
    for volume in get_list(pod_spec, "volumes"):
        names |= _volume_secret_names(volume or {})
    names.discard("")
    return names


def _volume_secret_names(volume: dict) -> set[str]:
    """The Secrets one volume names: by its first source of ``_SECRET_VOLUME_REFS`` set (a
    projected volume's secret sources), "" for a reference without a name."""
    names: set[str] = set()
    for source, key in _SECRET_VOLUME_REFS:
        if volume.get(source) is None:
            continue
        if source == "projected":
            for src in volume["projected"].get("sources") or []:
                if (src or {}).get("secret") is not None:
                    names.add(src["secret"].get("name") or "")
        else:
            names.add(_ref_name(volume[source], key))
        break
    return names


def _configmap_names(pod_spec: dict) -> set[str]:
    names: set[str] = set()
    for container in _containers(pod_spec):
        for env_from in container.get("envFrom") or []:
            names.add(((env_from or {}).get("configMapRef") or {}).get("name") or "")
        for env in container.get("env") or []:
            names.add((((env or {}).get("valueFrom") or {}).get("configMapKeyRef") or {}).get("name") or "")
    for volume in get_list(pod_spec, "volumes"):
        volume = volume or {}
        if volume.get("projected") is not None:
            for src in volume["projected"].get("sources") or []:
                if (src or {}).get("configMap") is not None:
                    names.add(src["configMap"].get("name") or "")
        elif volume.get("configMap") is not None:
            names.add(volume["configMap"].get("name") or "")
    names.discard("")
    return names


def _pod_dependencies(pod_spec: dict, namespace: str) -> list[dict]:
    refs = []
    for kind, names in (("ConfigMap", _configmap_names(pod_spec)), ("Secret", _secret_names(pod_spec))):
        refs.extend(_ref("v1", kind, namespace, name) for name in names)
    service_account = get_str(pod_spec, "serviceAccountName")
    # Every namespace has a "default" ServiceAccount already.
    if service_account and service_account != "default":
        refs.append(_ref("v1", "ServiceAccount", namespace, service_account))
    for volume in get_list(pod_spec, "volumes"):
        claim = ((volume or {}).get("persistentVolumeClaim") or {}).get("claimName") or ""
        if claim:
            refs.append(_ref("v1", "PersistentVolumeClaim", namespace, claim))
    return refs


def _ref(api_version: str, kind: str, namespace: str, name: str) -> dict:
    ref = {"apiVersion": api_version, "kind": kind}
    if namespace:
        ref["namespace"] = namespace
    if name:
        ref["name"] = name
    return ref


def _sort_key(ref: dict):
    return (ref["apiVersion"], ref["kind"], ref.get("namespace", ""), ref.get("name", ""))


def has_dependencies_hook(api_version: str, kind: str) -> bool:
    """Whether the native interpreter computes dependencies for this GVK."""
    return (api_version, kind) in _POD_SPEC_PATH or (api_version, kind) in (INGRESS, SERVICE_IMPORT)


def get_dependencies(obj: dict) -> list[dict]:
    """The objects ``obj`` depends on, de-duplicated and sorted by (apiVersion, kind, namespace, name).

    Follows ``pkg/resourceinterpreter/default/native/dependencies.go``.

    * Pod-template kinds (Deployment, ReplicaSet, DaemonSet, StatefulSet, Job, CronJob, Pod):
      ConfigMaps and Secrets referenced by env, envFrom, volumes (projected included) and
      imagePullSecrets; the ServiceAccount unless ``default``; PVCs of volumes (StatefulSet: except
      names of its ``volumeClaimTemplates``, which the member StatefulSet creates itself).
    * Ingress: the TLS Secrets.
    * ServiceImport: Service ``derived-<name>`` and the EndpointSlices labelled
      ``kubernetes.io/service-name: derived-<name>`` (a ``labelSelector`` reference, no name).
    * Other kinds: ``[]``.

    Returns:
        ``[{apiVersion, kind, namespace, name}]`` (``namespace``/``name`` omitted when empty).

    Raises:
        InterpreterError: a field has the wrong type, or a reference has neither a name nor a
            label selector (Karmada's ``VerifyDependencies``, e.g. an Ingress TLS entry without
            ``secretName``).
    """
    key = gvk(obj)
    namespace = (obj.get("metadata") or {}).get("namespace") or ""
    try:
        if key in _POD_SPEC_PATH:
            pod_spec = get_dict(obj, *_POD_SPEC_PATH[key]) or {}
            refs = _pod_dependencies(pod_spec, namespace)
            if key == STATEFULSET:
                templates = {(t or {}).get("metadata", {}).get("name")
                             for t in get_list(obj, "spec", "volumeClaimTemplates")}
                refs = [r for r in refs if not (r["kind"] == "PersistentVolumeClaim" and r.get("name") in templates)]
        elif key == INGRESS:
            refs = [_ref("v1", "Secret", namespace, (tls or {}).get("secretName") or "")
                    for tls in get_list(obj, "spec", "tls")]
        elif key == SERVICE_IMPORT:
            derived = f"derived-{(obj.get('metadata') or {}).get('name', '')}"
            refs = [_ref("v1", "Service", namespace, derived)]
            slices = _ref("discovery.k8s.io/v1", "EndpointSlice", namespace, "")
            slices["labelSelector"] = {"matchLabels": {"kubernetes.io/service-name": derived}}
            refs.append(slices)
        else:
            return []
    except InterpreterError as err:
        raise InterpreterError(f"{describe(obj)}: {err}") from None
    for i, ref in enumerate(refs):
        if not ref.get("name") and ref.get("labelSelector") is None:
            raise InterpreterError(
                f"{describe(obj)}: dependencies[{i}]: dependency can not leave name and labelSelector all empty")
    unique = {}
    for ref in refs:
        unique.setdefault(repr(sorted(ref.items())), ref)
    return sorted(unique.values(), key=_sort_key)
