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
    return _LabelSelectorParser(text).parse()


class _LabelSelectorParser:
    """One pass over the tokens of a label selector (``apimachinery/pkg/labels/selector.go``'s Parser):
    requirements separated by commas, each ``[!]KEY [OPERATOR VALUES]``."""

    def __init__(self, text: str):
        self.text, self.toks, self.i = text, _tokens(text), 0
        self.labels: dict = {}
        self.exprs: list = []

    def fail(self, why: str):
        raise CLIError(f'unable to parse requirement: {why} (in selector "{self.text}")')

    def _peek(self, default: str = "") -> str:
        return self.toks[self.i] if self.i < len(self.toks) else default

    def parse(self) -> dict:
        while self.i < len(self.toks):
            self._requirement()
            self._separator()
        return {"matchLabels": self.labels, "matchExpressions": self.exprs}

    def _requirement(self) -> None:
        toks = self.toks
        neg = toks[self.i] == "!"
        if neg:
            self.i += 1
        if self.i >= len(toks) or toks[self.i] in _OPERATORS:
            self.fail(f'found "{self._peek()}", expected: identifier')
        key = toks[self.i]
        _check_key(key, self.text)
        self.i += 1
        nxt = self._peek(",")
        if neg:
            if nxt != ",":
                self.fail(f'found "{nxt}", expected: "," or end of selector after "!{key}"')
            self.exprs.append({"key": key, "operator": "DoesNotExist"})
        elif nxt == ",":
            self.exprs.append({"key": key, "operator": "Exists"})
        elif nxt in ("=", "==", "!=", ">", "<"):
            self._value_requirement(key, nxt)
        elif nxt in ("in", "notin"):
            self._set_requirement(key, nxt)
        else:
            self.fail(f'found "{nxt}", expected: in, notin, =, ==, !=, gt, lt')

    def _value_requirement(self, key: str, op: str) -> None:
        """``KEY=V``, ``KEY==V``, ``KEY!=V``, ``KEY>N``, ``KEY<N`` (the operator not read yet)."""
        toks = self.toks
        self.i += 1
        value = toks[self.i] if self.i < len(toks) and toks[self.i] not in _OPERATORS else ""
        if value:
            self.i += 1
        if op in (">", "<"):
            if not re.fullmatch(r"-?\d+", value):
                self.fail(f'for "{op}" operator, the value must be an integer, got "{value}"')
            self.exprs.append({"key": key, "operator": "Gt" if op == ">" else "Lt", "values": [value]})
            return
        _check_value(value, self.text)
        if op == "!=":
            self.exprs.append({"key": key, "operator": "NotIn", "values": [value]})
        elif key in self.labels and self.labels[key] != value:
            self.exprs.append({"key": key, "operator": "In", "values": [value]})
        else:
            self.labels[key] = value

    def _set_requirement(self, key: str, op: str) -> None:
        """``KEY in (A,B)``, ``KEY notin (A)`` (the operator not read yet)."""
        toks = self.toks
        self.i += 1
        if self.i >= len(toks) or toks[self.i] != "(":
            self.fail(f'found "{self._peek()}", expected: "("')
        self.i += 1
        values = []
        while True:
            if self.i >= len(toks):
                self.fail('found "", expected: ")"')
            if toks[self.i] == ")":
                self.i += 1
                break
            if toks[self.i] == ",":
                self.i += 1
                continue
            if toks[self.i] in _OPERATORS:
                self.fail(f'found "{toks[self.i]}", expected: "," or ")"')
            _check_value(toks[self.i], self.text)
            values.append(toks[self.i])
            self.i += 1
        if not values:
            self.fail(f'for "{op}" operator, values set can\'t be empty')
        self.exprs.append({"key": key, "operator": "In" if op == "in" else "NotIn", "values": values})

    def _separator(self) -> None:
        """The comma after a requirement, unless it is the last."""
        if self.i < len(self.toks):
            if self.toks[self.i] != ",":
                self.fail(f'found "{self.toks[self.i]}", expected: ","')
            self.i += 1
            if self.i >= len(self.toks):
                self.fail('found "", expected: identifier after ","')


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
