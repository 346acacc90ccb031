"""Health of member objects (``InterpretHealth``), semantics §10.1.

Follows ``pkg/resourceinterpreter/default/native/healthy.go``. Missing integer fields count as 0,
as they do after Karmada's conversion to typed structs.
"""
from __future__ import annotations

from karmactl.api.constants import HEALTHY, UNHEALTHY

from ._common import (DAEMONSET, DEPLOYMENT, INGRESS, PDB, POD, PVC, REPLICASET, SERVICE, STATEFULSET,
                      InterpreterError, describe, get_int, get_list, get_opt_int, get_str, gvk)


def _rollout_complete(obj: dict) -> bool:
    # Deployment and StatefulSet: the controller saw the latest spec, every desired replica is
    # updated, and every updated replica is available.
    if get_int(obj, "status", "observedGeneration") != get_int(obj, "metadata", "generation"):
        return False
    replicas = get_opt_int(obj, "spec", "replicas")
    updated = get_int(obj, "status", "updatedReplicas")
    if replicas is not None and updated < replicas:
        return False
    return get_int(obj, "status", "availableReplicas") >= updated


def _replicaset(obj: dict) -> bool:
    if get_int(obj, "status", "observedGeneration") != get_int(obj, "metadata", "generation"):
        return False
    replicas = get_opt_int(obj, "spec", "replicas")
    return replicas is None or get_int(obj, "status", "availableReplicas") >= replicas


def _daemonset(obj: dict) -> bool:
    if get_int(obj, "status", "observedGeneration") != get_int(obj, "metadata", "generation"):
        return False
    updated = get_int(obj, "status", "updatedNumberScheduled")
    if updated < get_int(obj, "status", "desiredNumberScheduled"):
        return False
    return get_int(obj, "status", "numberAvailable") >= updated


def _has_lb_address(obj: dict) -> bool:
    for ingress in get_list(obj, "status", "loadBalancer", "ingress"):
        if isinstance(ingress, dict) and (ingress.get("ip") or ingress.get("hostname")):
            return True
    return False


def _service(obj: dict) -> bool:
    # Only a LoadBalancer Service waits for something: an address from the cloud provider.
    if get_str(obj, "spec", "type") != "LoadBalancer":
        return True
    return _has_lb_address(obj)


def _pvc(obj: dict) -> bool:
    return get_str(obj, "status", "phase") == "Bound"


def _pod(obj: dict) -> bool:
    phase = get_str(obj, "status", "phase")
    if phase == "Succeeded":
        return True
    if phase != "Running":
        return False
    for cond in get_list(obj, "status", "conditions"):
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _pdb(obj: dict) -> bool:
    return get_int(obj, "status", "currentHealthy") >= get_int(obj, "status", "desiredHealthy")


_HOOKS = {
    DEPLOYMENT: _rollout_complete,
    STATEFULSET: _rollout_complete,
    REPLICASET: _replicaset,
    DAEMONSET: _daemonset,
    SERVICE: _service,
    INGRESS: _has_lb_address,
    PVC: _pvc,
    POD: _pod,
    PDB: _pdb,
}


def has_health_hook(api_version: str, kind: str) -> bool:
    """Whether the native interpreter judges health for this GVK (apiVersion and kind must match exactly)."""
    return (api_version, kind) in _HOOKS


def interpret_health(obj: dict) -> str | None:
    """Health of a member object: ``"Healthy"``, ``"Unhealthy"``, or None when the kind has no hook.

    Follows ``pkg/resourceinterpreter/default/native/healthy.go``.

    Callers report kinds without a hook (Job, ConfigMap, CRDs, ...) as Healthy and map an
    :class:`InterpreterError` to ``Unknown`` (``work_status_controller.go``).

    Raises:
        InterpreterError: a field has the wrong type.
    """
    hook = _HOOKS.get(gvk(obj))
    if hook is None:
        return None
    try:
        return HEALTHY if hook(obj) else UNHEALTHY
    except InterpreterError as err:
        raise InterpreterError(f"{describe(obj)}: {err}") from None
