"""The computed tree's files, one object each (``computed/``, DESIGN §4): the directory of a kind
(:func:`computed_dir`), reading one file's object (:func:`read_computed_object`), serializing one
(:func:`dump_computed`), and the report order of a batch of changes (:func:`change_list`)."""
from __future__ import annotations

import os

import orjson

from karmactl.api.kinds import KindRegistry
from karmactl.store.fsio import is_environment_error
from karmactl.store.objects import COMPUTED_KINDS, InputError, path_part
from karmactl.store.scan import COMPUTED_DIR


def computed_dir(registry: KindRegistry, group: str, kind: str) -> str:
    """The directory, relative to the state directory, of a kind's computed files: bindings and
    Works under their own names (``computed/works``), every other kind's overlays under
    ``computed/status/<resource>[.<group>]``.

    Raises:
        InputError: a resource name that cannot be a file name.
    """
    if (group, kind) in COMPUTED_KINDS:
        return COMPUTED_DIR + "/" + {"ResourceBinding": "resourcebindings",
                                     "ClusterResourceBinding": "clusterresourcebindings",
                                     "Work": "works"}[kind]
    info = registry.by_group_kind(group, kind)
    resource = info.resource_ref if info else (f"{kind.lower()}.{group}" if group else kind.lower())
    return f"{COMPUTED_DIR}/status/{path_part(resource, 'resource')}"


def read_computed_object(path, rel: str) -> dict:
    """The object of one computed file (``path``, a ``Path`` or string; ``rel`` names it in errors).

    Raises:
        InputError: unreadable, not JSON, or not one object.
        OSError: an environment error (permission, I/O...), naming the path.
    """
    try:
        fd = os.open(path, os.O_RDONLY)  # a third cheaper than open() for 10,000 small files
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(fd)
        obj = orjson.loads(b"".join(chunks))
    except (OSError, ValueError) as exc:
        if is_environment_error(exc):
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise InputError(f"cannot read computed file (delete it to recompute): {exc}", rel) from None
    if not isinstance(obj, dict):
        raise InputError("a computed file must hold one object (delete it to recompute)", rel)
    return obj


def change_list(staged: list[tuple]) -> list[tuple[str, str]]:
    """``[(action, path)]`` in report order (bindings, Works, overlays, Events; each by key) from
    :meth:`~karmactl.store.state.StateStore.stage_changes` results."""
    # by one string per change: NUL sorts below every character a key part holds, so it orders as the
    # tuple (index, key) would, compared in C (a cold run of 10,000 templates reports 41,700 changes)
    return [(action, rel) for _i, _k, action, rel in sorted(staged, key=lambda c: f"{c[0]}\0" + "\0".join(c[1]))]


# Lists written one item per line (each item's JSON on one line) instead of one line per field, so
# that a status commit stays readable in ``git log -p``: a condition, a cluster's entry of a
# binding's aggregated status, a manifest's status, an Event is one line, and so is one group
# version of a member's ``apiEnablements`` (some 25 of 1 to 40 resources: 256 lines per Cluster
# indented), and one grade of its ``allocatableModelings``. Paths by kind; ``status.conditions`` for every kind.
_BY_KIND = {
    "Cluster": (("status", "apiEnablements"), ("status", "resourceSummary", "allocatableModelings")),
    "EventList": (("items",),),
    "ResourceBinding": (("status", "aggregatedStatus"),),
    "ClusterResourceBinding": (("status", "aggregatedStatus"),),
    "Work": (("status", "manifestStatuses"),),
}
COMPACT_LISTS = {kind: paths + (("status", "conditions"),) for kind, paths in _BY_KIND.items()}
DEFAULT_COMPACT_LISTS = (("status", "conditions"),)
_OPT = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


def dump_computed(obj: dict) -> bytes:
    """Serialize a computed object: JSON indented by two spaces, keys in the order they were built;
    the non-empty lists of :data:`COMPACT_LISTS` of its kind (:data:`DEFAULT_COMPACT_LISTS` for
    other kinds: ``status.conditions``) one item per line. Any JSON reader reads the same object.

    orjson writes indented JSON in C (the standard library falls back to pure Python as soon as
    ``indent`` is given, which made serialization the largest cost of a cold run); a compact list
    is written by orjson too and placed as an ``orjson.Fragment``, indented for its depth.
    """
    shown = obj
    for path in COMPACT_LISTS.get(obj.get("kind"), DEFAULT_COMPACT_LISTS):
        outer = shown
        for part in path[:-1]:
            outer = outer.get(part) if isinstance(outer, dict) else None
        items = outer.get(path[-1]) if isinstance(outer, dict) else None
        if isinstance(items, list) and items:
            indent = b"\n" + b"  " * len(path)
            fragment = orjson.Fragment(b"[" + indent + b"  " + (b"," + indent + b"  ").join(
                orjson.dumps(item) for item in items) + indent + b"]")
            shown = _replaced(shown, path, fragment)
    return orjson.dumps(shown, option=_OPT)


def _replaced(node: dict, path: tuple, value) -> dict:
    """A copy of ``node`` with ``value`` at ``path`` (the dicts along the path copied, nothing else)."""
    if len(path) == 1:
        return {**node, path[0]: value}
    return {**node, path[0]: _replaced(node[path[0]], path[1:], value)}
