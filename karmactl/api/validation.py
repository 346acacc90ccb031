"""Validate objects as Karmada's API server and admission webhooks would, before karmactl uses them.

:func:`validate_object` checks, in this order:

1. the input aliases (:func:`karmactl.api.defaults.normalize_aliases`: both spellings set at once);
2. generic object checks for every kind (``apiVersion``/``kind``/``metadata.name`` present, the name
   a DNS-1123 subdomain — a DNS-1123 label of at most 48 characters for Clusters, a DNS-1123 label for
   Namespaces —, ``metadata.namespace`` only on namespaced kinds, labels and annotations as
   Kubernetes' ``ValidateObjectMeta``);
3. for Karmada's kinds, the CRD schema of ``spec`` (:mod:`karmactl.api.validation_schema`: required,
   types, enums, minimums, lengths, patterns, unknown fields) and the webhook rules
   (:mod:`karmactl.api.validation_rules`, docs/karmada-semantics.md §12).

Validation runs on what the validating webhook would see, i.e. the object after alias
normalization and :func:`karmactl.api.defaults.default_object`, so raw and defaulted input give the
same answer (a PropagationPolicy without a permanent-id label or an application failover without
``gracePeriodSeconds`` is not an error: the mutating webhook fills them). ``status`` is not
validated (karmactl writes it), except a Cluster's: people write it for offline what-ifs, and every
field of it karmactl reads is checked (:data:`karmactl.api.validation_schema.CLUSTER_STATUS`). Two
built-in kinds get karmactl's own checks besides their OpenAPI schema: the karmactl-config
ConfigMap (every setting parses) and CustomResourceDefinitions (the fields that define a kind). UPDATE-only rules (immutable ``schedulerName`` and permanent-id
label) need the old object and are not checked here.
"""
from __future__ import annotations

from typing import Callable

from karmactl.api.defaults import default_object, normalize_aliases
from karmactl.api.kinds import KindInfo, KindRegistry, group_of
from karmactl.api.validation_fields import (
    FieldError, check_annotations, check_labels, dns1123_label, dns1123_subdomain, forbidden, invalid,
    not_supported, required, unknown_field, wrong_type,
)
from karmactl.api import validation_rules as rules
from karmactl.api.snapshot import Settings, SettingsError
from karmactl.api.validation_schema import CLUSTER_STATUS, SPEC_SCHEMAS
from karmactl.api.validation_workloads import workload_errors

__all__ = ["FieldError", "validate_object", "validate_defaulted"]

_TOP_LEVEL_FIELDS = ("apiVersion", "kind", "metadata", "spec", "status")


def validate_object(obj: dict, registry: KindRegistry) -> list[FieldError]:
    """All problems of one object as loaded from YAML; ``[]`` when valid.

    Args:
        obj: the object (a dict; anything else is one error at path ``""``).
        registry: the known kinds, for scope (namespaced or not) and accepted versions. Kinds the
            registry does not know get the generic checks only.

    Returns:
        FieldErrors in a stable order, without duplicates.
    """
    if not isinstance(obj, dict):
        return [FieldError("", f"Invalid value: must be an object, not {type(obj).__name__}")]
    normalized, errs = normalize_aliases(obj)
    return validate_defaulted(default_object(normalized), registry, errs)


