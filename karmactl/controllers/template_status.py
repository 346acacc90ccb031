"""Template status: the binding's aggregated status folded into the resource template's ``.status``.

Follows ``pkg/controllers/status/rb_status_controller.go`` / ``crb_status_controller.go``
(``updateResourceStatus``) with the native ``AggregateStatus`` hooks (semantics §9.9, §10.2). The
result lives in the template's overlay ``status`` (``computed/status/...``), so ``karmactl get deploy
nginx -o yaml`` shows e.g. ``readyReplicas: 3``. Kinds without a hook keep whatever status they had.
Runs in phase ``status`` after :mod:`karmactl.controllers.binding_status`.
"""
from __future__ import annotations

from karmactl.api.kinds import group_of
from karmactl.api.templates import merged_view, new_overlay


def template_status(template: dict, overlay: dict | None, binding: dict, now: str, interpreter) -> dict | None:
    """The template's new overlay, or None when nothing changes (no hook, or the same status).

    Args:
        template: the user-written template.
        overlay: its overlay (uid, generation, claim, status) or None.
        binding: its RB/CRB (``status.aggregatedStatus`` read).
        now: for the Job conditions Karmada stamps.
        interpreter: the run's ``karmactl.interpreter.Interpreter`` (``has_aggregate_hook``,
            ``aggregate_status``; the module itself answers natively).

    Raises:
        InterpreterError: a member status has the wrong shape.
    """
    if not interpreter.has_aggregate_hook(template.get("apiVersion") or "", template.get("kind") or ""):
        return None
    view = merged_view(template, overlay)
    items = (binding.get("status") or {}).get("aggregatedStatus") or []
    new_status = interpreter.aggregate_status(view, items, now=now)
    if new_status is None or new_status == (view.get("status") or {}):
        return None
    key = _template_key(binding)
    new = dict(overlay) if overlay is not None else new_overlay(key, template)
    new["status"] = new_status
    return new


def _template_key(binding: dict) -> tuple:
    res = (binding.get("spec") or {}).get("resource") or {}
    return (group_of(res.get("apiVersion") or ""), res.get("kind"), res.get("namespace") or "", res.get("name"))


def step(loaded, out, now: str, ctx) -> bool:
    """Phase ``status``: aggregate every scheduled binding's status into its template."""
    from karmactl.interpreter import Interpreter

    interpreter = Interpreter.of(ctx)

    memo = ctx.memo.setdefault("template_status", {})
    changed = False
    for bkey in sorted(out.bindings):
        binding = out.bindings[bkey]
        if not (binding.get("status") or {}).get("lastScheduledTime"):
            continue
        tkey = _template_key(binding)
        template = loaded.user.get(tkey)
        if template is None:
            continue
        overlay = out.overlays.get(tkey)
        seen = memo.get(tkey)
        if seen is not None and seen[0] is template and seen[1] is overlay and seen[2] is binding:
            continue  # the very inputs of its last aggregation: the same status again
        try:
            new = template_status(template, overlay, binding, now, interpreter)
        except interpreter.InterpreterError as exc:
            ctx.warn(f"{tkey[1]} {tkey[2] + '/' if tkey[2] else ''}{tkey[3]}: cannot aggregate status: {exc}")
            continue
        if new is not None:
            changed = out.set_overlay(tkey, new) or changed
        memo[tkey] = (template, out.overlays.get(tkey), binding)
    return changed



__all__ = ["step", "template_status"]
