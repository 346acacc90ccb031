"""Works in execution namespaces, shared by the controllers that write or read them
(``pkg/util/helper/work.go``)."""
from __future__ import annotations

from dataclasses import dataclass

from karmactl.api import constants as C
from karmactl.api.objects import get_condition


@dataclass
class RenderHooks:
    """The pure functions Work rendering needs (the interpreter and the override seam).

    Attributes:
        revise_replica: ``f(obj, replicas) -> obj``.
        prune: ``f(manifest) -> manifest``.
        split_job_completions: ``f(template, targets, tie_uid) -> {cluster: completions}``.
        apply_overrides: ``f(manifest, cluster) -> (manifest, applied_overrides, applied_cluster_overrides)``;
            raises an exception whose text becomes the Work's error for that cluster.
        stateful_failover_injection: gate ``StatefulFailoverInjection``: :func:`inject_preserved_label_state`.
    """

    revise_replica: object
    prune: object
    split_job_completions: object = None
    apply_overrides: object = None
    stateful_failover_injection: bool = False


def was_applied(work: dict) -> bool:
    """Whether a Work may have a member copy (it has an Applied condition or manifest status)."""
    return get_condition(work, C.COND_APPLIED) is not None or bool((work.get("status") or {}).get("manifestStatuses"))


def work_binding_key(work: dict) -> tuple | None:
    """The key of the binding a Work was rendered from (its Karmada annotations), or None for
    Works no binding owns (namespace sync)."""
    ann = (work.get("metadata") or {}).get("annotations") or {}
    if ann.get(C.RB_NAME_ANNOTATION):
        return ("work.karmada.io", "ResourceBinding", ann.get(C.RB_NAMESPACE_ANNOTATION) or "", ann[C.RB_NAME_ANNOTATION])
    if ann.get(C.CRB_NAME_ANNOTATION):
        return ("work.karmada.io", "ClusterResourceBinding", "", ann[C.CRB_NAME_ANNOTATION])
    return None


def work_records(old: dict | None) -> dict:
    """The annotations of ``old`` that record what karmactl observed on and applied to the member
    (:data:`karmactl.api.constants.WORK_RECORD_ANNOTATIONS`): a Work rendered again keeps them, as
    Karmada's controllers keep their records in memory across renders."""
    annotations = ((old or {}).get("metadata") or {}).get("annotations") or {}
    return {k: annotations[k] for k in C.WORK_RECORD_ANNOTATIONS if k in annotations}


def delete_work(work: dict, now: str) -> dict | None:
    """Request deletion of a Work: None when nothing was ever applied, else the Work marked terminating."""
    if not was_applied(work):
        return None
    if (work.get("metadata") or {}).get("deletionTimestamp"):
        return work
    out = dict(work)
    out["metadata"] = dict(work["metadata"], deletionTimestamp=now)
    return out


def render_hooks(loaded, interpreter=None) -> RenderHooks:
    """The interpreter and override functions Works are rendered with, for one computation over
    ``loaded`` (OverridePolicies and ClusterOverridePolicies of the snapshot, Clusters as they are
    loaded: overrides select clusters by labels and fields, which a pass does not change).
    ``interpreter`` is the run's ``karmactl.interpreter.Interpreter`` (None: the native rules)."""
    from karmactl.controllers.helper.cluster import clusters_of
    from karmactl.interpreter import Interpreter
    from karmactl.overrides import apply_overrides

    ops = loaded.of_kind("policy.karmada.io", "OverridePolicy")
    cops = loaded.of_kind("policy.karmada.io", "ClusterOverridePolicy")
    clusters = {c["metadata"]["name"]: c for c in clusters_of(loaded)}

    def overrides(manifest, cluster_name):
        cluster = clusters.get(cluster_name) or {"metadata": {"name": cluster_name}, "spec": {}}
        ns = (manifest.get("metadata") or {}).get("namespace") or ""
        res = apply_overrides(manifest, cluster, [o for o in ops if o["metadata"].get("namespace") == ns] if ns else [], cops)
        return res.manifest, res.applied_overrides, res.applied_cluster_overrides

    interpreter = interpreter if interpreter is not None else Interpreter()
    return RenderHooks(revise_replica=interpreter.revise_replica,
                       prune=lambda m: interpreter.prune_manifest(m, in_place=True),
                       split_job_completions=interpreter.split_job_completions,
                       apply_overrides=overrides if (ops or cops) else None)


def observed_at(work: dict) -> str | None:
    """When the member first reported the status now in the Work's ``manifestStatuses`` (RFC 3339),
    or None when karmactl has no record."""
    return ((work.get("metadata") or {}).get("annotations") or {}).get(C.OBSERVED_AT_ANNOTATION)
