"""Merging a desired manifest with the member object before an update (``Retain``), semantics §9.5/§10.4.

Follows ``pkg/util/objectwatcher/objectwatcher.go`` (``retainClusterFields``),
``pkg/util/label.go`` / ``annotation.go`` (``RetainLabels`` / ``RetainAnnotations``),
``pkg/resourceinterpreter/default/native/retain.go`` and ``pkg/util/lifted/retain.go``.
"""
from __future__ import annotations

from karmactl.api.constants import (MANAGED_ANNOTATIONS_ANNOTATION, MANAGED_LABELS_ANNOTATION,
                                    RETAIN_REPLICAS_LABEL)
from karmactl.api.objects import deepcopy

from ._common import (DEPLOYMENT, JOB, POD, PV, PVC, SA_TOKEN_SECRET_TYPE, SECRET, SERVICE,
                      SERVICE_ACCOUNT, InterpreterError, describe, get_dict, get_int, get_list,
                      get_path, get_str, gvk, remove_path, set_path)


def _merge_map(desired: dict, observed: dict, field: str, managed_key: str) -> None:
    """Keep member-side labels/annotations unless Karmada managed them before and dropped them now."""
    desired_md = desired.setdefault("metadata", {})
    merged = dict(desired_md.get(field) or {})
    observed_md = observed.get("metadata") or {}
    managed = set(((observed_md.get("annotations") or {}).get(managed_key) or "").split(","))
    deleted = managed - set(merged)
    for key, value in (observed_md.get(field) or {}).items():
        if key in deleted or key in merged:
            continue
        merged[key] = value
    if merged:
        desired_md[field] = merged


def _retain_cluster_fields(desired: dict, observed: dict) -> None:
    md = desired.setdefault("metadata", {})
    observed_md = observed.get("metadata") or {}
    # Updates must carry the member's resourceVersion; finalizers and ownerReferences belong to
    # controllers in the member cluster.
    for key in ("resourceVersion", "finalizers", "ownerReferences"):
        if observed_md.get(key):
            md[key] = deepcopy(observed_md[key])
        else:
            md.pop(key, None)
    _merge_map(desired, observed, "annotations", MANAGED_ANNOTATIONS_ANNOTATION)
    _merge_map(desired, observed, "labels", MANAGED_LABELS_ANNOTATION)


def _deployment(desired: dict, observed: dict) -> None:
    # With a member-side HPA the member owns spec.replicas.
    labels = get_dict(desired, "metadata", "labels") or {}
    if labels.get(RETAIN_REPLICAS_LABEL) == "true":
        if get_path(observed, "spec", "replicas") is None:
            raise InterpreterError(f"failed to get spec.replicas from {describe(observed)}")
        set_path(desired, get_int(observed, "spec", "replicas"), "spec", "replicas")


def _copy_or_drop(desired: dict, observed: dict, *path) -> None:
    value = get_path(observed, *path)
    if value in (None, "", [], {}):
        remove_path(desired, *path)
    else:
        set_path(desired, deepcopy(value), *path)


def _pod(desired: dict, observed: dict) -> None:
    # The scheduler, admission and the kubelet fill these in the member; a Pod spec is mostly immutable.
    for field in ("nodeName", "serviceAccountName", "volumes"):
        _copy_or_drop(desired, observed, "spec", field)
    for field in ("containers", "initContainers"):
        desired_containers = get_list(desired, "spec", field)
        for member_container in get_list(observed, "spec", field):
            name = (member_container or {}).get("name")
            for container in desired_containers:
                if isinstance(container, dict) and container.get("name") == name:
                    mounts = member_container.get("volumeMounts")
                    if mounts:
                        container["volumeMounts"] = deepcopy(mounts)
                    else:
                        container.pop("volumeMounts", None)
                    break


def _service(desired: dict, observed: dict) -> None:
    # Both are allocated by the member's API server and immutable.
    port = get_int(observed, "spec", "healthCheckNodePort")
    if port > 0:
        set_path(desired, port, "spec", "healthCheckNodePort")
    cluster_ip = get_str(observed, "spec", "clusterIP")
    if cluster_ip:
        set_path(desired, cluster_ip, "spec", "clusterIP")


def _service_account(desired: dict, observed: dict) -> None:
    # Keep secrets the member's token controller added, so they are not cleared and regenerated.
    for field in ("secrets", "imagePullSecrets"):
        merged: list = []
        seen: set = set()
        for source in (get_list(desired, field), get_list(observed, field)):
            for secret in source:
                name = (secret or {}).get("name", "")
                if name in seen:
                    continue
                seen.add(name)
                merged.append(deepcopy(secret))
        if merged:
            desired[field] = merged
        else:
            desired.pop(field, None)


def _pvc(desired: dict, observed: dict) -> None:
    volume_name = get_str(observed, "spec", "volumeName")
    if volume_name:
        set_path(desired, volume_name, "spec", "volumeName")


def _pv(desired: dict, observed: dict) -> None:
    claim_ref = get_path(observed, "spec", "claimRef")
    if claim_ref is not None:
        set_path(desired, deepcopy(claim_ref), "spec", "claimRef")


def _job(desired: dict, observed: dict) -> None:
    # The member's Job controller generated the selector and template labels (controller-uid).
    for path in (("spec", "selector", "matchLabels"), ("spec", "template", "metadata", "labels")):
        value = get_dict(observed, *path)
        if value is not None:
            set_path(desired, deepcopy(value), *path)


def _secret(desired: dict, observed: dict) -> None:
    if desired.get("type") == SA_TOKEN_SECRET_TYPE:
        data = get_dict(observed, "data")
        if data is not None:
            desired["data"] = deepcopy(data)


_HOOKS = {
    DEPLOYMENT: _deployment,
    POD: _pod,
    SERVICE: _service,
    SERVICE_ACCOUNT: _service_account,
    PVC: _pvc,
    PV: _pv,
    JOB: _job,
    SECRET: _secret,
}


def has_retain_hook(api_version: str, kind: str) -> bool:
    """Whether the native interpreter has a kind-specific ``Retain`` hook for this GVK."""
    return (api_version, kind) in _HOOKS


def retain(desired: dict, observed: dict) -> dict:
    """The object to write over an existing member object (semantics §9.5 step 4 and §10.4).

    Follows ``pkg/util/objectwatcher/objectwatcher.go`` (``retainClusterFields``) and
    ``pkg/resourceinterpreter/default/native/retain.go``.

    First the generic merge every kind gets: the member's ``resourceVersion``, ``finalizers`` and
    ``ownerReferences`` are taken; member labels/annotations the desired object lacks are kept,
    except keys listed in the member's ``resourcetemplate.karmada.io/managed-labels`` /
    ``managed-annotations`` (Karmada put them there and has since dropped them). Desired values win
    for keys in both. Then the kind's native hook runs (Deployment retain-replicas, Pod scheduling
    fields and volumes, Service clusterIP/healthCheckNodePort, ServiceAccount secrets, PVC
    volumeName, PV claimRef, Job selector labels, service-account-token Secret data).

    Args:
        desired: the manifest to apply (not modified).
        observed: the member object as read from the cluster (not modified).

    Returns:
        A new dict.

    Raises:
        InterpreterError: e.g. retain-replicas is requested but the member has no ``spec.replicas``.
    """
    out = deepcopy(desired)
    _retain_cluster_fields(out, observed)
    hook = _HOOKS.get(gvk(out))
    if hook is not None:
        try:
            hook(out, observed)
        except InterpreterError as err:
            raise InterpreterError(f"{describe(desired)}: {err}") from None
    return out
