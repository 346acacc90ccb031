"""Kubernetes JSONPath templates, as ``k8s.io/client-go/util/jsonpath`` reads them: one home for
kubectl's ``-o jsonpath``/``custom-columns`` and Karmada's ``statePreservation.rules[].jsonPath``.

The template syntax follows kubectl: text with ``{expr}`` actions, ``{range expr}...{end}`` loops,
``{"literal"}`` strings, ``$`` or a leading ``.`` for the root, ``\\.`` for dots inside a field name,
``[n]``, ``[a:b]``, ``[*]``, ``..`` and ``[?(@.k=="v")]`` filters. The expressions are evaluated by
``jsonpath-ng`` (its extended parser); this module translates kubectl's spelling into it, splits
templates and prints results.

Two modes, as client-go's ``AllowMissingKeys``:

* kubectl's ``get`` (:func:`render`, :func:`find`, custom columns, ``kubectl/pkg/cmd/get/customcolumn.go``):
  a missing field prints nothing;
* Karmada's state preservation (:func:`compile_template`, :func:`evaluate`;
  ``pkg/util/helper/failover.go``: ``parseJSONValue``): a missing field is an error, and a result
  must be a value (printed as Go's ``fmt.Fprint`` prints decoded JSON), not an object or a list.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TOKEN = re.compile(r"\{([^{}]*)\}")
_UNSUPPORTED = re.compile(r"^\s*(range|end)\b")


class JSONPathError(ValueError):
    """A malformed template, expression or custom-columns spec (the CLI exits 2), or in strict
    mode a path that finds nothing or finds an object (the message says which)."""


def _closing(expr: str, i: int) -> int:
    """Index of the ``]`` closing the ``[`` at ``i`` (quotes and nested brackets respected)."""
    depth, quote = 0, None
    for j in range(i, len(expr)):
        ch = expr[j]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return j
    raise JSONPathError(f"unterminated array in jsonpath expression: {expr}")


def _quote(name: str) -> str:
    return name if _IDENT.match(name) else json.dumps(name)


def to_jsonpath_ng(expr: str) -> str:
    """A kubectl JSONPath expression (``.items[*].metadata.labels.app\\.io/name``) as jsonpath-ng reads it."""
    e = expr.strip()
    if e.startswith("$"):
        e = e[1:]
    out, i = "$", 0
    while i < len(e):
        ch = e[i]
        if ch == "[":
            j = _closing(e, i)
            out += e[i:j + 1]
            i = j + 1
            continue
        if ch == ".":
            sep = ".." if e.startswith("..", i) else "."
            i += len(sep)
        else:
            sep = "."
        name = ""
        while i < len(e) and e[i] not in ".[":
            if e[i] == "\\" and i + 1 < len(e):
                name += e[i + 1]
                i += 2
                continue
            name += e[i]
            i += 1
        if name:
            out += sep + _quote(name)
        elif sep == ".." and i < len(e) and e[i] == "[":
            out += ".."
    return out


@lru_cache(maxsize=256)
def compile_expr(expr: str):
    """A compiled jsonpath-ng expression for a kubectl expression.

    Raises:
        JSONPathError: the expression does not parse.
    """
    from jsonpath_ng.ext import parse

    try:
        return parse(to_jsonpath_ng(expr))
    except Exception as exc:  # jsonpath-ng's lexer and parser (ply) raise plain Exceptions too
        raise JSONPathError(f"error parsing jsonpath {{{expr}}}: {exc}") from None


def find(expr: str, data) -> list:
    """Every value ``expr`` selects in ``data`` (``[]`` when a field is missing)."""
    e = expr.strip()
    if e in ("", "$", ".", "@"):
        return [data]
    if e.startswith("@"):
        e = e[1:]
    return [m.value for m in compile_expr(e).find(data)]


def scalar(v) -> str:
    """How kubectl prints one value: maps and lists as JSON, booleans lowercase, null as nothing."""
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def _parse(template: str) -> list:
    """Template -> nodes: ``("text", s)``, ``("expr", e)``, ``("range", e, body)``."""
    stack: list[list] = [[]]
    ranges: list[str] = []
    pos = 0
    while pos < len(template):
        start = template.find("{", pos)
        if start < 0:
            stack[-1].append(("text", template[pos:]))
            break
        if start > pos:
            stack[-1].append(("text", template[pos:start]))
        end, quote = start + 1, None
        while end < len(template) and (quote or template[end] != "}"):
            ch = template[end]
            if quote and ch == "\\":
                end += 2
                continue
            if ch == '"':
                quote = None if quote else ch
            end += 1
        if end >= len(template):
            raise JSONPathError(f"unclosed action in jsonpath template: {template}")
        action = template[start + 1:end].strip()
        pos = end + 1
        if action.startswith("range ") or action == "range":
            ranges.append(action[5:].strip())
            if not ranges[-1]:
                raise JSONPathError(f"range needs an expression in jsonpath template: {template}")
            compile_expr(ranges[-1]) if ranges[-1] not in ("$", ".") else None
            stack.append([])
        elif action == "end":
            if not ranges:
                raise JSONPathError(f"not in range, nothing to end in jsonpath template: {template}")
            body = stack.pop()
            stack[-1].append(("range", ranges.pop(), body))
        elif action.startswith('"'):
            try:
                text = json.loads(action, strict=False)
            except ValueError:
                raise JSONPathError(f"invalid string literal {action} in jsonpath template: {template}") from None
            stack[-1].append(("text", text))
        else:
            if action not in ("", "$", ".", "@"):
                compile_expr(action[1:] if action.startswith("@") else action)
            stack[-1].append(("expr", action))
    if ranges:
        raise JSONPathError(f"unclosed range in jsonpath template: {template}")
    return stack[0]


def _execute(nodes: list, data, out: list) -> None:
    for node in nodes:
        if node[0] == "text":
            out.append(node[1])
        elif node[0] == "expr":
            out.append(" ".join(scalar(v) for v in find(node[1], data)))
        else:
            values = find(node[1], data)
            if len(values) == 1 and isinstance(values[0], list):  # {range .items} walks the list
                values = values[0]
            for item in values:
                _execute(node[2], item, out)


def render(template: str, data) -> str:
    """Render a kubectl JSONPath template over ``data``.

    Raises:
        JSONPathError: a malformed template or expression.
    """
    nodes = _parse(template)
    out: list[str] = []
    _execute(nodes, data, out)
    return "".join(out).replace("\\n", "\n").replace("\\t", "\t")


def parse_custom_columns(spec: str) -> list[tuple[str, str]]:
    """``NAME:.metadata.name,IMAGE:.spec.containers[*].image`` -> ``[(header, expr)]``.

    Raises:
        JSONPathError: a column without ``header:expression`` or a malformed expression.
    """
    cols = []
    for part in spec.split(","):
        header, sep, expr = part.partition(":")
        if not sep or not header or not expr:
            raise JSONPathError(f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
        expr = expr.strip()
        if expr.startswith("{") and expr.endswith("}"):
            expr = expr[1:-1]
        compile_expr(expr)
        cols.append((header, expr))
    return cols


def custom_column_value(expr: str, obj: dict) -> str:
    """One custom column's cell: values joined by commas, ``<none>`` when nothing is found."""
    values = [v for v in find(expr, obj) if v is not None]
    return ",".join(scalar(v) for v in values) if values else "<none>"


# ---------------------------------------------------------------------------- strict templates (Karmada)
@lru_cache(maxsize=512)
def compile_template(template: str) -> tuple:
    """Parse a template into ``(literal text, compiled expression | None)`` parts.

    Args:
        template: e.g. ``{.jobStatus.id}`` or ``job-{.jobID}``; at least one ``{...}`` expression.

    Raises:
        JSONPathError: no expression, unbalanced braces, ``range``/``end`` blocks (not supported),
            or an expression jsonpath-ng cannot parse.
    """
    parts = []
    pos = 0
    for m in _TOKEN.finditer(template):
        literal = template[pos:m.start()]
        if "{" in literal or "}" in literal:
            raise JSONPathError(f"unbalanced braces in {template!r}")
        expr = m.group(1).strip()
        if _UNSUPPORTED.match(expr):
            raise JSONPathError(f"{{{expr}}}: range/end blocks are not supported")
        if not expr.startswith((".", "[", "$")):
            raise JSONPathError(f"{{{expr}}}: an expression starts with '.', '[' or '$'")
        parts.append((literal, (expr, compile_expr(expr))))
        pos = m.end()
    tail = template[pos:]
    if "{" in tail or "}" in tail:
        raise JSONPathError(f"unbalanced braces in {template!r}")
    if not parts:
        raise JSONPathError(f"{template!r} has no {{...}} expression")
    parts.append((tail, None))
    return tuple(parts)


def _go_text(value) -> str:
    """``fmt.Fprint`` of a decoded JSON scalar (float64 numbers print without a trailing ``.0``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if value is None:
        return "<nil>"
    return str(value)


def evaluate(template: str, data) -> str:
    """The text a template prints for ``data``, missing keys being errors.

    Args:
        template: a Kubernetes JSONPath template (see :func:`compile_template`).
        data: decoded JSON (dicts, lists, scalars).

    Returns:
        The literal text with each expression replaced by its results (scalars only).

    Raises:
        JSONPathError: the template does not parse, an expression finds nothing (``<key> is not
            found``), or it finds an object or a list (not a label value).
    """
    out = []
    for literal, compiled in compile_template(template):
        out.append(literal)
        if compiled is None:
            continue
        expr, path = compiled
        values = [m.value for m in path.find(data)]
        if not values:
            raise JSONPathError(f"{{{expr}}} is not found")
        for v in values:
            if isinstance(v, (dict, list)):
                raise JSONPathError(f"{{{expr}}} is an object or a list, not a value")
        out.append(" ".join(_go_text(v) for v in values))
    return "".join(out)


__all__ = ["JSONPathError", "compile_expr", "compile_template", "custom_column_value", "evaluate", "find",
           "parse_custom_columns", "render", "scalar", "to_jsonpath_ng"]
