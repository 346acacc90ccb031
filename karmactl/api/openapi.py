"""The Kubernetes OpenAPI schemas of built-in kinds: pruning, validation and the ``/openapi`` documents.

The schemas come from the ``kubernetes-validate`` package (its ``v<SCHEMA_VERSION>-local`` JSON
Schema set: the upstream ``api/openapi-spec/swagger.json`` of that release turned into draft 2020-12
JSON Schema, one ``$defs`` entry per OpenAPI definition, ``x-kubernetes-*`` extensions kept). The
version matches the one the emulator reports in ``/version``. Validation runs on ``jsonschema`` (a
dependency of that package) with one compiled validator per kind, cached.

Shared by the emulator (kube-apiserver's decoding and validation of what members receive) and by
``apply`` (:func:`strict_errors`, as ``kubectl apply --validate=strict``).

What kube-apiserver does with a built-in object on every write, and how it is emulated here:

- decoding drops fields the Go types do not declare (``fieldValidation=Ignore``/``Warn``) or refuses
  them (``Strict``): :func:`prune` walks the object along the schema;
- decoding refuses values of the wrong JSON type (400 BadRequest) and validation refuses missing
  required fields (422 Invalid): :func:`check`;
- ``kubectl explain`` reads the schemas from ``/openapi/v2`` or ``/openapi/v3``: :func:`openapi_v2`
  and :func:`closure`.

Pure: no I/O other than reading the packaged schema file once.
"""
from __future__ import annotations

import functools
import json
import re
from typing import Any, Callable, Iterator

SCHEMA_VERSION = "1.31.0"
_REF = "#/$defs/"


@functools.cache
def definitions() -> dict[str, dict]:
    """OpenAPI definition name (``io.k8s.api.apps.v1.Deployment``) -> JSON Schema (refs ``#/$defs/<name>``).

    The file is found through the package's import spec, without importing ``kubernetes_validate``
    (whose import pulls in ``jsonschema``: about 75 ms, most of a one-template run's parse).

    Raises RuntimeError when ``kubernetes-validate`` lacks the schema set (a broken install)."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("kubernetes_validate")
    try:
        if spec is None or not spec.origin:
            raise FileNotFoundError("the package is not installed")
        path = os.path.join(os.path.dirname(spec.origin), "kubernetes-json-schema", f"v{SCHEMA_VERSION}-local",
                            "_definitions.json")
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)["$defs"]
    except (FileNotFoundError, KeyError) as e:
        raise RuntimeError(f"kubernetes-validate has no v{SCHEMA_VERSION} schemas ({e}); "
                           "reinstall karmactl's dependencies") from e


@functools.cache
def _gvk_index() -> dict[tuple[str, str, str], str]:
    out = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            out.setdefault((gvk.get("group", ""), gvk["version"], gvk["kind"]), name)
    return out


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a built-in kind (``("apps", "v1", "Deployment")`` ->
    ``io.k8s.api.apps.v1.Deployment``), or None when the schemas do not know it."""
    return _gvk_index().get((group, version, kind))


def resolve(schema: dict) -> tuple[str | None, dict]:
    """Follow ``$ref``: (definition name or None, the schema it names)."""
    name = None
    while isinstance(schema.get("$ref"), str):
        name = schema["$ref"][len(_REF):]
        schema = definitions()[name]
    return name, schema


def _map_of(schema: dict) -> dict | None:
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


# ---- walking --------------------------------------------------------------------------------------

Visitor = Callable[[str | None, dict, dict, str], None]


def walk(obj: Any, schema: dict, visit: Visitor, path: str = "") -> None:
    """Call ``visit(definition_name, schema, node, path)`` on every mapping of ``obj`` that the schema
    describes as an object, parents before children (so a visitor may add children, e.g. defaults,
    and they are walked too). ``path`` is dotted with ``[i]`` for list items (``spec.ports[0]``)."""
    name, schema = resolve(schema)
    if isinstance(obj, dict):
        props = schema.get("properties")
        if props is not None:
            visit(name, schema, obj, path)
            for key in list(obj):
                if key in props and key in obj:
                    walk(obj[key], props[key], visit, f"{path}.{key}" if path else key)
        elif (sub := _map_of(schema)) is not None:
            for key in list(obj):
                walk(obj[key], sub, visit, f"{path}[{key}]")
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(obj):
            walk(item, schema["items"], visit, f"{path}[{i}]")


