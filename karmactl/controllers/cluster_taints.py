"""Cluster taints from conditions: the cluster controller's Ready taints and ClusterTaintPolicy.

Follows ``pkg/controllers/cluster/cluster_controller.go`` (``taintClusterByCondition``) and
``pkg/controllers/taint/clustertaintpolicy_controller.go`` (semantics §4.2, §4.4), with cluster
failover on by default as DESIGN §3.4 and the failover explainer (``proposals/failover-explained-v1.4.md``)
describe it:

===========  ====================================================  =========================================
Ready        add (``timeAdded = now``)                             remove
===========  ====================================================  =========================================
``False``    ``cluster.karmada.io/not-ready`` NoSchedule           ``cluster.karmada.io/unreachable`` (both)
             (+ NoExecute while ``settings.cluster_failover``)
``Unknown``  ``cluster.karmada.io/unreachable`` NoSchedule         ``cluster.karmada.io/not-ready`` (both)
             (+ NoExecute while ``settings.cluster_failover``)
``True``     —                                                     both keys, both effects
missing      ``cluster.karmada.io/not-ready`` NoSchedule           —
===========  ====================================================  =========================================

Taints are matched by key+effect. Then every ClusterTaintPolicy (``policy.karmada.io/v1alpha1``),
sorted by ``metadata.creationTimestamp`` then name (upstream sorts by creation time only; the name
breaks ties deterministically, DESIGN §3.5), whose ``targetClusters`` is nil or matches the cluster:
``addOnConditions`` non-empty and all matching -> add each policy taint whose key+effect is absent;
then ``removeOnConditions`` non-empty and all matching -> remove the first taint with each policy
taint's key+effect. NoExecute taints are allowed in policies (karmactl runs as if
``--allow-no-execute-taint-policy`` were set; validation does the same).

Where the taints live (karmactl): the user's Cluster file keeps the user's ``spec.taints`` (written
by hand or by ``karmactl taint``/``cordon``); the taints this module manages live in the Cluster's
**overlay** ``spec.taints`` and :func:`karmactl.api.templates.merged_view` appends them to
what the scheduler and ``get`` see. Consequences, documented deviations from Karmada's single list:

* a taint already written by the user (same key+effect) is never added again, and is never removed:
  the file belongs to the user (Karmada's controller would remove a user's ``not-ready:NoSchedule``
  once Ready is True);
* "missing Ready -> not-ready:NoSchedule" applies only to clusters that have some status at all, so
  a freshly written Cluster without status is not tainted before its first probe or report;
* with ``cluster_failover`` off the controller adds no NoExecute taints, but still removes its
  not-ready/unreachable NoExecute taints when they no longer apply (cleanup after switching it off);
* both rule sets are computed together and written once per pass, and a taint that survives keeps
  its ``timeAdded`` (so a policy re-adding what the Ready rule removed does not restart a toleration
  window and the pass converges);
* the API server stamps ``timeAdded`` on NoExecute taints lacking it; for user-written NoExecute
  taints without it, the first pass that sees one records the time in the overlay's private
  ``observed.taintsTimeAdded`` (``{"<key>:<effect>": RFC 3339}``), read back by :func:`effective_taints`.
  ClusterTaintPolicy is honoured whatever ``cluster_failover`` says (someone wrote it on purpose).

Deleting a policy never removes taints (as upstream).
"""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.objects import deepcopy, get_condition
from karmactl.api.selectors import cluster_affinity_matches
from karmactl.api.templates import merged_view, new_overlay
from karmactl.controllers.helper.cluster import CLUSTER_GK, effective_status, taint_id

POLICY_GK = ("policy.karmada.io", "ClusterTaintPolicy")
_READY_KEYS = (C.TAINT_NOT_READY, C.TAINT_UNREACHABLE)


def _same(a: dict, b: dict) -> bool:
    """Karmada's ``MatchTaint``: same key and effect."""
    return a.get("key") == b.get("key") and a.get("effect") == b.get("effect")


