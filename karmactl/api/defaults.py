"""Input aliases (design-document spellings) and the defaulting Karmada applies on admission.

:func:`normalize_aliases` rewrites the proposals' spellings into Karmada's (DESIGN §3.3);
:func:`default_object` applies the mutating webhooks (``pkg/webhook/propagationpolicy/mutating.go``,
``.../clusterpropagationpolicy/mutating.go``, ``.../overridepolicy/mutating.go``,
``.../resourcebinding/mutating.go``, the Work webhook's ``mutating.go``, helpers in ``pkg/util/helper/policy.go``),
the CRD schema defaults (docs/karmada-semantics.md §13) and the Cluster strategy of the aggregated
API server (``pkg/apis/cluster/mutation/mutation.go``). Both are pure and return new dicts.

Run order on load: ``normalize_aliases`` -> ``default_object`` -> ``validate_object``.
"""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.kinds import BUILTIN_KINDS, KindInfo, group_of
from karmactl.api.objects import deepcopy, permanent_id
from karmactl.api.validation_fields import FieldError

# Not a Karmada label (Karmada gives OverridePolicies no permanent id); karmactl names COPs like OPs.
COP_PERMANENT_ID_LABEL = "clusteroverridepolicy.karmada.io/permanent-id"

PERMANENT_ID_LABELS = {
    "PropagationPolicy": C.PP_PERMANENT_ID_LABEL,
    "ClusterPropagationPolicy": C.CPP_PERMANENT_ID_LABEL,
    "OverridePolicy": C.OP_PERMANENT_ID_LABEL,
    "ClusterOverridePolicy": COP_PERMANENT_ID_LABEL,
    "ResourceBinding": C.RB_PERMANENT_ID_LABEL,
    "ClusterResourceBinding": C.CRB_PERMANENT_ID_LABEL,
    "Work": C.WORK_PERMANENT_ID_LABEL,
    # pkg/webhook/multiclusterservice/mutating.go
    "MultiClusterService": "multiclusterservice.karmada.io/permanent-id",
}

PURGE_MODE_ALIASES = {"Immediately": "Directly", "Graciously": "Gracefully"}
DEFAULT_GRACE_PERIOD_SECONDS = 600           # helper.SetDefaultGracePeriodSeconds
DEFAULT_TOLERATION_SECONDS = 300             # CRD default of decisionConditions.tolerationSeconds
DEFAULT_BLOCK_PREDECESSOR_SECONDS = 600      # proposal application-failover.md (+kubebuilder:default=600)
MAX_INT64 = "9223372036854775807"

_KINDS = {(k.group, k.kind): k for k in BUILTIN_KINDS}
_POLICY_KINDS = ("PropagationPolicy", "ClusterPropagationPolicy")
_BINDING_KINDS = ("ResourceBinding", "ClusterResourceBinding")


