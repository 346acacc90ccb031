"""Events in the state directory: ``computed/events/<namespace>/<name>.json``, one Event per file.

Events are ``events.k8s.io/v1`` objects (``karmactl/controllers/events.py`` derives and merges them);
a run stages them on the same :class:`~karmactl.store.fsio.TreeWriter` as its other computed files,
so they land with them or not at all. An Event's name starts with the name of the object it regards
(``nginx-deployment.3f2a...``), which is how the Events of one object are found without reading the
others. ``StateStore.load`` does not read this tree: Events are history, never input of a run.
"""
from __future__ import annotations

import os
import re

import orjson

from karmactl.controllers import events as events_core
from karmactl.controllers.events import derive_events, merge_events, regarding_key
from karmactl.store.fsio import TreeWriter
from karmactl.store.state import COMPUTED_DIR, InputError, dump_computed

EVENTS_DIR = f"{COMPUTED_DIR}/events"
EVENT_KEY = ("events.k8s.io", "Event")
CHANGE_INDEX = 3  # after bindings, Works and overlays in a run's change list
_SUFFIX = re.compile(r"\.[0-9a-f]{16}\.json$")


def event_rel(event: dict) -> str:
    """Path of an Event relative to the state directory."""
    m = event["metadata"]
    return f"{EVENTS_DIR}/{m['namespace']}/{m['name']}.json"


def _read(root, rel: str) -> dict:
    try:
        with open(os.path.join(str(root), rel), "rb") as fh:
            return orjson.loads(fh.read())
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read event file (delete it): {exc}", rel) from None


def load_events(root, namespace: str | None = None) -> list[dict]:
    """Every stored Event (of one namespace, or all), sorted by namespace and name.

    Raises:
        InputError: an unreadable event file (named).
    """
    base = os.path.join(str(root), EVENTS_DIR)
    if not os.path.isdir(base):
        return []
    namespaces = [namespace] if namespace is not None else sorted(os.listdir(base))
    out = []
    for ns in namespaces:
        d = os.path.join(base, ns)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".json") and not name.startswith("."):
                out.append(_read(root, f"{EVENTS_DIR}/{ns}/{name}"))
    return out


def events_regarding(root, objects: set) -> dict:
    """The stored Events of each of ``objects`` (``(group, kind, namespace, name)``, namespace ""
    for cluster-scoped ones): ``{object: [Event, ...]}``, objects without Events left out.

    Raises:
        InputError: an unreadable event file (named).
    """
    out: dict = {}
    for ev in _stored_for(root, objects):
        obj = regarding_key(ev.get("regarding") or {})
        if obj in objects:
            out.setdefault(obj, []).append(ev)
    return out


def _stored_for(root, objects: set) -> list[dict]:
    """Stored Events whose file names say they may regard one of ``objects`` (regarding keys)."""
    wanted: dict = {}
    for _group, _kind, ns, name in objects:
        wanted.setdefault(ns or "default", set()).add(name[:236])
    out = []
    for ns, names in sorted(wanted.items()):
        d = os.path.join(str(root), EVENTS_DIR, ns)
        try:
            files = sorted(os.listdir(d))
        except FileNotFoundError:
            continue
        for f in files:
            if _SUFFIX.search(f) and f[:-len(".0123456789abcdef.json")] in names:
                out.append(_read(root, f"{EVENTS_DIR}/{ns}/{f}"))
    return out


def stage_events(store, writer: TreeWriter, before, after, now: str, keep=None) -> list[tuple]:
    """Derive the Events of a run, merge them into the stored ones and stage the result on ``writer``.

    Args:
        store: the :class:`~karmactl.store.state.StateStore`.
        writer: the run's writer (committed or aborted with everything else).
        before, after: the loaded and the computed snapshot.
        now: the run's clock (RFC 3339).
        keep: as for :func:`karmactl.controllers.events.derive_events` (shards).

    Returns:
        ``[(3, key, action, relative_path)]`` as :meth:`StateStore.stage_changes` returns them.

    Raises:
        InputError: an unreadable stored event file.
        OSError: the file system refused a write.
    """
    new = derive_events(before, after, now, keep)
    if not new:
        return []
    stored = _stored_for(store.root, {regarding_key(e["regarding"]) for e in new})
    write, drop = merge_events(stored, new, now, limit=events_core.EVENTS_PER_OBJECT)
    changes = []
    for action, events in (("write", write), ("delete", drop)):
        for ev in events:
            rel = event_rel(ev)
            if action == "write":
                writer.write(rel, dump_computed(ev))
            else:
                writer.delete(rel)
            changes.append((CHANGE_INDEX, (*EVENT_KEY, ev["metadata"]["namespace"], ev["metadata"]["name"]), action, rel))
    return changes
