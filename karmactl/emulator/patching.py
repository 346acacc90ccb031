"""Patch semantics: JSON merge patch (RFC 7386), JSON patch (RFC 6902), strategic merge patch and a
simplified server-side apply with field managers.

Strategic merge has no schema here: a list of objects is merged by the first merge key every element
carries (``containerPort``, ``port``, ``name``, ``ip``; ``mountPath`` for ``volumeMounts``); other lists
are replaced, as kube-apiserver does for lists without a patch strategy.

Server-side apply tracks, per manager, the set of field paths it applied. A path is a tuple of
fieldsV1 elements (``"f:spec"``, ``'k:{"name":"web"}'``, ``'v:"a"'``); keyed list elements appear as
their own path. For built-in kinds the paths follow the OpenAPI schema (:func:`field_set`).
"""
from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch

from karmactl.api import openapi as schemas

MERGE_KEYS = ("containerPort", "port", "name", "ip")
MERGE_KEY_OVERRIDES = {"volumeMounts": "mountPath", "volumeDevices": "devicePath"}
# Defaults of list-map key fields, which keys include when an element leaves them out (upstream marks
# ContainerPort.protocol, ServicePort.protocol... `+default="TCP"`; the JSON schemas lost the marker).
KEY_DEFAULTS = {"protocol": "TCP"}


class PatchError(Exception):
    """A patch that cannot be applied; ``code`` is the HTTP status to answer (400 or 422)."""

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.code = code


class ApplyConflict(Exception):
    """Server-side apply conflicts: ``conflicts`` is a list of (manager, apiVersion, field path)."""

    def __init__(self, conflicts: list[tuple[str, str, str]]) -> None:
        self.conflicts = conflicts
        # kube-apiserver names an Apply manager by name only ("using <apiVersion>" is for Update ones).
        lines = [f'conflict with "{m}": {p}' for m, v, p in conflicts]
        super().__init__(f"Apply failed with {len(conflicts)} conflict{'s' if len(conflicts) > 1 else ''}: "
                         + "\n".join(lines))


# ---- RFC 7386 / RFC 6902 --------------------------------------------------------------------------

def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (returns a new value; ``null`` deletes keys)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


def json_patch(target: dict, patch: Any) -> dict:
    """RFC 6902 JSON patch; raises PatchError (400 malformed, 422 failed test or bad path)."""
    if not isinstance(patch, list):
        raise PatchError("json patch must be a list of operations", 400)
    try:
        return jsonpatch.JsonPatch(patch).apply(copy.deepcopy(target))
    except jsonpatch.InvalidJsonPatch as e:
        raise PatchError(f"invalid json patch: {e}", 400) from e
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError) as e:
        raise PatchError(f"the json patch could not be applied: {e}", 422) from e


# ---- strategic merge ------------------------------------------------------------------------------

