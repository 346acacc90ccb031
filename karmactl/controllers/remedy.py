"""Remedy controller: ``cluster.status.remedyActions`` from Remedies and Cluster conditions.

Follows Karmada's ``pkg/controllers/remediation/remedy_controller.go`` and ``util.go``
(docs/karmada-semantics.md §7.1, §1.6) and the design document
``docs/proposals/remedy-cluster-status-based-policy.md`` ("Policy control", "Controller logic").

For every Cluster (a Cluster being deleted is left as it is, as upstream skips it):

1. the Remedies that select it: ``spec.clusterAffinity`` absent (None) selects every cluster; present,
   it selects the clusters in ``clusterNames`` (present with no names: none);
2. of those, the Remedies that fire: ``spec.decisionMatches`` absent fires at once; an explicit
   ``[]`` never fires (upstream's non-nil empty slice); otherwise any entry whose
   ``clusterConditionMatch`` matches a condition of the cluster (``Equal``: the condition's status
   equals ``conditionStatus``; ``NotEqual``: it differs; a missing condition type never matches;
   entries without ``clusterConditionMatch`` and unknown operators are skipped);
3. ``status.remedyActions`` = the sorted, de-duplicated union of the firing Remedies' ``spec.actions``
   (the field is removed when the union is empty).

karmactl also records which Remedies produced each action in the Cluster overlay's private
``observed.remedySources`` (``{action: [remedy names, sorted]}``, removed when empty), which
``describe cluster`` shows; the design document leaves this open ("Do we need to record which Remedy
a certain RemedyAction comes from?").

Conditions are read from the Cluster as the control plane sees it: the overlay's status (probes,
``karmactl cluster condition set``, condition detection) or, without one, the file's.
"""
from __future__ import annotations

from karmactl.api.objects import deepcopy
from karmactl.api.templates import new_overlay
from karmactl.controllers.helper.cluster import effective_status

REMEDY_GROUP, REMEDY_KIND = "remedy.karmada.io", "Remedy"
CLUSTER_GROUP, CLUSTER_KIND = "cluster.karmada.io", "Cluster"
SOURCES_KEY = "remedySources"

OPERATOR_EQUAL = "Equal"
OPERATOR_NOT_EQUAL = "NotEqual"


def remedy_selects(remedy: dict, cluster_name: str) -> bool:
    """Whether ``remedy`` pays attention to the cluster (``isRemedyWorkOnCluster``).

    ``spec.clusterAffinity`` None/absent -> True for every cluster; otherwise True only when
    ``clusterAffinity.clusterNames`` contains ``cluster_name`` (an empty or absent list selects none).
    """
    spec = remedy.get("spec") or {}
    affinity = spec.get("clusterAffinity")
    if affinity is None:
        return True
    return cluster_name in ((affinity or {}).get("clusterNames") or [])


def decision_matches(decision_matches: list | None, conditions: list | None) -> bool:
    """Whether a Remedy fires for a cluster with these conditions (``remedyDecisionMatchWithCluster``).

    Args:
        decision_matches: ``spec.decisionMatches``; None (field absent) fires at once, ``[]`` never.
        conditions: the cluster's ``status.conditions`` (metav1.Condition dicts) or None.

    Returns:
        True when the list is None, or any ``clusterConditionMatch`` matches a condition.
    """
    if decision_matches is None:
        return True
    if not conditions:
        return False
    by_type: dict[str, dict] = {}
    for cond in conditions:
        if isinstance(cond, dict) and cond.get("type") not in by_type:
            by_type[cond.get("type")] = cond  # meta.FindStatusCondition returns the first
    for match in decision_matches:
        req = (match or {}).get("clusterConditionMatch") if isinstance(match, dict) else None
        if not isinstance(req, dict):
            continue
        cond = by_type.get(req.get("conditionType"))
        if cond is None:
            continue
        status, wanted = str(cond.get("status", "")), str(req.get("conditionStatus", ""))
        op = req.get("operator")
        if op == OPERATOR_EQUAL and status == wanted:
            return True
        if op == OPERATOR_NOT_EQUAL and status != wanted:
            return True
    return False


