"""Selecting and applying OverridePolicies and ClusterOverridePolicies for one target cluster.

Follows ``pkg/util/overridemanager/overridemanager.go`` (``ApplyOverridePolicies``,
``getOverridersFromOverridePolicies``), ``pkg/util/overridemanager/shadow.go`` (the applied lists)
and ``pkg/util/selector.go`` (``ResourceSelectorPriority``). Semantics §1.3, §2.2, §9.3.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from karmactl.api.objects import deepcopy
from karmactl.api.selectors import PRIORITY_MISMATCH, cluster_affinity_matches, policy_priority

from .overriders import OverriderError, apply_overriders


# Key order of policyv1alpha1.Overriders, used when recording what was applied.
_OVERRIDER_FIELDS = ("plaintext", "imageOverrider", "commandOverrider", "argsOverrider", "labelsOverrider",
                     "annotationsOverrider", "fieldOverrider")


class OverrideError(Exception):
    """An override rule failed to apply; the message names the policy and the rule.

    Karmada fails only the affected cluster's Work on such an error.
    """


@dataclass
class OverrideResult:
    """Result of :func:`apply_overrides`.

    Attributes:
        manifest: the overridden manifest (a new dict).
        applied_overrides: OverridePolicy items ``[{"policyName", "overriders"}]``, one per applied
            rule, sorted by policy name (stable) — the content of the Work annotation
            ``policy.karmada.io/applied-overrides`` (omit the annotation when empty).
        applied_cluster_overrides: the same for ClusterOverridePolicies
            (``policy.karmada.io/applied-cluster-overrides``).
    """

    manifest: dict
    applied_overrides: list[dict] = field(default_factory=list)
    applied_cluster_overrides: list[dict] = field(default_factory=list)


def _rules(policy: dict) -> list[dict]:
    spec = policy.get("spec") or {}
    rules = spec.get("overrideRules") or []
    if rules:
        return rules
    # The deprecated spec-level pair (webhook forbids mixing it with overrideRules) is one rule.
    return [{"targetCluster": spec.get("targetCluster"), "overriders": spec.get("overriders") or {}}]


def _record(overriders: dict) -> dict:
    """The overriders as Karmada serializes them: Go field order, empty lists left out."""
    return {key: deepcopy(overriders[key]) for key in _OVERRIDER_FIELDS if overriders.get(key)}


def _apply_group(manifest: dict, cluster: dict, policies: list[dict], kind: str) -> tuple[dict, list[dict]]:
    matching = [(policy_priority(p, manifest, empty_matches_all=True), (p.get("metadata") or {}).get("name", ""), p) for p in policies]
    matching = [m for m in matching if m[0] > PRIORITY_MISMATCH]
    # More specific and alphabetically later policies go last, so they win on conflicts.
    matching.sort(key=lambda m: (m[0], m[1]))
    applied: list[dict] = []
    for _, name, policy in matching:
        namespace = (policy.get("metadata") or {}).get("namespace")
        label = f"{kind}({namespace + '/' if namespace else ''}{name})"
        for index, rule in enumerate(_rules(policy)):
            target = rule.get("targetCluster")
            if target is not None and not cluster_affinity_matches(target, cluster):
                continue
            overriders = rule.get("overriders") or {}
            try:
                manifest = apply_overriders(manifest, overriders)
            except OverriderError as err:
                raise OverrideError(f"failed to apply {label} overrideRules[{index}] to cluster "
                                    f"{cluster['metadata']['name']}: {err}") from None
            applied.append({"policyName": name, "overriders": _record(overriders)})
    applied.sort(key=lambda item: item["policyName"])  # stable: rules of one policy keep their order
    return manifest, applied


def apply_overrides(manifest: dict, cluster: dict, override_policies: list[dict],
                    cluster_override_policies: list[dict]) -> OverrideResult:
    """Apply every matching ClusterOverridePolicy, then OverridePolicy, to ``manifest`` for ``cluster``.

    Follows ``pkg/util/overridemanager/overridemanager.go`` (``ApplyOverridePolicies``).

    Selection (§9.3): a policy applies when it has no ``resourceSelectors`` or one of them matches
    (§2.2). OverridePolicies are used only for namespaced manifests and only from the manifest's
    namespace (others in the list are ignored). Each group is sorted by implicit priority
    (match-all < labelSelector < name) then by name; COPs all go before OPs, so an OP wins over a
    COP. Within a policy, ``overrideRules`` are walked in order and each rule whose
    ``targetCluster`` is absent or matches the cluster is applied, its overriders in the order
    image, command, args, labels, annotations, field, plaintext.

    Args:
        manifest: the rendered manifest for this cluster (not modified).
        cluster: the target Cluster object (name, labels and spec are used for ``targetCluster``).
        override_policies: OverridePolicy objects (any namespaces).
        cluster_override_policies: ClusterOverridePolicy objects.

    Returns:
        An :class:`OverrideResult`.

    Raises:
        OverrideError: a rule failed (bad JSON patch, unparseable image, field not a string...).
    """
    out = deepcopy(manifest)
    out, applied_cluster = _apply_group(out, cluster, list(cluster_override_policies or []),
                                        "ClusterOverridePolicy")
    applied: list[dict] = []
    namespace = (manifest.get("metadata") or {}).get("namespace") or ""
    if namespace:
        ops = [p for p in override_policies or [] if ((p.get("metadata") or {}).get("namespace") or "") == namespace]
        out, applied = _apply_group(out, cluster, ops, "OverridePolicy")
    return OverrideResult(manifest=out, applied_overrides=applied, applied_cluster_overrides=applied_cluster)
