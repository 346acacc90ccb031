"""YAML reading and writing for the state directory.

Two paths, by need:
* the hot path (every run reads every file) uses libyaml through PyYAML's C loader and dumper
  (``yaml.CSafeLoader``/``CSafeDumper``): about three times faster than ruamel's C loader for plain
  data, and PyYAML is already installed as a dependency of the ``kubernetes`` client;
* edits of user-written files (``apply`` onto an existing file, ``suspend``/``resume``) use
  ruamel.yaml's round-trip mode, which keeps comments and formatting.
"""
from __future__ import annotations

import io
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
    """Malformed YAML; ``line`` is 1-based when the parser reported one."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


_DOC_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$", re.MULTILINE)


def load_all(text: str) -> list[tuple[object, int]]:
    """Parse a (multi-document) YAML text into ``[(document, first_line), ...]``.

    Empty documents are skipped. ``first_line`` is the 1-based line where the document starts,
    used in error messages.

    Raises:
        YAMLSyntaxError: the text is not valid YAML (with the line where the parser stopped).
    """
    try:
        docs = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise YAMLSyntaxError(f"invalid YAML: {problem}", line) from None
    starts = [1]
    for m in _DOC_SEPARATOR.finditer(text):
        line = text.count("\n", 0, m.start()) + 2
        if m.start() == 0 or not text[: m.start()].strip():
            starts[0] = line
        else:
            starts.append(line)
    out = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        out.append((doc, starts[i] if i < len(starts) else 1))
    return out


def dump(obj, sort_keys: bool = False) -> str:
    """Serialize one object as block-style YAML, keys in insertion order (callers build them
    stably) or, with ``sort_keys``, sorted at every level (as kubectl renders objects it diffs)."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=sort_keys, default_flow_style=False,
                     allow_unicode=True, width=4096)


def dump_all(objs) -> str:
    """Serialize several objects as one multi-document YAML stream."""
    return yaml.dump_all(list(objs), Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=4096, explicit_start=True)


def round_trip_yaml():
    """A ruamel.yaml instance in round-trip mode (comments and formatting kept)."""
    from ruamel.yaml import YAML

    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=2, offset=0)
    return rt


def round_trip_load_all(text: str) -> list:
    """Documents of ``text`` as ruamel CommentedMaps (for in-place edits of user files)."""
    return [d for d in round_trip_yaml().load_all(text)]


def round_trip_dump_all(docs: list, explicit_start: bool) -> str:
    """Serialize CommentedMaps back, keeping comments; ``---`` between documents."""
    rt = round_trip_yaml()
    rt.explicit_start = explicit_start
    buf = io.StringIO()
    rt.dump_all(docs, buf)
    return buf.getvalue()