def prune(obj: dict, definition: str) -> list[str]:
    """Drop, in place, every field the schema does not declare (what decoding into the Go types does);
    returns their paths (``spec.foo``, ``spec.template.spec.containers[0].bogus``) in walk order."""
    dropped: list[str] = []

    def visit(_name: str | None, schema: dict, node: dict, path: str) -> None:
        if schema.get("x-kubernetes-preserve-unknown-fields") or _map_of(schema) is not None:
            return
        props = schema["properties"]
        for key in [k for k in node if k not in props]:
            del node[key]
            dropped.append(f"{path}.{key}" if path else key)

    walk(obj, {"$ref": _REF + definition}, visit)
    return dropped


# ---- validation -----------------------------------------------------------------------------------

def _re2_pattern(validator, pattern, instance, schema):
    """The ``pattern`` keyword on RE2 (:func:`karmactl.api.regex.compile_user_regex`) instead of
    jsonschema's Python ``re``: linear in the instance, Go's syntax (as the API server's OpenAPI
    validation, ``k8s.io/kube-openapi``, which uses Go's ``regexp``)."""
    from jsonschema.exceptions import ValidationError

    from karmactl.api.regex import RegexError, compile_user_regex

    if not validator.is_type(instance, "string"):
        return
    try:
        compiled = compile_user_regex(pattern, "schema pattern")
    except RegexError as exc:
        yield ValidationError(str(exc))
        return
    if not compiled.search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def _validator_class():
    """Draft 2020-12 with :func:`_re2_pattern` as its ``pattern`` keyword."""
    import jsonschema

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _re2_pattern})


@functools.cache
def _validator(definition: str):
    from referencing import Registry, Resource

    defs = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": definitions()}
    registry = Registry().with_resource("urn:k8s", Resource.from_contents(defs))
    schema = {"$ref": f"urn:k8s{_REF}{definition}"}
    return _validator_class()(schema, registry=registry)


