"""Dependencies distributor: the ConfigMaps, Secrets, ServiceAccounts and PVCs of a workload follow it.

Follows ``pkg/dependenciesdistributor/dependencies_distributor.go`` and ``policy_utils.go``
(semantics §1.4 ``requiredBy``, §10.5). For every ResourceBinding with ``spec.propagateDeps: true``
that has been scheduled (the *independent* binding), the dependencies of its template (the
interpreter's ``get_dependencies``: named references, or a ``labelSelector`` over templates of
one kind in the namespace) each get a binding that carries a snapshot of the independent binding
in ``spec.requiredBy``:

* a dependency that no policy claims gets an **attached binding** ``<name>-<kind>`` in the same
  namespace: label ``resourcebinding.karmada.io/depended-by-<hash of ns/name>`` = the independent
  binding's permanent id, owner reference to the dependency, ``spec.resource``, ``requiredBy`` and
  no placement (the scheduler leaves it alone). ``conflictResolution`` is ``Overwrite`` when any
  depending binding says ``Overwrite`` (else ``Abort``), ``preserveResourcesOnDeletion`` is true
  when any says true; a disagreement is reported (``DependencyPolicyConflict``);
* a dependency claimed by its own policy keeps its binding: ``requiredBy`` and the depended-by
  label are merged into it, nothing else is touched (as Karmada's ``createOrUpdateAttachedBinding``
  does when ``spec.placement`` is set);
* the binding controller renders Works for ``spec.clusters`` plus every ``requiredBy`` cluster
  (``binding.py target_clusters``), so dependencies land where their workloads are scheduled and
  leave a cluster when no depending workload is placed there any more.

A snapshot leaves ``requiredBy`` when its binding is gone, is being deleted, no longer has
``propagateDeps``, or no longer references the dependency. The independent binding records what
it depends on in the annotation ``resourcebinding.karmada.io/dependencies`` (compact JSON, as
Karmada's ``recordDependencies``).

Deviations (documented, DESIGN §3):

* Karmada skips a named dependency that does not exist without a word; karmactl reports it: a
  warning per run and the condition ``DependenciesDistributed`` (False, reason
  ``DependencyNotFound``) on the independent binding; the condition is True (reason
  ``SyncScheduleResultToDependenciesSucceed``) once every named dependency exists, and absent
  when the workload has no dependencies. A failing
  dependency interpretation sets it False with reason ``GetDependenciesFailed`` and keeps the
  binding's previous snapshots, as Karmada's requeue would.
* An attached binding whose ``requiredBy`` becomes empty is deleted (its Works and member copies go
  too). Karmada keeps it, rendering nothing, until the dependency object itself is deleted; in a
  file-backed tool nothing else would ever remove it.
* Karmada's finalizer ``karmada.io/binding-dependencies-distributor`` is not written: deletion in
  karmactl is the run noticing the template is gone, not a finalizer handshake.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from karmactl.api import constants as C
from karmactl.api.kinds import group_of
from karmactl.api.objects import bump_generation, deepcopy, permanent_id, set_condition
from karmactl.api.selectors import label_selector_matches
from karmactl.api.names import binding_name, fnv1a_32, safe_encode
from karmactl.controllers.helper.binding import DEPENDED_BY_LABEL_PREFIX, claimed_by_policy, is_attached
from karmactl.controllers.helper.template import template_hash, template_inputs

DEPENDENCIES_ANNOTATION = "resourcebinding.karmada.io/dependencies"
CONDITION = "DependenciesDistributed"
REASON_SUCCEED = "SyncScheduleResultToDependenciesSucceed"
MESSAGE_SUCCEED = "Sync schedule results to dependencies succeed."
REASON_NOT_FOUND = "DependencyNotFound"
REASON_GET_FAILED = "GetDependenciesFailed"


def depended_by_label(namespace: str, name: str) -> str:
    """The label key marking a binding as needed by binding ``namespace/name``
    (``generateBindingDependedLabelKey``, ``names.GenerateBindingReferenceKey``: FNV-1a 32 of
    ``namespace/name`` in decimal, safe-encoded): ``test/test-binding`` -> ``...depended-by-5dbb6dc9c8``."""
    ref = f"{namespace}/{name}" if namespace else name
    return DEPENDED_BY_LABEL_PREFIX + safe_encode(str(fnv1a_32(ref.encode("utf-8"))))


@dataclass
class DistributorResult:
    """What one pass wants: ``bindings`` key -> new binding (None deletes it); human lines."""

    bindings: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    events: list = field(default_factory=list)


def _template_key(ref: dict) -> tuple:
    return (group_of(ref.get("apiVersion") or ""), ref.get("kind"), ref.get("namespace") or "", ref.get("name"))


def _describe_ref(ref: dict) -> str:
    ns = ref.get("namespace")
    return f"{ref.get('kind')} {ns + '/' if ns else ''}{ref.get('name')}"


def _independent(binding: dict) -> bool:
    spec = binding.get("spec") or {}
    return (binding.get("kind") == "ResourceBinding" and spec.get("propagateDeps") is True
            and not (binding.get("metadata") or {}).get("deletionTimestamp"))


def resolve(ref: dict, templates: dict, by_kind: dict) -> list:
    """Template keys a dependency reference names: ``[key]`` for a named one that exists, every
    template of the reference's group, kind and namespace whose labels the ``labelSelector``
    matches otherwise (``handleDependentResource``). Sorted."""
    if ref.get("name"):
        key = _template_key(ref)
        return [key] if key in templates else []
    selector = ref.get("labelSelector")
    if selector is None:
        return []
    group, kind, ns = group_of(ref.get("apiVersion") or ""), ref.get("kind"), ref.get("namespace") or ""
    return sorted(k for k in by_kind.get((group, kind, ns), ())
                  if label_selector_matches(selector, (templates[k].get("metadata") or {}).get("labels")))


def _with_record(binding: dict, deps: list | None, cond: tuple | None, now: str) -> dict:
    """``binding`` with the dependencies annotation (None removes it) and the condition
    ``(status, reason, message)`` (None removes it); the same object when nothing changed."""
    meta = binding.get("metadata") or {}
    old_annotations = meta.get("annotations") or {}
    record = None if deps is None else json.dumps(deps or None, separators=(",", ":"))
    if old_annotations.get(DEPENDENCIES_ANNOTATION) == record and _has_condition(binding, cond):
        return binding  # the usual pass: nothing to record
    annotations = dict(old_annotations)
    if deps is None:
        annotations.pop(DEPENDENCIES_ANNOTATION, None)
    else:  # Go marshals an empty (nil) dependency list as null
        annotations[DEPENDENCIES_ANNOTATION] = record
    status = _status_with(binding, cond, now)
    if annotations == (meta.get("annotations") or {}) and status == (binding.get("status") or {}):
        return binding
    new_meta = dict(meta)
    if annotations:
        new_meta["annotations"] = dict(sorted(annotations.items()))
    else:
        new_meta.pop("annotations", None)
    new = dict(binding, metadata=new_meta)
    if status:
        new["status"] = status
    else:
        new.pop("status", None)
    return new


def _has_condition(binding: dict, cond: tuple | None) -> bool:
    """Whether the binding's ``DependenciesDistributed`` condition is ``cond`` (status, reason,
    message), or absent when ``cond`` is None."""
    current = next((c for c in (binding.get("status") or {}).get("conditions") or [] if c.get("type") == CONDITION), None)
    return ((cond is None and current is None)
            or (cond is not None and current is not None
                and (current.get("status"), current.get("reason"), current.get("message")) == cond))


def _status_with(binding: dict, cond: tuple | None, now: str) -> dict:
    """A copy of the binding's status with the ``DependenciesDistributed`` condition set to ``cond``
    (removed when None)."""
    status = deepcopy(binding.get("status") or {})
    holder = {"status": status}
    if cond is not None:
        set_condition(holder, CONDITION, cond[0], cond[1], cond[2], now)
    else:
        conds = [c for c in status.get("conditions") or [] if c.get("type") != CONDITION]
        if conds:
            status["conditions"] = conds
        else:
            status.pop("conditions", None)
    return holder["status"]


def _dependency_refs(deps: list) -> list:
    """Karmada's ``DependentObjectReference`` JSON field order: apiVersion, kind, namespace, name, labelSelector."""
    order = ("apiVersion", "kind", "namespace", "name", "labelSelector")
    return [{k: d[k] for k in order if d.get(k) not in (None, "")} for d in deps]


