"""OpenKruise (``apps.kruise.io``): CloneSet, Advanced StatefulSet, Advanced DaemonSet,
BroadcastJob, AdvancedCronJob, SidecarSet, UnitedDeployment.

Written from Kruise's API (``apis/apps/v1alpha1``, ``v1beta1``): workloads keep their pod
template in ``spec.template`` and their size in ``spec.replicas`` (BroadcastJob: ``parallelism``);
a workload's status counts replicas like the Kubernetes workload it extends, and is current when
``status.observedGeneration`` equals ``metadata.generation``. Karmada's rules for these kinds
are in ``pkg/resourceinterpreter/default/thirdparty/resourcecustomizations/apps.kruise.io/``.
"""
from __future__ import annotations

from karmactl.api.objects import deepcopy
from karmactl.interpreter._common import InterpreterError

from . import Rules
from ._util import (dig, generation_report, item_statuses, last_set, merged_conditions, named_refs, need, number,
                    observed_generation, pick, pod_requirements, status_of, template_dependencies,
                    template_status, total, with_path)

V1ALPHA1, V1BETA1 = "apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"


# --- shared shapes ------------------------------------------------------------------------------

def _replicas(obj: dict) -> tuple[int, dict | None]:
    replicas = dig(obj, "spec", "replicas")
    if isinstance(replicas, bool) or not isinstance(replicas, (int, float)):
        raise InterpreterError("spec.replicas is not a number")
    return int(replicas), pod_requirements(dig(obj, "spec", "template"))


def _revise(field: str):
    return lambda obj, replicas: with_path(obj, int(replicas), "spec", field)


def _reflect(keys):
    def reflect(obj: dict) -> dict:
        status = obj.get("status")
        if not isinstance(status, dict):
            return {}
        return generation_report(obj, pick(status, keys))
    return reflect


def _aggregate_counters(counters, revisions=(), reset_revisions=False):
    """Counters summed over members, revision strings from the last member reporting one, and
    ``observedGeneration`` moved to the template generation once every member caught up. Without
    members the counters are 0 and ``observedGeneration`` is the template generation."""
    def aggregate(template: dict, items, _now) -> dict:
        status = template_status(template)
        if not items:
            status["observedGeneration"] = number(dig(template, "metadata", "generation"))
            status.update(dict.fromkeys(counters, 0))
            if reset_revisions:
                status.update(dict.fromkeys(revisions, ""))
            return status
        status["observedGeneration"] = observed_generation(template, items)
        for key in counters:
            status[key] = total(items, key)
        for key in revisions:
            status[key] = last_set(items, key) or ""
        return status
    return aggregate


def _replicas_health(obj: dict) -> bool:
    """Rolled out: the controller saw the current generation, every desired replica is updated
    and every updated replica is available."""
    status = status_of(obj)
    if status.get("observedGeneration") != dig(obj, "metadata", "generation"):
        return False
    desired = dig(obj, "spec", "replicas")
    if desired is not None and need(status, "updatedReplicas") < desired:
        return False
    return need(status, "availableReplicas") >= need(status, "updatedReplicas")


def _pod_template_dependencies(obj: dict) -> list[dict]:
    return template_dependencies(obj, "spec", "template")


# --- CloneSet ------------------------------------------------------------------------------------

_CLONESET_COUNTERS = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "updatedReadyReplicas",
                      "expectedUpdatedReplicas")
_CLONESET_STATUS = _CLONESET_COUNTERS + ("updateRevision", "currentRevision", "observedGeneration", "labelSelector")

CLONESET = Rules(
    replica=_replicas, revise=_revise("replicas"),
    aggregate=_aggregate_counters(_CLONESET_COUNTERS, ("updateRevision", "currentRevision", "labelSelector")),
    reflect=_reflect(_CLONESET_STATUS), health=_replicas_health, dependencies=_pod_template_dependencies)

# --- Advanced StatefulSet -----------------------------------------------------------------------

_STS_COUNTERS = ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas",
                 "updatedReadyReplicas")
_STS_STATUS = _STS_COUNTERS + ("updateRevision", "currentRevision", "observedGeneration")

