"""Status reflection from member objects (``ReflectStatus``), semantics §10.3.

Follows ``pkg/resourceinterpreter/default/native/reflectstatus.go`` and ``status_type.go``. The
returned dict is what Karmada would marshal into ``manifestStatuses[].status``: typed Go structs
with ``omitempty`` tags, so zero integers of optional fields are left out while required fields
(e.g. ReplicaSet ``replicas``) are always present.
"""
from __future__ import annotations

from karmactl.api.constants import TEMPLATE_GENERATION_ANNOTATION
from karmactl.api.objects import deepcopy

from ._common import (DAEMONSET, DEPLOYMENT, HPA, JOB, PDB, REPLICASET, SERVICE, STATEFULSET,
                      InterpreterError, describe, get_dict, get_int, get_list, get_path, gvk,
                      parse_int64)


class _GenerationError(InterpreterError):
    """The template-generation annotation is missing or invalid (message already names the object)."""


def _put(out: dict, key: str, value, required: bool = False) -> None:
    if required or value:
        out[key] = value


def _federated(obj: dict) -> dict:
    """``FederatedGeneration``: member generation and the template generation it was rendered from.

    Raises:
        InterpreterError: the ``resourcetemplate.karmada.io/generation`` annotation is missing or
            not an integer (``runtime.Convert_string_To_int64`` on an empty string fails too).
    """
    annotations = get_dict(obj, "metadata", "annotations") or {}
    text = annotations.get(TEMPLATE_GENERATION_ANNOTATION, "")
    try:
        template_generation = parse_int64(text if isinstance(text, str) else "")
    except ValueError:
        md = obj.get("metadata") or {}
        raise _GenerationError(
            f"failed to parse {obj.get('kind')}({md.get('namespace', '')}/{md.get('name', '')}) generation "
            f"from annotation({TEMPLATE_GENERATION_ANNOTATION}:{text}): invalid syntax") from None
    out: dict = {}
    _put(out, "generation", get_int(obj, "metadata", "generation"))
    _put(out, "resourceTemplateGeneration", template_generation)
    return out


def _deployment(obj: dict, status: dict) -> dict | None:
    out = _federated(obj)
    for key in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                "availableReplicas", "unavailableReplicas"):
        _put(out, key, get_int(status, key))
    # "{}" means the member status has not been collected yet.
    return out or None


def _replicaset(obj: dict, status: dict) -> dict:
    out = _federated(obj)
    _put(out, "replicas", get_int(status, "replicas"), required=True)
    for key in ("readyReplicas", "availableReplicas", "observedGeneration"):
        _put(out, key, get_int(status, key))
    return out


def _statefulset(obj: dict, status: dict) -> dict:
    out = _federated(obj)
    _put(out, "replicas", get_int(status, "replicas"), required=True)
    for key in ("readyReplicas", "currentReplicas", "updatedReplicas"):
        _put(out, key, get_int(status, key))
    _put(out, "availableReplicas", get_int(status, "availableReplicas"), required=True)
    return out


def _daemonset(obj: dict, status: dict) -> dict:
    out = _federated(obj)
    for key in ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady"):
        _put(out, key, get_int(status, key), required=True)
    for key in ("observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable"):
        _put(out, key, get_int(status, key))
    return out


def _job(obj: dict, status: dict) -> dict:
    out: dict = {}
    _put(out, "conditions", deepcopy(get_list(status, "conditions")))
    _put(out, "startTime", status.get("startTime"))
    _put(out, "completionTime", status.get("completionTime"))
    for key in ("active", "succeeded", "failed"):
        _put(out, key, get_int(status, key))
    return out


def _pdb(obj: dict, status: dict) -> dict:
    out: dict = {}
    _put(out, "disruptedPods", deepcopy(get_dict(status, "disruptedPods") or {}))
    for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        _put(out, key, get_int(status, key), required=True)
    return out


def _hpa(obj: dict, status: dict) -> dict:
    # Go also writes "currentMetrics": null (no omitempty); a null carries nothing, so it is left out.
    out: dict = {}
    _put(out, "currentReplicas", get_int(status, "currentReplicas"))
    _put(out, "desiredReplicas", get_int(status, "desiredReplicas"), required=True)
    return out


def _load_balancer(status: dict) -> dict:
    lb = deepcopy(get_dict(status, "loadBalancer") or {})
    if not lb.get("ingress"):
        lb.pop("ingress", None)
    return lb


_STATUS_HOOKS = {
    DEPLOYMENT: _deployment,
    REPLICASET: _replicaset,
    STATEFULSET: _statefulset,
    DAEMONSET: _daemonset,
    JOB: _job,
    PDB: _pdb,
    HPA: _hpa,
}


def reflect_status(obj: dict) -> dict | None:
    """The status Karmada collects from a member object (semantics §10.3).

    Follows ``pkg/resourceinterpreter/default/native/reflectstatus.go``.

    * Deployment, ReplicaSet, StatefulSet, DaemonSet: a selection of counters plus ``generation``
      (member ``metadata.generation``) and ``resourceTemplateGeneration`` (member annotation
      ``resourcetemplate.karmada.io/generation``). Deployment gives None when everything is zero.
    * Job, PodDisruptionBudget, HorizontalPodAutoscaler: a selection of fields.
    * Service: ``{"loadBalancer": ...}`` for type LoadBalancer, else None.
    * Ingress and every other kind (Pod included): the whole ``.status``.
    * None when the object has no ``.status``.

    Raises:
        InterpreterError: ``.status`` is not an object, a field has the wrong type, or (for the
            four generation-tracking kinds) the generation annotation is missing or invalid.
    """
    key = gvk(obj)
    try:
        if key == SERVICE:
            service_type = get_path(obj, "spec", "type")
            if service_type != "LoadBalancer":
                return None
            status = get_dict(obj, "status")
            if status is None:
                return None
            return {"loadBalancer": _load_balancer(status)}
        status = get_dict(obj, "status")
        if status is None:
            return None
        hook = _STATUS_HOOKS.get(key)
        if hook is None:
            # Ingress and kinds without a dedicated hook: reflectWholeStatus.
            return deepcopy(status)
        return hook(obj, status)
    except _GenerationError:
        raise
    except InterpreterError as err:
        raise InterpreterError(f"{describe(obj)}: {err}") from None

