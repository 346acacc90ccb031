"""Kubernetes JSONPath templates (``{.status.jobID}``), as ``k8s.io/client-go/util/jsonpath`` reads them.

Karmada's ``statePreservation.rules[].jsonPath`` is such a template, evaluated with missing keys
as errors (``pkg/util/helper/failover.go``: ``parseJSONValue``). The expressions inside the
braces are evaluated by ``jsonpath-ng`` (its extended parser, for ``[?(@.k=="v")]`` filters); this
module only splits the template into literal text and expressions and prints the results the way
Go's ``fmt.Fprint`` does for JSON values (several results of one expression joined by a space).
"""
from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"\{([^{}]*)\}")
_UNSUPPORTED = re.compile(r"^\s*(range|end)\b")


class JSONPathError(ValueError):
    """A template that does not parse, or a path that finds nothing (the message says which)."""


@lru_cache(maxsize=512)
def compile_template(template: str) -> tuple:
    """Parse a template into ``(literal text, compiled expression | None)`` parts.

    Args:
        template: e.g. ``{.jobStatus.id}`` or ``job-{.jobID}``; at least one ``{...}`` expression.

    Raises:
        JSONPathError: no expression, unbalanced braces, ``range``/``end`` blocks (not supported),
            or an expression jsonpath-ng cannot parse.
    """
    from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
    from jsonpath_ng.ext import parse

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
        text = expr if expr.startswith("$") else "$" + expr
        if text in ("$", "$."):
            text = "$"
        try:
            compiled = parse(text)
        except (JsonPathParserError, JsonPathLexerError, Exception) as exc:  # ply raises plain Exceptions too
            raise JSONPathError(f"{{{expr}}}: {exc}") from None
        parts.append((literal, (expr, compiled)))
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


__all__ = ["JSONPathError", "compile_template", "evaluate"]
