"""Events in the state directory: ``computed/events/<namespace>/<kind>.<group>.<bucket>.json``,
each an ``events.k8s.io/v1`` EventList (oldest last seen first) holding the Events of the objects of
one kind whose name falls into that bucket (:data:`EVENT_BUCKETS` per kind and namespace, by a hash
of the name), at most ``EVENTS_PER_OBJECT`` per object.

Events are ``events.k8s.io/v1`` objects (``karmactl/pipeline/events.py`` derives and merges them);
a run stages them on the same :class:`~karmactl.store.fsio.TreeWriter` as its other computed files,
so they land with them or not at all. Buckets bound the number of Event files: creating a file is
the largest cost of writing one (a cold run of 10,000 templates regards 40,000 objects, which got a
file each before, doubling the files of the run), while an object's Events are still read from one
file of a known name, without listing others. ``StateStore.load`` does not read this tree: Events
are history, never input of a run. Events about cluster-scoped objects live in ``default``.
"""
from __future__ import annotations

import array
import os
import zlib

import orjson

from karmactl.pipeline import events as events_core
from karmactl.pipeline.events import derive_events, last_seen, merge_events, regarding_key
from karmactl.store.fsio import TreeWriter
from karmactl.store.state import COMPUTED_DIR, InputError, path_part

EVENTS_DIR = f"{COMPUTED_DIR}/events"
EVENT_LIST_KEY = ("events.k8s.io", "EventList")
CHANGE_INDEX = 3  # after bindings, Works and overlays in a run's change list
EVENT_BUCKETS = 32
"""Event files per kind and namespace at most. Fixed: an object's file must not move. 32 keeps the
file of 10,000 templates' Events near a megabyte (a run rewrites the buckets it touches)."""


def object_rel(obj: tuple) -> str:
    """Path (relative to the state directory) of the file holding the Events of one regarded
    object ``(group, kind, namespace, name)`` (with those of other objects of its bucket):
    ``computed/events/default/deployment.apps.07.json``."""
    import zlib

    group, kind, ns, name = obj
    bucket = zlib.crc32(name.encode("utf-8", "surrogatepass")) % EVENT_BUCKETS
    file_name = path_part(f"{kind.lower()}.{group or 'core'}.{bucket:02d}", "regarding.kind", ".json")
    return f"{EVENTS_DIR}/{path_part(ns or 'default', 'regarding.namespace')}/{file_name}"


def _read(root, rel: str) -> list[dict] | None:
    """The Events in one file, or None when it does not exist.

    Raises:
        InputError: an unreadable or malformed file (named).
    """
    raw = _raw(root, rel)
    return None if raw is None else _items_of(raw, rel)