def _has(taints: list[dict], taint: dict) -> bool:
    return any(_same(t, taint) for t in taints)


def condition_matches(requirement: dict, conditions: list[dict]) -> bool:
    """One ``{conditionType, operator: In|NotIn, statusValues}`` match; a missing condition never matches."""
    cond = next((c for c in conditions if c.get("type") == requirement.get("conditionType")), None)
    if cond is None:
        return False
    values = [str(v) for v in requirement.get("statusValues") or []]
    op = requirement.get("operator")
    if op == "In":
        return str(cond.get("status")) in values
    if op == "NotIn":
        return str(cond.get("status")) not in values
    return False


def _all_match(requirements: list[dict], conditions: list[dict]) -> bool:
    return bool(requirements) and all(condition_matches(r, conditions) for r in requirements)


def sorted_policies(policies: list[dict]) -> list[dict]:
    """ClusterTaintPolicies by ``creationTimestamp`` (absent first) then name (DESIGN §3.5)."""
    return sorted(policies, key=lambda p: (str((p.get("metadata") or {}).get("creationTimestamp") or ""),
                                           (p.get("metadata") or {}).get("name", "")))


class _TaintEdit:
    """The controller taints being computed: ``add`` appends a taint unless the user's or the
    controller's list has it, ``remove`` drops every matching one (or the first)."""

    def __init__(self, user_taints: list[dict], taints: list[dict], now: str):
        self.user_taints, self.taints, self.now = user_taints, taints, now

    def add(self, key: str, effect: str, value: str = "") -> None:
        probe = {"key": key, "effect": effect}
        if _has(self.user_taints, probe) or _has(self.taints, probe):
            return
        t = {"key": key}
        if value:
            t["value"] = value
        t.update(effect=effect, timeAdded=self.now)
        self.taints.append(t)

    def remove(self, key: str, effect: str, first_only: bool = False) -> None:
        probe = {"key": key, "effect": effect}
        if not first_only:
            self.taints[:] = [t for t in self.taints if not _same(t, probe)]
            return
        for i, t in enumerate(self.taints):
            if _same(t, probe):
                del self.taints[i]
                return


def _ready_taints(edit: _TaintEdit, status: dict, cluster_failover: bool) -> None:
    """``taintClusterByCondition``: not-ready / unreachable taints from the Ready condition."""
    ready = get_condition({"status": status}, C.COND_READY)
    effects = [C.EFFECT_NO_SCHEDULE] + ([C.EFFECT_NO_EXECUTE] if cluster_failover else [])
    both = (C.EFFECT_NO_SCHEDULE, C.EFFECT_NO_EXECUTE)
    state = None if ready is None else ready.get("status")
    if ready is None:
        edit.add(C.TAINT_NOT_READY, C.EFFECT_NO_SCHEDULE)
    elif state in ("False", "Unknown"):
        on, off = (C.TAINT_NOT_READY, C.TAINT_UNREACHABLE) if state == "False" else (C.TAINT_UNREACHABLE, C.TAINT_NOT_READY)
        for effect in effects:
            edit.add(on, effect)
        for effect in both:
            edit.remove(off, effect)
        if not cluster_failover:
            edit.remove(on, C.EFFECT_NO_EXECUTE)
    elif state == "True":
        for key in _READY_KEYS:
            for effect in both:
                edit.remove(key, effect)


def _policy_taints(edit: _TaintEdit, policies: list[dict], conditions: list, cluster_view: dict) -> None:
    """ClusterTaintPolicies in order: taints added on ``addOnConditions``, removed on ``removeOnConditions``."""
    for policy in policies:
        pspec = policy.get("spec") or {}
        if pspec.get("targetClusters") is not None and not cluster_affinity_matches(pspec["targetClusters"], cluster_view):
            continue
        if _all_match(pspec.get("addOnConditions") or [], conditions):
            for t in pspec.get("taints") or []:
                edit.add(t.get("key", ""), t.get("effect", ""), t.get("value") or "")
        if _all_match(pspec.get("removeOnConditions") or [], conditions):
            for t in pspec.get("taints") or []:
                edit.remove(t.get("key", ""), t.get("effect", ""), first_only=True)


