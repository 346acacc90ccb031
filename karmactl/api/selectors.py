"""Selector matching shared by the detector, scheduler, overrides, remedy and taint controllers.

* Kubernetes label selectors (``matchLabels`` + ``matchExpressions``), ``k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go``.
* Karmada cluster affinity (``pkg/util/cluster.go`` ``ClusterMatches``) with the field selector on
  ``provider``/``region``/``zone``.
* Toleration matching as ``k8s.io/api/core/v1/toleration.go`` (no Lt/Gt), used by the
  TaintToleration plugin and the taint manager.
"""
from __future__ import annotations


def label_selector_matches(selector: dict | None, labels: dict | None) -> bool:
    """Whether a LabelSelector matches ``labels``.

    ``None`` is handled by the caller (Karmada treats a nil selector differently per place);
    here ``None`` or ``{}`` matches everything. An invalid operator matches nothing.
    """
    labels = labels or {}
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        if not requirement_matches(expr, labels):
            return False
    return True


def requirement_matches(expr: dict, labels: dict) -> bool:
    """One ``{key, operator, values}`` requirement (In, NotIn, Exists, DoesNotExist, Gt, Lt)."""
    key = expr.get("key")
    op = expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(values) == 1:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _field_matches(expr: dict, spec: dict) -> bool:
    key = expr.get("key")
    op = expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    if key == "zone":
        zones = list(spec.get("zones") or ([spec["zone"]] if spec.get("zone") else []))
        if op == "In":
            return any(z in values for z in zones)
        if op == "NotIn":
            return not any(z in values for z in zones)
        if op == "Exists":
            return bool(zones)
        if op == "DoesNotExist":
            return not zones
        return False
    fields = {k: spec[k] for k in ("provider", "region") if spec.get(k)}
    return requirement_matches(expr, fields)


def cluster_affinity_matches(affinity: dict | None, cluster: dict) -> bool:
    """Karmada ``util.ClusterMatches``: exclude, labelSelector, fieldSelector and clusterNames, ANDed.

    Args:
        affinity: a ClusterAffinity ``{labelSelector, fieldSelector, clusterNames, exclude}``;
            ``None`` matches every cluster.
        cluster: a Cluster object (``metadata.name``, ``metadata.labels``, ``spec``).
    """
    if affinity is None:
        return True
    name = cluster["metadata"]["name"]
    if name in (affinity.get("exclude") or []):
        return False
    selector = affinity.get("labelSelector")
    if selector is not None and not label_selector_matches(selector, cluster["metadata"].get("labels")):
        return False
    field_selector = affinity.get("fieldSelector")
    if field_selector is not None:
        spec = cluster.get("spec") or {}
        for expr in field_selector.get("matchExpressions") or []:
            if not _field_matches(expr, spec):
                return False
    names = affinity.get("clusterNames") or []
    return not names or name in names


def toleration_tolerates(toleration: dict, taint: dict) -> bool:
    """Whether one toleration tolerates one taint (Kubernetes rules, comparison operators disabled)."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    op = toleration.get("operator") or "Equal"
    if not key:
        return op == "Exists"
    if key != taint.get("key"):
        return False
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def taint_string(taint: dict) -> str:
    """``key=value:Effect`` or ``key:Effect`` as Karmada prints an untolerated taint."""
    value = taint.get("value")
    head = f"{taint.get('key')}={value}" if value else f"{taint.get('key')}"
    return f"{head}:{taint.get('effect')}"


# Implicit priority of a ResourceSelector for an object (``pkg/util/selector.go``,
# ``ResourceSelectorPriority``; semantics §2.2), shared by the detector and the override manager.
PRIORITY_MISMATCH = 0
PRIORITY_MATCH_ALL = 1
PRIORITY_LABEL_SELECTOR = 2
PRIORITY_NAME = 3


def strict_selector_matches(selector: dict | None, labels: dict | None) -> bool:
    """:func:`label_selector_matches` after ``metav1.LabelSelectorAsSelector``'s checks: an
    operator other than In, NotIn, Exists, DoesNotExist, In/NotIn without values or Exists/
    DoesNotExist with values make the selector invalid, and an invalid selector matches nothing."""
    for expr in (selector or {}).get("matchExpressions") or []:
        op = expr.get("operator")
        values = expr.get("values") or []
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
        if (op in ("In", "NotIn")) != bool(values):
            return False
    return label_selector_matches(selector, labels)


def selector_priority(selector: dict, obj: dict) -> int:
    """Implicit priority of one ResourceSelector for ``obj``: :data:`PRIORITY_NAME` (3) when it
    names the object, :data:`PRIORITY_LABEL_SELECTOR` (2) when its labelSelector matches,
    :data:`PRIORITY_MATCH_ALL` (1) when it selects the whole kind (in its namespace, if set), else
    :data:`PRIORITY_MISMATCH` (0)."""
    if selector.get("apiVersion") != obj.get("apiVersion") or selector.get("kind") != obj.get("kind"):
        return PRIORITY_MISMATCH
    md = obj.get("metadata") or {}
    if selector.get("namespace") and selector["namespace"] != (md.get("namespace") or ""):
        return PRIORITY_MISMATCH
    if selector.get("name"):
        return PRIORITY_NAME if selector["name"] == md.get("name") else PRIORITY_MISMATCH
    if selector.get("labelSelector") is None:
        return PRIORITY_MATCH_ALL
    return PRIORITY_LABEL_SELECTOR if strict_selector_matches(selector["labelSelector"], md.get("labels")) \
        else PRIORITY_MISMATCH


def policy_priority(policy: dict, obj: dict, *, empty_matches_all: bool = False) -> int:
    """Implicit priority of a policy for ``obj``: the best of its ``spec.resourceSelectors``.

    Args:
        empty_matches_all: a policy without selectors selects everything (OverridePolicies,
            whose ``resourceSelectors`` are optional); otherwise it selects nothing
            (PropagationPolicies, which the webhook requires to have selectors).
    """
    selectors = (policy.get("spec") or {}).get("resourceSelectors") or []
    if not selectors:
        return PRIORITY_MATCH_ALL if empty_matches_all else PRIORITY_MISMATCH
    return max(selector_priority(s, obj) for s in selectors)