def distribute(bindings: dict, templates: dict, view_of, get_dependencies, now: str) -> DistributorResult:
    """One pass of the dependencies distributor over every ResourceBinding.

    Args:
        bindings: binding key ``(group, kind, namespace, name)`` -> RB/CRB, as the scheduler left them.
        templates: template key -> user object (every resource template of the state directory).
        view_of: ``f(template key) -> template as Karmada sees it`` (uid, generation merged).
        get_dependencies: ``f(template) -> [{apiVersion, kind, namespace?, name?, labelSelector?}]``;
            may raise an exception whose text is reported.
        now: the run's clock, RFC 3339 (creation and condition times).

    Returns:
        A :class:`DistributorResult`: independent bindings with their dependencies annotation and
        ``DependenciesDistributed`` condition, attached bindings created, updated or deleted (None),
        claimed dependency bindings with ``requiredBy`` merged.
    """
    result = DistributorResult()
    by_kind: dict = {}
    for key in templates:
        by_kind.setdefault(key[:3], []).append(key)
    # dependency binding key -> {"template": key, "needed": {(ns, name): (snapshot, depender, id)}}
    wanted: dict = {}
    failed: set = set()  # (ns, name) of independent bindings whose dependencies could not be read
    for bkey in sorted(bindings):
        if bkey[1] == "ResourceBinding":
            _follow_dependencies(bkey, bindings[bkey], templates, by_kind, view_of, get_dependencies, now,
                                 result, wanted, failed)

    keys = set(wanted)
    keys.update(k for k, b in bindings.items()
                if k[1] == "ResourceBinding" and (is_attached(b) or (b.get("spec") or {}).get("requiredBy")))
    for dkey in sorted(keys):
        old = result.bindings.get(dkey, bindings.get(dkey))
        new = _dependency_binding(dkey, old, wanted.get(dkey) or {"template": None, "needed": {}}, bindings,
                                  templates, view_of, failed, now, result)
        if new is not old:
            result.bindings[dkey] = new
    return result


