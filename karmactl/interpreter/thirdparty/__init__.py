"""The built-in third-party interpreter layer: rules for 27 popular custom resource kinds.

Karmada ships declarative rules for these kinds (``pkg/resourceinterpreter/default/thirdparty/``)
and consults them after the user's ResourceInterpreterCustomizations and before the native layer,
operation by operation (``pkg/resourceinterpreter/interpreter.go``). karmactl's rules are written
in Python from each project's API (its CRD fields and status conventions), one module per project:

* :mod:`.kruise` - OpenKruise CloneSet, Advanced StatefulSet, Advanced DaemonSet, BroadcastJob,
  AdvancedCronJob, SidecarSet, UnitedDeployment;
* :mod:`.argo` - Argo Workflow;
* :mod:`.flux` - Flux HelmRelease, Kustomization, GitRepository, Bucket, HelmChart,
  HelmRepository, OCIRepository;
* :mod:`.kyverno` - Kyverno Policy, ClusterPolicy;
* :mod:`.kubeflow` - Kubeflow Notebook, PyTorchJob, TFJob, MPIJob;
* :mod:`.volcano` - Volcano Job; :mod:`.flink` - FlinkDeployment; :mod:`.ray` - RayCluster,
  RayJob, RayService; :mod:`.spark` - SparkApplication.

Each kind defines only the operations Karmada defines for it (:data:`OPERATIONS` names them); an
operation a kind lacks falls through to the native layer. Every rule is pure (JSON-like dicts in,
new dicts out, inputs never mutated) and raises
:class:`karmactl.interpreter.InterpreterError` where Karmada's script would fail (for instance a
health rule reading the status of a member copy that has none: health ``Unknown``).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable, Optional

from karmactl.interpreter._common import InterpreterError, describe

# Rules field -> karmadactl operation name
OPERATIONS = {
    "replica": "InterpretReplica",
    "revise": "ReviseReplica",
    "retain": "Retain",
    "reflect": "InterpretStatus",
    "aggregate": "AggregateStatus",
    "health": "InterpretHealth",
    "dependencies": "InterpretDependency",
    "components": "InterpretComponent",
}


@dataclass(frozen=True)
class Rules:
    """The operations of one kind; None where Karmada's rules define none.

    Attributes:
        replica: ``f(obj) -> (replicas, replicaRequirements | None)``.
        revise: ``f(obj, replicas) -> obj`` (a new object).
        retain: ``f(desired, observed) -> obj`` (a new object based on ``desired``).
        reflect: ``f(member_obj) -> status`` (what goes into ``manifestStatuses[].status``).
        aggregate: ``f(template, items, now) -> status`` (the template's new ``status``; ``items``
            are the binding's ``aggregatedStatus`` entries, ``now`` RFC 3339 for conditions).
        health: ``f(member_obj) -> bool``.
        dependencies: ``f(obj) -> [{apiVersion, kind, namespace?, name}]``.
        components: ``f(obj) -> [{name, replicas, replicaRequirements?}]``.
    """

    replica: Optional[Callable] = None
    revise: Optional[Callable] = None
    retain: Optional[Callable] = None
    reflect: Optional[Callable] = None
    aggregate: Optional[Callable] = None
    health: Optional[Callable] = None
    dependencies: Optional[Callable] = None
    components: Optional[Callable] = None


def _load() -> dict:
    from karmactl.interpreter.thirdparty import argo, flink, flux, kruise, kubeflow, kyverno, ray, spark, volcano

    found: dict = {}
    for module in (kruise, argo, flux, kyverno, kubeflow, volcano, flink, ray, spark):
        found.update(module.RULES)
    return found


_RULES: dict = {}


def rules_of(api_version: str, kind: str) -> Rules | None:
    """The built-in rules of a kind (``apiVersion`` exactly as Karmada registers it), or None."""
    if not _RULES:
        _RULES.update(_load())
    return _RULES.get((api_version, kind))


def kinds() -> list[tuple[str, str]]:
    """Every ``(apiVersion, kind)`` with built-in rules, sorted."""
    if not _RULES:
        _RULES.update(_load())
    return sorted(_RULES)


def operations_of(api_version: str, kind: str) -> list[str]:
    """The karmadactl operation names the built-in rules of a kind define (empty when none)."""
    rules = rules_of(api_version, kind)
    if rules is None:
        return []
    return [OPERATIONS[f.name] for f in fields(Rules) if getattr(rules, f.name) is not None]


def rule(api_version: str, kind: str, operation: str) -> Callable | None:
    """The rule for one operation (a :class:`Rules` field name such as ``"health"``), or None."""
    rules = rules_of(api_version, kind)
    return getattr(rules, operation) if rules is not None else None


def run(fn: Callable, operation: str, obj: dict, *args):
    """``fn(obj, *args)``, any failure as an :class:`InterpreterError` naming the kind's built-in
    rule, the operation and the object (as Karmada reports a failing third-party script)."""
    try:
        return fn(obj, *args)
    except InterpreterError as exc:
        raise InterpreterError(f"built-in {OPERATIONS[operation]} rule of {describe(obj)}: {exc}") from None
    except (TypeError, ValueError, AttributeError, KeyError, ZeroDivisionError) as exc:
        raise InterpreterError(f"built-in {OPERATIONS[operation]} rule of {describe(obj)}: "
                               f"unexpected field value ({type(exc).__name__}: {exc})") from None


__all__ = ["OPERATIONS", "Rules", "kinds", "operations_of", "rule", "rules_of", "run"]
