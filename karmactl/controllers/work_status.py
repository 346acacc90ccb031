"""Work status collection: a member object's status and health into ``work.status.manifestStatuses``.

Follows ``pkg/controllers/status/work_status_controller.go`` (semantics §9.7). Pure: the member
layer reads the member object and calls :func:`with_manifest_status`.
"""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.kinds import group_of
from karmactl.api.objects import deepcopy


def identifier(manifest: dict, ordinal: int = 0) -> dict:
    """``ResourceIdentifier`` of a manifest: ``{ordinal, group, version, kind, resource: "", namespace, name}``."""
    api_version = manifest.get("apiVersion") or ""
    md = manifest.get("metadata") or {}
    return {"ordinal": ordinal, "group": group_of(api_version), "version": api_version.rsplit("/", 1)[-1],
            "kind": manifest.get("kind") or "", "resource": "", "namespace": md.get("namespace") or "",
            "name": md.get("name") or ""}


def manifest_status(manifest: dict, member_obj: dict, interpreter, ordinal: int = 0) -> dict:
    """The ``manifestStatuses`` entry for one member object.

    Args:
        manifest: the Work manifest (for the identifier).
        member_obj: the member's copy (with ``apiVersion``/``kind`` set).
        interpreter: the run's ``karmactl.interpreter.Interpreter`` (``reflect_status``,
            ``interpret_health``, ``InterpreterError``; the module itself answers natively).
        ordinal: index of the manifest in the Work.

    Returns:
        ``{identifier, status?, health}``: ``status`` from ``reflect_status`` (left out when None or
        when reflection fails, as upstream skips the update), ``health`` Healthy when the kind has
        no health hook, Unknown when the hook fails.
    """
    entry: dict = {"identifier": identifier(manifest, ordinal)}
    try:
        status = interpreter.reflect_status(member_obj)
    except interpreter.InterpreterError:
        status = None
    if status is not None:
        entry["status"] = status
    try:
        health = interpreter.interpret_health(member_obj)
    except interpreter.InterpreterError:
        health = C.UNKNOWN
    entry["health"] = health or C.HEALTHY
    return entry


def with_manifest_status(work: dict, entry: dict | None) -> dict:
    """The Work with ``status.manifestStatuses`` replaced by ``[entry]`` (or removed for None);
    ``work`` itself when unchanged. Terminating Works are not updated (§9.7)."""
    if (work.get("metadata") or {}).get("deletionTimestamp"):
        return work
    status = work.get("status") or {}
    want = [entry] if entry is not None else None
    if status.get("manifestStatuses") == want or (want is None and "manifestStatuses" not in status):
        return work
    new = dict(work)
    new_status = deepcopy(status)
    if want is None:
        new_status.pop("manifestStatuses", None)
    else:
        new_status["manifestStatuses"] = want
    new["status"] = new_status
    return new


def with_observation(work: dict, entry: dict | None, now: str) -> dict:
    """The Work with ``manifestStatuses`` set to ``[entry]`` as observed at ``now``.

    When the entry differs from the recorded one, ``karmactl.io/observed-at`` moves to ``now``;
    an unchanged observation keeps the Work as it is (``work`` itself), so an observation that
    holds costs no write. Terminating Works are not updated (as :func:`with_manifest_status`).
    """
    new = with_manifest_status(work, entry)
    if new is work:
        return work
    return with_annotation(new, C.OBSERVED_AT_ANNOTATION, now if entry is not None else None)


def with_annotation(work: dict, key: str, value: str | None) -> dict:
    """``work`` with annotation ``key`` set to ``value`` (removed for None); ``work`` itself when
    it already is."""
    md = work.get("metadata") or {}
    annotations = md.get("annotations") or {}
    if annotations.get(key) == value:
        return work
    annotations = dict(annotations)
    if value is None:
        annotations.pop(key, None)
    else:
        annotations[key] = value
    metadata = dict(md)
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    else:
        metadata.pop("annotations", None)
    return dict(work, metadata=metadata)


__all__ = ["identifier", "manifest_status", "with_annotation", "with_manifest_status", "with_observation"]
