"""YAML reading and writing for the state directory.

Two paths, by need:
* the hot path (every run reads every file) uses libyaml through PyYAML's C loader and dumper
  (``yaml.CSafeLoader``/``CSafeDumper``): about three times faster than ruamel's C loader for plain
  data, and PyYAML is already installed as a dependency of the ``kubernetes`` client;
* edits of user-written files (``apply`` onto an existing file, ``label``, ``suspend``...) use
  ruamel.yaml's round-trip mode, which keeps comments and formatting (:mod:`karmactl.store.rewrite`).

Nothing karmactl prints or writes holds an anchor or alias (``&id001`` / ``*id001``) the user did not
write: an object that shares a dict between two fields (``labels`` and ``matchLabels``) is printed
twice.
"""
from __future__ import annotations

import re

import yaml

try:  # libyaml bindings; fall back to the pure-Python classes where the C build is missing
    _BaseLoader = yaml.CSafeLoader
    _Dumper = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - depends on the build of PyYAML
    _BaseLoader = yaml.SafeLoader
    _Dumper = yaml.SafeDumper


class _Loader(_BaseLoader):
    """Safe loader without the timestamp resolver: Kubernetes reads ``2026-01-01T00:00:00Z`` in a
    manifest as a string (YAML goes through JSON there), so karmactl must not turn it into a
    ``datetime``."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


class YAMLSyntaxError(ValueError):
    """Malformed or hostile YAML; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