def validate_defaulted(target: dict, registry: KindRegistry, errs: list[FieldError] | None = None) -> list[FieldError]:
    """:func:`validate_object` for an object already alias-normalised and defaulted (no copies made).

    Args:
        target: the output of ``default_object(normalize_aliases(obj)[0])``.
        errs: errors already found (e.g. by alias normalisation), kept first.
    """
    errs = list(errs or [])
    info = _kind_info(target, registry, errs)
    if target.get("kind") == "ResourceInterpreterWebhookConfiguration" and \
            group_of(str(target.get("apiVersion") or "")) == "config.karmada.io":
        # a CRD in the state directory may make the kind known; karmactl still calls no webhooks
        errs.append(FieldError("kind", "Unsupported value: resource interpreter webhooks are not supported by "
                                       "karmactl (it calls no webhooks): interpret the kind with a "
                                       "ResourceInterpreterCustomization (Lua) instead"))
    if info is not None and (info.group, info.kind) == ("events.k8s.io", "Event"):
        # Events are history a run records under computed/events/ (karmactl/store/events.py)
        return [FieldError("kind", 'Invalid value: "Event": Events are recorded by karmactl runs '
                                   '(computed/events/), they cannot be written in the state directory')]
    errs += _metadata_errors(target, info)
    if info is not None and (info.group, info.kind) == ("", "ConfigMap"):
        errs += _settings_errors(target)
    elif info is not None and (info.group, info.kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        errs += rules.crd_errors(target)
    if info is not None and info.karmada:
        errs += _karmada_errors(target, info)
    elif info is not None:
        errs += workload_errors(target, info.group, info.kind)
    return _unique(errs)


def _settings_errors(obj: dict) -> list[FieldError]:
    """The karmactl-config ConfigMap (``karmada-system/karmactl-config``): every value karmactl reads
    must parse (:meth:`karmactl.api.snapshot.Settings.from_data`), so that what ``apply`` accepts a
    run can use; other ConfigMaps are data."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    if ("", "ConfigMap", meta.get("namespace"), meta.get("name")) != Settings.SETTINGS_KEY:
        return []
    data = obj.get("data")
    if not isinstance(data, dict):
        return []  # the ConfigMap schema reports a data that is not a map of strings
    try:
        Settings.from_data(dict(data))
    except SettingsError as exc:
        return [FieldError(f"data.{exc.field}", exc.detail)]
    return []


def _unique(errs: list[FieldError]) -> list[FieldError]:
    seen: set = set()
    out = []
    for e in errs:
        if e not in seen:
            seen.add(e)
            out.append(e)
    return out


def _kind_info(obj: dict, registry: KindRegistry, errs: list[FieldError]) -> KindInfo | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    for name, value in (("apiVersion", api_version), ("kind", kind)):
        if value is None or value == "":
            errs.append(required(name))
        elif not isinstance(value, str):
            errs.append(wrong_type(name, value, "string"))
    if not (isinstance(api_version, str) and api_version and isinstance(kind, str) and kind):
        return None
    info = registry.for_object(api_version, kind)
    if info is None:
        known = registry.by_group_kind(group_of(api_version), kind)
        if known is not None:
            # The kind exists but not in this version (e.g. policy.karmada.io/v1beta1).
            supported = [f"{known.group}/{v}" if known.group else v for v in known.versions]
            errs.append(not_supported("apiVersion", api_version, supported))
    return info


def _metadata_errors(obj: dict, info: KindInfo | None) -> list[FieldError]:
    """``ValidateObjectMeta`` for create: name, namespace scope, labels, annotations."""
    meta = obj.get("metadata")
    if meta is None:
        return [required("metadata.name", "name or generateName is required")]
    if not isinstance(meta, dict):
        return [wrong_type("metadata", meta, "object")]
    errs: list[FieldError] = []
    name = meta.get("name")
    if name is None or name == "":
        errs.append(required("metadata.name", "name or generateName is required"))
    elif not isinstance(name, str):
        errs.append(wrong_type("metadata.name", name, "string"))
    else:
        if info is not None and info.kind == "Cluster" and info.group == "cluster.karmada.io":
            msgs = rules.cluster_name_errors(name)
        elif info is not None and info.kind == "Namespace" and info.group == "":
            msgs = dns1123_label(name)
        else:
            msgs = dns1123_subdomain(name)
        errs += [invalid("metadata.name", name, m) for m in msgs]

    namespace = meta.get("namespace")
    if info is not None and not info.namespaced:
        if namespace:
            errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    elif namespace is not None and namespace != "":
        if not isinstance(namespace, str):
            errs.append(wrong_type("metadata.namespace", namespace, "string"))
        else:
            errs += [invalid("metadata.namespace", namespace, m) for m in dns1123_label(namespace)]

    errs += check_labels(meta.get("labels"), "metadata.labels")
    errs += check_annotations(meta.get("annotations"), "metadata.annotations")
    return errs


def _karmada_errors(obj: dict, info: KindInfo) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in obj:
        if name not in _TOP_LEVEL_FIELDS:
            errs.append(unknown_field(str(name)))
    entry = SPEC_SCHEMAS.get((info.group, info.kind))
    if entry is None:
        return errs
    schema, spec_required = entry
    spec = obj.get("spec")
    if spec is None:
        if spec_required:
            errs.append(required("spec"))
        if info.kind != "MultiClusterIngress":
            return errs
        spec = {}
    schema.check(spec, "spec", errs)
    if not isinstance(spec, dict):
        return errs

    namespace = (obj.get("metadata") or {}).get("namespace") if isinstance(obj.get("metadata"), dict) else None
    spec_rules = _SPEC_RULES.get(info.kind)
    if spec_rules is not None:
        errs += spec_rules(obj, spec, namespace)
    return errs


# The rules of a Karmada kind's spec beyond its schema (karmactl.api.validation_rules), each
# (object, spec dict, metadata.namespace or None) -> errors: _karmada_errors.

def _cluster_errors(obj: dict, spec: dict, namespace: str | None) -> list[FieldError]:
    errs = rules.cluster_spec_errors(spec)
    if obj.get("status") is not None:
        CLUSTER_STATUS.check(obj["status"], "status", errs)
    return errs


def _binding_errors(obj: dict, spec: dict, namespace: str | None) -> list[FieldError]:
    return rules.binding_errors(obj) + rules.suspension_errors(spec.get("suspension"))


def _work_errors(obj: dict, spec: dict, namespace: str | None) -> list[FieldError]:
    manifests = spec.get("workload", {}).get("manifests") if isinstance(spec.get("workload"), dict) else None
    return [wrong_type(f"spec.workload.manifests[{i}]", manifest, "object")
            for i, manifest in enumerate(manifests if isinstance(manifests, list) else [])
            if manifest is not None and not isinstance(manifest, dict)]


_SPEC_RULES: dict[str, Callable[[dict, dict, str | None], list[FieldError]]] = {
    "PropagationPolicy": lambda obj, spec, ns: rules.propagation_spec_errors(spec, ns or "default"),
    "ClusterPropagationPolicy": lambda obj, spec, ns: rules.propagation_spec_errors(spec, None),
    "OverridePolicy": lambda obj, spec, ns: rules.override_spec_errors(spec, ns or "default"),
    "ClusterOverridePolicy": lambda obj, spec, ns: rules.override_spec_errors(spec, None),
    "Cluster": _cluster_errors,
    "ClusterTaintPolicy": lambda obj, spec, ns: rules.cluster_taint_policy_errors(spec),
    "ResourceBinding": _binding_errors,
    "ClusterResourceBinding": _binding_errors,
    "Work": _work_errors,
    "MultiClusterIngress": lambda obj, spec, ns: rules.ingress_spec_errors(spec),
    "MultiClusterService": lambda obj, spec, ns: rules.multicluster_service_errors(obj),
    "ResourceInterpreterCustomization": lambda obj, spec, ns: rules.customization_spec_errors(spec),
    "FederatedResourceQuota": lambda obj, spec, ns: rules.federated_resource_quota_errors(
        (obj.get("metadata") or {}).get("name"), spec),
}
