"""``karmactl explain TYPE[.FIELD...]``: kubectl explain's layout from the schemas karmactl has.

Built-in kinds read the Kubernetes OpenAPI schemas (with their descriptions) that apply validates with
(:mod:`karmactl.api.openapi`, from ``kubernetes-validate``). Karmada's kinds read karmactl's own
validation schema of each CRD (:mod:`karmactl.api.validation_schema`): field names, types, enums and
required fields as ``charts/karmada/_crds/bases/**`` declare them, described by karmactl's own texts
(:mod:`karmactl.api.field_docs`). Layout follows kubectl's plaintext
template (``kubectl/pkg/explain/v2/templates/plaintext.tmpl``).
"""
from __future__ import annotations

import sys
import textwrap

import typer

from karmactl.cli.context import CLIError
from karmactl.cli.stores import registry_of

_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


# ---------------------------------------------------------------------------- a common node shape
class Node:
    """One field: ``type`` (kubectl's ``<string>``, ``<[]Object>``...), ``description``, ``fields``
    (name -> Node, for objects), ``required`` names, ``enum`` values."""

    def __init__(self, type_: str, description: str = "", fields=None, required=(), enum=()):
        self.type, self.description = type_, description
        self._fields, self.required, self.enum = fields, tuple(required), tuple(enum)

    @property
    def fields(self) -> dict:
        return self._fields() if callable(self._fields) else (self._fields or {})


def _openapi_node(schema: dict, description: str = "", depth: int = 0) -> Node:
    from karmactl.api import openapi as schemas

    name, target = schemas.resolve(schema)
    description = description or schema.get("description") or target.get("description", "")
    if name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
        return Node("IntOrString", description)
    if name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
        return Node("Quantity", description)
    if name == "io.k8s.apimachinery.pkg.apis.meta.v1.Time":
        return Node("Time", description)
    types = target.get("type") or "object"
    types = [t for t in (types if isinstance(types, list) else [types]) if t != "null"] or ["object"]
    kind = types[0]
    if kind == "array":
        item = _openapi_node(target.get("items") or {})
        return Node(f"[]{item.type}", description, lambda: item.fields, item.required, item.enum)
    if kind == "object" and isinstance(target.get("additionalProperties"), dict) and not target.get("properties"):
        value = _openapi_node(target["additionalProperties"])
        return Node(f"map[string]{value.type}", description)
    if kind == "object":
        props = target.get("properties") or {}
        return Node("Object", description, lambda: {k: _openapi_node(v) for k, v in props.items()},
                    target.get("required") or ())
    return Node(kind, description, enum=[e for e in target.get("enum") or [] if e is not None])


def _karmada_node(schema, description: str = "", kind: str = "", path: tuple = ()) -> Node:
    """The node of a Karmada kind's field at ``path``, its description from :mod:`karmactl.api.field_docs`
    (``description`` when given)."""
    from karmactl.api import validation_schema as vs
    from karmactl.api.field_docs import describe

    description = description or describe(kind, list(path))
    if isinstance(schema, vs.Obj):
        return Node("Object", description,
                    lambda: {k: _karmada_node(v, "", kind, path + (k,)) for k, v in schema.props.items()},
                    schema.required)
    if isinstance(schema, vs.Arr):
        item = _karmada_node(schema.items, "", kind, path)
        return Node(f"[]{item.type}", description, lambda: item.fields, item.required, item.enum)
    if isinstance(schema, vs.Map):
        return Node(f"map[string]{_karmada_node(schema.values, '', kind, path).type}", description)
    if isinstance(schema, vs.Str):
        return Node("string", description, enum=schema.enum or ())
    if isinstance(schema, vs.Int):
        return Node("integer", description)
    if isinstance(schema, vs.Bool):
        return Node("boolean", description)
    if isinstance(schema, vs.IntOrStr):
        return Node("IntOrString", description)
    return Node("Object", description or "Free-form: any fields (x-kubernetes-preserve-unknown-fields).")


