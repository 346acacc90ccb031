"""Graceful eviction tasks and state preservation, as the taint manager and application failover
produce them (``binding_types_helper.go`` of the work.karmada.io v1alpha2 API: ``GracefulEvictCluster``;
``pkg/controllers/utils/common.go``: state preservation)."""
from __future__ import annotations


def graceful_evict_cluster(spec: dict, cluster: str, task: dict) -> bool:
    """``GracefulEvictCluster``: move ``cluster`` from ``spec.clusters`` into an eviction task.

    Args:
        spec: the binding's spec, modified in place (callers pass a copy).
        cluster: the cluster to evict.
        task: task fields besides ``fromCluster`` and ``replicas`` (reason, producer, purgeMode, ...).

    Returns:
        False when ``cluster`` is not in ``spec.clusters`` (nothing done). Otherwise the cluster is
        removed from ``spec.clusters`` and, unless a task for it exists already, a task is appended
        with ``replicas`` copied when > 0 and ``clustersBeforeFailover`` = the target names before.
    """
    targets = spec.get("clusters") or []
    index = next((i for i, t in enumerate(targets) if t.get("name") == cluster), None)
    if index is None:
        return False
    evicted = targets[index]
    before = [t.get("name") for t in targets]
    remaining = targets[:index] + targets[index + 1:]
    if remaining:
        spec["clusters"] = remaining
    else:
        spec.pop("clusters", None)
    tasks = list(spec.get("gracefulEvictionTasks") or [])
    if any(t.get("fromCluster") == cluster for t in tasks):
        return True
    new = {"fromCluster": cluster}
    if task.get("purgeMode"):
        new["purgeMode"] = task["purgeMode"]
    if int(evicted.get("replicas") or 0) > 0:
        new["replicas"] = int(evicted["replicas"])
    for field in ("reason", "message", "producer", "gracePeriodSeconds", "suppressDeletion", "preservedLabelState"):
        if task.get(field) not in (None, ""):
            new[field] = task[field]
    new["clustersBeforeFailover"] = before
    tasks.append(new)
    spec["gracefulEvictionTasks"] = tasks
    return True


GATE_OFF_MESSAGE = ("failover.{kind}.statePreservation has no effect: the feature gate StatefulFailoverInjection "
                    "is off (data.statefulFailoverInjection: \"true\" in ConfigMap karmada-system/karmactl-config)")


def has_state_preservation(binding: dict, kind: str) -> bool:
    """Whether ``spec.failover.<kind>.statePreservation`` has rules (``kind``: application | cluster)."""
    behaviour = (((binding.get("spec") or {}).get("failover") or {}).get(kind)) or {}
    return bool((behaviour.get("statePreservation") or {}).get("rules"))


def preserved_label_state(state_preservation: dict | None, binding: dict, cluster: str) -> dict | None:
    """``BuildPreservedLabelState`` for an eviction from ``cluster`` (gate ``StatefulFailoverInjection``).

    Follows ``pkg/util/helper/failover.go`` and ``extractStateForEviction`` /
    ``buildTaskOptions`` (``pkg/controllers/cluster/taint_manager.go``,
    ``pkg/controllers/applicationfailover/common.go``): every rule's ``jsonPath`` (a Kubernetes
    JSONPath template, missing keys are errors) is evaluated on the ``status`` of the binding's
    ``aggregatedStatus`` item for ``cluster``.

    Args:
        state_preservation: ``failover.application|cluster.statePreservation`` (``{rules: [{aliasLabelName, jsonPath}]}``).
        binding: the RB/CRB, with the status collected in this run.
        cluster: the evicted cluster.

    Returns:
        ``{aliasLabelName: value}``, or None when there are no rules.

    Raises:
        ValueError: the status of ``cluster`` has not been collected, or a path finds no value
            (the message names the rule).
    """
    from karmactl.api.jsonpath import JSONPathError, evaluate

    rules = (state_preservation or {}).get("rules") or []
    if not rules:
        return None
    item = next((i for i in (binding.get("status") or {}).get("aggregatedStatus") or []
                 if i.get("clusterName") == cluster), None)
    if item is None or item.get("status") is None:
        raise ValueError(f"the application status has not yet been collected from Cluster({cluster})")
    state = {}
    for rule in rules:
        try:
            state[rule["aliasLabelName"]] = evaluate(rule["jsonPath"], item["status"])
        except JSONPathError as exc:
            raise ValueError(f"statePreservation rule {rule['aliasLabelName']} ({rule['jsonPath']}) on the status "
                             f"from Cluster({cluster}): {exc}") from None
    return state
