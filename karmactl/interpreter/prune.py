"""Pruning of manifests before they go into a Work (semantics §9.4).

Follows ``pkg/resourceinterpreter/default/native/prune/prune.go`` (``RemoveIrrelevantFields`` with
the ``RemoveJobTTLSeconds`` hook, as the binding controller and execution controller call it).
Kind rules match on ``kind`` only, as Karmada does.
"""
from __future__ import annotations

from karmactl.api.objects import deepcopy

from ._common import SA_TOKEN_SECRET_TYPE, remove_path

_METADATA_FIELDS = ("creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                    "managedFields", "resourceVersion", "selfLink", "uid", "ownerReferences", "finalizers")


def _deployment(obj: dict) -> None:
    for key in ("deployment.kubernetes.io/revision", "deployment.kubernetes.io/revision-history"):
        remove_path(obj, "metadata", "annotations", key)


def _job(obj: dict) -> None:
    spec = obj.get("spec") or {}
    if spec.get("manualSelector") is True:
        return
    # The API server generated these from the control-plane Job's UID; they would not match the
    # member Job's UID and the member API server rejects them.
    match_labels = (spec.get("selector") or {}).get("matchLabels")
    if isinstance(match_labels, dict):
        for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
            match_labels.pop(key, None)
    labels = (((spec.get("template") or {}).get("metadata")) or {}).get("labels")
    if isinstance(labels, dict):
        for key in ("controller-uid", "job-name", "batch.kubernetes.io/controller-uid",
                    "batch.kubernetes.io/job-name"):
            labels.pop(key, None)


def _service_account(obj: dict) -> None:
    secrets = obj.get("secrets")
    if not isinstance(secrets, list) or not secrets:
        return
    prefix = f"{(obj.get('metadata') or {}).get('name', '')}-token-"
    # Karmada's loop advances its index after a removal, so of two adjacent token secrets only the
    # first is removed. Reproduced as is: the member object must match what Karmada would write.
    idx = 0
    while idx < len(secrets):
        name = (secrets[idx] or {}).get("name") or ""
        if name.startswith(prefix):
            del secrets[idx]
        idx += 1


def _service(obj: dict) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict) and "clusterIP" in spec and spec["clusterIP"] != "None":
        # Allocated per cluster; a headless Service ("None") keeps it.
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)


def _secret(obj: dict) -> None:
    if obj.get("type") == SA_TOKEN_SECRET_TYPE:
        # The member's token controller fills these. Karmada writes `data: null`; dropping the key
        # is the same object.
        remove_path(obj, "metadata", "annotations", "kubernetes.io/service-account.uid")
        obj.pop("data", None)


def _pvc(obj: dict) -> None:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if annotations.get("volume.kubernetes.io/selected-node"):
        del annotations["volume.kubernetes.io/selected-node"]


_KIND_PRUNERS = {
    "Deployment": _deployment,
    "Job": _job,
    "Secret": _secret,
    "ServiceAccount": _service_account,
    "Service": _service,
    "PersistentVolumeClaim": _pvc,
}


def prune_manifest(obj: dict, *, remove_job_ttl: bool = True, in_place: bool = False) -> dict:
    """A copy of ``obj`` without what the API server generated or what must not reach members.

    Follows ``pkg/resourceinterpreter/default/native/prune/prune.go``.

    Removes ``metadata.creationTimestamp``, ``deletionTimestamp``, ``deletionGracePeriodSeconds``,
    ``generation``, ``managedFields``, ``resourceVersion``, ``selfLink``, ``uid``, ``ownerReferences``,
    ``finalizers`` and ``status``, then per kind: Deployment revision annotations; Job generated
    selector labels (unless ``manualSelector``) and ``spec.ttlSecondsAfterFinished`` (when
    ``remove_job_ttl``, Karmada's default everywhere but ``karmadactl promote``); Service
    ``clusterIP``/``clusterIPs`` unless headless; ServiceAccount ``<name>-token-*`` secrets;
    service-account-token Secret ``data`` and UID annotation; PVC ``selected-node`` annotation.

    ``in_place=True`` prunes ``obj`` itself (for callers that already hold a private copy).
    """
    out = obj if in_place else deepcopy(obj)
    md = out.get("metadata")
    if isinstance(md, dict):
        for key in _METADATA_FIELDS:
            md.pop(key, None)
    out.pop("status", None)
    pruner = _KIND_PRUNERS.get(out.get("kind"))
    if pruner is not None:
        pruner(out)
    if remove_job_ttl and out.get("kind") == "Job":
        remove_path(out, "spec", "ttlSecondsAfterFinished")
    return out
