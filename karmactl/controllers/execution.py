"""Execution controller decisions: what to do with one Work's manifest in its member cluster.

Follows ``pkg/controllers/execution/execution_controller.go`` and
``pkg/util/objectwatcher/objectwatcher.go`` (semantics §8.2, §9.5, §9.6). Pure: the member layer
(``karmactl.members``) reads member objects, calls these functions and sends what they decide.

karmactl creates member objects with server-side apply (field manager ``karmactl``) and updates
them as Karmada does, by replacing the member copy with the retained manifest (a PUT with the
copy's ``resourceVersion``; a conflict is retried by the next run). To send no write for an
unchanged Work, the member copy must contain everything karmactl would apply (:func:`contains`),
carry the hash of the Work manifest it was last applied from (:data:`APPLIED_HASH_ANNOTATION`: the
hash catches fields the Work dropped, which a containment check cannot see), and still have the
version karmactl recorded after its last write (:func:`object_version`: a change made on the
member moves it).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from karmactl.api import constants as C
from karmactl.api.objects import deepcopy, get_condition, set_condition

FIELD_MANAGER = "karmactl"
APPLIED_HASH_ANNOTATION = "karmactl.io/applied-hash"

# Labels and annotations Karmada strips from a member object it hands over on Work deletion with
# preserveResourcesOnDeletion (``RemoveKarmadaLabelsAndAnnotations``, semantics §1.8, §9.5).
KARMADA_LABELS = (C.PP_PERMANENT_ID_LABEL, C.CPP_PERMANENT_ID_LABEL, C.RB_PERMANENT_ID_LABEL,
                  C.CRB_PERMANENT_ID_LABEL, C.WORK_PERMANENT_ID_LABEL, C.MANAGED_LABEL)
KARMADA_ANNOTATIONS = (C.PP_NAMESPACE_ANNOTATION, C.PP_NAME_ANNOTATION, C.CPP_NAME_ANNOTATION,
                       C.TEMPLATE_UID_ANNOTATION, C.TEMPLATE_GENERATION_ANNOTATION, C.RB_NAMESPACE_ANNOTATION,
                       C.RB_NAME_ANNOTATION, C.CRB_NAME_ANNOTATION, C.WORK_NAME_ANNOTATION,
                       C.WORK_NAMESPACE_ANNOTATION, C.CONFLICT_RESOLUTION_ANNOTATION,
                       C.MANAGED_LABELS_ANNOTATION, C.MANAGED_ANNOTATIONS_ANNOTATION,
                       C.APPLIED_OVERRIDES_ANNOTATION, C.APPLIED_CLUSTER_OVERRIDES_ANNOTATION,
                       APPLIED_HASH_ANNOTATION)

# Applied first, in this order: what other objects live in or are defined by.
_KIND_ORDER = {"Namespace": 0, "CustomResourceDefinition": 1}


def apply_order(manifest: dict) -> int:
    """Sort rank of a manifest: Namespaces (0), then CRDs (1), then everything else (2)."""
    return _KIND_ORDER.get(manifest.get("kind") or "", 2)


def manifest_of(work: dict) -> dict | None:
    """The Work's single manifest (binding Works carry exactly one), or None."""
    manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
    return manifests[0] if manifests else None


def is_terminating(work: dict) -> bool:
    return bool((work.get("metadata") or {}).get("deletionTimestamp"))


def is_suspended(work: dict) -> bool:
    return bool((work.get("spec") or {}).get("suspendDispatching"))


def manifest_hash(manifest: dict) -> str:
    """A short, stable hash of a Work manifest (what karmactl last applied from it)."""
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def is_managed(member_obj: dict) -> bool:
    """Whether Karmada (or karmactl) created the member object: label ``karmada.io/managed: "true"``."""
    return ((member_obj.get("metadata") or {}).get("labels") or {}).get(C.MANAGED_LABEL) == "true"


def conflict_message(manifest: dict, cluster: str) -> str:
    """Karmada's refusal to take over a pre-existing object (``objectwatcher.go``, §9.5 step 4)."""
    md = manifest.get("metadata") or {}
    return (f"resource(kind={manifest.get('kind')}, {md.get('namespace', '')}/{md.get('name', '')}) already exists "
            f"in the cluster {cluster} and the {C.CONFLICT_RESOLUTION_ANNOTATION} strategy value is empty, "
            f"Karmada will not manage this resource")


