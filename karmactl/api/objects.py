"""Small helpers on Kubernetes-shaped objects held as plain dicts (the in-memory form everywhere).

Objects are JSON-like dicts exactly as they appear in YAML (``apiVersion``, ``kind``, ``metadata``,
``spec``, ``status``). Times are RFC 3339 strings in UTC with a ``Z`` suffix, second precision.
"""
from __future__ import annotations

import hashlib
import math
from functools import lru_cache
from datetime import datetime, timedelta, timezone

# A fixed namespace so permanent ids are deterministic: the same object key always gets the
# same id, which keeps files stable across runs (Karmada uses random UUIDs; DESIGN §3.5).
_ID_NAMESPACE_BYTES = bytes.fromhex("6c1f8f0e4a5b5b8e9a636b61726d6163")  # the UUID 6c1f8f0e-4a5b-5b8e-9a63-6b61726d6163


@lru_cache(maxsize=1 << 17)
def permanent_id(*parts: str) -> str:
    """A deterministic UUIDv5 for an object key, e.g. ``permanent_id("pp", "default", "nginx")``
    (memoized: a run asks for the same ids pass after pass).

    The same value as ``str(uuid.uuid5(namespace, "/".join(parts)))`` (RFC 4122 §4.3: SHA-1 of the
    namespace and the name, version 5, variant RFC 4122), without building UUID objects.
    """
    digest = bytearray(hashlib.sha1(_ID_NAMESPACE_BYTES + "/".join(parts).encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def canonical_json(data) -> str:
    """Compact JSON with sorted keys (the form Karmada's annotations and karmactl's hashes use)."""
    import orjson

    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str).decode()


def content_hash(data) -> str:
    """A short, stable hash of JSON-like data (16 hex digits of SHA-256 over :func:`canonical_json`)."""
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()[:16]


def meta(obj: dict) -> dict:
    """``obj["metadata"]``, created if missing."""
    return obj.setdefault("metadata", {})


def name_of(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def namespace_of(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("namespace") or ""


def labels_of(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("labels") or {}


def annotations_of(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("annotations") or {}


_ATOMS = frozenset((str, int, float, bool, type(None)))


def deepcopy(obj):
    """A deep copy of JSON-like data (dicts, lists and scalars; scalars are shared).

    Several times faster than the standard library's ``copy.deepcopy``: it recurses only into
    containers and skips the memo a general copy needs. Objects read from YAML or JSON never
    share or contain themselves, so no memo is needed. Dict and list subclasses (ruamel's
    ``CommentedMap``) come back as plain dicts and lists.
    """
    if type(obj) is dict or isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            out[k] = v if type(v) in _ATOMS else deepcopy(v)
        return out
    if isinstance(obj, list):
        return [v if type(v) in _ATOMS else deepcopy(v) for v in obj]
    return obj


TIME_FLOOR = "1970-01-01T00:00:00Z"
TIME_CEILING = "9999-01-01T00:00:00Z"
"""The times karmactl accepts as input (``--now``, and the time fields it reads from objects: a
Cluster condition's ``lastTransitionTime``, a taint's ``timeAdded``, an eviction task's
``creationTimestamp``...): from :data:`TIME_FLOOR` up to, not including, :data:`TIME_CEILING`
(:func:`time_error`). Below the floor is before any Kubernetes clock (``0001-01-01T00:00:00Z`` is
Go's zero time, which Kubernetes writes as null); the year left above the ceiling keeps every sum
of an accepted time and a duration computable (:func:`add_seconds` saturates beyond it)."""

_MIN = datetime.min.replace(tzinfo=timezone.utc)
_MAX = datetime.max.replace(tzinfo=timezone.utc, microsecond=0)


def format_time(moment: datetime) -> str:
    """RFC 3339, UTC, second precision: ``2026-01-01T00:00:00Z`` (four-digit year, zero-padded)."""
    m = moment.astimezone(timezone.utc)
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}Z"


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 timestamp (``Z`` or an offset; fractional seconds allowed) into aware UTC.

    Raises:
        ValueError: the text is not RFC 3339 (or not a string), or names a moment outside years
            1..9999 in UTC (e.g. ``0001-01-01T00:00:00+01:00``).
    """
    if not isinstance(text, str):
        raise ValueError(f"timestamp {text!r} is not a string")
    text = text.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            raise ValueError(f"timestamp {text!r} has no time zone")
        return moment.astimezone(timezone.utc)
    except OverflowError:
        raise ValueError(f"timestamp {text!r} is out of range") from None


def time_error(text) -> str | None:
    """Why ``text`` is not a time karmactl accepts as input (None when it is): RFC 3339 with a time
    zone, from :data:`TIME_FLOOR` up to, not including, :data:`TIME_CEILING`."""
    try:
        moment = parse_time(text)
    except ValueError:
        return "must be an RFC 3339 time with a time zone, e.g. 2026-01-01T00:00:00Z"
    if not parse_time(TIME_FLOOR) <= moment < parse_time(TIME_CEILING):
        return f"must be a time from {TIME_FLOOR} up to {TIME_CEILING} (karmactl computes with no other)"
    return None


def add_seconds(text: str, seconds: float) -> str:
    """``text`` + ``seconds`` as an RFC 3339 string, saturating: a sum beyond what a date can hold
    (a timeout of 1e300 seconds) is ``9999-12-31T23:59:59Z``, one before it ``0001-01-01T00:00:00Z``.

    Raises:
        ValueError: ``text`` is not a time (:func:`parse_time`) or ``seconds`` is NaN.
    """
    moment = parse_time(text)
    seconds = float(seconds)
    if math.isnan(seconds):
        raise ValueError("cannot add NaN seconds to a time")
    try:
        return format_time(moment + timedelta(seconds=seconds))
    except OverflowError:
        return format_time(_MAX if seconds > 0 else _MIN)


def seconds_between(earlier: str, later: str) -> float:
    """``later - earlier`` in seconds (negative when ``later`` is before ``earlier``).

    Raises:
        ValueError: either is not a time (:func:`parse_time`).
    """
    return (parse_time(later) - parse_time(earlier)).total_seconds()


def human_duration(seconds: float) -> str:
    """kubectl's short human duration (``k8s.io/apimachinery/pkg/util/duration.HumanDuration``):
    ``45s``, ``3m2s``, ``32m``, ``4h10m``, ``30h``, ``2d3h``, ``20d``, ``3y``."""
    secs = int(seconds)
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        rest = secs % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y"


def get_condition(obj: dict, ctype: str) -> dict | None:
    """The ``status.conditions`` entry of type ``ctype``, or None."""
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return cond
    return None


def set_condition(obj: dict, ctype: str, status: str, reason: str, message: str, now: str,
                  observed_generation: int | None = None) -> bool:
    """Set a metav1.Condition with ``SetStatusCondition`` semantics; returns True if anything changed.

    ``lastTransitionTime`` changes only when ``status`` changes (``now`` is used then, or when the
    condition is new). Conditions are kept sorted by type so files are stable.
    """
    conds = obj.setdefault("status", {}).setdefault("conditions", [])
    for cond in conds:
        if cond.get("type") == ctype:
            changed = False
            if cond.get("status") != status:
                cond["status"] = status
                cond["lastTransitionTime"] = now
                changed = True
            for key, value in (("reason", reason), ("message", message)):
                if cond.get(key) != value:
                    cond[key] = value
                    changed = True
            if observed_generation is not None and cond.get("observedGeneration") != observed_generation:
                cond["observedGeneration"] = observed_generation
                changed = True
            if not cond.get("lastTransitionTime"):
                cond["lastTransitionTime"] = now
                changed = True
            return changed
    new = {"type": ctype, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}
    if observed_generation is not None:
        new["observedGeneration"] = observed_generation
    conds.append(new)
    conds.sort(key=lambda c: c.get("type", ""))
    return True


def remove_condition(obj: dict, ctype: str) -> bool:
    """Drop the condition of type ``ctype``; returns True if one was removed."""
    conds = (obj.get("status") or {}).get("conditions")
    if not conds:
        return False
    kept = [c for c in conds if c.get("type") != ctype]
    if len(kept) == len(conds):
        return False
    obj["status"]["conditions"] = kept
    return True


def bump_generation(old: dict | None, new: dict) -> None:
    """Give ``new`` the generation Kubernetes would: 1 on create, +1 when ``spec`` changed."""
    m = meta(new)
    if old is None:
        m["generation"] = m.get("generation") or 1
        return
    old_gen = (old.get("metadata") or {}).get("generation") or 1
    m["generation"] = old_gen + 1 if old.get("spec") != new.get("spec") else old_gen


def describe_key(key: tuple) -> str:
    """A snapshot key ``(group, kind, namespace, name)`` for people: ``Deployment default/nginx``,
    ``Cluster member1``."""
    _, kind, ns, name = key
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"



# metadata the API server fills in: a manifest written back must not carry it (kubectl apply drops
# these too, objectmeta.go's ``ObjectMetaUpdateValidation`` would refuse most of them on update)
SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
                   "deletionGracePeriodSeconds", "managedFields", "selfLink")


def _computed_metadata() -> tuple[frozenset, frozenset]:
    from karmactl.api import constants as C

    labels = frozenset({
        C.PP_PERMANENT_ID_LABEL, C.CPP_PERMANENT_ID_LABEL, C.OP_PERMANENT_ID_LABEL, C.RB_PERMANENT_ID_LABEL,
        C.CRB_PERMANENT_ID_LABEL, C.WORK_PERMANENT_ID_LABEL, C.MANAGED_LABEL, C.CLAIMED_BY_LABEL,
    })
    annotations = frozenset({
        C.PP_NAMESPACE_ANNOTATION, C.PP_NAME_ANNOTATION, C.CPP_NAME_ANNOTATION, C.RB_NAMESPACE_ANNOTATION,
        C.RB_NAME_ANNOTATION, C.CRB_NAME_ANNOTATION, C.WORK_NAME_ANNOTATION, C.WORK_NAMESPACE_ANNOTATION,
        C.APPLIED_PLACEMENT_ANNOTATION, C.APPLIED_OVERRIDES_ANNOTATION, C.APPLIED_CLUSTER_OVERRIDES_ANNOTATION,
        C.TEMPLATE_UID_ANNOTATION, C.TEMPLATE_GENERATION_ANNOTATION, C.MANAGED_LABELS_ANNOTATION,
        C.MANAGED_ANNOTATIONS_ANNOTATION, *C.WORK_RECORD_ANNOTATIONS,
    })
    return labels, annotations


COMPUTED_LABELS, COMPUTED_ANNOTATIONS = _computed_metadata()


def strip_server_fields(obj: dict) -> tuple[dict, list[str]]:
    """``obj`` without what a server or a controller fills in, and the paths removed.

    Removed: ``status`` (except a Cluster's: written by hand it is the member's health report that
    offline runs read, as ``karmactl cluster condition set`` records one); ``metadata.uid``/``resourceVersion``/``generation``/``creationTimestamp``/
    ``deletionTimestamp``/``deletionGracePeriodSeconds``/``managedFields``/``selfLink``; the labels
    and annotations Karmada's detector, binding and execution controllers put on templates,
    policies and member copies (``propagationpolicy.karmada.io/permanent-id``,
    ``propagationpolicy.karmada.io/name``, ``resourcetemplate.karmada.io/uid``...,
    ``well_known_constants.go`` of Karmada's policy v1alpha1 and work v1alpha2 APIs)
    and karmactl's ``karmactl.io/observed-at``/``applied-version``. Labels and annotations people
    set (``work.karmada.io/conflict-resolution``, ``resourcetemplate.karmada.io/deletion-protected``)
    stay. Empty ``labels``/``annotations`` maps left behind are dropped.

    So ``karmactl get -o yaml > x.yaml; karmactl apply -f x.yaml`` stores what was written, not
    a run's results. ``obj`` is not changed; the result shares unchanged subtrees with it.

    Returns:
        ``(stripped, ["status", "metadata.uid", "metadata.labels.<key>", ...])``.
    """
    removed: list[str] = []
    out = dict(obj)
    is_cluster = obj.get("kind") == "Cluster" and str(obj.get("apiVersion", "")).startswith("cluster.karmada.io/")
    if "status" in out and not is_cluster:
        del out["status"]
        removed.append("status")
    md = out.get("metadata")
    if isinstance(md, dict):
        md = dict(md)
        for field in SERVER_METADATA:
            if field in md:
                del md[field]
                removed.append(f"metadata.{field}")
        for part, computed in (("labels", COMPUTED_LABELS), ("annotations", COMPUTED_ANNOTATIONS)):
            values = md.get(part)
            if isinstance(values, dict) and computed.intersection(values):
                kept = {k: v for k, v in values.items() if k not in computed}
                removed.extend(f"metadata.{part}.{k}" for k in values if k in computed)
                if kept:
                    md[part] = kept
                else:
                    del md[part]
        out["metadata"] = md
    return out, removed
