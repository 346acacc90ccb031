"""Events in the state directory: one file per object they regard,
``computed/events/<namespace>/<kind>.<group>.<name>.json``, holding that object's Events as an
``events.k8s.io/v1`` EventList (newest last; at most ``EVENTS_PER_OBJECT``).

Events are ``events.k8s.io/v1`` objects (``karmactl/controllers/events.py`` derives and merges them);
a run stages them on the same :class:`~karmactl.store.fsio.TreeWriter` as its other computed files,
so they land with them or not at all. One file per regarded object keeps a cold run's file count
near one per computed object (a template, its binding and its Works each get one), and the Events
of an object are read without listing others. ``StateStore.load`` does not read this tree: Events
are history, never input of a run. Events about cluster-scoped objects live in ``default``.
"""
from __future__ import annotations

import os

import orjson

from karmactl.controllers import events as events_core
from karmactl.controllers.events import derive_events, last_seen, merge_events, regarding_key
from karmactl.store.fsio import TreeWriter
from karmactl.store.state import COMPUTED_DIR, InputError, dump_computed, path_part

EVENTS_DIR = f"{COMPUTED_DIR}/events"
EVENT_LIST_KEY = ("events.k8s.io", "EventList")
CHANGE_INDEX = 3  # after bindings, Works and overlays in a run's change list


def object_rel(obj: tuple) -> str:
    """Path (relative to the state directory) of the Events of one regarded object
    ``(group, kind, namespace, name)``."""
    group, kind, ns, name = obj
    file_name = path_part(f"{kind.lower()}.{group or 'core'}.{name}", "regarding.name", ".json")
    return f"{EVENTS_DIR}/{path_part(ns or 'default', 'regarding.namespace')}/{file_name}"


def _read(root, rel: str) -> list[dict] | None:
    """The Events in one file, or None when it does not exist.

    Raises:
        InputError: an unreadable or malformed file (named).
    """
    try:
        with open(os.path.join(str(root), rel), "rb") as fh:
            data = orjson.loads(fh.read())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read event file (delete it): {exc}", rel) from None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(e, dict) for e in items):
        raise InputError("cannot read event file (delete it): not an events.k8s.io/v1 EventList", rel)
    return items


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
        for name in os.listdir(d):
            if name.endswith(".json") and not name.startswith("."):
                out.extend(_read(root, f"{EVENTS_DIR}/{ns}/{name}") or [])
    return sorted(out, key=lambda e: (e["metadata"].get("namespace") or "", e["metadata"].get("name") or ""))


def events_regarding(root, objects: set) -> dict:
    """The stored Events of each of ``objects`` (``(group, kind, namespace, name)``, namespace ""
    for cluster-scoped ones): ``{object: [Event, ...]}``, objects without Events left out.

    Raises:
        InputError: an unreadable event file (named).
    """
    out: dict = {}
    for obj in objects:
        items = _read(root, object_rel(obj))
        if items:
            out[obj] = [e for e in items if regarding_key(e.get("regarding") or {}) == obj]
    return {k: v for k, v in out.items() if v}


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
    objects = sorted({regarding_key(e["regarding"]) for e in new})
    stored = {obj: _read(store.root, object_rel(obj)) or [] for obj in objects}
    write, drop = merge_events([e for items in stored.values() for e in items], new, now,
                               limit=events_core.EVENTS_PER_OBJECT)
    ident = lambda e: (e["metadata"].get("namespace"), e["metadata"]["name"])  # noqa: E731
    written: dict = {}  # regarded object -> {ident: Event} (grouped once: linear in the Events)
    for e in write:
        written.setdefault(regarding_key(e["regarding"]), {})[ident(e)] = e
    dropped = {ident(e) for e in drop}
    changes = []
    for obj in objects:
        items = {ident(e): e for e in stored[obj] if ident(e) not in dropped}
        items.update(written.get(obj, {}))
        rel = object_rel(obj)
        key = (*EVENT_LIST_KEY, obj[2] or "default", rel.rsplit("/", 1)[1][:-len(".json")])
        if not items:
            if stored[obj]:
                writer.delete(rel)
                changes.append((CHANGE_INDEX, key, "delete", rel))
            continue
        ordered = sorted(items.values(), key=lambda e: (last_seen(e), e["metadata"]["name"]))
        writer.write(rel, dump_computed({"apiVersion": "events.k8s.io/v1", "kind": "EventList", "items": ordered}))
        changes.append((CHANGE_INDEX, key, "write", rel))
    return changes