def _dotted(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _leaf_errors(errors) -> Iterator:
    for err in errors:
        if err.context:  # oneOf/anyOf: report the most specific branch failures
            yield from _leaf_errors(err.context)
        else:
            yield err


_GO_TYPES = {"integer": "int64", "number": "float64", "string": "string", "boolean": "bool",
             "object": "map", "array": "slice"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", dict: "object", list: "array", type(None): "null"}.get(type(value), "value")


def check(obj: dict, definition: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Check ``obj`` (already pruned) against its kind's schema, ``status`` excepted (controllers own
    it and decoding only checks its types, which a bad status write reports the same way).

    Returns (type errors as ``(field path, message)``, paths of missing required fields). Type errors
    are what kube-apiserver's decoder refuses with 400 BadRequest; missing required fields are what
    its validation refuses with 422 Invalid (``FieldValueRequired``)."""
    type_errors: list[tuple[str, str]] = []
    required: list[str] = []
    seen: set[str] = set()
    for err in _leaf_errors(_validator(definition).iter_errors(obj)):
        parts = list(err.absolute_path)
        if parts[:1] == ["status"]:
            if err.validator != "type":
                continue
        path = _dotted(parts)
        if err.validator == "required":
            missing = re.findall(r"'([^']+)' is a required property", err.message)
            for field in missing:
                full = f"{path}.{field}" if path else field
                if full not in required:
                    required.append(full)
        elif err.validator == "type":
            if path in seen:
                continue
            seen.add(path)
            want = err.validator_value
            want = [t for t in (want if isinstance(want, list) else [want]) if t != "null"]
            go_type = err.schema.get("format") if err.schema.get("format") in ("int32", "int64") else (
                _GO_TYPES.get(want[0], want[0]) if want else "value")
            type_errors.append((path, f"cannot unmarshal {_json_type(err.instance)} into Go value of type {go_type}"))
        elif err.validator == "enum":
            type_errors.append((path, f"unsupported value {err.instance!r}"))
        else:
            type_errors.append((path, err.message))
    return type_errors, required


# ---- OpenAPI documents ----------------------------------------------------------------------------

def _for_openapi(schema: Any, ref_prefix: str) -> Any:
    """A JSON Schema fragment as Kubernetes' OpenAPI spells it: single ``type`` (nullable dropped),
    refs under ``ref_prefix``, int-or-string and quantity as strings with their formats."""
    if isinstance(schema, list):
        return [_for_openapi(s, ref_prefix) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = ref_prefix + value[len(_REF):]
        elif key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            if types:
                out[key] = types[0]
        elif key == "additionalProperties" and value is False:
            continue
        elif key == "properties":
            out[key] = {k: _for_openapi(v, ref_prefix) for k, v in value.items()}
        else:
            out[key] = _for_openapi(value, ref_prefix)
    if "oneOf" in out and all(set(o) <= {"type"} for o in out["oneOf"]):
        kinds = {o.get("type") for o in out.pop("oneOf")}
        out["type"] = "string"
        if "integer" in kinds:
            out["format"] = "int-or-string"
    return out


@functools.cache
def _converted(ref_prefix: str) -> dict[str, dict]:
    return {name: _for_openapi(schema, ref_prefix) for name, schema in definitions().items()}


def closure(names: list[str], ref_prefix: str) -> dict[str, dict]:
    """The named definitions and every definition they reference, converted for an OpenAPI document
    whose refs start with ``ref_prefix`` (``#/components/schemas/`` for v3)."""
    converted = _converted(ref_prefix)
    out: dict[str, dict] = {}
    todo = [n for n in names if n in converted]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out[name] = converted[name]
        todo.extend(r[len(ref_prefix):] for r in _refs(converted[name]) if r[len(ref_prefix):] not in out)
    return out


def _refs(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _refs(value)


@functools.cache
def openapi_v2_definitions() -> dict[str, dict]:
    """Every definition as Swagger 2.0 ``definitions`` (refs ``#/definitions/<name>``)."""
    return _converted("#/definitions/")


# ---- strict validation of input ---------------------------------------------------------------------

_HANDLED = frozenset({"$ref", "type", "enum", "properties", "additionalProperties", "items", "oneOf"})
_ANNOTATIONS = frozenset({"description", "format", "required", "$schema"})
"""Keywords that assert nothing :func:`strict_errors` reports: ``format`` is an annotation for
``jsonschema`` without a format checker, missing ``required`` fields are not reported."""
_COMPILED: dict[int, tuple] = {}


def _compiled(schema: dict) -> tuple | None:
    """``schema`` (with the chain of ``$ref`` it starts) as ``(types, enum, properties,
    additionalProperties, items, oneOf, collect)`` for :func:`_scan`, or None when it uses a
    keyword :func:`_scan` does not evaluate as ``jsonschema`` would. ``collect``: :func:`prune`
    would drop this mapping's undeclared fields. ``schema`` must be part of :func:`definitions`
    (which live as long as the process): results are kept by its identity."""
    hit = _COMPILED.get(id(schema))
    if hit is not None or id(schema) in _COMPILED:
        return hit
    parts = [schema]
    while isinstance(parts[-1].get("$ref"), str):
        parts.append(definitions()[parts[-1]["$ref"][len(_REF):]])
    out = _compile_chain(parts) if _keywords_handled(parts) else None
    _COMPILED[id(schema)] = out
    return out


def _keywords_handled(parts: list[dict]) -> bool:
    """Whether a ``$ref`` chain (``parts``, the referring schemas then the referred one) uses only
    keywords :func:`_scan` evaluates or that assert nothing, each evaluated keyword once, and
    structure (properties, additionalProperties, items) only in the last schema."""
    keywords = [k for part in parts for k in part if k != "$ref" and not k.startswith("x-")]
    structural = [k for part in parts[:-1] for k in part if k in ("properties", "additionalProperties", "items")]
    return (all(k in _HANDLED or k in _ANNOTATIONS for k in keywords) and not structural
            and len([k for k in keywords if k in _HANDLED]) == len({k for k in keywords if k in _HANDLED}))


def _compile_chain(parts: list[dict]) -> tuple | None:
    """The :func:`_compiled` tuple of a ``$ref`` chain whose keywords are handled, or None when
    its values are not the ones :func:`_scan` evaluates (an enum of non-strings, a boolean
    additionalProperties, oneOf branches with more than a type)."""
    last = parts[-1]
    merged = {k: v for part in parts for k, v in part.items()}
    types = merged.get("type")
    enum = merged.get("enum")
    extra = merged.get("additionalProperties")
    one_of = merged.get("oneOf")
    ok = ((enum is None or all(isinstance(e, str) for e in enum))
          and (extra is None or isinstance(extra, dict))
          and (one_of is None or all(set(b) <= {"type"} for b in one_of)))
    if not ok:
        return None
    branches = tuple(_compiled(b) for b in one_of) if one_of is not None else None
    return (frozenset([types] if isinstance(types, str) else types) if types is not None else None,
            frozenset(enum) if enum is not None else None,
            last.get("properties"), extra, merged.get("items"), branches,
            not last.get("x-kubernetes-preserve-unknown-fields") and extra is None)


def _type_ok(value: Any, types: frozenset) -> bool:
    cls = type(value)
    if cls is str:
        return "string" in types
    if cls is dict:
        return "object" in types
    if cls is list:
        return "array" in types
    if cls is bool:
        return "boolean" in types
    if cls is int:
        return "integer" in types or "number" in types
    if cls is float:
        return "number" in types or ("integer" in types and value.is_integer())
    if value is None:
        return "null" in types
    return False


def _scan(value: Any, compiled: tuple | None, path: str, unknown: list, collect: bool) -> bool:
    """True when ``jsonschema`` would find nothing wrong with ``value`` (missing required fields
    aside); meanwhile appends to ``unknown`` (when ``collect``) the fields :func:`prune` would drop,
    in its order. False as soon as something may be wrong (or a schema is not :func:`_compiled`):
    the caller then asks ``jsonschema``, which says what. One walk without copying, where
    ``jsonschema`` evolves a validator object per keyword and node (the cost of checking every
    built-in object of a large state directory)."""
    if compiled is None:
        return False
    types, enum, props, extra, items, one_of, collect_here = compiled
    if types is not None and not _type_ok(value, types):
        return False
    if enum is not None and not (type(value) is str and value in enum):
        return False
    if one_of is not None and not _one_branch(value, one_of, path, unknown):
        return False
    cls = type(value)
    if cls is dict:
        if props is None:
            return _scan_map(value, extra, path, unknown, collect)
        if collect and collect_here:
            unknown.extend(f"{path}.{k}" if path else k for k in value if k not in props)
        for key, item in value.items():
            sub = props.get(key)
            if sub is not None:
                if not _scan(item, _compiled(sub), f"{path}.{key}" if path else key, unknown, collect):
                    return False
            elif extra is not None and not _scan(item, _compiled(extra), "", unknown, False):
                return False
    elif cls is list and items is not None:
        return _scan_items(value, _compiled(items), path, unknown, collect)
    return True


def _one_branch(value: Any, one_of: tuple, path: str, unknown: list) -> bool:
    """Whether ``value`` is valid against exactly one of the compiled ``oneOf`` branches."""
    return sum(1 for b in one_of if _scan(value, b, path, unknown, False)) == 1


def _scan_map(value: dict, extra: dict | None, path: str, unknown: list, collect: bool) -> bool:
    """:func:`_scan` of a mapping without properties: every value against its additionalProperties
    (``extra``; none: anything goes)."""
    if extra is None:
        return True
    compiled = _compiled(extra)
    for key, item in value.items():
        if not _scan(item, compiled, f"{path}[{key}]", unknown, collect):
            return False
    return True


def _scan_items(value: list, compiled: tuple | None, path: str, unknown: list, collect: bool) -> bool:
    """:func:`_scan` of an array: every item against its items schema."""
    for i, item in enumerate(value):
        if not _scan(item, compiled, f"{path}[{i}]", unknown, collect):
            return False
    return True


def strict_errors(obj: dict) -> list[tuple[str, str]] | None:
    """What ``kubectl apply --validate=strict`` refuses in a built-in object: fields the schema does
    not declare (``unknown field "spec.replica"``, strict field validation) and values of the wrong
    JSON type (``spec.replicas: "three"``, a ConfigMap value ``on`` read as a boolean: decoding
    errors), checked against the Kubernetes OpenAPI schema of the object's kind (kube-apiserver's
    strict decoding, ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go`` with
    ``fieldValidation=Strict``, which ``kubectl apply --validate=strict`` asks for).

    Missing required fields are not reported: that is the API server's validation of the stored
    object (422), which the member clusters apply when the Work reaches them. ``status`` is not
    checked (``apply`` strips it). ``obj`` is not changed.

    Returns:
        ``[(field path, message)]`` in schema-walk order, empty when valid; None when the kind has
        no built-in schema (a custom resource or a Karmada kind: validated elsewhere).
    """
    import copy

    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    group, _, version = api_version.rpartition("/")
    definition = definition_name(group, version, kind)
    if definition is None:
        return None
    body = {k: v for k, v in obj.items() if k != "status"}
    unknown: list[str] = []
    if _scan(body, _compiled(definitions()[definition]), "", unknown, True):
        return [(path, f'unknown field "{path}"') for path in unknown]
    pruned = copy.deepcopy(body)
    errors = [(path, f'unknown field "{path}"') for path in prune(pruned, definition)]
    type_errors, _required = check(body, definition)
    errors += [(path, message) for path, message in type_errors if not path.startswith("status")]
    return errors
