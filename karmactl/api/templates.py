"""Template bookkeeping: what the API server would add to a resource template.

A file has no API server to give objects a uid, a generation and a creation time, so karmactl
keeps them in the template's overlay (``computed/status/...``): ``metadata.uid`` (deterministic,
unless the file sets one), ``metadata.generation`` (1, bumped when anything outside metadata and
status changes, as the API server bumps it on spec changes), ``metadata.creationTimestamp`` (the
first run that saw it), plus the detector's claim labels/annotations and the aggregated status.
"""
from __future__ import annotations


from karmactl.api.objects import content_hash, permanent_id


def spec_hash(obj: dict) -> str:
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata", "status")}
    return content_hash(body)


def new_overlay(key, obj: dict) -> dict:
    """An empty overlay for ``obj`` (apiVersion, kind, name, namespace)."""
    m = {"name": obj["metadata"]["name"]}
    if key[2]:
        m["namespace"] = key[2]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": m}


def refresh_overlay(key, obj: dict, overlay: dict | None, claim: dict | None, now: str,
                    obj_hash: str | None = None) -> dict:
    """The template's overlay after this run: identity, generation, creation time and claim.

    Args:
        key: (group, kind, namespace, name).
        obj: the user-written template.
        overlay: the current overlay or None.
        claim: ``{"labels": {...}, "annotations": {...}}`` from the detector ({} when unclaimed);
            None keeps the current claim.
        now: the run's clock.
        obj_hash: ``spec_hash(obj)`` when the caller already has it.

    Returns:
        The overlay (``overlay`` itself when nothing changed).
    """
    h = obj_hash or spec_hash(obj)
    if overlay is not None and _current(overlay, obj, claim, h):
        return overlay
    if overlay is not None:  # copy only the parts this function may change
        new = dict(overlay, metadata=dict(overlay["metadata"]), observed=dict(overlay.get("observed") or {}))
    else:
        new = new_overlay(key, obj)
    m = new["metadata"]
    fm = obj.get("metadata") or {}
    m["uid"] = fm.get("uid") or m.get("uid") or permanent_id("uid", *key)
    m.setdefault("creationTimestamp", fm.get("creationTimestamp") or now)
    observed = new.setdefault("observed", {})
    if "generation" not in m:
        m["generation"] = fm.get("generation") or 1
    elif observed.get("specHash") and observed["specHash"] != h:
        m["generation"] = m["generation"] + 1
    observed["specHash"] = h
    if claim is not None:
        for part in ("labels", "annotations"):
            if claim.get(part):
                m[part] = dict(sorted(claim[part].items()))
            else:
                m.pop(part, None)
    if overlay is not None and new == overlay:
        return overlay
    return new


def _current(overlay: dict, obj: dict, claim: dict | None, h: str) -> bool:
    """Whether :func:`refresh_overlay` would return ``overlay`` unchanged (checked without copying)."""
    m = overlay.get("metadata") or {}
    if not (m.get("uid") and m.get("creationTimestamp") and m.get("generation")):
        return False
    if (overlay.get("observed") or {}).get("specHash") != h:
        return False
    fuid = (obj.get("metadata") or {}).get("uid")
    if fuid and fuid != m["uid"]:
        return False
    if claim is not None:
        for part in ("labels", "annotations"):
            if (claim.get(part) or None) != (m.get(part) or None):
                return False
    return True


def template_view(obj: dict, overlay: dict | None) -> dict:
    """The template as Karmada sees it: the user object with the overlay's uid, generation,
    creationTimestamp and claim labels/annotations (status not included)."""
    view = dict(obj)
    view.pop("status", None)
    m = dict(obj.get("metadata") or {})
    om = (overlay or {}).get("metadata") or {}
    for fname in ("uid", "generation", "creationTimestamp"):
        if fname in om:
            m[fname] = om[fname]
    for part in ("labels", "annotations"):
        if om.get(part):
            merged = dict(m.get(part) or {})
            merged.update(om[part])
            m[part] = merged
    view["metadata"] = m
    return view


def merged_view(obj: dict, overlay: dict | None) -> dict:
    """What ``get`` shows: :func:`template_view` plus the overlay's status (or the file's)."""
    view = template_view(obj, overlay)
    if overlay and "status" in overlay:
        view["status"] = overlay["status"]
    elif "status" in obj:
        view["status"] = obj["status"]
    for part in ("spec",):
        extra = (overlay or {}).get(part)
        if extra:
            merged = dict(view.get(part) or {})
            for k, v in extra.items():
                if k == "taints":
                    merged[k] = list(merged.get(k) or []) + [t for t in v if t not in (merged.get(k) or [])]
                else:
                    merged.setdefault(k, v)
            view[part] = merged
    return view