# Bounds on what one input may hold (hostile input gets exit 2, never a crash or a hang).
MAX_DEPTH = 100
"""Deepest nesting of mappings and sequences accepted in one document. Kubernetes objects, even
CRDs with OpenAPI schemas, stay far below; the bound leaves room for karmactl's own wrapping (a
Work's ``spec.workload.manifests[i]``) under orjson's limit of 254 levels, and keeps libyaml's
recursive composer far from the stack's end (depth 100,000 crashed the process)."""
MAX_EXPANDED_NODES = 1_000_000
"""Most nodes one document may hold once aliases are expanded (a 2 KB alias bomb expands to
billions). go-yaml, which kubectl uses, refuses excessive aliasing likewise."""
MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Largest file (or stdin) read: Kubernetes' own request limit is 3 MiB per object."""
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def decode_input(data: bytes, display: str = "input") -> str:
    """Bytes of a file or of stdin as text: UTF-8 (an optional BOM dropped), at most
    :data:`MAX_INPUT_BYTES`.

    Raises:
        YAMLSyntaxError: too large, or not UTF-8 (with the line of the first bad byte).
    """
    if len(data) > MAX_INPUT_BYTES:
        raise YAMLSyntaxError(f"input is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise YAMLSyntaxError(f"invalid UTF-8 (byte {exc.start})", line) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_input_file(path) -> str:
    """Text of a user file, refusing what is not a regular file (FIFOs, devices: reading them
    blocks or never ends) and anything over :data:`MAX_INPUT_BYTES`.

    Raises:
        OSError: unreadable.
        YAMLSyntaxError: not a regular file, too large, or not UTF-8.
    """
    import os
    import stat

    fd = os.open(str(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise YAMLSyntaxError("not a regular file (FIFOs, sockets and devices are refused)")
        if st.st_size > MAX_INPUT_BYTES:
            raise YAMLSyntaxError(f"file is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
        chunks = []
        size = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_INPUT_BYTES:
                raise YAMLSyntaxError(f"file is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
            chunks.append(chunk)
    finally:
        os.close(fd)
    return decode_input(b"".join(chunks))


class _DuplicateKey(Exception):
    def __init__(self, key, line):
        super().__init__(key)
        self.key, self.line = key, line


def _construct_mapping_unique(self, node, deep=False):
    """SafeConstructor's mapping, refusing a key given twice in one mapping (kubectl refuses
    duplicate fields too; merged ``<<`` entries may still be overridden)."""
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, _value in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                continue
            k = (key_node.tag, key_node.value)
            if k in seen:
                raise _DuplicateKey(key_node.value, key_node.start_mark.line + 1)
            seen.add(k)
    return yaml.SafeLoader.construct_mapping(self, node, deep=deep)


_Loader.construct_mapping = _construct_mapping_unique

_RESOLVED: dict[str, str] = {}
_RESOLVED_MAX = 65536


def _resolve_cached(self, kind, value, implicit):
    """The resolver's tag for a node, remembering plain scalars' tags: a state directory repeats
    the same field names and values thousands of times, and each first-character regex match
    costs more than a dictionary lookup. The implicit resolvers are fixed per class, so a plain
    scalar's tag depends on its text alone."""
    if kind is yaml.ScalarNode and implicit[0]:
        tag = _RESOLVED.get(value)
        if tag is None:
            tag = _BaseLoader.resolve(self, kind, value, implicit)
            if len(_RESOLVED) < _RESOLVED_MAX:
                _RESOLVED[value] = tag
        return tag
    return _BaseLoader.resolve(self, kind, value, implicit)


_Loader.resolve = _resolve_cached


class _NotPlain(Exception):
    """A node :func:`_construct_plain` leaves to PyYAML's constructor (and its error messages)."""


_STR, _INT, _FLOAT = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_BOOL, _NULL = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_BOOL_VALUES = yaml.constructor.SafeConstructor.bool_values
_construct_int = yaml.constructor.SafeConstructor.construct_yaml_int
_construct_float = yaml.constructor.SafeConstructor.construct_yaml_float
_INF = float("inf")


def _construct_plain(node, depth: int = 1):
    """The object of a composed node, built as PyYAML's safe constructor builds it, for the plain
    data a manifest holds: mappings with string keys given once, sequences, and scalars of the
    ``str``, ``int`` (within int64), ``float`` (finite), ``bool`` and ``null`` tags, at most
    :data:`MAX_DEPTH` collections deep (so the result passes :func:`check_plain`). One recursive
    call per node, where the safe constructor's generators, state and per-node dispatch cost
    about three times more.

    Raises:
        _NotPlain: anything else (merge keys, other tags, duplicate or non-string keys, numbers
            out of range): the caller loads the text with PyYAML's constructor instead, which
            builds it or raises the error the user sees.
    """
    cls = node.__class__
    if cls is yaml.ScalarNode:
        tag, value = node.tag, node.value
        if tag == _STR:
            return value
        if tag == _INT:
            if value.isdigit() and (value[0] != "0" or len(value) == 1):
                number = int(value)
            else:
                number = _construct_int(_SCALAR_SELF, node)
            if not INT64_MIN <= number <= INT64_MAX:
                raise _NotPlain()
            return number
        if tag == _NULL:
            return None
        if tag == _BOOL:
            return _BOOL_VALUES[value.lower()]
        if tag == _FLOAT:
            number = _construct_float(_SCALAR_SELF, node)
            if number != number or number in (_INF, -_INF):
                raise _NotPlain()
            return number
        raise _NotPlain()
    if depth > MAX_DEPTH:
        raise _NotPlain()
    if cls is yaml.MappingNode and node.tag == _MAP:
        out = {}
        for key_node, value_node in node.value:
            if key_node.__class__ is not yaml.ScalarNode or key_node.tag != _STR:
                raise _NotPlain()  # merge keys, non-string keys
            out[key_node.value] = _construct_plain(value_node, depth + 1)
        if len(out) != len(node.value):
            raise _NotPlain()  # a key given twice
        return out
    if cls is yaml.SequenceNode and node.tag == _SEQ:
        return [_construct_plain(item, depth + 1) for item in node.value]
    raise _NotPlain()


class _ScalarSelf:
    """What ``construct_yaml_int``/``construct_yaml_float`` need of their ``self``:
    ``construct_scalar`` of a scalar node, the infinity and NaN values."""

    inf_value = yaml.constructor.SafeConstructor.inf_value
    nan_value = yaml.constructor.SafeConstructor.nan_value

    @staticmethod
    def construct_scalar(node):
        return node.value


_SCALAR_SELF = _ScalarSelf()


def _check_events(text: str) -> None:
    """Walk the parser's events (libyaml, no recursion): refuse nesting deeper than
    :data:`MAX_DEPTH` and alias expansion past :data:`MAX_EXPANDED_NODES`, before anything is
    composed.

    Raises:
        YAMLSyntaxError: with the line of the offending event.
    """
    depth = 0
    anchors: dict[str, int] = {}
    stack: list[list] = []  # per open collection: [anchor, node count]
    total = 0
    start_events = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    end_events = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    for ev in yaml.parse(text, Loader=_Loader):
        if isinstance(ev, start_events):
            depth += 1
            if depth > MAX_DEPTH:
                raise YAMLSyntaxError(f"nesting deeper than {MAX_DEPTH} levels", ev.start_mark.line + 1)
            stack.append([ev.anchor, 1])
        elif isinstance(ev, end_events):
            depth -= 1
            anchor, count = stack.pop()
            if anchor:
                anchors[anchor] = count
            if stack:
                stack[-1][1] += count
            else:
                total += count
        elif isinstance(ev, (yaml.ScalarEvent, yaml.AliasEvent)):
            count = anchors.get(ev.anchor, 1) if isinstance(ev, yaml.AliasEvent) else 1
            if isinstance(ev, yaml.ScalarEvent) and ev.anchor:
                anchors[ev.anchor] = 1
            if stack:
                stack[-1][1] += count
                if stack[-1][1] > MAX_EXPANDED_NODES:
                    raise YAMLSyntaxError(f"aliases expand to more than {MAX_EXPANDED_NODES} nodes",
                                          ev.start_mark.line + 1)
            else:
                total += count
        elif isinstance(ev, yaml.DocumentEndEvent):
            anchors.clear()
            total = 0
        if total > MAX_EXPANDED_NODES:
            raise YAMLSyntaxError(f"aliases expand to more than {MAX_EXPANDED_NODES} nodes", ev.start_mark.line + 1)


def _could_be_hostile(text: str) -> bool:
    """Cheap bound: without an alias (``*``) the document has no expansion, and with fewer
    collection-opening characters than :data:`MAX_DEPTH` it cannot nest deeper."""
    if "*" in text:
        return True
    return text.count(":") + text.count("-") + text.count("[") + text.count("{") >= MAX_DEPTH


def check_plain(doc, line: int = 1) -> None:
    """Check that ``doc`` is plain JSON-like data as Kubernetes reads it: mappings with string
    keys, sequences, strings, booleans, null, finite floats and integers within int64; nesting at
    most :data:`MAX_DEPTH`. Iterative (no recursion), linear in the size of ``doc``.

    Raises:
        YAMLSyntaxError: naming the field path of the first offending value.
    """
    stack = [(doc, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_DEPTH:
                raise YAMLSyntaxError(f"{path or '<root>'}: nesting deeper than {MAX_DEPTH} levels", line)
            for k, v in value.items():
                if not isinstance(k, str):
                    raise YAMLSyntaxError(f"{path or '<root>'}: key {k!r} is not a string "
                                          f"(quote it: Kubernetes field names are strings)", line)
                stack.append((v, f"{path}.{k}" if path else k, depth + 1))
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                raise YAMLSyntaxError(f"{path or '<root>'}: nesting deeper than {MAX_DEPTH} levels", line)
            for i, v in enumerate(value):
                stack.append((v, f"{path}[{i}]", depth + 1))
        elif isinstance(value, bool) or value is None or isinstance(value, str):
            continue
        elif isinstance(value, int):
            if not INT64_MIN <= value <= INT64_MAX:
                raise YAMLSyntaxError(f"{path}: integer {value} is outside the 64-bit range Kubernetes accepts", line)
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise YAMLSyntaxError(f"{path}: {value} is not a number JSON can hold", line)
        else:
            raise YAMLSyntaxError(f"{path or '<root>'}: a {type(value).__name__} value (tag !!"
                                  f"{ {bytes: 'binary', set: 'set'}.get(type(value), type(value).__name__)}) "
                                  f"is not JSON data", line)


_DOC_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$", re.MULTILINE)


def load_all(text: str) -> list[tuple[object, int]]:
    """Parse a (multi-document) YAML text into ``[(document, first_line), ...]``, linear in the
    size of ``text``.

    Empty documents are skipped. ``first_line`` is the 1-based line where the document starts,
    used in error messages. Hostile input is refused before it is composed: nesting deeper than
    :data:`MAX_DEPTH`, aliases expanding past :data:`MAX_EXPANDED_NODES`, duplicate keys in one
    mapping, non-string keys, integers outside int64, binary and set values.

    Raises:
        YAMLSyntaxError: the text is not valid or acceptable YAML (with the line where known).
    """
    try:
        if _could_be_hostile(text):
            _check_events(text)
        # without aliases, no node is shared: the plain constructor builds what PyYAML would
        docs = _load_plain(text) if "*" not in text else None
        plain = docs is not None
        if docs is None:
            docs = list(yaml.load_all(text, Loader=_Loader))
    except _DuplicateKey as exc:
        raise YAMLSyntaxError(f'duplicate key "{exc.key}" in one mapping', exc.line) from None
    except RecursionError:
        raise YAMLSyntaxError(f"nesting deeper than {MAX_DEPTH} levels") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise YAMLSyntaxError(f"invalid YAML: {problem}", line) from None
    starts = [1]
    line, pos = 1, 0
    for m in _DOC_SEPARATOR.finditer(text):
        line += text.count("\n", pos, m.start())  # incremental: linear in the text, not quadratic
        pos = m.start()
        if len(starts) == 1 and starts[0] == 1 and not text[: m.start()].strip():
            starts[0] = line + 1
        else:
            starts.append(line + 1)
    out = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        first = starts[i] if i < len(starts) else 1
        if not plain:
            check_plain(doc, first)
        out.append((doc, first))
    return out


def _load_plain(text: str) -> list | None:
    """The documents of ``text`` composed by libyaml and built by :func:`_construct_plain`, or
    None when one of them holds something else (the caller then loads it with PyYAML's
    constructor). Only for texts without aliases, whose nesting :func:`_check_events` bounded.

    Raises:
        yaml.YAMLError: the text is not valid YAML.
    """
    loader = _Loader(text)
    try:
        docs = []
        while loader.check_node():
            docs.append(_construct_plain(loader.get_node()))
        return docs
    except _NotPlain:
        return None
    finally:
        loader.dispose()


class _NoAliasDumper(_Dumper):
    """The dumper, printing a value shared by two fields twice instead of as an anchor and alias."""

    def ignore_aliases(self, data) -> bool:
        return True


def dump(obj, sort_keys: bool = False) -> str:
    """Serialize one object as block-style YAML, keys in insertion order (callers build them
    stably) or, with ``sort_keys``, sorted at every level (as kubectl renders objects it diffs)."""
    return yaml.dump(obj, Dumper=_NoAliasDumper, sort_keys=sort_keys, default_flow_style=False,
                     allow_unicode=True, width=4096)


def dump_all(objs) -> str:
    """Serialize several objects as one multi-document YAML stream."""
    return yaml.dump_all(list(objs), Dumper=_NoAliasDumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=4096, explicit_start=True)