def _follow_dependencies(bkey, binding: dict, templates: dict, by_kind: dict, view_of, get_dependencies, now: str,
                         result: DistributorResult, wanted: dict, failed: set) -> None:
    """The first half of :func:`distribute` for one ResourceBinding: its dependencies read through
    the interpreter, recorded on it (annotation and condition, into ``result.bindings``) and added
    to ``wanted`` (dependency binding key -> the bindings that need it); ``failed`` gets
    ``(namespace, name)`` when they could not be read."""
    meta = binding.get("metadata") or {}
    has_record = DEPENDENCIES_ANNOTATION in (meta.get("annotations") or {})
    if not _independent(binding):
        if has_record:
            new = _with_record(binding, None, None, now)
            if new is not binding:
                result.bindings[bkey] = new
        return
    spec = binding.get("spec") or {}
    if not spec.get("clusters") and not has_record:
        return  # not scheduled yet: nothing to follow (Karmada's create predicate)
    ns, name = bkey[2], bkey[3]
    ref = f"ResourceBinding {ns}/{name}"
    tkey = _template_key(spec.get("resource") or {})
    if tkey not in templates:
        return
    try:
        deps = list(get_dependencies(view_of(tkey)))
    except Exception as exc:  # the interpreter's error is the user's to fix (GetDependenciesFailed)
        failed.add((ns, name))
        result.warnings.append(f"{ref}: dependencies not distributed: {exc}")
        new = _with_record(binding, None, ("False", REASON_GET_FAILED, str(exc)), now)
        if new is not binding:
            result.bindings[bkey] = new
        return
    missing = _want_dependencies(bkey, binding, deps, templates, by_kind, wanted)
    if missing:
        message = f"dependencies not found in the state directory: {', '.join(missing)}"
        result.warnings.append(f"{ref}: {message}")
        cond = ("False", REASON_NOT_FOUND, message)
    elif deps:
        cond = ("True", REASON_SUCCEED, MESSAGE_SUCCEED)
    else:
        cond = None  # nothing to distribute: no condition to report
    new = _with_record(binding, _dependency_refs(deps), cond, now)
    if new is not binding:
        result.bindings[bkey] = new


