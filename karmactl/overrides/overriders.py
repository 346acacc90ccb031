"""The individual overriders of one override rule (semantics §1.3, §9.3).

Follows ``pkg/util/overridemanager/overridemanager.go`` (plaintext, fieldOverrider, the JSON-patch
plumbing), ``imageoverride.go``, ``commandargsoverride.go`` and ``labelannotationoverrider.go``.
Every overrider is turned into RFC 6902 operations and applied with ``jsonpatch``, as Karmada does
with ``evanphx/json-patch``.
"""
from __future__ import annotations

import io
import json

import jsonpatch

from karmactl.api.objects import deepcopy

from .image import ImageError, override_image

# Kinds whose containers the image/command/args overriders know without a predicate
# (matched on kind only, as Karmada does).
_POD_TEMPLATE_KINDS = ("ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job")


class OverriderError(Exception):
    """One overrider could not be applied; the caller adds the policy and rule to the message."""


def apply_json_patch(doc, operations: list[dict]):
    """Apply RFC 6902 ``operations`` to ``doc`` and return the result (``doc`` is not modified).

    Raises:
        OverriderError: the patch is malformed or does not apply (missing path for
            replace/remove, missing parent for add, bad array index...).
    """
    if not operations:
        return doc
    try:
        return jsonpatch.JsonPatch(operations).apply(doc, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError, IndexError) as err:
        raise OverriderError(f"json patch {json.dumps(operations)} failed: {err}") from None


def _container_path(kind: str) -> tuple[str, ...] | None:
    if kind == "Pod":
        return ("spec",)
    if kind in _POD_TEMPLATE_KINDS:
        return ("spec", "template", "spec")
    return None


def _nested(obj, path):
    cur = obj
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


# --- image -----------------------------------------------------------------------------------

def _image_at_predicate(obj: dict, path: str) -> str:
    """The image string at ``predicate.path`` (``obtainImageValue``: "/"-separated, list indexes)."""
    segments = path.strip("/").split("/")
    cur = obj
    i = 0
    while i < len(segments) - 1:
        value = cur.get(segments[i]) if isinstance(cur, dict) else None
        if isinstance(value, dict):
            cur = value
        elif isinstance(value, list):
            try:
                index = int(segments[i + 1])
                nxt = value[index]
            except (ValueError, IndexError):
                raise OverriderError(f"path({segments[i + 1]}) of rawObj's is not a valid index") from None
            if not isinstance(nxt, dict):
                raise OverriderError(f"path({segments[i + 1]}) of rawObj's is not an object")
            cur = nxt
            i += 1
        else:
            raise OverriderError(
                f"path({segments[i]}) of rawObj's type is not map[string]interface{{}} and []interface{{}}")
        i += 1
    image = cur.get(segments[-1]) if isinstance(cur, dict) else None
    if not isinstance(image, str):
        raise OverriderError(f"failed to convert path({segments[-1]}) to string")
    return image


def _new_image(image: str, overrider: dict) -> str:
    try:
        return override_image(image, overrider)
    except ImageError as err:
        raise OverriderError(str(err)) from None


def apply_image_overrider(obj: dict, overrider: dict) -> dict:
    """One ``imageOverrider`` entry.

    Without ``predicate``: every container (not init containers) of Pod, ReplicaSet, Deployment,
    DaemonSet, StatefulSet and Job; other kinds are left alone. With ``predicate.path``: the one
    image string at that path, any kind.
    """
    predicate = overrider.get("predicate")
    ops = []
    if predicate is not None:
        path = predicate.get("path") or ""
        try:
            image = _image_at_predicate(obj, path)
        except OverriderError as err:
            raise OverriderError(f"failed to obtain imageValue with predicate path({path}), error: {err}") from None
        if not path.startswith("/"):
            raise OverriderError("imagePath should be start with / character")
        ops.append({"op": "replace", "path": path, "value": _new_image(image, overrider)})
    else:
        prefix = _container_path(obj.get("kind", ""))
        if prefix is None:
            return obj
        containers = _nested(obj, prefix + ("containers",)) or []
        for index, container in enumerate(containers):
            image = (container or {}).get("image") or ""
            path = "/" + "/".join(prefix) + f"/containers/{index}/image"
            ops.append({"op": "replace", "path": path, "value": _new_image(image, overrider)})
    return apply_json_patch(obj, ops)


