"""Binding controller: one Work per target cluster, orphan Works removed.

Follows ``pkg/controllers/binding/binding_controller.go``, ``common.go`` and
``pkg/controllers/ctrlutil/work.go`` (semantics §5.3, §9.1, §9.2):

* targets are ``spec.clusters`` plus clusters listed only in ``spec.requiredBy``;
* Works of eviction-task clusters whose purgeMode is not ``Directly`` are kept as they are
  (not re-rendered), every other Work of the binding outside the targets is an orphan;
* while a Work still exists in a ``Directly`` eviction cluster, no Work of the binding is rendered;
* the rendered manifest gets the replica revision, the Job completion split, the overrides (the
  seam :class:`OverrideHook`), the preserved label state of a failover (gate
  ``StatefulFailoverInjection``, :func:`inject_preserved_label_state`), Karmada's linking labels
  and annotations, and is pruned.

Deleting a Work is requested by returning it with ``metadata.deletionTimestamp`` set (when it may
still have a member copy) or as None (when it was never applied, so nothing is left to clean up);
the execution controller deletes member copies and drops the Work.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from karmactl.api import constants as C
from karmactl.api.objects import bump_generation, deepcopy, permanent_id
from karmactl.api.names import cluster_of_execution_namespace, execution_namespace, work_name
from karmactl.controllers.helper.binding import binding_id
from karmactl.controllers.helper.template import template_inputs
from karmactl.controllers.helper.work import RenderHooks, delete_work, render_hooks, work_records


@dataclass
class BindingResult:
    """Works one pass wants: key -> Work, or None to drop it; ``errors`` per binding key."""

    works: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)


def target_clusters(binding: dict) -> dict[str, int]:
    """Cluster -> replicas for every target: ``spec.clusters`` then ``requiredBy`` snapshots (§9.2)."""
    spec = binding.get("spec") or {}
    out: dict[str, int] = {}
    for t in spec.get("clusters") or []:
        out[t["name"]] = t.get("replicas") or 0
    for req in spec.get("requiredBy") or []:
        for t in req.get("clusters") or []:
            out.setdefault(t["name"], t.get("replicas") or 0)
    return out


def suspended_on(binding: dict, cluster: str) -> bool:
    """Dispatching suspended for ``cluster`` (§8.1): ``dispatching`` true, or the cluster is listed."""
    s = (binding.get("spec") or {}).get("suspension") or {}
    if s.get("dispatching"):
        return True
    return cluster in ((s.get("dispatchingOnClusters") or {}).get("clusterNames") or [])


def is_workload(binding: dict) -> bool:
    spec = binding.get("spec") or {}
    return bool(spec.get("replicas")) or spec.get("replicaRequirements") is not None or bool(spec.get("components"))


def reconcile(bindings: dict, works: dict, views: dict, now: str, hooks: RenderHooks,
              memo: dict | None = None) -> BindingResult:
    """Render Works for every binding and drop orphans.

    Args:
        bindings: binding key -> RB/CRB (scheduled).
        works: existing Work key -> Work.
        views: template key (group, kind, ns, name) -> template as Karmada sees it (uid, generation,
            claim metadata merged); a binding whose template is gone renders nothing.
        now: the run's clock (creationTimestamp of new Works, deletionTimestamp of removed ones).
        hooks: interpreter and override functions.
        memo: optional dict kept across passes of one run: a Work whose binding, template view and
            previous output are the very same objects as last pass is not rendered again.

    Returns:
        A :class:`BindingResult` with every Work that should change (new/updated Works, None or a
        terminating Work for removals). Works belonging to no binding are removed too, except
        namespace Works (handled by :mod:`karmactl.controllers.namespace_sync`).
    """
    result = BindingResult()
    by_binding: dict[tuple[str, str], list] = {}
    for wkey, work in works.items():
        labels = (work.get("metadata") or {}).get("labels") or {}
        for label in (C.RB_PERMANENT_ID_LABEL, C.CRB_PERMANENT_ID_LABEL):
            if labels.get(label):
                by_binding.setdefault((label, labels[label]), []).append(wkey)
    seen: set = set()
    for bkey in sorted(bindings):
        binding = bindings[bkey]
        bid = binding_id(binding)
        seen.add(bid)
        existing = {wk: works[wk] for wk in by_binding.get(bid, [])}
        _reconcile_one(bkey, binding, existing, views, now, hooks, result, memo if memo is not None else {})
    for bid, wkeys in by_binding.items():
        if bid not in seen:
            for wk in wkeys:
                new = delete_work(works[wk], now)
                if new is not works[wk]:
                    result.works[wk] = new
    return result


def _reconcile_one(bkey, binding: dict, existing: dict, views: dict, now: str, hooks: RenderHooks,
                   result: BindingResult, memo: dict) -> None:
    """The Works of one binding into ``result``: those of clusters it left removed, then one per
    target cluster rendered (unless an old copy in a ``Directly`` eviction cluster remains)."""
    spec = binding.get("spec") or {}
    targets = target_clusters(binding)
    if _remove_stale_works(spec, targets, existing, now, result):
        return  # §9.1 step 2: no rendering while an old copy in a Directly cluster remains
    res = spec.get("resource") or {}
    from karmactl.api.kinds import group_of
    tkey = (group_of(res.get("apiVersion", "")), res.get("kind"), res.get("namespace") or "", res.get("name"))
    view = views.get(tkey)
    if view is None:
        return
    completions = _job_completions(spec, view, targets, hooks)
    errors = []
    for cluster in sorted(targets):
        wkey = ("work.karmada.io", "Work", execution_namespace(cluster),
                work_name(res.get("namespace") or "", res.get("name"), res.get("kind")))
        old = existing.get(wkey)
        if old is not None and (old.get("metadata") or {}).get("deletionTimestamp"):
            errors.append(f"work {wkey[2]}/{wkey[3]} is being deleted")
            continue
        if _rendered_last_pass(memo.get(wkey), old, view, spec):
            continue
        try:
            work = render_work(binding, view, cluster, targets[cluster], completions.get(cluster), old, now, hooks)
        except Exception as exc:  # an override error fails this cluster's Work only (§9.2 step 3)
            errors.append(f"cluster {cluster}: {exc}")
            continue
        memo[wkey] = (spec, view, work)
        if work is not old:
            result.works[wkey] = work
    if errors:
        result.errors[bkey] = errors


def _remove_stale_works(spec: dict, targets: dict, existing: dict, now: str, result: BindingResult) -> bool:
    """Deletes (into ``result``) the binding's Works in clusters that are neither targets nor kept
    by a graceful eviction task; returns whether a Work in a ``Directly`` eviction cluster remains."""
    tasks = spec.get("gracefulEvictionTasks") or []
    keep_old = {t["fromCluster"] for t in tasks if t.get("purgeMode") != "Directly"}
    directly = {t["fromCluster"] for t in tasks if t.get("purgeMode") == "Directly"}
    blocked = False
    for wk, work in existing.items():
        cluster = cluster_of_execution_namespace(wk[2])
        if cluster in targets or cluster in keep_old:
            continue
        if cluster in directly:
            blocked = True
        new = delete_work(work, now)
        if new is not work:
            result.works[wk] = new
        elif new is not None and cluster in directly:
            blocked = True
    return blocked


def _job_completions(spec: dict, view: dict, targets: dict, hooks: RenderHooks) -> dict:
    """``{cluster: completions}`` of a Job divided over its clusters (the interpreter's split), or {}."""
    if (view.get("kind") == "Job" and hooks.split_job_completions and (spec.get("replicas") or 0) > 0
            and ((spec.get("placement") or {}).get("replicaScheduling") or {}).get("replicaSchedulingType") == "Divided"
            and (view.get("spec") or {}).get("completions") is not None):
        return hooks.split_job_completions(view, [{"name": n, "replicas": r} for n, r in targets.items()],
                                           (spec.get("resource") or {}).get("uid") or "")
    return {}


def _rendered_last_pass(seen: tuple | None, old: dict | None, view: dict, spec: dict) -> bool:
    """Same binding spec, template view and Work as last pass (``seen``: the memo's
    ``(spec, view, work)``): rendering would give ``old`` back. The Work may have gained a status
    since (the execution step's Dispatching condition), which rendering keeps as it is; the view is
    built again when the template's status changes, which the view leaves out."""
    return (seen is not None and old is not None and _same_but_status(seen[2], old)
            and (seen[1] is view or seen[1] == view) and (seen[0] is spec or seen[0] == spec))


def _same_but_status(rendered: dict, work: dict) -> bool:
    """Whether ``work`` is ``rendered`` or a copy of it with another ``status`` only (every other
    top-level field the very same object, as ``dict(rendered, status=...)`` makes)."""
    if rendered is work:
        return True
    if len(rendered) - ("status" in rendered) != len(work) - ("status" in work):
        return False
    return all(k == "status" or (k in rendered and rendered[k] is v) for k, v in work.items())


def inject_preserved_label_state(spec: dict, cluster: str, labels: dict) -> None:
    """``injectReservedLabelState`` (``pkg/controllers/binding/common.go``, semantics §6.5): the
    last eviction task's ``preservedLabelState`` is merged into the manifest's ``labels`` (in
    place) when the binding has exactly one target (``spec.clusters`` with ``requiredBy``
    clusters), that task's purgeMode is ``Directly``, and ``cluster`` is not one of its
    ``clustersBeforeFailover`` (the application moved there)."""
    tasks = spec.get("gracefulEvictionTasks") or []
    if not tasks or len(target_clusters({"spec": spec})) > 1:
        return
    last = tasks[-1]
    if last.get("purgeMode") != "Directly" or cluster in (last.get("clustersBeforeFailover") or []):
        return
    labels.update(last.get("preservedLabelState") or {})


def render_work(binding: dict, view: dict, cluster: str, replicas: int, completions, old: dict | None,
                now: str, hooks: RenderHooks) -> dict:
    """The Work for one target cluster (§9.2); returns ``old`` itself when nothing changed."""
    bspec = binding.get("spec") or {}
    # one private deep copy: revise_replica returns a new object, otherwise copy here; everything
    # below (overrides, linking metadata, pruning) may then work on it in place
    manifest = hooks.revise_replica(view, replicas) if is_workload(binding) else deepcopy(view)
    manifest.setdefault("metadata", {})
    if completions is not None:
        manifest.setdefault("spec", {})["completions"] = completions
    applied_ov, applied_cov = [], []
    if hooks.apply_overrides is not None:
        manifest, applied_ov, applied_cov = hooks.apply_overrides(manifest, cluster)
    id_label, bid = binding_id(binding)
    mm = manifest.setdefault("metadata", {})
    labels = mm.setdefault("labels", {})
    if hooks.stateful_failover_injection:
        inject_preserved_label_state(bspec, cluster, labels)
    annotations = mm.setdefault("annotations", {})
    labels[id_label] = bid
    generation = (view.get("metadata") or {}).get("generation")
    if generation:
        annotations[C.TEMPLATE_GENERATION_ANNOTATION] = str(generation)
    binding_ann = _binding_annotations(binding)
    annotations.update(binding_ann)
    conflict = _conflict_resolution(view, bspec)
    wname = work_name((view["metadata"].get("namespace") or ""), view["metadata"]["name"], view["kind"])
    wns = execution_namespace(cluster)
    work_id = ((old or {}).get("metadata", {}).get("labels") or {}).get(C.WORK_PERMANENT_ID_LABEL) or permanent_id("Work", wns, wname)
    # finalize the manifest (ctrlutil.CreateOrUpdateWork + the Work mutating webhook)
    labels[C.MANAGED_LABEL] = "true"
    annotations[C.TEMPLATE_UID_ANNOTATION] = view["metadata"].get("uid", "")
    annotations[C.WORK_NAME_ANNOTATION] = wname
    annotations[C.WORK_NAMESPACE_ANNOTATION] = wns
    annotations[C.CONFLICT_RESOLUTION_ANNOTATION] = conflict
    manifest = hooks.prune(manifest)  # the manifest is a private copy from here on
    mm = manifest["metadata"]
    mm["labels"][C.WORK_PERMANENT_ID_LABEL] = work_id
    annotations = mm["annotations"]
    annotations[C.MANAGED_LABELS_ANNOTATION] = ",".join(sorted(mm["labels"]))
    annotations[C.MANAGED_ANNOTATIONS_ANNOTATION] = ",".join(sorted(set(annotations) | {C.MANAGED_ANNOTATIONS_ANNOTATION}))
    mm["labels"] = dict(sorted(mm["labels"].items()))
    mm["annotations"] = dict(sorted(annotations.items()))

    work_ann = dict(binding_ann)
    work_ann[C.CONFLICT_RESOLUTION_ANNOTATION] = conflict
    if applied_ov:
        work_ann[C.APPLIED_OVERRIDES_ANNOTATION] = json.dumps(applied_ov, separators=(",", ":"))
    if applied_cov:
        work_ann[C.APPLIED_CLUSTER_OVERRIDES_ANNOTATION] = json.dumps(applied_cov, separators=(",", ":"))
    old_meta = (old or {}).get("metadata") or {}
    work_ann.update(work_records(old))
    metadata = {"name": wname, "namespace": wns,
                "labels": dict(sorted({id_label: bid, C.WORK_PERMANENT_ID_LABEL: work_id}.items())),
                "annotations": dict(sorted(work_ann.items())),
                "finalizers": [C.EXECUTION_CONTROLLER_FINALIZER],
                "creationTimestamp": old_meta.get("creationTimestamp") or now,
                "generation": old_meta.get("generation") or 1}
    work = {"apiVersion": C.WORK_API_V1, "kind": "Work", "metadata": metadata,
            "spec": {"workload": {"manifests": [manifest]},
                     "suspendDispatching": suspended_on(binding, cluster),
                     "preserveResourcesOnDeletion": bool(bspec.get("preserveResourcesOnDeletion"))}}
    if old is not None and old.get("status") is not None:
        work["status"] = old["status"]
    bump_generation(old, work)
    if old is not None and work == old:
        return old
    return work


def _binding_annotations(binding: dict) -> dict:
    """The annotations naming the binding on its Works and their manifests."""
    bmeta = binding["metadata"]
    if binding["kind"] == "ResourceBinding":
        return {C.RB_NAMESPACE_ANNOTATION: bmeta["namespace"], C.RB_NAME_ANNOTATION: bmeta["name"]}
    return {C.CRB_NAME_ANNOTATION: bmeta["name"]}


def _conflict_resolution(view: dict, bspec: dict) -> str:
    """``overwrite`` or ``abort``: the template's conflict-resolution annotation, else the binding's
    ``conflictResolution``."""
    template_cr = ((view.get("metadata") or {}).get("annotations") or {}).get(C.CONFLICT_RESOLUTION_ANNOTATION)
    if template_cr in ("overwrite", "abort"):
        return template_cr
    return "overwrite" if bspec.get("conflictResolution") == "Overwrite" else "abort"


# --------------------------------------------------------------------------- the pipeline step


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``binding``: render every binding's Works and remove orphaned ones
    (``pkg/controllers/binding/binding_controller.go``, ``cluster_resource_binding_controller.go``)."""
    from karmactl.interpreter import Interpreter
    from karmactl.api.objects import describe_key

    inputs = template_inputs(loaded, ctx)
    memo = ctx.memo.get("binding")
    if memo is None:
        memo = ctx.memo["binding"] = {"hooks": render_hooks(loaded, Interpreter.of(ctx)), "render": {}}
        memo["hooks"].stateful_failover_injection = ctx.settings.stateful_failover_injection
    views = {k: inputs.view(out, k) for k in inputs.templates}
    res = reconcile(out.bindings, out.works, views, now, memo["hooks"], memo["render"])
    changed = False
    for wkey, w in res.works.items():
        changed = out.set_work(wkey, w) or changed
    for bkey, errs in sorted(res.errors.items()):
        for e in errs:
            ctx.warn(f"{describe_key(bkey)}: {e}")
    return changed