def _want_dependencies(bkey, binding: dict, deps: list, templates: dict, by_kind: dict, wanted: dict) -> list:
    """Adds ``binding`` (as a ``requiredBy`` snapshot) to the ``wanted`` entry of every dependency it
    resolves to; returns the descriptions of named dependencies that do not exist."""
    ns, name = bkey[2], bkey[3]
    spec = binding.get("spec") or {}
    missing = []
    snapshot = {"namespace": ns, "name": name, "clusters": deepcopy(spec.get("clusters") or [])}
    if not snapshot["clusters"]:
        del snapshot["clusters"]
    bid = ((binding.get("metadata") or {}).get("labels") or {}).get(C.RB_PERMANENT_ID_LABEL) or ""
    for dep in deps:
        found = resolve(dep, templates, by_kind)
        if dep.get("name") and not found:
            missing.append(_describe_ref(dep))
        for key in found:
            dkey = ("work.karmada.io", "ResourceBinding", key[2], binding_name(key[3], key[1]))
            if dkey == bkey:
                continue
            entry = wanted.setdefault(dkey, {"template": key, "needed": {}})
            entry["needed"][(ns, name)] = (snapshot, binding, bid)
    return missing


def _dependency_binding(dkey, old: dict | None, entry: dict, bindings: dict, templates: dict, view_of, failed: set,
                        now: str, result: DistributorResult) -> dict | None:
    """The second half of :func:`distribute` for one dependency binding: a binding claimed by its
    own policy gets ``requiredBy`` merged, an attached one is created, updated or deleted (None).
    Warnings and events go to ``result``."""
    needed = dict(entry["needed"])
    # snapshots of bindings whose dependencies could not be read this pass stay as they were
    for snap in ((old or {}).get("spec") or {}).get("requiredBy") or []:
        who = (snap.get("namespace") or "", snap.get("name"))
        if who in failed and who not in needed:
            depender = bindings.get(("work.karmada.io", "ResourceBinding", who[0], who[1])) or {}
            bid = ((depender.get("metadata") or {}).get("labels") or {}).get(C.RB_PERMANENT_ID_LABEL) or ""
            needed[who] = (snap, depender, bid)
    template = entry["template"]
    if template is None and old is not None:
        template = _template_key((old.get("spec") or {}).get("resource") or {})
        template = template if template in templates else None
    if old is not None and claimed_by_policy(old):
        return _merge_into_claimed(old, needed)
    if not needed or template is None:
        if old is not None:  # no workload needs it any more (or the dependency is gone)
            result.events.append(f"attached ResourceBinding {dkey[2]}/{dkey[3]} removed: no workload requires it")
        return None
    new, conflicts = _attached_binding(dkey, view_of(template), templates[template], old, needed, now)
    if conflicts:
        result.warnings.append(f"ResourceBinding {dkey[2]}/{dkey[3]}: DependencyPolicyConflict: Dependency "
                               f"policy conflict detected: {'; '.join(conflicts)}.")
    if old is None:
        result.events.append(f"attached ResourceBinding {dkey[2]}/{dkey[3]} created for "
                             + ", ".join(f"{n[0]}/{n[1]}" for n in sorted(needed)))
    return new


def _required_by(needed: dict) -> list:
    return [needed[k][0] for k in sorted(needed)]


def _depended_labels(labels: dict, needed: dict) -> dict:
    out = {k: v for k, v in labels.items() if not k.startswith(DEPENDED_BY_LABEL_PREFIX)}
    for (ns, name), (_snap, _b, bid) in needed.items():
        out[depended_by_label(ns, name)] = bid
    return dict(sorted(out.items()))


def _merge_into_claimed(old: dict, needed: dict) -> dict:
    """A dependency claimed by its own policy: only ``requiredBy`` and the depended-by labels change."""
    spec = dict(old.get("spec") or {})
    required = _required_by(needed)
    if required:
        spec["requiredBy"] = required
    else:
        spec.pop("requiredBy", None)
    meta = dict(old.get("metadata") or {})
    meta["labels"] = _depended_labels(meta.get("labels") or {}, needed)
    if spec == old.get("spec") and meta == old.get("metadata"):
        return old
    new = dict(old, metadata=meta, spec=spec)
    bump_generation(old, new)
    return new