# --- command / args --------------------------------------------------------------------------

def apply_command_args_overrider(obj: dict, overrider: dict, target: str) -> dict:
    """One ``commandOverrider`` (``target="command"``) or ``argsOverrider`` (``target="args"``) entry.

    For each container named ``containerName``: ``add`` appends the values, ``remove`` drops every
    occurrence of each value; a missing list is created first (so ``remove`` leaves ``[]``). Other
    operators keep the list as is. Kinds as for images.
    """
    prefix = _container_path(obj.get("kind", ""))
    if prefix is None:
        return obj
    containers = _nested(obj, prefix + ("containers",))
    if not isinstance(containers, list) or not containers:
        return obj
    operator = overrider.get("operator")
    values = [str(v) for v in overrider.get("value") or []]
    ops = []
    for index, container in enumerate(containers):
        if not isinstance(container, dict) or container.get("name") != overrider.get("containerName"):
            continue
        current = container.get(target)
        op = "add" if current is None else "replace"
        current = [str(v) for v in (current or [])]
        if operator == "add":
            new = current + values
        elif operator == "remove":
            new = [v for v in current if v not in set(values)]
        else:
            new = current
        ops.append({"op": op, "path": "/" + "/".join(prefix) + f"/containers/{index}/{target}", "value": new})
    return apply_json_patch(obj, ops)


# --- labels / annotations --------------------------------------------------------------------

def apply_label_annotation_overrider(obj: dict, overrider: dict, field: str) -> dict:
    """One ``labelsOverrider`` (``field="labels"``) or ``annotationsOverrider`` (``field="annotations"``) entry.

    ``add`` sets each key (creating the map), ``replace`` only keys that exist, ``remove`` deletes
    keys that exist. Keys are applied in sorted order (Karmada iterates a Go map; the order only
    matters for error messages).
    """
    operator = overrider.get("operator")
    ops = []
    for key, value in sorted((overrider.get("value") or {}).items()):
        current = _nested(obj, ("metadata", field))
        if operator in ("remove", "replace"):
            if not isinstance(current, dict) or key not in current:
                continue
        elif operator == "add":
            if not isinstance(current, dict):
                # created directly, as SetNestedStringMap does, so the add below has a parent
                obj = deepcopy(obj)
                obj.setdefault("metadata", {})
                if not isinstance(obj["metadata"], dict):
                    obj["metadata"] = {}
                obj["metadata"][field] = {}
        pointer_key = key.replace("~", "~0").replace("/", "~1")
        op = {"op": operator, "path": f"/metadata/{field}/{pointer_key}"}
        if operator != "remove":
            op["value"] = value
        ops.append(op)
    return apply_json_patch(obj, ops)


# --- field -----------------------------------------------------------------------------------