def _karmada_kind(obj: dict) -> str | None:
    """The kind if ``obj`` is one of Karmada's built-in kinds, else None."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    info = _KINDS.get((group_of(api_version), kind))
    return kind if info is not None and info.karmada else None


# --- aliases ----------------------------------------------------------------------------------

# (alias holder, alias name) -> canonical name inside spec.suspension
_SUSPENSION_ALIASES = (
    ("suspendDispatching", "dispatching"),
    ("suspendDispatchingOnClusters", "dispatchingOnClusters"),
)


def normalize_aliases(obj: dict, copy: bool = True) -> tuple[dict, list[FieldError]]:
    """Rewrite the design documents' spellings into Karmada's; a new dict is returned (with
    ``copy=False`` the caller hands ``obj`` over and it may be rewritten in place instead).

    Aliases (DESIGN §3.3), on PropagationPolicy, ClusterPropagationPolicy and (Cluster)ResourceBinding:

    * ``spec.failover.{application,cluster}.purgeMode``: ``Immediately`` -> ``Directly``,
      ``Graciously`` -> ``Gracefully``;
    * ``spec.suspension.suspendDispatching`` and ``spec.suspendDispatching`` -> ``spec.suspension.dispatching``;
    * ``spec.suspension.suspendDispatchingOnClusters`` and ``spec.suspendDispatchingOnClusters`` ->
      ``spec.suspension.dispatchingOnClusters`` (same ``{clusterNames: [...]}`` shape).

    Work's ``spec.suspendDispatching`` is Karmada's own spelling and is left alone.

    Returns:
        ``(normalized, errors)``; an error names both fields when two spellings of one field are
        set (path: Karmada's spelling). The canonical spelling's value is kept then.
    """
    errors: list[FieldError] = []
    if not isinstance(obj, dict) or _karmada_kind(obj) not in _POLICY_KINDS + _BINDING_KINDS:
        # nothing to rewrite: a shallow copy keeps the "new dict" contract without a deep copy
        return (dict(obj) if isinstance(obj, dict) else obj), errors
    out = deepcopy(obj) if copy else obj
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return out, errors

    failover = spec.get("failover")
    if isinstance(failover, dict):
        for part in ("application", "cluster"):
            behavior = failover.get(part)
            if isinstance(behavior, dict) and behavior.get("purgeMode") in PURGE_MODE_ALIASES:
                behavior["purgeMode"] = PURGE_MODE_ALIASES[behavior["purgeMode"]]

    suspension = spec.get("suspension")
    for alias, canonical in _SUSPENSION_ALIASES:
        found = []  # (path, value) of every spelling present, canonical first
        if isinstance(suspension, dict) and suspension.get(canonical) is not None:
            found.append((f"spec.suspension.{canonical}", suspension[canonical]))
        if isinstance(suspension, dict) and suspension.get(alias) is not None:
            found.append((f"spec.suspension.{alias}", suspension[alias]))
        if spec.get(alias) is not None:
            found.append((f"spec.{alias}", spec[alias]))
        if len(found) > 1:
            names = " and ".join(f'"{p}"' for p, _ in found)
            errors.append(FieldError(f"spec.suspension.{canonical}",
                                     f"Invalid value: {names} are spellings of the same field; set only one of them"))
        if isinstance(suspension, dict):
            suspension.pop(alias, None)
        spec.pop(alias, None)
        if found:
            if not isinstance(suspension, dict):
                suspension = spec["suspension"] = {}
            suspension[canonical] = found[0][1]
    return out, errors


# --- defaulting -------------------------------------------------------------------------------

def default_object(obj: dict, copy: bool = True) -> dict:
    """Apply Karmada's admission defaulting; returns a new dict, the input is not touched (with
    ``copy=False`` the caller hands ``obj`` over and Karmada's kinds are defaulted in place).

    Idempotent: ``default_object(default_object(x)) == default_object(x)``. Values of the wrong
    type are left as they are for validation to report.

    * every built-in namespaced kind: ``metadata.namespace`` := ``default`` when missing;
    * Secret: ``stringData`` folded into ``data``, as the API server stores a Secret;
    * PropagationPolicy / ClusterPropagationPolicy: see :func:`_default_propagation`;
    * OverridePolicy: empty selector namespaces := the policy namespace;
    * policies, bindings, Works and MultiClusterServices: the permanent-id label (``permanent_id(kind, namespace, name)``,
      deterministic instead of Karmada's random UUID, DESIGN §3.5) when missing;
    * (Cluster)ResourceBinding: CRD defaults (``conflictResolution: Abort``,
      ``schedulePriority.priority: 0``, placement and failover defaults of the policy CRD);
    * Cluster: a lone ``zone`` moved to ``zones``; ``resourceModels`` defaulted to the nine grades
      of ``SetDefaultClusterResourceModels`` when empty, otherwise standardized (sorted by grade,
      first grade's mins 0, last grade's maxes MaxInt64). NoExecute taints are *not* stamped with
      ``timeAdded`` here (that needs the clock; the taint controller stamps them with the run's now).
    """
    if not isinstance(obj, dict):
        return deepcopy(obj)
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    info = _KINDS.get((group_of(api_version), kind)) if isinstance(api_version, str) and isinstance(kind, str) else None
    if info is None or not info.karmada:
        return _default_template(obj, info)
    out = deepcopy(obj) if copy else obj
    meta = out.get("metadata")
    if info.namespaced and isinstance(meta, dict) and not meta.get("namespace"):
        meta["namespace"] = "default"

    namespace = meta.get("namespace") if isinstance(meta, dict) and info.namespaced else None
    spec = out.get("spec")
    if kind in PERMANENT_ID_LABELS:
        _default_permanent_id(out, kind, namespace)
    if not isinstance(spec, dict):
        return out
    if kind in _POLICY_KINDS:
        _default_propagation(spec, namespace if kind == "PropagationPolicy" else None)
    elif kind == "OverridePolicy":
        _default_selector_namespaces(spec, namespace)
    elif kind in _BINDING_KINDS:
        _default_binding(spec)
    elif kind == "Cluster":
        _default_cluster(spec)
    return out


def _default_template(obj: dict, info: KindInfo | None) -> dict:
    """:func:`default_object` of a resource template (``info``: its built-in kind, None when
    unknown): only a namespace, and a Secret's ``stringData`` folded. Copies just the top level
    and metadata (no deep copy of the spec, which is the bulk of a 10,000-template run)."""
    out = dict(obj)
    meta = out.get("metadata")
    if info is not None and info.namespaced and isinstance(meta, dict) and not meta.get("namespace"):
        out["metadata"] = dict(meta, namespace="default")
    if (obj.get("apiVersion"), obj.get("kind")) == ("v1", "Secret"):
        _fold_string_data(out)
    return out


def _default_binding(spec: dict) -> None:
    """The CRD defaults of a (Cluster)ResourceBinding's spec, in place: ``conflictResolution: Abort``,
    ``schedulePriority.priority: 0``, the placement's replica scheduling type and failover defaults."""
    _set(spec, "conflictResolution", "Abort")
    if isinstance(spec.get("schedulePriority"), dict):
        _set(spec["schedulePriority"], "priority", 0)
    if isinstance(spec.get("placement"), dict):
        _default_replica_scheduling_type(spec["placement"])
    _default_failover(spec.get("failover"))


def _fold_string_data(secret: dict) -> None:
    """A Secret's ``stringData`` folded into ``data`` (base64), as the API server stores it
    (``pkg/apis/core/v1/conversion.go``): Karmada's resource template, and so the Work manifest,
    never carries ``stringData``. Wrongly typed values are left for validation to report."""
    import base64

    string_data = secret.get("stringData")
    if not isinstance(string_data, dict) or not all(isinstance(v, str) for v in string_data.values()):
        return
    data = secret.get("data")
    if data is not None and not isinstance(data, dict):
        return
    data = dict(data or {})
    for key, value in string_data.items():
        data[key] = base64.b64encode(value.encode("utf-8")).decode("ascii")
    secret.pop("stringData")
    secret["data"] = data


def _set(holder: dict, name: str, value) -> None:
    """A CRD default: applied when the field is absent or null."""
    if holder.get(name) is None:
        holder[name] = value


def _default_permanent_id(obj: dict, kind: str, namespace: str | None) -> None:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        return
    if meta.get("labels") is None:
        meta["labels"] = {}
    labels = meta["labels"]
    if isinstance(labels, dict) and not labels.get(PERMANENT_ID_LABELS[kind]):
        parts = (kind, namespace, meta["name"]) if namespace else (kind, meta["name"])
        labels[PERMANENT_ID_LABELS[kind]] = permanent_id(*parts)


def _default_selector_namespaces(spec: dict, namespace: str | None) -> None:
    if not namespace:
        return
    selectors = spec.get("resourceSelectors")
    for sel in selectors if isinstance(selectors, list) else []:
        if isinstance(sel, dict) and not sel.get("namespace"):
            sel["namespace"] = namespace


def _default_propagation(spec: dict, namespace: str | None) -> None:
    """PP/CPP mutating webhook plus CRD defaults.

    Selector namespaces (PP only); ``propagateDeps: true`` when a ServiceImport is selected; spread
    constraints (``spreadByField: cluster`` when neither field nor label, ``minGroups: 1`` when 0);
    ``replicaSchedulingType: Divided`` when ``replicaScheduling`` is present and Divided without a
    preference -> ``Weighted``; ``conflictResolution: Abort``, ``preemption: Never``, ``priority: 0``,
    ``schedulerName: default-scheduler``; failover defaults (:func:`_default_failover`).
    """
    _default_selector_namespaces(spec, namespace)
    selectors = spec.get("resourceSelectors") if isinstance(spec.get("resourceSelectors"), list) else []
    if any(isinstance(s, dict) and s.get("apiVersion") == "multicluster.x-k8s.io/v1alpha1"
           and s.get("kind") == "ServiceImport" for s in selectors):
        spec["propagateDeps"] = True
    placement = spec.get("placement")
    if isinstance(placement, dict):
        constraints = placement.get("spreadConstraints")
        for c in constraints if isinstance(constraints, list) else []:
            if not isinstance(c, dict):
                continue
            if not c.get("spreadByLabel") and not c.get("spreadByField"):
                c["spreadByField"] = "cluster"
            min_groups = c.get("minGroups")
            if min_groups is None or (type(min_groups) is int and min_groups == 0):
                c["minGroups"] = 1
        _default_replica_scheduling_type(placement)
        rs = placement.get("replicaScheduling")
        if isinstance(rs, dict) and rs.get("replicaSchedulingType") == "Divided" and not rs.get("replicaDivisionPreference"):
            rs["replicaDivisionPreference"] = "Weighted"
    _set(spec, "conflictResolution", "Abort")
    _set(spec, "preemption", "Never")
    _set(spec, "priority", 0)
    _set(spec, "schedulerName", C.DEFAULT_SCHEDULER_NAME)
    _default_failover(spec.get("failover"))


def _default_replica_scheduling_type(placement: dict) -> None:
    if isinstance(placement.get("replicaScheduling"), dict):
        _set(placement["replicaScheduling"], "replicaSchedulingType", "Divided")


def _default_failover(failover) -> None:
    """CRD defaults and ``SetDefaultGracePeriodSeconds``; blockPredecessorSeconds from the proposal.

    Only objects that are present get defaults (structural-schema defaulting): a missing
    ``decisionConditions`` stays missing and is reported as required.
    """
    if not isinstance(failover, dict):
        return
    app = failover.get("application")
    if isinstance(app, dict):
        if isinstance(app.get("decisionConditions"), dict):
            _set(app["decisionConditions"], "tolerationSeconds", DEFAULT_TOLERATION_SECONDS)
        _set(app, "purgeMode", "Gracefully")
        # The alias is accepted here too, so defaulting before normalize_aliases gives the same result.
        if app.get("purgeMode") in ("Gracefully", "Graciously"):
            _set(app, "gracePeriodSeconds", DEFAULT_GRACE_PERIOD_SECONDS)
        _set(app, "blockPredecessorSeconds", DEFAULT_BLOCK_PREDECESSOR_SECONDS)
    cluster = failover.get("cluster")
    if isinstance(cluster, dict):
        _set(cluster, "purgeMode", "Gracefully")


# --- Cluster ----------------------------------------------------------------------------------

_CPU_BOUNDS = ("0", "1", "2", "4", "8", "16", "32", "64", "128", MAX_INT64)
_MEMORY_BOUNDS = ("0", "4Gi", "16Gi", "32Gi", "64Gi", "128Gi", "256Gi", "512Gi", "1024Gi", MAX_INT64)


def default_resource_models() -> list[dict]:
    """The nine grades of ``SetDefaultClusterResourceModels`` (cpu and memory ranges per grade)."""
    return [
        {"grade": g, "ranges": [
            {"name": "cpu", "min": _CPU_BOUNDS[g], "max": _CPU_BOUNDS[g + 1]},
            {"name": "memory", "min": _MEMORY_BOUNDS[g], "max": _MEMORY_BOUNDS[g + 1]},
        ]}
        for g in range(9)
    ]


def _default_cluster(spec: dict) -> None:
    # migrateZoneToZones: a lone zone becomes the only entry of zones.
    if spec.get("zone") and not spec.get("zones"):
        spec["zones"] = [spec.pop("zone")]
    models = spec.get("resourceModels")
    if models is None or models == []:
        spec["resourceModels"] = default_resource_models()
    elif isinstance(models, list) and all(isinstance(m, dict) for m in models):
        # StandardizeClusterResourceModels: sort by grade, open both ends of the scale.
        # A stable sort; grades of the wrong type go last, untouched, for validation to report.
        models.sort(key=lambda m: (0, m["grade"]) if type(m.get("grade")) is int else (1, 0))
        for model, bound, value in ((models[0], "min", "0"), (models[-1], "max", MAX_INT64)):
            ranges = model.get("ranges")
            for rng in ranges if isinstance(ranges, list) else []:
                if isinstance(rng, dict):
                    rng[bound] = value
