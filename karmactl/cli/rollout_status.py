"""Whether a workload template has rolled out, from its aggregated status (kubectl
``pkg/polymorphichelpers/rollout_status.go``'s status viewers, applied to the template as Karmada's
``karmada-aggregated-apiserver`` users see it: ``status`` summed over the members by the resource
interpreter's AggregateStatus, ``status.observedGeneration`` moved to the template's generation only
when every member copy has observed the revision the binding carried, ``karmactl/interpreter/aggregate.py``).

Pure: ``(message, done)`` from one merged template view; errors as :class:`RolloutError`.
"""
from __future__ import annotations


class RolloutError(Exception):
    """The rollout cannot be watched or has failed (kubectl's error text)."""


def _int(d: dict, key: str) -> int:
    value = d.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _deployment(obj: dict) -> tuple[str, bool]:
    name, spec, status = obj["metadata"]["name"], obj.get("spec") or {}, obj.get("status") or {}
    if _int(obj["metadata"], "generation") <= _int(status, "observedGeneration"):
        for cond in status.get("conditions") or []:
            if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
                raise RolloutError(f'deployment "{name}" exceeded its progress deadline')
        replicas = spec.get("replicas", 1)
        updated, total, available = _int(status, "updatedReplicas"), _int(status, "replicas"), _int(status, "availableReplicas")
        if updated < replicas:
            return (f'Waiting for deployment "{name}" rollout to finish: {updated} out of {replicas} new replicas '
                    f"have been updated...", False)
        if total > updated:
            return (f'Waiting for deployment "{name}" rollout to finish: {total - updated} old replicas are '
                    f"pending termination...", False)
        if available < updated:
            return (f'Waiting for deployment "{name}" rollout to finish: {available} of {updated} updated replicas '
                    f"are available...", False)
        return f'deployment "{name}" successfully rolled out', True
    return "Waiting for deployment spec update to be observed...", False


def _rolling(obj: dict) -> None:
    strategy = ((obj.get("spec") or {}).get("updateStrategy") or {}).get("type") or "RollingUpdate"
    if strategy != "RollingUpdate":
        raise RolloutError("rollout status is only available for RollingUpdate strategy type")


def _daemonset(obj: dict) -> tuple[str, bool]:
    _rolling(obj)
    name, status = obj["metadata"]["name"], obj.get("status") or {}
    if _int(obj["metadata"], "generation") <= _int(status, "observedGeneration"):
        desired, updated = _int(status, "desiredNumberScheduled"), _int(status, "updatedNumberScheduled")
        available = _int(status, "numberAvailable")
        if updated < desired:
            return (f'Waiting for daemon set "{name}" rollout to finish: {updated} out of {desired} new pods have '
                    f"been updated...", False)
        if available < desired:
            return (f'Waiting for daemon set "{name}" rollout to finish: {available} of {desired} updated pods are '
                    f"available...", False)
        return f'daemon set "{name}" successfully rolled out', True
    return "Waiting for daemon set spec update to be observed...", False


def _statefulset(obj: dict) -> tuple[str, bool]:
    """kubectl's StatefulSet viewer, with the revisions it compares replaced by the updated replicas:
    Karmada's aggregated StatefulSet status carries no ``currentRevision``/``updateRevision`` (each
    member names its own ControllerRevisions)."""
    _rolling(obj)
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    observed = _int(status, "observedGeneration")
    if observed == 0 or _int(obj["metadata"], "generation") > observed:
        return "Waiting for statefulset spec update to be observed...", False
    replicas = spec.get("replicas", 1)
    ready, updated = _int(status, "readyReplicas"), _int(status, "updatedReplicas")
    if ready < replicas:
        return f"Waiting for {replicas - ready} pods to be ready...", False
    if updated < replicas:
        return f"Waiting for statefulset rolling update to complete: {updated} of {replicas} pods updated...", False
    return f"statefulset rolling update complete {replicas} pods", True


VIEWERS = {("apps", "Deployment"): _deployment, ("apps", "DaemonSet"): _daemonset, ("apps", "StatefulSet"): _statefulset}


def rollout_state(obj: dict) -> tuple[str, bool]:
    """``(kubectl's message, rolled out)`` for a merged template view (spec, ``metadata.generation``,
    aggregated ``status``).

    Raises:
        RolloutError: a kind without a viewer, an OnDelete strategy, a progress deadline exceeded.
    """
    gk = (obj.get("apiVersion", "").rpartition("/")[0], obj.get("kind"))
    viewer = VIEWERS.get(gk)
    if viewer is None:
        raise RolloutError(f"no status viewer has been implemented for {obj.get('kind')}")
    return viewer(obj)