STATEFULSET = Rules(
    replica=_replicas, revise=_revise("replicas"),
    aggregate=_aggregate_counters(_STS_COUNTERS, ("updateRevision", "currentRevision"), reset_revisions=True),
    reflect=_reflect(_STS_STATUS), health=_replicas_health, dependencies=_pod_template_dependencies)

# --- Advanced DaemonSet -------------------------------------------------------------------------

_DS_COUNTERS = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
                "updatedNumberScheduled", "numberAvailable", "numberUnavailable")


def _daemonset_health(obj: dict) -> bool:
    status = status_of(obj)
    if status.get("observedGeneration") != dig(obj, "metadata", "generation"):
        return False
    if need(status, "updatedNumberScheduled") < need(status, "desiredNumberScheduled"):
        return False
    return need(status, "numberAvailable") >= status["updatedNumberScheduled"]


DAEMONSET = Rules(
    aggregate=_aggregate_counters(_DS_COUNTERS, ("daemonSetHash",)),
    reflect=_reflect(_DS_COUNTERS + ("observedGeneration", "daemonSetHash")),
    health=_daemonset_health, dependencies=_pod_template_dependencies)

# --- BroadcastJob --------------------------------------------------------------------------------


def _broadcastjob_replicas(obj: dict) -> tuple[int, dict | None]:
    parallelism = dig(obj, "spec", "parallelism")
    if parallelism is None:
        replicas = 1
    elif isinstance(parallelism, bool) or not isinstance(parallelism, (int, float)):
        raise InterpreterError(f"spec.parallelism {parallelism!r} is not a number")
    else:
        replicas = int(parallelism)
    return replicas, pod_requirements(dig(obj, "spec", "template"))


def _broadcastjob_health(obj: dict) -> bool:
    """Unhealthy when nothing is desired or a pod failed, or while neither active nor succeeded."""
    status = status_of(obj)
    if status.get("desired") == 0 or status.get("failed") != 0:
        return False
    return not (status.get("succeeded") == 0 and status.get("active") == 0)


