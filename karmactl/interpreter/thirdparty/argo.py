"""Argo Workflows (``argoproj.io/v1alpha1`` Workflow).

Written from Argo's API: ``spec.parallelism`` bounds the pods a Workflow runs at once (1 when
unset), its pods share ``spec.affinity``/``nodeSelector``/``tolerations``, volumes and
``imagePullSecrets``; ``status.phase`` is Pending, Running, Succeeded, Failed or Error; a
Workflow is suspended with ``spec.suspend`` and its status is written by the workflow
controller in the member. Karmada's rules: ``resourcecustomizations/argoproj.io/v1alpha1/Workflow``.
"""
from __future__ import annotations

from karmactl.api.objects import deepcopy
from karmactl.interpreter._common import InterpreterError

from . import Rules
from ._util import dig, named_refs, pod_dependencies, pod_requirements, with_path


def _replicas(obj: dict) -> tuple[int, dict | None]:
    parallelism = dig(obj, "spec", "parallelism")
    if parallelism is not None and (isinstance(parallelism, bool) or not isinstance(parallelism, (int, float))):
        raise InterpreterError(f"spec.parallelism {parallelism!r} is not a number")
    spec = obj.get("spec") or {}
    pod = {"spec": {k: spec[k] for k in ("affinity", "nodeSelector", "tolerations") if spec.get(k) is not None}}
    return (1 if parallelism is None else int(parallelism)), pod_requirements(pod)


def _health(obj: dict) -> bool:
    """Healthy unless the Workflow has no phase yet or ended in Error or Failed."""
    phase = dig(obj, "status", "phase")
    return isinstance(obj.get("status"), dict) and phase not in (None, "", "Error", "Failed")


def _retain(desired: dict, observed: dict) -> dict:
    """The member's ``spec.suspend`` (a Workflow is suspended and resumed where it runs) and its
    ``status`` (written by the member's workflow controller) are kept."""
    out = deepcopy(desired)
    suspend = dig(observed, "spec", "suspend")
    if suspend is not None:
        out = with_path(out, suspend, "spec", "suspend")
    if observed.get("status") is not None:
        out["status"] = deepcopy(observed["status"])
    return out


def _dependencies(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    namespace = dig(obj, "metadata", "namespace") or "default"
    pod_spec = {k: spec[k] for k in ("volumes", "imagePullSecrets", "serviceAccountName") if spec.get(k) is not None}
    refs = pod_dependencies(pod_spec, namespace)
    extra = named_refs(obj, [
        ("ServiceAccount", [dig(spec, "executor", "serviceAccountName")]),
        ("PersistentVolumeClaim", [dig(c, "metadata", "name") for c in spec.get("volumeClaimTemplates") or []]),
    ])
    known = {(r["kind"], r.get("name")) for r in refs}
    return refs + [r for r in extra if (r["kind"], r["name"]) not in known]


RULES = {
    ("argoproj.io/v1alpha1", "Workflow"): Rules(
        replica=_replicas, revise=lambda obj, n: with_path(obj, int(n), "spec", "parallelism"),
        health=_health, retain=_retain, dependencies=_dependencies),
}
