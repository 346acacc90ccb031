"""Binding status: ``status.aggregatedStatus`` from the binding's Works and the ``FullyApplied`` condition.

Follows ``pkg/controllers/status/rb_status_controller.go``, ``crb_status_controller.go`` and
``pkg/util/helper/workstatus.go`` (``AssembleWorkStatus``, ``generateFullyAppliedCondition``),
semantics §9.8. Runs for ResourceBindings and ClusterResourceBindings that have been scheduled at
least once (``status.lastScheduledTime``) or are required by another binding (``spec.requiredBy``:
the dependencies distributor's attached bindings are never scheduled).
"""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.objects import deepcopy, set_condition
from karmactl.controllers.helper.binding import aggregated_item, binding_id, works_by_binding


def expected_clusters(binding: dict) -> set:
    """Clusters a fully applied binding has Works in: ``spec.clusters``, ``requiredBy`` clusters and
    eviction-task clusters whose purgeMode is not ``Directly``."""
    spec = binding.get("spec") or {}
    names = {t.get("name") for t in spec.get("clusters") or []}
    for req in spec.get("requiredBy") or []:
        names |= {t.get("name") for t in req.get("clusters") or []}
    for task in spec.get("gracefulEvictionTasks") or []:
        if task.get("purgeMode") != "Directly":
            names.add(task.get("fromCluster"))
    return {n for n in names if n}


def _carry_item_fields(item: dict, old: dict | None, now: str) -> dict:
    """The application failover design's item fields (DESIGN §3.2): ``settled`` once the workload
    was Healthy in that cluster, ``creationTimestamp`` when the control plane first recorded the
    cluster's item; both carried over from the previous item of the same cluster."""
    old = old or {}
    if old.get("settled") or item.get("health") == C.HEALTHY:
        item["settled"] = True
    item["creationTimestamp"] = old.get("creationTimestamp") or now
    return item


def binding_status(binding: dict, works: list, now: str) -> tuple[dict, list[str]]:
    """The binding with its aggregated status and ``FullyApplied`` condition.

    Items are :func:`aggregated_item` plus ``settled`` and ``creationTimestamp`` (the application
    failover design document's fields, kept from the binding's previous items).

    Args:
        binding: an RB or CRB.
        works: ``[(cluster, Work)]`` of the binding, not terminating, sorted by cluster.
        now: condition transition time.

    Returns:
        (binding — the same object when nothing changed, error lines for Works without the resource).
    """
    resource = (binding.get("spec") or {}).get("resource") or {}
    previous = {i.get("clusterName"): i for i in (binding.get("status") or {}).get("aggregatedStatus") or []}
    items, errors = [], []
    for cluster, work in works:
        item = aggregated_item(cluster, work, resource)
        if item is not None:
            item = _carry_item_fields(item, previous.get(cluster), now)
        if item is None:
            md = work.get("metadata") or {}
            errors.append(f"work {md.get('namespace')}/{md.get('name')} has no manifest for "
                          f"{resource.get('kind')} {resource.get('name')}")
            continue
        items.append(item)
    items.sort(key=lambda i: i["clusterName"])
    expected = expected_clusters(binding)
    fully = (bool(expected) and len(items) == len(expected)
             and all(i["applied"] and i["clusterName"] in expected for i in items))
    status = deepcopy(binding.get("status") or {})
    if items:
        status["aggregatedStatus"] = items
    else:
        status.pop("aggregatedStatus", None)
    holder = {"status": status}
    if fully:
        set_condition(holder, C.COND_FULLY_APPLIED, "True", C.REASON_FULLY_APPLIED_SUCCESS, C.MSG_FULLY_APPLIED_SUCCESS, now)
    else:
        set_condition(holder, C.COND_FULLY_APPLIED, "False", C.REASON_FULLY_APPLIED_FAILED, C.MSG_FULLY_APPLIED_FAILED, now)
    if holder["status"] == (binding.get("status") or {}):
        return binding, errors
    return dict(binding, status=holder["status"]), errors


def step(loaded, out, now: str, ctx) -> bool:
    """Phase ``status``: refresh every scheduled binding's aggregated status."""

    by_binding = works_by_binding(out.works)
    memo = ctx.memo.setdefault("binding_status", {})
    changed = False
    for bkey in sorted(out.bindings):
        binding = out.bindings[bkey]
        if not ((binding.get("status") or {}).get("lastScheduledTime") or (binding.get("spec") or {}).get("requiredBy")):
            continue  # never scheduled, and no workload requires it (attached bindings are not scheduled)
        works = by_binding.get(binding_id(binding), [])
        seen = memo.get(bkey)
        if (seen is not None and seen[0] is binding and len(seen[1]) == len(works)
                and all(a[0] == b[0] and a[1] is b[1] for a, b in zip(seen[1], works))):
            continue  # the binding and its Works are the very objects of its last status: no change
        new, errors = binding_status(binding, works, now)
        for e in errors:
            ctx.warn(e)
        if new is not binding:
            changed = out.set_binding(bkey, new) or changed
        memo[bkey] = (out.bindings[bkey], works)
    return changed



__all__ = ["binding_status", "expected_clusters", "step"]