def remedy_sources(cluster_name: str, conditions: list | None, remedies: list[dict]) -> dict[str, list[str]]:
    """``{action: sorted names of the Remedies producing it}`` for one cluster (``calculateActions``).

    Args:
        cluster_name: the Cluster's name.
        conditions: its ``status.conditions``.
        remedies: every Remedy (user objects).

    Returns:
        A dict with sorted keys; empty when no Remedy fires. Empty action strings are ignored.
    """
    sources: dict[str, set[str]] = {}
    for remedy in remedies:
        if not remedy_selects(remedy, cluster_name):
            continue
        spec = remedy.get("spec") or {}
        if not decision_matches(spec.get("decisionMatches"), conditions):
            continue
        for action in spec.get("actions") or []:
            if isinstance(action, str) and action:
                sources.setdefault(action, set()).add(remedy["metadata"]["name"])
    return {a: sorted(sources[a]) for a in sorted(sources)}


def remedy_actions(cluster_name: str, conditions: list | None, remedies: list[dict]) -> list[str]:
    """Sorted, de-duplicated union of the actions of the Remedies firing for the cluster."""
    return list(remedy_sources(cluster_name, conditions, remedies))


def cluster_overlay(key, cluster: dict, overlay: dict | None, sources: dict[str, list[str]]) -> dict | None:
    """The Cluster overlay with ``status.remedyActions`` and ``observed.remedySources`` set from ``sources``.

    Returns ``overlay`` itself when nothing changes (None stays None when there is nothing to write).
    A new overlay's status starts from the file's status so the file's conditions stay visible.
    """
    actions = list(sources)
    current_actions = ((overlay or {}).get("status") or {}).get("remedyActions")
    current_sources = ((overlay or {}).get("observed") or {}).get(SOURCES_KEY)
    if not actions and current_actions is None and current_sources is None:
        return overlay  # nothing to write and nothing to remove
    new = dict(overlay) if overlay is not None else new_overlay(key, cluster)
    new_status = dict(new["status"]) if "status" in new else deepcopy(cluster.get("status") or {})
    observed = dict(new.get("observed") or {})
    if actions:
        new_status["remedyActions"] = actions
        observed[SOURCES_KEY] = {a: list(n) for a, n in sources.items()}
    else:
        new_status.pop("remedyActions", None)
        observed.pop(SOURCES_KEY, None)
    new["status"] = new_status
    if observed:
        new["observed"] = observed
    else:
        new.pop("observed", None)
    if overlay is not None and new == overlay:
        return overlay
    return new


def remedy_quirks(remedy: dict) -> list[str]:
    """Warnings for valid Remedies that can never act the way they read (upstream quirks, §14):
    a present ``clusterAffinity`` without names selects no cluster; ``decisionMatches: []`` never
    fires (omit the field to act at once); no ``actions`` does nothing."""
    spec = remedy.get("spec") or {}
    name = f'Remedy {remedy["metadata"]["name"]}'
    out = []
    if "clusterAffinity" in spec and spec["clusterAffinity"] is not None \
            and not (spec["clusterAffinity"] or {}).get("clusterNames"):
        out.append(f"{name}: spec.clusterAffinity without clusterNames selects no cluster "
                   "(omit clusterAffinity to select every cluster)")
    if spec.get("decisionMatches") == []:
        out.append(f"{name}: spec.decisionMatches: [] never fires (omit decisionMatches to act at once)")
    if not spec.get("actions"):
        out.append(f"{name}: no spec.actions, nothing to perform")
    return out


def step(loaded, out, now: str, ctx) -> bool:
    """Phase ``clusters``: recompute every Cluster's remedy actions in ``out``; True when changed."""
    remedies = [out.user[k] for k in out.keys_of_kind(REMEDY_GROUP, REMEDY_KIND)]
    for r in remedies:
        for line in remedy_quirks(r):
            ctx.warn(line)
    changed = False
    for key in out.keys_of_kind(CLUSTER_GROUP, CLUSTER_KIND):
        cluster = out.user[key]
        if (cluster.get("metadata") or {}).get("deletionTimestamp"):
            continue
        overlay = out.overlays.get(key)
        conditions = effective_status(cluster, overlay).get("conditions")
        sources = remedy_sources(key[3], conditions, remedies)
        new = cluster_overlay(key, cluster, overlay, sources)
        if new is not overlay:
            changed = out.set_overlay(key, new) or changed
    return changed