def merge_key(field: str | None, items: list) -> str | None:
    """The merge key for a list of objects under ``field`` or None (the list is atomic)."""
    dicts = [i for i in items if isinstance(i, dict) and i.get("$patch") not in ("replace",)]
    if not items or len(dicts) != len(items):
        return None
    plain = [d for d in dicts if "$patch" not in d] or dicts
    override = MERGE_KEY_OVERRIDES.get(field or "")
    if override and all(override in d for d in plain):
        return override
    for k in MERGE_KEYS:
        if all(k in d for d in plain):
            return k
    return None


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def strategic_merge(original: Any, patch: Any, field: str | None = None) -> Any:
    """Apply a strategic merge patch (kubectl's three-way patches included: ``$setElementOrder``,
    ``$retainKeys``, ``$deleteFromPrimitiveList``, ``$patch: replace|delete``). Returns a new value."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return _strip_directives({k: v for k, v in patch.items() if k != "$patch"})
    result = copy.deepcopy(original) if isinstance(original, dict) else {}
    orders = {}
    for k, v in patch.items():
        if k.startswith("$setElementOrder/"):
            orders[k.split("/", 1)[1]] = v
        elif k.startswith("$deleteFromPrimitiveList/"):
            name = k.split("/", 1)[1]
            if isinstance(result.get(name), list):
                result[name] = [x for x in result[name] if x not in (v or [])]
        elif not k.startswith("$"):
            _merge_field(result, k, v)
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    _set_element_orders(result, orders)
    return result


def _merge_field(result: dict, k: str, v: Any) -> None:
    """One field of a strategic merge patch into ``result``, in place: null or ``$patch: delete``
    removes it, lists merge by their merge key (:func:`_merge_list`), maps recursively, else replaced."""
    if v is None:
        result.pop(k, None)
    elif isinstance(v, list):
        result[k] = _merge_list(result.get(k), v, k)
    elif isinstance(v, dict):
        if v.get("$patch") == "delete":
            result.pop(k, None)
        else:
            result[k] = strategic_merge(result.get(k), v, k)
    else:
        result[k] = v


def _set_element_orders(result: dict, orders: dict) -> None:
    """``$setElementOrder/<field>`` directives: each keyed list of ``result`` sorted, in place, in
    the order the directive names its elements (the others last)."""
    for name, order in orders.items():
        lst = result.get(name)
        key = merge_key(name, lst) if isinstance(lst, list) else None
        if key and isinstance(order, list):
            rank = {json.dumps(o.get(key)): i for i, o in enumerate(order) if isinstance(o, dict)}
            lst.sort(key=lambda e: rank.get(json.dumps(e.get(key)), len(rank)))


def _merge_list(original: Any, patch: list, field: str) -> list:
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return _strip_directives([p for p in patch if not (isinstance(p, dict) and p.get("$patch") == "replace")])
    key = merge_key(field, patch)
    if key is None or not isinstance(original, list) or merge_key(field, original) != key:
        if key is not None:
            patch = [p for p in patch if p.get("$patch") != "delete"]
        return _strip_directives(patch)
    # Items named by the patch (merged, in patch order) and the original's other items are then
    # interleaved as apimachinery's normalizeElementOrder/mergeSortedSlice do: by their position in
    # the original where both have one, the patch's new items first otherwise.
    server_index = {json.dumps(o.get(key)): i for i, o in enumerate(original)}
    by_key = {json.dumps(o.get(key)): o for o in original}
    left, named = [], set()
    for item in patch:
        k = json.dumps(item.get(key))
        named.add(k)
        if item.get("$patch") == "delete":
            continue
        left.append(strategic_merge(by_key[k], item, None) if k in by_key else _strip_directives(item))
    right = [copy.deepcopy(o) for o in original if json.dumps(o.get(key)) not in named]
    return _interleave(left, right, server_index, key)


def _interleave(left: list, right: list, server_index: dict, key: str) -> list:
    """apimachinery's mergeSortedSlice: the patch's items (``left``) and the original's others
    (``right``) in one list, by their index in the original (``server_index``, by JSON of the
    merge ``key``'s value) where both have one, ``left``'s first otherwise."""
    result, i, j = [], 0, 0
    while i < len(left) or j < len(right):
        if i < len(left) and j < len(right):
            li = server_index.get(json.dumps(left[i].get(key)))
            ri = server_index.get(json.dumps(right[j].get(key)))
            take_right = li is not None and ri is not None and ri < li
        else:
            take_right = i >= len(left)
        if take_right:
            result.append(right[j])
            j += 1
        else:
            result.append(left[i])
            i += 1
    return result


# ---- server-side apply ----------------------------------------------------------------------------

Path = tuple[str, ...]


def _key_element(item: dict, keys: list[str]) -> str:
    values = {k: item.get(k, KEY_DEFAULTS.get(k)) for k in keys if k in item or k in KEY_DEFAULTS}
    return "k:" + json.dumps(values, separators=(",", ":"), sort_keys=True)


def _child_schema(schema: dict, key: str) -> dict | None:
    props = schema.get("properties")
    if props is not None:
        return schemas.resolve(props[key])[1] if key in props else None
    extra = schema.get("additionalProperties")
    return schemas.resolve(extra)[1] if isinstance(extra, dict) else None


def field_set(obj: Any, prefix: Path = (), schema: dict | None = None) -> set[Path]:
    """The set of leaf field paths (plus keyed list elements) an applied configuration sets.

    With ``schema`` (a built-in kind's, see :mod:`.schemas`) the field structure is the schema's, as
    structured-merge-diff reads it: ``x-kubernetes-map-type: atomic`` maps (label selectors...) and
    ``x-kubernetes-list-type: atomic`` lists are single fields, ``map`` lists are keyed by all their
    ``x-kubernetes-list-map-keys`` (defaulted ones included: ``k:{"containerPort":80,"protocol":"TCP"}``),
    ``set`` lists are sets of values (``v:"a"``). Without it (custom kinds) lists of objects are keyed
    by the first merge key every element carries and other lists are atomic."""
    out: set[Path] = set()
    if not isinstance(obj, dict):
        return out
    if schema is not None:
        schema = schemas.resolve(schema)[1]
    for k, v in obj.items():
        p = prefix + (f"f:{k}",)
        if schema is not None:
            out |= _typed_field_set(v, p, _child_schema(schema, k))
        else:
            out |= _untyped_field_set(k, v, p)
    return out


def _typed_field_set(v: Any, p: Path, sub: dict | None) -> set[Path]:
    """:func:`field_set` of the value ``v`` at path ``p`` whose schema is ``sub`` (None: undeclared,
    one field): atomic maps and lists one field, ``map`` lists keyed by their list-map keys, ``set``
    lists one path per value."""
    if sub is None or not v:
        return {p}
    if isinstance(v, dict) and sub.get("x-kubernetes-map-type") != "atomic" and (
            "properties" in sub or isinstance(sub.get("additionalProperties"), dict)):
        return field_set(v, p, sub)
    if isinstance(v, list) and sub.get("x-kubernetes-list-type") == "map" and all(
            isinstance(item, dict) for item in v):
        out: set[Path] = set()
        items = schemas.resolve(sub["items"])[1]
        for item in v:
            kp = p + (_key_element(item, sub.get("x-kubernetes-list-map-keys") or []),)
            out.add(kp)
            out |= field_set(item, kp, items)
        return out
    if isinstance(v, list) and sub.get("x-kubernetes-list-type") == "set":
        return {p + ("v:" + json.dumps(item, separators=(",", ":")),) for item in v}
    return {p}


def _untyped_field_set(k: str, v: Any, p: Path) -> set[Path]:
    """:func:`field_set` of the field ``k`` (value ``v``, path ``p``) of a kind without a schema:
    maps recursively, lists of objects keyed by their merge key, anything else one field."""
    if isinstance(v, dict) and v:
        return field_set(v, p)
    if isinstance(v, list) and v and (key := merge_key(k, v)):
        out: set[Path] = set()
        for item in v:
            kp = p + (_key_element(item, [key]),)
            out.add(kp)
            out |= field_set(item, kp)
        return out
    return {p}


def to_fields_v1(paths: set[Path]) -> dict:
    """Nested fieldsV1 form (``{"f:spec": {"f:replicas": {}}}``; keyed elements carry ``"."``)."""
    root: dict = {}
    for path in sorted(paths):
        node = root
        for el in path:
            node = node.setdefault(el, {})
        if path and path[-1].startswith("k:"):
            node["."] = {}
    return root


def from_fields_v1(fields: dict, prefix: Path = ()) -> set[Path]:
    """Inverse of :func:`to_fields_v1`."""
    out: set[Path] = set()
    for k, v in (fields or {}).items():
        if k == ".":
            out.add(prefix)
        elif isinstance(v, dict) and v:
            out |= from_fields_v1(v, prefix + (k,))
        else:
            out.add(prefix + (k,))
    return out


def _step(node: Any, el: str) -> tuple[bool, Any]:
    if el.startswith("f:"):
        if isinstance(node, dict) and el[2:] in node:
            return True, node[el[2:]]
        return False, None
    want = json.loads(el[2:])
    if isinstance(node, list):
        for item in node:
            if el.startswith("v:") and item == want:
                return True, item
            if el.startswith("k:") and isinstance(item, dict) and all(
                    item.get(k, KEY_DEFAULTS.get(k)) == v for k, v in want.items()):
                return True, item
    return False, None


def get_path(obj: Any, path: Path) -> tuple[bool, Any]:
    """(found, value) at a field path."""
    node = obj
    for el in path:
        found, node = _step(node, el)
        if not found:
            return False, None
    return True, node


def _delete_path(obj: Any, path: Path) -> None:
    found, parent = get_path(obj, path[:-1])
    if not found:
        return
    el = path[-1]
    if el.startswith("f:") and isinstance(parent, dict):
        parent.pop(el[2:], None)
    elif el.startswith(("k:", "v:")) and isinstance(parent, list):
        found, item = _step(parent, el)
        if found:
            parent.remove(item)


def _prune(obj: Any, path: Path, owned: set[Path]) -> None:
    """Drop maps left empty by a removal, walking up, unless someone owns them."""
    for n in range(len(path) - 1, 0, -1):
        p = path[:n]
        found, node = get_path(obj, p)
        if not found or node not in ({}, []) or p in owned or p[-1].startswith("k:"):
            return
        _delete_path(obj, p)


def path_string(path: Path) -> str:
    """Human form of a field path: ``.spec.containers[name="web"].image``."""
    out = ""
    for el in path:
        if el.startswith("f:"):
            out += "." + el[2:]
        elif el.startswith("v:"):
            out += "[=" + el[2:] + "]"
        else:
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(el[2:]).items()) + "]"
    return out


def server_side_apply(live: dict, applied: dict, manager: str, api_version: str, force: bool, now: str,
                      subresource: str = "", schema: dict | None = None) -> dict:
    """Merge an applied configuration into ``live`` (both already reduced to the fields apply may
    touch, i.e. without identity metadata) and return the new object with updated managedFields.

    ``live`` carries ``metadata.managedFields``; the result does too. Raises ApplyConflict when another
    manager owns a field whose live value differs from the applied one (unless ``force``). ``schema``
    (built-in kinds) gives the field structure, see :func:`field_set`.
    """
    live = copy.deepcopy(live)
    meta = live.setdefault("metadata", {})
    entries = copy.deepcopy(meta.get("managedFields") or [])
    new_set = field_set(applied, (), schema)
    mine = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"
                 and e.get("subresource", "") == subresource), None)
    old_set = from_fields_v1(mine.get("fieldsV1", {})) if mine else set()
    others = [(e, from_fields_v1(e.get("fieldsV1", {}))) for e in entries if e is not mine]
    _take_over(others, new_set, live, applied, force)

    others_owned = set().union(*(o for _, o in others)) if others else set()
    result = live
    _remove_released(result, old_set - new_set, others_owned | new_set)
    meta_managed = result.get("metadata", {}).pop("managedFields", None)
    result = strategic_merge(result, applied)
    del meta_managed
    result.setdefault("metadata", {})["managedFields"] = _managed_fields(
        entries, others, mine, new_set, manager, api_version, now, subresource)
    return result


def _take_over(others: list[tuple[dict, set[Path]]], new_set: set[Path], live: dict, applied: dict,
               force: bool) -> None:
    """The fields of ``new_set`` other managers own (``others``: (entry, owned paths)) with a live
    value the applied one changes: with ``force`` taken from their owners (``owned`` edited in
    place), else ApplyConflict raised naming each (manager, apiVersion, path)."""
    conflicts = []
    for entry, owned in others:
        for p in sorted(new_set & owned):
            if p[-1].startswith("k:"):
                continue
            if get_path(live, p) != get_path(applied, p):
                if force:
                    owned.discard(p)
                else:
                    conflicts.append((entry.get("manager", ""), entry.get("apiVersion", ""), path_string(p)))
    if conflicts:
        raise ApplyConflict(conflicts)


def _remove_released(result: dict, released: set[Path], kept: set[Path]) -> None:
    """Remove from ``result``, in place, the fields the applier owned and no longer applies
    (``released``) unless a field still owned (``kept``) is at or below them; a keyed element's
    key fields stay while it exists; maps left empty go too (:func:`_prune`)."""
    for p in sorted(released, key=len, reverse=True):
        needed = any(q[:len(p)] == p for q in kept)
        if needed:
            continue
        parent = p[:-1]
        if parent and parent[-1].startswith("k:") and p[-1][2:] in json.loads(parent[-1][2:]):
            continue  # a keyed element keeps its key while it exists
        _delete_path(result, p)
        _prune(result, p, kept)


def _managed_fields(entries: list[dict], others: list[tuple[dict, set[Path]]], mine: dict | None,
                    new_set: set[Path], manager: str, api_version: str, now: str, subresource: str) -> list[dict]:
    """The new ``metadata.managedFields``: the other managers' entries that still own something
    (their fieldsV1 rewritten), and the applier's Apply entry at its former place (its ``time``
    kept when its fields did not change)."""
    new_entries = []
    for entry, owned in others:
        if not owned:
            continue
        if entry.get("fieldsV1") is not None:
            entry["fieldsV1"] = to_fields_v1(owned)
        new_entries.append(entry)
    fields_v1 = to_fields_v1(new_set)
    mine_new = {"manager": manager, "operation": "Apply", "apiVersion": api_version,
                "time": mine["time"] if mine and mine.get("fieldsV1") == fields_v1 else now,
                "fieldsType": "FieldsV1", "fieldsV1": fields_v1}
    if subresource:
        mine_new["subresource"] = subresource
    idx = entries.index(mine) if mine else len(new_entries)
    new_entries.insert(min(idx, len(new_entries)), mine_new)
    return new_entries