@dataclass(frozen=True)
class ApplyPlan:
    """What to do with one manifest.

    Attributes:
        action: ``create`` (server-side apply of a new object), ``update`` (replace the member
            copy with ``body``, a PUT carrying its ``resourceVersion``), ``skip`` (the member copy
            is as desired) or ``conflict``.
        body: the object to send (create/update), else None.
        error: the Applied failure message for ``conflict``.
        reason: why an update is needed: ``manifest changed`` (the Work's manifest differs from
            what was applied) or ``member copy changed`` (someone changed it on the member).
    """

    action: str
    body: dict | None = None
    error: str | None = None
    reason: str = ""


def object_version(member_obj: dict) -> str:
    """The member copy's version as ``objectwatcher`` records it: ``gen:<metadata.generation>``
    for objects with a generation (only spec changes move it), else ``rv:<resourceVersion>``."""
    md = member_obj.get("metadata") or {}
    generation = md.get("generation")
    if generation:
        return f"gen:{generation}"
    return f"rv:{md.get('resourceVersion') or ''}"


def plan_apply(manifest: dict, member_obj: dict | None, cluster: str, retain,
               recorded_version: str | None = None) -> ApplyPlan:
    """Decide how to bring the member copy to ``manifest`` (semantics §9.5 sync step 4, §9.6).

    Follows ``pkg/util/objectwatcher/objectwatcher.go``: an existing copy is updated when the
    manifest changed since karmactl applied it (the applied-hash annotation), when it lacks a
    value of the manifest, or when its version moved since karmactl's last write (someone changed
    it on the member: ``kubectl scale``, ``kubectl edit``, an added env var). The update makes the
    copy equal to the manifest, keeping only what the interpreter's retain rules keep (replicas
    under an HPA, ``clusterIP``, finalizers, member-side labels and annotations, status...): it is
    a replace (PUT with the copy's ``resourceVersion``), so fields a member user added go away.

    Args:
        manifest: the Work's manifest (already pruned by the binding controller).
        member_obj: the member's copy, or None when absent.
        cluster: the member name (for the conflict message).
        retain: ``interpreter.retain(desired, observed) -> dict`` (member-owned fields kept).
        recorded_version: :func:`object_version` of the copy after karmactl's last write to it
            (the Work's ``karmactl.io/applied-version``), or None when there is no record (then
            only the manifest comparison applies).

    Returns:
        An :class:`ApplyPlan`.

    Raises:
        InterpreterError: from ``retain`` (the caller reports it as an apply failure).
    """
    h = manifest_hash(manifest)
    if member_obj is None:
        body = deepcopy(manifest)
        body.setdefault("metadata", {}).setdefault("annotations", {})[APPLIED_HASH_ANNOTATION] = h
        return ApplyPlan("create", body)
    overwrite = (((manifest.get("metadata") or {}).get("annotations") or {}).get(C.CONFLICT_RESOLUTION_ANNOTATION)
                 == "overwrite")
    if not is_managed(member_obj) and not overwrite:
        return ApplyPlan("conflict", error=conflict_message(manifest, cluster))
    body = retain(manifest, member_obj)
    md = body.setdefault("metadata", {})
    md.setdefault("annotations", {})[APPLIED_HASH_ANNOTATION] = h
    observed_md = member_obj.get("metadata") or {}
    if observed_md.get("resourceVersion"):
        md["resourceVersion"] = observed_md["resourceVersion"]
    if member_obj.get("status") is not None and "status" not in body:
        # a replace must not wipe status where the kind has no status subresource
        body["status"] = deepcopy(member_obj["status"])
    if ((observed_md.get("annotations") or {}).get(APPLIED_HASH_ANNOTATION) != h
            or not contains(member_obj, body)):
        return ApplyPlan("update", body, reason="manifest changed")
    if recorded_version is not None and recorded_version != object_version(member_obj):
        return ApplyPlan("update", body, reason="member copy changed")
    return ApplyPlan("skip")


_QUANTITY_PARENTS = ("requests", "limits", "overhead", "capacity", "allocatable", "hard")


