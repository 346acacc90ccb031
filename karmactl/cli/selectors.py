"""Strict label- and field-selector parsing, as kubectl and the API server read ``-l`` and ``--field-selector``.

Follows the grammar of Kubernetes' ``staging/src/k8s.io/apimachinery/pkg/labels/selector.go`` (a lexer
over identifiers, ``=``/``==``/``!=``/``in``/``notin``/``!``/``>``/``<``, parentheses and commas) and the
key/value rules of ``pkg/util/validation/validation.go`` (qualified names, 63-character label values).
"""
from __future__ import annotations

import re

from karmactl.cli.context import CLIError

_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_OPERATORS = ("==", "!=", "=", ">", "<", "!", "(", ")", ",")


def _tokens(text: str) -> list[str]:
    toks, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
        if op:
            toks.append(op)
            i += len(op)
            continue
        j = i
        while j < len(text) and not text[j].isspace() and not any(text.startswith(o, j) for o in _OPERATORS):
            j += 1
        toks.append(text[i:j])
        i = j
    return toks


def check_label_key(key: str) -> None:
    """A label key: an optional DNS-1123 subdomain prefix and ``/``, then a name of at most 63 characters.

    Raises:
        CLIError: naming the key and the rule it breaks.
    """
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _PREFIX.match(prefix)):
        raise CLIError(f'invalid label key "{key}": prefix part must be a DNS-1123 subdomain')
    if not name or len(name) > 63 or not _NAME.match(name):
        raise CLIError(f'invalid label key "{key}": name part must consist of alphanumeric characters, \'-\', '
                       f"'_' or '.', start and end with an alphanumeric character, at most 63 characters")


def check_label_value(value: str) -> None:
    """A label value: empty, or at most 63 alphanumerics, ``-``, ``_``, ``.`` starting and ending alphanumeric.

    Raises:
        CLIError: naming the value.
    """
    if value and (len(value) > 63 or not _NAME.match(value)):
        raise CLIError(f'invalid label value: "{value}": a valid label must be an empty string or consist of '
                       f"alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                       f"character")


def _check_key(key: str, text: str) -> None:
    try:
        check_label_key(key)
    except CLIError as exc:
        raise CLIError(f'unable to parse requirement: {exc} (in selector "{text}")') from None


def _check_value(value: str, text: str) -> None:
    try:
        check_label_value(value)
    except CLIError as exc:
        raise CLIError(f'unable to parse requirement: {exc} (in selector "{text}")') from None


def parse_label_selector(text: str) -> dict:
    """``k=v,k==v,k!=v,k,!k,k in (a,b),k notin (a),k>1,k<2`` -> a LabelSelector dict
    ``{"matchLabels": {...}, "matchExpressions": [...]}`` (``Gt``/``Lt`` for ``>``/``<``).

    An empty value after ``=``/``==`` selects the empty label value, as Kubernetes does.

    Raises:
        CLIError: anything Kubernetes' selector parser rejects (exit 2), naming the part.
    """
    toks = _tokens(text)
    labels: dict = {}
    exprs: list = []
    i = 0

    def fail(why: str):
        raise CLIError(f'unable to parse requirement: {why} (in selector "{text}")')

    while i < len(toks):
        neg = toks[i] == "!"
        if neg:
            i += 1
        if i >= len(toks) or toks[i] in _OPERATORS:
            fail(f'found "{toks[i] if i < len(toks) else ""}", expected: identifier')
        key = toks[i]
        _check_key(key, text)
        i += 1
        nxt = toks[i] if i < len(toks) else ","
        if neg:
            if nxt != ",":
                fail(f'found "{nxt}", expected: "," or end of selector after "!{key}"')
            exprs.append({"key": key, "operator": "DoesNotExist"})
        elif nxt == ",":
            exprs.append({"key": key, "operator": "Exists"})
        elif nxt in ("=", "==", "!=", ">", "<"):
            i += 1
            value = toks[i] if i < len(toks) and toks[i] not in _OPERATORS else ""
            if value:
                i += 1
            if nxt in (">", "<"):
                if not re.fullmatch(r"-?\d+", value):
                    fail(f'for "{nxt}" operator, the value must be an integer, got "{value}"')
                exprs.append({"key": key, "operator": "Gt" if nxt == ">" else "Lt", "values": [value]})
            else:
                _check_value(value, text)
                if nxt == "!=":
                    exprs.append({"key": key, "operator": "NotIn", "values": [value]})
                elif key in labels and labels[key] != value:
                    exprs.append({"key": key, "operator": "In", "values": [value]})
                else:
                    labels[key] = value
        elif nxt in ("in", "notin"):
            i += 1
            if i >= len(toks) or toks[i] != "(":
                fail(f'found "{toks[i] if i < len(toks) else ""}", expected: "("')
            i += 1
            values = []
            while True:
                if i >= len(toks):
                    fail('found "", expected: ")"')
                if toks[i] == ")":
                    i += 1
                    break
                if toks[i] == ",":
                    i += 1
                    continue
                if toks[i] in _OPERATORS:
                    fail(f'found "{toks[i]}", expected: "," or ")"')
                _check_value(toks[i], text)
                values.append(toks[i])
                i += 1
            if not values:
                fail(f'for "{nxt}" operator, values set can\'t be empty')
            exprs.append({"key": key, "operator": "In" if nxt == "in" else "NotIn", "values": values})
        else:
            fail(f'found "{nxt}", expected: in, notin, =, ==, !=, gt, lt')
        if i < len(toks):
            if toks[i] != ",":
                fail(f'found "{toks[i]}", expected: ","')
            i += 1
            if i >= len(toks):
                fail('found "", expected: identifier after ","')
    return {"matchLabels": labels, "matchExpressions": exprs}


def parse_field_selector(text: str, fields: tuple) -> list[tuple[str, bool, str]]:
    """``f=v,f==v,f!=v`` -> ``[(field, equal, value)]``; ``involvedObject.*`` reads ``regarding.*``.

    Follows ``apimachinery/pkg/fields/selector.go``: every part needs an operator, ``\\,`` ``\\=`` and
    ``\\\\`` escape inside values.

    Raises:
        CLIError: unparseable, or a field the kind cannot be selected by (kubectl's wording).
    """
    reqs = []
    for part in re.split(r"(?<!\\),", text):
        part = part.strip()
        if not part:
            raise CLIError(f'invalid selector: "{text}"; empty requirement')
        m = re.fullmatch(r"([A-Za-z][A-Za-z0-9.]*)\s*(==|!=|=)(.*)", part)
        if not m or re.search(r"(?<!\\)[=!]", m.group(3)):
            raise CLIError(f'invalid selector: "{text}"; can\'t understand "{part}"')
        if m.group(1) not in fields:
            raise CLIError(f'field label not supported: {m.group(1)}')
        value = re.sub(r"\\(.)", r"\1", m.group(3).strip())
        reqs.append((m.group(1).replace("involvedObject.", "regarding."), m.group(2) != "!=", value))
    return reqs
