"""kubectl's JSONPath templates and custom columns, evaluated with ``jsonpath-ng``.

The template syntax follows kubectl (``k8s.io/client-go/util/jsonpath``): text with ``{expr}`` actions,
``{range expr}...{end}`` loops, ``{"literal"}`` strings, ``$`` or a leading ``.`` for the root, ``\\.``
for dots inside a field name, ``[n]``, ``[a:b]``, ``[*]``, ``..`` and ``[?(@.k=="v")]`` filters. A field
missing from an object prints nothing (kubectl's ``get`` allows missing keys). Custom columns follow
``kubectl/pkg/cmd/get/customcolumn.go``.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class TemplateError(ValueError):
    """A malformed JSONPath template or custom-columns spec (the CLI exits 2)."""


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
    raise TemplateError(f"unterminated array in jsonpath expression: {expr}")


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
        TemplateError: the expression does not parse.
    """
    from jsonpath_ng.exceptions import JSONPathError
    from jsonpath_ng.ext import parse

    try:
        return parse(to_jsonpath_ng(expr))
    except (JSONPathError, Exception) as exc:  # jsonpath-ng's lexer raises plain Exceptions too
        raise TemplateError(f"error parsing jsonpath {{{expr}}}: {exc}") from None


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
            raise TemplateError(f"unclosed action in jsonpath template: {template}")
        action = template[start + 1:end].strip()
        pos = end + 1
        if action.startswith("range ") or action == "range":
            ranges.append(action[5:].strip())
            if not ranges[-1]:
                raise TemplateError(f"range needs an expression in jsonpath template: {template}")
            compile_expr(ranges[-1]) if ranges[-1] not in ("$", ".") else None
            stack.append([])
        elif action == "end":
            if not ranges:
                raise TemplateError(f"not in range, nothing to end in jsonpath template: {template}")
            body = stack.pop()
            stack[-1].append(("range", ranges.pop(), body))
        elif action.startswith('"'):
            try:
                text = json.loads(action, strict=False)
            except ValueError:
                raise TemplateError(f"invalid string literal {action} in jsonpath template: {template}") from None
            stack[-1].append(("text", text))
        else:
            if action not in ("", "$", ".", "@"):
                compile_expr(action[1:] if action.startswith("@") else action)
            stack[-1].append(("expr", action))
    if ranges:
        raise TemplateError(f"unclosed range in jsonpath template: {template}")
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
        TemplateError: a malformed template or expression.
    """
    nodes = _parse(template)
    out: list[str] = []
    _execute(nodes, data, out)
    return "".join(out).replace("\\n", "\n").replace("\\t", "\t")


def parse_custom_columns(spec: str) -> list[tuple[str, str]]:
    """``NAME:.metadata.name,IMAGE:.spec.containers[*].image`` -> ``[(header, expr)]``.

    Raises:
        TemplateError: a column without ``header:expression`` or a malformed expression.
    """
    cols = []
    for part in spec.split(","):
        header, sep, expr = part.partition(":")
        if not sep or not header or not expr:
            raise TemplateError(f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
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