def contains(actual, desired, _top: bool = True, _quantities: bool = False) -> bool:
    """Whether ``actual`` (a member object) already holds every value of ``desired``.

    Mappings: every key of ``desired`` is in ``actual`` with a contained value (top-level
    ``apiVersion`` and ``kind`` are skipped: list items of real API servers omit them); an empty
    mapping, list, string or null in ``desired`` matches a missing key (the server drops empty
    fields). Lists: same length, item by item. Resource quantities (values under ``requests``,
    ``limits``, ...) compare by value (``0.5`` == ``500m``), since API servers canonicalise them.
    """
    if isinstance(desired, dict):
        if not isinstance(actual, dict):
            return not desired and actual is None
        for key, value in desired.items():
            if _top and key in ("apiVersion", "kind"):
                continue
            if key not in actual:
                if value in (None, {}, [], ""):
                    continue
                return False
            if not contains(actual[key], value, False, _quantities or key in _QUANTITY_PARENTS):
                return False
        return True
    if isinstance(desired, list):
        if not isinstance(actual, list) or len(actual) != len(desired):
            return not desired and not actual
        return all(contains(a, d, False, _quantities) for a, d in zip(actual, desired))
    if desired == actual and type(desired) is type(actual):
        return True
    if _quantities and isinstance(desired, (str, int)) and isinstance(actual, (str, int)):
        from karmactl.api.quantity import QuantityError, parse_quantity
        try:
            return parse_quantity(desired) == parse_quantity(actual)
        except QuantityError:
            return False
    return False


def strip_patch(member_obj: dict) -> dict | None:
    """A JSON merge patch removing Karmada's labels/annotations (preserveResourcesOnDeletion), or
    None when the member object carries none of them (``RemoveKarmadaLabelsAndAnnotations``)."""
    md = member_obj.get("metadata") or {}
    patch: dict = {}
    for part, keys in (("labels", KARMADA_LABELS), ("annotations", KARMADA_ANNOTATIONS)):
        present = [k for k in keys if k in (md.get(part) or {})]
        if present:
            patch[part] = {k: None for k in present}
    return {"metadata": patch} if patch else None


# --------------------------------------------------------------------------- Work conditions


def with_dispatching(work: dict, now: str) -> dict:
    """The Work with its ``Dispatching`` condition set from ``spec.suspendDispatching`` (§8.2).

    Returns ``work`` itself when the condition is already right (lastTransitionTime changes only
    when the status flips).
    """
    if is_suspended(work):
        want = ("False", C.REASON_SUSPEND_DISPATCHING, C.MSG_SUSPEND_DISPATCHING)
    else:
        want = ("True", C.REASON_DISPATCHING, C.MSG_DISPATCHING)
    return _with_condition(work, C.COND_DISPATCHING, want, now)


def with_applied(work: dict, ok: int, total: int, errors: list[str], now: str) -> dict:
    """The Work with its ``Applied`` condition (§9.5 step 5): True/``AppliedSuccessful`` when every
    manifest applied, else False/``AppliedFailed`` ``Failed to apply all manifests (ok/total): errs``."""
    if not errors:
        want = ("True", C.REASON_APPLIED_SUCCESSFUL, C.MSG_APPLIED_SUCCESSFUL)
    else:
        want = ("False", C.REASON_APPLIED_FAILED,
                f"Failed to apply all manifests ({ok}/{total}): {', '.join(errors)}")
    return _with_condition(work, C.COND_APPLIED, want, now)


def _with_condition(work: dict, ctype: str, want: tuple[str, str, str], now: str) -> dict:
    cond = get_condition(work, ctype)
    if cond is not None and (cond.get("status"), cond.get("reason"), cond.get("message")) == want:
        return work
    new = dict(work)
    new["status"] = deepcopy(work.get("status") or {})
    set_condition(new, ctype, *want, now)
    return new




def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``execution``: the ``Dispatching`` condition of every Work that is not being
    deleted, from ``spec.suspendDispatching`` (``pkg/controllers/execution/execution_controller.go``
    sets it whether or not the member is reached, so offline and online runs agree). Applying
    the manifests is the member layer's part (``karmactl/members/executing.py``)."""
    changed = False
    for wkey in sorted(out.works):
        work = out.works[wkey]
        if is_terminating(work):
            continue
        new = with_dispatching(work, now)
        if new is not work:
            if is_suspended(new):
                ctx.event(f"work {wkey[2]}/{wkey[3]}: dispatching suspended")
            changed = out.set_work(wkey, new) or changed
    return changed


__all__ = ["FIELD_MANAGER", "APPLIED_HASH_ANNOTATION", "ApplyPlan", "apply_order", "contains", "conflict_message",
           "is_managed", "is_suspended", "is_terminating", "manifest_hash", "manifest_of", "object_version", "plan_apply",
           "step", "strip_patch", "with_applied", "with_dispatching"]