def root_node(info) -> Node:
    """The schema tree of a kind.

    Raises:
        CLIError: a kind karmactl has no schema for (a CRD's own kind).
    """
    from karmactl.api.validation_schema import SPEC_SCHEMAS
    from karmactl.api import openapi as schemas

    if info.karmada:
        spec = SPEC_SCHEMAS.get((info.group, info.kind))
        meta = _openapi_node({"$ref": "#/$defs/" + _META},
                             "Standard object's metadata. More info: https://git.k8s.io/community/contributors/"
                             "devel/sig-architecture/api-conventions.md#metadata")
        fields = {"apiVersion": Node("string", "APIVersion defines the versioned schema of this representation of an "
                                               "object."),
                  "kind": Node("string", "Kind is a string value representing the REST resource this object "
                                         "represents."),
                  "metadata": meta}
        from karmactl.api.field_docs import describe

        if (info.group, info.kind) == ("networking.karmada.io", "MultiClusterIngress"):
            # its spec is a networking.k8s.io/v1 IngressSpec: Kubernetes' own schema describes it
            fields["spec"] = _openapi_node({"$ref": "#/$defs/io.k8s.api.networking.v1.IngressSpec"},
                                           describe(info.kind, ["spec"]))
        elif spec is not None:
            fields["spec"] = _karmada_node(spec[0], describe(info.kind, ["spec"]) or f"Spec of the {info.kind}.",
                                           info.kind, ("spec",))
        fields["status"] = Node("Object", f"Status of the {info.kind}: computed by `karmactl reconcile` (or the "
                                          f"member's report), never written by hand.")
        return Node("Object", describe(info.kind, []) or f"{info.kind} of Karmada ({info.group}/{info.version}).",
                    fields, ("spec",) if spec is not None and spec[1] else ())
    name = schemas.definition_name(info.group, info.version, info.kind)
    if name is None:
        raise CLIError(f'no schema for {info.kind}: it is defined by a CustomResourceDefinition; read its '
                       f'spec.versions[].schema.openAPIV3Schema')
    return _openapi_node({"$ref": "#/$defs/" + name})


def explain_text(info, path: list[str], recursive: bool) -> str:
    """kubectl explain's text for ``info`` and a field path (``["spec", "replicas"]``).

    Raises:
        CLIError: a field the kind does not have (kubectl's ``field "x" does not exist``).
    """
    node = root_node(info)
    for i, part in enumerate(path):
        fields = node.fields
        if part not in fields:
            raise CLIError(f'field "{part}" does not exist')
        node = fields[part]
    lines = [f"GROUP:      {info.group}" if info.group else None, f"KIND:       {info.kind}",
             f"VERSION:    {info.version}", ""]
    lines = [ln for ln in lines if ln is not None]
    if path:
        lines += [f"FIELD: {path[-1]} <{node.type}>", ""]
    lines.append("DESCRIPTION:")
    lines += _wrapped(node.description or "<empty>", 4)
    if node.enum:
        lines += ["    Possible enum values:"] + [f"     - `\"{v}\"`" for v in node.enum]
    fields = node.fields
    if fields:
        lines += ["", "FIELDS:"]
        if recursive:
            _tree(node, 1, lines, 0)
        else:
            for name, child in fields.items():
                req = " -required-" if name in node.required else ""
                lines.append(f"  {name}\t<{child.type}>{req}")
                if child.description:
                    lines += _wrapped(child.description, 4)
                lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _wrapped(text: str, indent: int) -> list[str]:
    out = []
    for para in text.split("\n"):
        out += textwrap.wrap(para, 80 - indent, initial_indent=" " * indent, subsequent_indent=" " * indent,
                             break_on_hyphens=False, break_long_words=False) or [""]
    return out


def _tree(node: Node, depth: int, lines: list[str], seen: int) -> None:
    if depth > 12:  # recursive types (JSONSchemaProps) stop where kubectl stops printing useful depth
        return
    for name, child in node.fields.items():
        req = " -required-" if name in node.required else ""
        lines.append(f"{'  ' * depth}{name}\t<{child.type}>{req}")
        if child.type.endswith("Object"):
            _tree(child, depth + 1, lines, seen)


def register(app: typer.Typer) -> None:
    """Add ``explain`` to the app."""

    @app.command()
    def explain(ctx: typer.Context, target: str = typer.Argument(..., metavar="TYPE[.FIELD...]",
                                                                 help="e.g. deploy.spec.replicas, pp.spec.placement"),
                recursive: bool = typer.Option(False, "--recursive", help="Every field, nested, names and types only.")):
        """Describe a kind's fields from its schema (kubectl explain)."""
        from karmactl.cli.kindnames import lookup_kind

        registry = registry_of(ctx.obj)
        parts = target.split(".")
        # the longest prefix that names a kind: deploy, deployments.apps, deployment.v1.apps
        for n in range(min(3, len(parts)), 0, -1):
            info = lookup_kind(registry, ".".join(parts[:n]))
            if info is not None:
                break
        else:
            from karmactl.api.kinds import suggest_for_name
            raise CLIError(f'the server doesn\'t have a resource type "{parts[0]}"{suggest_for_name(registry, parts[0])}')
        sys.stdout.write(explain_text(info, parts[n:], recursive))