def _finished(status: dict | None) -> str | None:
    for condition in (status or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("status") == "True" and \
                condition.get("type") in ("Complete", "Failed"):
            return condition["type"]
    return None


def _broadcastjob_aggregate(template: dict, items, _now) -> dict:
    status = template_status(template)
    if not items:
        return status
    for key in ("active", "succeeded", "failed", "desired"):
        status[key] = total(items, key)
    status["phase"] = last_set(items, "phase") or ""
    failed, complete = [], 0
    for cluster, member in item_statuses(items):
        finished = _finished(member)
        if finished == "Complete":
            complete += 1
        elif finished == "Failed":
            failed.append(cluster)
    conditions = []
    if failed:
        conditions.append({"type": "Failed", "status": "True", "reason": "JobFailed",
                           "message": "Job executed failed in member clusters: " + ", ".join(failed)})
    if complete == len(items):
        conditions.append({"type": "Completed", "status": "True", "reason": "Completed", "message": "Job completed"})
    status["conditions"] = conditions
    return status


def _keep_template_labels(desired: dict, observed: dict) -> dict:
    labels = dig(observed, "spec", "template", "metadata", "labels")
    if labels is None:
        return deepcopy(desired)
    return with_path(desired, deepcopy(labels), "spec", "template", "metadata", "labels")


BROADCASTJOB = Rules(
    replica=_broadcastjob_replicas, revise=_revise("parallelism"), health=_broadcastjob_health,
    aggregate=_broadcastjob_aggregate, retain=_keep_template_labels,
    reflect=lambda obj: pick(obj.get("status") or {}, ("conditions", "startTime", "completionTime", "active",
                                                       "succeeded", "failed", "desired", "phase")),
    dependencies=_pod_template_dependencies)

# --- AdvancedCronJob -----------------------------------------------------------------------------


def _cronjob_aggregate(template: dict, items, _now) -> dict:
    status = template_status(template)
    if not items:
        return status
    active = []
    for _cluster, member in item_statuses(items):
        active.extend(deepcopy((member or {}).get("active") or []))
    status["active"] = active
    status["type"] = last_set(items, "type", empty=()) or ""
    schedule = last_set(items, "lastScheduleTime", empty=())
    if schedule is None:
        status.pop("lastScheduleTime", None)
    else:
        status["lastScheduleTime"] = schedule
    return status


def _cronjob_dependencies(obj: dict) -> list[dict]:
    for field in ("broadcastJobTemplate", "jobTemplate"):
        if dig(obj, "spec", "template", field) is not None:
            return template_dependencies(obj, "spec", "template", field, "spec", "template")
    return []


ADVANCEDCRONJOB = Rules(aggregate=_cronjob_aggregate, dependencies=_cronjob_dependencies)

# --- SidecarSet ----------------------------------------------------------------------------------

_SIDECAR_COUNTERS = ("matchedPods", "updatedPods", "readyPods")


def _sidecarset_reflect(obj: dict) -> dict:
    status = obj.get("status")
    if not isinstance(status, dict):
        return {}
    return {k: number(status.get(k)) for k in _SIDECAR_COUNTERS}


def _sidecarset_health(obj: dict) -> bool:
    """Healthy when every matched pod runs the current sidecars (or no pod matches)."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return False
    matched = number(status.get("matchedPods"))
    return matched == 0 or number(status.get("updatedPods")) == matched


def _sidecarset_dependencies(obj: dict) -> list[dict]:
    configmaps, secrets = [], []
    for container in dig(obj, "spec", "containers") or []:
        for env in (container or {}).get("env") or []:
            configmaps.append(dig(env, "valueFrom", "configMapKeyRef", "name"))
            secrets.append(dig(env, "valueFrom", "secretKeyRef", "name"))
        for env_from in (container or {}).get("envFrom") or []:
            configmaps.append(dig(env_from, "configMapRef", "name"))
            secrets.append(dig(env_from, "secretRef", "name"))
    for volume in dig(obj, "spec", "volumes") or []:
        configmaps.append(dig(volume, "configMap", "name"))
        secrets.append(dig(volume, "secret", "secretName"))
        for source in dig(volume, "projected", "sources") or []:
            configmaps.append(dig(source, "configMap", "name"))
            secrets.append(dig(source, "secret", "name"))
    return named_refs(obj, [("ConfigMap", configmaps), ("Secret", secrets)])


SIDECARSET = Rules(
    reflect=_sidecarset_reflect, replica=lambda obj: (0, None),
    aggregate=lambda template, items, _now: {k: total(items, k) for k in _SIDECAR_COUNTERS},
    retain=lambda desired, observed: deepcopy(desired), health=_sidecarset_health,
    dependencies=_sidecarset_dependencies)

# --- UnitedDeployment ----------------------------------------------------------------------------

_UD_COUNTERS = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")


def _uniteddeployment_aggregate(template: dict, items, now) -> dict:
    status = _aggregate_counters(_UD_COUNTERS)(template, items, now)
    if items:
        by_type: dict = {}
        for _cluster, member in item_statuses(items):
            for condition in (member or {}).get("conditions") or []:
                if isinstance(condition, dict):
                    by_type[condition.get("type")] = deepcopy(condition)  # the last cluster's wins
        if by_type:
            status["conditions"] = list(by_type.values())
    return status


def _uniteddeployment_health(obj: dict) -> bool:
    if not isinstance(obj.get("status"), dict) or not isinstance(obj.get("spec"), dict):
        return False
    return _replicas_health(obj)


UNITEDDEPLOYMENT = Rules(
    replica=_replicas, revise=_revise("replicas"), aggregate=_uniteddeployment_aggregate,
    reflect=_reflect(_UD_COUNTERS + ("observedGeneration", "conditions")), health=_uniteddeployment_health,
    dependencies=_pod_template_dependencies)

RULES = {
    (V1ALPHA1, "CloneSet"): CLONESET,
    (V1BETA1, "StatefulSet"): STATEFULSET,
    (V1ALPHA1, "DaemonSet"): DAEMONSET,
    (V1ALPHA1, "BroadcastJob"): BROADCASTJOB,
    (V1ALPHA1, "AdvancedCronJob"): ADVANCEDCRONJOB,
    (V1ALPHA1, "SidecarSet"): SIDECARSET,
    (V1ALPHA1, "UnitedDeployment"): UNITEDDEPLOYMENT,
}