def _yaml():
    """ruamel's pure safe YAML (imported here: a run without a YAML field overrider never needs it)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.allow_unicode = True  # go-yaml writes UTF-8 as is
    return yaml


def _patch_ops(entries: list[dict]) -> list[dict]:
    ops = []
    for entry in entries:
        op = {"op": entry.get("operator"), "path": entry.get("subPath", "")}
        if entry.get("operator") != "remove" or "value" in entry:
            op["value"] = entry.get("value")
        ops.append(op)
    return ops


def apply_field_overrider(obj: dict, overrider: dict) -> dict:
    """One ``fieldOverrider`` entry: patch a JSON or YAML document stored in a string field.

    ``fieldPath`` is a JSON pointer to a string. With ``yaml`` ops the string is parsed as YAML,
    patched (``subPath`` is the pointer inside the document) and dumped back as block YAML with keys
    sorted (as ``sigs.k8s.io/yaml.JSONToYAML`` does); with ``json`` ops it is parsed and written back
    as compact JSON with keys sorted (as Go's ``json.Marshal`` of a map does). With neither, the
    field becomes ``""`` (Karmada's behaviour).

    Raises:
        OverriderError: the pointer is invalid or does not resolve to a string, the document does
            not parse, or the patch fails.
    """
    field_path = overrider.get("fieldPath") or ""
    try:
        pointer = jsonpatch.JsonPointer(field_path)
        current = pointer.resolve(obj)
    except jsonpatch.JsonPointerException as err:
        raise OverriderError(f"get value by overrider's path({field_path}) err: {err}") from None
    if not isinstance(current, str):
        raise OverriderError(f"Get object's value by overrider's path({field_path}) is not string")
    if overrider.get("yaml"):
        from ruamel.yaml.error import YAMLError

        try:
            doc = _yaml().load(current)
        except YAMLError as err:
            raise OverriderError(f"failed to convert yaml to json at {field_path}: {err}") from None
        patched = apply_json_patch(doc, _patch_ops(overrider["yaml"]))
        new_text = _dump_yaml(patched)
    elif overrider.get("json"):
        try:
            doc = json.loads(current)
        except ValueError as err:
            raise OverriderError(f"invalid JSON at {field_path}: {err}") from None
        patched = apply_json_patch(doc, _patch_ops(overrider["json"]))
        new_text = _go_json(patched)
    else:
        new_text = ""
    return apply_json_patch(obj, [{"op": "replace", "path": field_path, "value": new_text}])


def _go_json(value) -> str:
    """Compact JSON as Go's ``json.Marshal`` writes it: sorted map keys, UTF-8, HTML-safe escapes."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    # <, > and & only occur inside strings in JSON text, so replacing them is safe.
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def _sorted_keys(value):
    if isinstance(value, dict):
        return {k: _sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    return value


def _dump_yaml(value) -> str:
    if value is None:
        return "null\n"
    buf = io.StringIO()
    _yaml().dump(_sorted_keys(value), buf)
    return buf.getvalue()


# --- plaintext -------------------------------------------------------------------------------

def apply_plaintext(obj: dict, entries: list[dict]) -> dict:
    """All ``plaintext`` entries of a rule as one RFC 6902 patch (``{path, operator, value}``)."""
    ops = []
    for entry in entries:
        op = {"op": entry.get("operator"), "path": entry.get("path", "")}
        if entry.get("operator") != "remove":
            # apiextensionsv1.JSON without a value marshals as null
            op["value"] = entry.get("value")
        ops.append(op)
    return apply_json_patch(obj, ops)


def apply_overriders(obj: dict, overriders: dict) -> dict:
    """Apply one rule's ``overriders`` in Karmada's fixed order: image, command, args, labels,
    annotations, field, plaintext. Returns a new dict (``obj`` is not modified).

    Raises:
        OverriderError: naming the overrider kind and index that failed.
    """
    steps = []
    for i, entry in enumerate(overriders.get("imageOverrider") or []):
        steps.append((f"imageOverrider[{i}]", lambda o, e=entry: apply_image_overrider(o, e)))
    for i, entry in enumerate(overriders.get("commandOverrider") or []):
        steps.append((f"commandOverrider[{i}]", lambda o, e=entry: apply_command_args_overrider(o, e, "command")))
    for i, entry in enumerate(overriders.get("argsOverrider") or []):
        steps.append((f"argsOverrider[{i}]", lambda o, e=entry: apply_command_args_overrider(o, e, "args")))
    for i, entry in enumerate(overriders.get("labelsOverrider") or []):
        steps.append((f"labelsOverrider[{i}]", lambda o, e=entry: apply_label_annotation_overrider(o, e, "labels")))
    for i, entry in enumerate(overriders.get("annotationsOverrider") or []):
        steps.append((f"annotationsOverrider[{i}]",
                      lambda o, e=entry: apply_label_annotation_overrider(o, e, "annotations")))
    for i, entry in enumerate(overriders.get("fieldOverrider") or []):
        steps.append((f"fieldOverrider[{i}]", lambda o, e=entry: apply_field_overrider(o, e)))
    if overriders.get("plaintext"):
        steps.append(("plaintext", lambda o: apply_plaintext(o, overriders["plaintext"])))
    out = obj
    for label, step in steps:
        try:
            out = step(out)
        except OverriderError as err:
            raise OverriderError(f"{label}: {err}") from None
    return out if out is not obj else deepcopy(obj)