def controller_taints(user_taints: list[dict], current: list[dict], status: dict, cluster_view: dict,
                      policies: list[dict], now: str, cluster_failover: bool) -> list[dict]:
    """The controller taints a Cluster should carry (the overlay's ``spec.taints``).

    Args:
        user_taints: ``spec.taints`` of the user's file (never changed here).
        current: the controller taints held so far (overlay ``spec.taints``).
        status: the Cluster's effective status (``{}`` when it never had one).
        cluster_view: the Cluster as the scheduler sees it (labels, spec) for ``targetClusters``.
        policies: ClusterTaintPolicies, already sorted (:func:`sorted_policies`).
        now: RFC 3339, ``timeAdded`` of added taints.
        cluster_failover: add NoExecute taints for not-ready/unreachable (DESIGN §3.4).

    Returns:
        The new list; ``current`` itself when nothing changed. Surviving taints keep their object
        (and ``timeAdded``); new ones are appended as ``{key, [value,] effect, timeAdded}``.
    """
    edit = _TaintEdit(user_taints, [dict(t) for t in current], now)
    if status:
        _ready_taints(edit, status, cluster_failover)
    _policy_taints(edit, policies, status.get("conditions") or [], cluster_view)
    taints = edit.taints
    # a taint that was there before keeps its original object (timeAdded), whatever happened in between
    old = {(t.get("key"), t.get("effect"), t.get("value") or ""): t for t in current}
    result = [old.get((t.get("key"), t.get("effect"), t.get("value") or ""), t) for t in taints]
    return current if result == current else result


def reconcile_cluster(key, cluster: dict, overlay: dict | None, policies: list[dict], now: str,
                      cluster_failover: bool) -> dict | None:
    """The Cluster's overlay with its controller taints (and ``observed.taintsTimeAdded``) up to date.

    Returns ``overlay`` itself when nothing changed (None stays None when there is nothing to record).
    """
    status = effective_status(cluster, overlay)
    user_taints = (cluster.get("spec") or {}).get("taints") or []
    current = ((overlay or {}).get("spec") or {}).get("taints") or []
    view = merged_view(cluster, overlay)
    taints = controller_taints(user_taints, current, status, view, policies, now, cluster_failover)
    recorded = ((overlay or {}).get("observed") or {}).get("taintsTimeAdded") or {}
    stamps = {}
    for t in user_taints:
        if t.get("effect") == C.EFFECT_NO_EXECUTE and not t.get("timeAdded"):
            stamps[taint_id(t)] = recorded.get(taint_id(t)) or now
    if taints is current and stamps == recorded:
        return overlay
    new = deepcopy(overlay) if overlay is not None else new_overlay(key, cluster)
    if taints:
        new.setdefault("spec", {})["taints"] = deepcopy(taints)
    else:
        (new.get("spec") or {}).pop("taints", None)
        if "spec" in new and not new["spec"]:
            del new["spec"]
    observed = new.setdefault("observed", {})
    if stamps:
        observed["taintsTimeAdded"] = dict(sorted(stamps.items()))
    else:
        observed.pop("taintsTimeAdded", None)
    if not observed:
        del new["observed"]
    if overlay is None and set(new) <= {"apiVersion", "kind", "metadata"}:
        return None
    return new


def step(loaded, out, now: str, ctx) -> bool:
    """Phase ``clusters``: update every Cluster's controller taints (see the module docs)."""
    policies = sorted_policies([out.user[k] for k in out.keys_of_kind(*POLICY_GK)])
    changed = False
    for key in out.keys_of_kind(*CLUSTER_GK):
        cluster = out.user[key]
        if (cluster.get("metadata") or {}).get("deletionTimestamp"):
            continue
        overlay = out.overlays.get(key)
        new = reconcile_cluster(key, cluster, overlay, policies, now, ctx.settings.cluster_failover)
        if new is not overlay:
            changed = out.set_overlay(key, new) or changed
    return changed