def _attached_binding(dkey: tuple, view: dict, obj: dict, old: dict | None, needed: dict,
                      now: str) -> tuple[dict, list]:
    """The attached binding of one dependency (``buildAttachedBinding`` + ``createOrUpdateAttachedBinding``).

    Returns:
        (the binding — ``old`` itself when unchanged —, conflict descriptions for the event).
    """
    _g, _kind, ns, name = dkey
    dependers = [needed[k][1] for k in sorted(needed)]
    overwrite = [((b.get("spec") or {}).get("conflictResolution") or "Abort") == "Overwrite" for b in dependers]
    preserve = [bool((b.get("spec") or {}).get("preserveResourcesOnDeletion")) for b in dependers]
    conflicts = []
    if any(overwrite) and not all(overwrite):
        conflicts.append("ConflictResolution conflicted (Overwrite vs Abort)")
    if any(preserve) and not all(preserve):
        conflicts.append("PreserveResourcesOnDeletion conflicted (true vs false)")
    old_meta = (old or {}).get("metadata") or {}
    vm = view["metadata"]
    labels = _depended_labels({}, needed)
    labels[C.RB_PERMANENT_ID_LABEL] = ((old_meta.get("labels") or {}).get(C.RB_PERMANENT_ID_LABEL)
                                       or permanent_id("ResourceBinding", ns, name))
    metadata = {
        "name": name, "namespace": ns,
        "labels": dict(sorted(labels.items())),
        "ownerReferences": [{"apiVersion": view["apiVersion"], "kind": view["kind"], "name": vm["name"],
                             "uid": vm.get("uid", ""), "controller": True, "blockOwnerDeletion": True}],
        "finalizers": [C.BINDING_CONTROLLER_FINALIZER],
        "creationTimestamp": old_meta.get("creationTimestamp") or now,
        "generation": old_meta.get("generation") or 1,
    }
    resource = {"apiVersion": view["apiVersion"], "kind": view["kind"], "namespace": vm.get("namespace") or ns,
                "name": vm["name"], "uid": vm.get("uid", ""), "resourceVersion": template_hash(obj)}
    spec = {"resource": resource, "requiredBy": _required_by(needed),
            "conflictResolution": "Overwrite" if any(overwrite) else "Abort",
            "preserveResourcesOnDeletion": any(preserve)}
    binding = {"apiVersion": C.WORK_API_V2, "kind": "ResourceBinding", "metadata": metadata, "spec": spec}
    if old is not None and old.get("status") is not None:
        binding["status"] = old["status"]
    bump_generation(old, binding)
    if old is not None and binding == old:
        return old, conflicts
    return binding, conflicts


# --------------------------------------------------------------------------- the pipeline step


def _needs_pass(bindings: dict) -> bool:
    for b in bindings.values():
        spec = b.get("spec") or {}
        if spec.get("propagateDeps") or spec.get("requiredBy"):
            return True
        if DEPENDENCIES_ANNOTATION in ((b.get("metadata") or {}).get("annotations") or {}) or is_attached(b):
            return True
    return False


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``dependencies-distributor`` (``pkg/dependenciesdistributor/``): attached
    bindings for the dependencies of every scheduled ResourceBinding with ``propagateDeps``."""
    if not _needs_pass(out.bindings):
        return False
    memo = ctx.memo.setdefault("dependencies_distributor", {})
    interpreter = getattr(ctx, "interpreter", None)
    if interpreter is None:
        from karmactl import interpreter
    inputs = template_inputs(loaded, ctx)
    cache = memo.setdefault("dependencies", {})

    def dependencies(view: dict) -> list:
        hit = cache.get(id(view))
        if hit is None or hit[0] is not view:
            try:
                hit = (view, interpreter.get_dependencies(view), None)
            except Exception as exc:  # reported by distribute, once per view
                hit = (view, None, exc)
            cache[id(view)] = hit
        if hit[2] is not None:
            raise hit[2]
        return hit[1]

    res = distribute(out.bindings, inputs.templates, lambda k: inputs.view(out, k), dependencies, now)
    for line in res.warnings:
        ctx.warn(line)
    for line in res.events:
        ctx.event(line)
    changed = False
    for bkey, b in res.bindings.items():
        changed = out.set_binding(bkey, b) or changed
    return changed


__all__ = ["DEPENDENCIES_ANNOTATION", "DistributorResult", "depended_by_label",
           "distribute", "resolve", "step"]