def _raw(root, rel: str) -> bytes | None:
    """The bytes of one Event file, or None when it does not exist (raises InputError naming it)."""
    try:
        with open(os.path.join(str(root), rel), "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"cannot read event file (delete it): {exc}", rel) from None


def _items_of(raw: bytes, rel: str) -> list[dict]:
    """The Events of a stored EventList's bytes (raises InputError naming ``rel``)."""
    try:
        data = orjson.loads(raw)
    except ValueError as exc:
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
    files: dict = {}
    for obj in objects:
        files.setdefault(object_rel(obj), set()).add(obj)
    out: dict = {}
    for rel, wanted in files.items():
        for e in _read(root, rel) or ():
            obj = regarding_key(e.get("regarding") or {})
            if obj in wanted:
                out.setdefault(obj, []).append(e)
    return out


def stage_events(store, writer: TreeWriter, before, after, now: str, keep=None) -> list[tuple]:
    """Derive the Events of a run, merge them into the stored ones and stage the result on ``writer``
    (:func:`~karmactl.pipeline.events.derive_events`, :func:`merge_derived`, :func:`stage_merged`).

    Args:
        store: the :class:`~karmactl.store.state.StateStore`.
        writer: the run's writer (committed or aborted with everything else).
        before, after: the loaded and the computed snapshot.
        now: the run's clock (RFC 3339).
        keep: as for :func:`karmactl.pipeline.events.derive_events`.

    Returns:
        ``[(3, key, action, relative_path)]`` as :meth:`StateStore.stage_changes` returns them.

    Raises:
        InputError: an unreadable stored event file.
        OSError: the file system refused a write.
    """
    merged = merge_derived(store.root, derive_events(before, after, now, keep), now)
    return stage_merged(store.root, writer, [merged])


def merge_derived(root, new: list[dict], now: str, stored: dict | None = None) -> dict:
    """Merge the Events ``new`` of a run (or of one shard: the objects it owns) into the stored
    Events of the objects they regard (:func:`~karmactl.pipeline.events.merge_events`).

    Args:
        root: the state directory.
        new: Events from :func:`~karmactl.pipeline.events.derive_events`.
        now: the run's clock (RFC 3339).
        stored: a cache that one process keeps across the shards it computes one after the other
            (each regarded object belongs to exactly one shard): each Event file is read once,
            its Events grouped by regarded object, and an object's Events are taken out when its
            shard merges them. None: a cache for this call only.

    Returns:
        ``{file: (regarded objects, [(sort key, Event bytes)])}`` for each Event file holding
        one of those objects (:func:`event_items`; the regarded objects only when the file
        exists: what :func:`stage_merged` leaves out of it); :func:`stage_merged` puts them
        together with the Events of the file's other objects.

    Raises:
        InputError: an unreadable stored event file.
    """
    if not new:
        return {}
    rel_of: dict = {}  # regarded object -> its file
    files: dict = {}  # file -> regarded objects with new Events
    for e in new:
        obj = regarding_key(e["regarding"])
        if obj not in rel_of:
            rel = rel_of[obj] = object_rel(obj)
            files.setdefault(rel, set()).add(obj)
    concerned = []
    existing = set()  # files that exist (the others hold no Events of other objects to keep)
    stored = {} if stored is None else stored
    for rel in sorted(files):
        objs = files[rel]
        if rel not in stored:
            events = _read(root, rel)
            grouped: dict | None = None
            if events is not None:
                grouped = {}
                for e in events:
                    grouped.setdefault(regarding_key(e.get("regarding") or {}), []).append(e)
            stored[rel] = grouped
        grouped = stored[rel]
        if grouped is not None:
            existing.add(rel)
            for obj in sorted(objs & grouped.keys()):
                concerned.extend((obj, e) for e in grouped.pop(obj))
    write, drop = merge_events([e for _obj, e in concerned], new, now, limit=events_core.EVENTS_PER_OBJECT)
    ident = lambda e: (e["metadata"].get("namespace"), e["metadata"]["name"])  # noqa: E731
    dropped = {ident(e) for e in drop}
    items: dict = {rel: {} for rel in files}  # file -> {ident: Event}
    for obj, e in concerned:
        if ident(e) not in dropped:
            items[rel_of[obj]][ident(e)] = e
    for e in write:
        items[rel_of[regarding_key(e["regarding"])]][ident(e)] = e
    return {rel: (files[rel] if rel in existing else frozenset(), event_items(items[rel].values())) for rel in files}


_LIST_HEAD = b'{\n  "apiVersion": "events.k8s.io/v1",\n  "kind": "EventList",\n  "items": [\n'
_LIST_TAIL = b"\n  ]\n}\n"


def event_items(events) -> list[tuple]:
    """``[(sort key, bytes)]`` of Events as items of a stored EventList: the key (bytes: last seen,
    NUL, name, which sort as the pair does) orders a file's Events (oldest last seen first, then by
    name), the bytes are the Event as
    :func:`~karmactl.store.state.dump_computed` writes it inside the list (one line, indented by
    four spaces: a new Event is one line of a status commit), so files are joined from bytes
    without building the list again."""
    return [(_sort_key(e), b"    " + orjson.dumps(e)) for e in events]


def _sort_key(event: dict) -> bytes:
    """An Event's place in its file (:func:`event_items`)."""
    return f"{last_seen(event)}\0{event['metadata']['name']}".encode("utf-8", "surrogatepass")


def event_list_bytes(items: list[tuple]) -> bytes:
    """A stored EventList from :func:`event_items` entries, in the order given: what
    ``dump_computed({"apiVersion": "events.k8s.io/v1", "kind": "EventList", "items": [...]})``
    writes for those Events."""
    return _LIST_HEAD + b",\n".join(b for _key, b in items) + _LIST_TAIL


class EventBuffer:
    """The merged Events of the shards one process computes (:func:`merge_derived` results), held
    until the parent stages them all: compressed (zlib, fastest level), sort keys included, because
    a cold run of 10,000 templates derives 80,000 Events, some 60 MB of JSON, and each process would
    otherwise hold its half until the end and copy it to the parent. :meth:`packed` is plain
    picklable data for :func:`unpack_events`."""

    def __init__(self):
        self._zip = zlib.compressobj(1)
        self._chunks: list = []
        self._files: dict = {}  # file -> (number, regarded objects)
        self._items = array.array("I")  # file number, key length, item length; per item, in order

    def add(self, merged: dict) -> None:
        """Take one :func:`merge_derived` result."""
        for rel, (objs, items) in merged.items():
            entry = self._files.get(rel)
            if entry is None:
                entry = self._files[rel] = (len(self._files), set())
            entry[1].update(objs)
            for key, data in items:
                self._items.extend((entry[0], len(key), len(data)))
            self._chunks.append(self._zip.compress(b"".join(key + data for key, data in items)))

    def packed(self) -> tuple:
        """``(files, items, data)``: ``{file: (number, regarded objects)}``, an ``array("I")`` of
        (file number, key length, item length) per item, and the compressed keys and items in
        that order."""
        self._chunks.append(self._zip.flush())
        data, self._chunks = b"".join(self._chunks), []
        return self._files, self._items, data


def unpack_events(packed: tuple) -> dict:
    """``{file: (regarded objects, [(sort key, Event bytes)])}`` from :meth:`EventBuffer.packed`."""
    files, items, data = packed
    data = zlib.decompress(data)
    names = {number: rel for rel, (number, _objs) in files.items()}
    out = {rel: (objs, []) for rel, (_number, objs) in files.items()}
    at = 0
    for i in range(0, len(items), 3):
        number, key_length, length = items[i:i + 3]
        key_end = at + key_length
        out[names[number]][1].append((data[at:key_end], data[key_end:key_end + length]))
        at = key_end + length
    return out


def _kept_items(root, rel: str, leave_out) -> list[tuple]:
    """:func:`event_items` of the stored Events of one file but those regarding ``leave_out``
    objects. A file as :func:`event_list_bytes` wrote it is cut into its items' bytes, which are
    kept as they are (about a tenth of the time of writing them again); any other is encoded again.

    Raises:
        InputError: an unreadable or malformed file (named).
    """
    raw = _raw(root, rel)
    if raw is None:
        return []
    events = _items_of(raw, rel)
    spans = None
    if raw.startswith(_LIST_HEAD) and raw.endswith(_LIST_TAIL):
        # items are joined by ",\n" and each starts with "    {": nested values are indented deeper
        # and JSON strings hold no raw newline, so this cuts exactly between items
        parts = raw[len(_LIST_HEAD):-len(_LIST_TAIL)].split(b",\n    {")
        if len(parts) == len(events):
            spans = [parts[0]] + [b"    {" + part for part in parts[1:]]
    kept = [i for i, e in enumerate(events) if regarding_key(e.get("regarding") or {}) not in leave_out]
    if spans is None:
        return event_items(events[i] for i in kept)
    return [(_sort_key(events[i]), spans[i]) for i in kept]


def stage_merged(root, writer: TreeWriter, parts: list[dict]) -> list[tuple]:
    """Stage each Event file that :func:`merge_derived` results (of the shards of a run) change:
    the file's stored Events of other objects, as they are, with the merged Events of the objects
    the run regarded, oldest last seen first. Each file is read and staged once, by one process,
    whichever shards own its objects.

    Returns:
        ``[(3, (events.k8s.io, EventList, namespace, file name), action, relative_path)]``,
        action ``write`` or ``delete``, as :meth:`StateStore.stage_changes` returns them.

    Raises:
        InputError: an unreadable stored event file.
        OSError: the file system refused a write.
    """
    files: dict = {}
    for part in parts:
        for rel, (objs, items) in part.items():
            mine = files.setdefault(rel, (set(), []))
            mine[0].update(objs)
            mine[1].extend(items)
    changes = []
    for rel in sorted(files):
        objs, items = files.pop(rel)
        old = _kept_items(root, rel, objs)
        items = old + items
        ns, name = rel[len(EVENTS_DIR) + 1:-len(".json")].split("/")
        key = (*EVENT_LIST_KEY, ns, name)
        if not items:
            if os.path.exists(os.path.join(str(root), rel)):
                writer.delete(rel)
                changes.append((CHANGE_INDEX, key, "delete", rel))
            continue
        items.sort(key=lambda item: item[0])
        writer.write(rel, event_list_bytes(items))
        changes.append((CHANGE_INDEX, key, "write", rel))
    return changes
