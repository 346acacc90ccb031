"""Writing an edited user file back so that only the lines that changed differ (people's files are
theirs: a merge request's diff shows the edit, nothing else).

ruamel.yaml's round trip keeps comments, key order and quoting, but it prints every block with one
indentation: a file written with 4-space mappings or indented sequences (``  - a``) would come back
re-indented. :class:`UserFile` therefore

1. detects the file's indentation (mapping indent, sequence indent and dash offset) by trying the
   likely settings on the unedited documents and keeping the one that reproduces the most lines;
2. after the edit, renders the documents with that setting and carries over to the original text
   only the lines that the edit changed (:func:`merge_edit`): whatever ruamel would still print
   differently from the file (a mixed indentation, spaces inside ``{ a: 1 }``, a document of
   another style) stays as the user wrote it, unless the edit itself touches those lines;
3. keeps whole-line comments an edit would drop only because ruamel attached them to a removed
   entry, the file's line ends (CRLF) and its missing final newline where no edit reaches it;
4. checks that the result reads as the edited documents do, else writes ruamel's rendering.

Values are read and printed as Kubernetes reads YAML (1.1: ``yes`` is a boolean, ``0755`` octal),
not as ruamel's YAML 1.2; a new anchor or alias is never printed.
"""
from __future__ import annotations

import difflib
import io
import re

Style = tuple[int, int, int]
"""ruamel's ``indent(mapping, sequence, offset)``: columns per mapping level, columns from a
sequence's parent to its items' content, columns from the parent to the dash."""

_CANDIDATES: tuple[Style, ...] = ((2, 2, 0), (2, 4, 2), (4, 4, 2), (4, 2, 0), (4, 4, 0), (4, 6, 4), (3, 3, 1),
                                  (3, 5, 3), (4, 6, 2), (2, 3, 1))
_TRY_ALL_MAX = 200_000
"""Largest file (characters) for which every candidate style is tried when the guess does not
reproduce it exactly (each try renders the whole file); larger ones keep the guess."""
_KEY_LINE = re.compile(r"^(\s*)(?:- +)*[^\s#][^#]*:\s*(?:#.*)?$")


def guess_style(text: str) -> Style:
    """The indentation ``text`` most likely uses, from its first nested mapping and first block
    sequence under a key (defaults: 2-space mappings, sequences not indented)."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", "---"))]
    mapping = offset = dash = None
    for above, line in zip(lines, lines[1:]):
        m = _KEY_LINE.match(above)
        if not m:
            continue
        base = len(above) - len(above.lstrip(" -"))
        ind = len(line) - len(line.lstrip(" "))
        body = line.lstrip(" ")
        if body.startswith("- ") or body == "-":
            if offset is None and ind >= len(m.group(1)):
                offset = ind - len(m.group(1))
                dash = len(body) - len(body[1:].lstrip(" ")) if body != "-" else 2
        elif mapping is None and ind > base:
            mapping = ind - base
        if mapping is not None and offset is not None:
            break
    mapping = mapping or 2
    offset = offset or 0
    return (mapping, offset + (dash or 2), offset)


def _representer():
    """ruamel's round-trip representer, printing what Kubernetes (YAML 1.1, as PyYAML and
    go-yaml read it) reads back as the same value: a string such as ``yes``, ``on`` or ``0755``
    quoted, an octal integer as ``0755`` (not 1.2's ``0o755``); and no anchor or alias but those
    the user wrote (``&x`` / ``*x`` in the file)."""
    import yaml
    from ruamel.yaml.representer import RoundTripRepresenter
    from ruamel.yaml.scalarint import OctalInt

    resolver = yaml.resolver.Resolver()
    strings = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:timestamp")  # karmactl reads timestamps as strings

    class Representer(RoundTripRepresenter):
        def ignore_aliases(self, data) -> bool:
            try:
                return not (data.anchor is not None and data.anchor.value is not None)
            except AttributeError:
                return True

        def represent_str(self, data):
            if resolver.resolve(yaml.ScalarNode, data, (True, False)) not in strings:
                return self.represent_scalar("tag:yaml.org,2002:str", data, style="'")
            return super().represent_str(data)

        def represent_octal(self, data):
            return self.represent_scalar("tag:yaml.org,2002:int", "0" + format(int(data), "o"))

    Representer.add_representer(str, Representer.represent_str)
    Representer.add_representer(OctalInt, Representer.represent_octal)
    return Representer


_REPRESENTER = None


def round_trip_yaml(style: Style = (2, 2, 0)):
    """A ruamel.yaml instance in round-trip mode printing blocks with ``style`` and values as
    Kubernetes reads them (:func:`_representer`)."""
    from ruamel.yaml import YAML

    global _REPRESENTER
    if _REPRESENTER is None:
        _REPRESENTER = _representer()
    rt = YAML(typ="rt")
    rt.Representer = _REPRESENTER
    rt.width = 4096
    mapping, sequence, offset = style
    rt.indent(mapping=mapping, sequence=sequence, offset=offset)
    return rt


def load_all(text: str) -> list:
    """The documents of ``text`` as ruamel round-trip nodes (None for empty ones), quotes kept
    and scalars read as YAML 1.1, as Kubernetes reads them (``yes`` is true, ``0755`` octal).

    Raises:
        ruamel.yaml.YAMLError: the text does not parse.
    """
    from ruamel.yaml import YAML

    rt = YAML(typ="rt")
    rt.version = (1, 1)
    rt.preserve_quotes = True
    return list(rt.load_all(text))


def dump_docs(docs: list, style: Style, explicit_start: bool) -> str:
    """Round-trip documents (CommentedMaps, or plain dicts for new ones) as text in ``style``."""
    rt = round_trip_yaml(style)
    rt.explicit_start = explicit_start
    buf = io.StringIO()
    rt.dump_all(docs, buf)
    return buf.getvalue()


def load_document(text: str):
    """The first document of ``text`` as a ruamel round-trip node (an edited object; see
    :func:`load_all`)."""
    return next(iter(load_all(text)), None)


_EXACT_DIFF_MAX = 2000
"""Most lines a changed stretch may have for an exact line diff; past it difflib's heuristic
(frequent lines are junk) bounds the time: the merge stays correct, only coarser."""


def _opcodes(x: list[str], y: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes from lines ``x`` to lines ``y``, the common head and tail taken first
    (linear): an edit of one object in a file of thousands is diffed on its own lines."""
    n = min(len(x), len(y))
    head = 0
    while head < n and x[head] == y[head]:
        head += 1
    tail = 0
    while tail < n - head and x[len(x) - 1 - tail] == y[len(y) - 1 - tail]:
        tail += 1
    mx, my = x[head:len(x) - tail], y[head:len(y) - tail]
    matcher = difflib.SequenceMatcher(None, mx, my, autojunk=max(len(mx), len(my)) > _EXACT_DIFF_MAX)
    ops = [("equal", 0, head, 0, head)] if head else []
    ops += [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]
    if tail:
        ops.append(("equal", len(x) - tail, len(x), len(y) - tail, len(y)))
    return ops


def _same_lines(a: str, b: str) -> int:
    return sum(i2 - i1 for tag, i1, i2, _j1, _j2 in _opcodes(a.splitlines(), b.splitlines()) if tag == "equal")


class UserFile:
    """One user file loaded for an edit: ``docs`` (ruamel round-trip documents, None for empty
    ones) to change in place, then :meth:`render` for the new text.

    Raises (constructor):
        ruamel.yaml.YAMLError: the text does not parse.
    """

    def __init__(self, text: str):
        self.original = text
        self.crlf = "\r\n" in text
        text = text.replace("\r\n", "\n") if self.crlf else text
        # worked on with a final newline (an edit that appends must not join the last line)
        self.text = text if text.endswith("\n") or not text else text + "\n"
        self.docs = load_all(self.text)
        self.explicit_start = text.lstrip().startswith("---")  # ruamel writes the ones between documents
        self.style, self.before = self._detect()

    @property
    def live(self) -> list:
        """The documents that are not empty, in file order."""
        return [d for d in self.docs if d is not None]

    def _detect(self) -> tuple[Style, str]:
        guess = guess_style(self.text)
        best: tuple[int, Style, str] | None = None
        others = tuple(s for s in _CANDIDATES if s != guess) if len(self.text) <= _TRY_ALL_MAX else ()
        for style in (guess,) + others:
            try:
                text = dump_docs(self.live, style, self.explicit_start)
            except Exception:  # noqa: BLE001 - ruamel refuses some settings (sequence < offset + 2)
                continue
            if text == self.text:
                return style, text
            score = _same_lines(text, self.text)
            if best is None or score > best[0]:
                best = (score, style, text)
        assert best is not None
        return best[1], best[2]

    def render(self, keep_comments: bool = True) -> str:
        """The file's new text: the original with the lines the edit changed (see the module), its
        line ends (``\\r\\n`` or ``\\n``) kept; ``keep_comments`` as for :func:`merge_edit` (off
        for ``edit``, where the user may delete a comment)."""
        after = dump_docs(self.live, self.style, self.explicit_start)
        merged = merge_edit(self.text, self.before, after, keep_comments)
        text = merged if merged == after or _reads_same(merged, after) else after
        if text == self.text:
            return self.original
        return text.replace("\n", "\r\n") if self.crlf else text

    def style_dump(self, obj: dict) -> str:
        """A new object as one more document of this file, in its style."""
        return dump_docs([obj], self.style, True)


def _reads_same(a: str, b: str) -> bool:
    from karmactl.store import yamlio

    try:
        return [d for d, _ in yamlio.load_all(a)] == [d for d, _ in yamlio.load_all(b)]
    except yamlio.YAMLSyntaxError:
        return False


def _edit_marks(b: list[str], a: list[str], keep_comments: bool) -> tuple[list[bool], list[list[str]]]:
    """The edit from lines ``b`` to lines ``a``: which lines of ``b`` go, and the lines inserted
    before each line of ``b`` (index ``len(b)``: at the end); see :func:`merge_edit`."""
    deleted = [False] * len(b)
    inserted: list[list[str]] = [[] for _ in range(len(b) + 1)]
    for tag, i1, i2, j1, j2 in _opcodes(b, a):
        if tag != "equal":
            kept = set(a[j1:j2])
            deleted[i1:i2] = [not (keep_comments and b[k].lstrip().startswith("#") and b[k] not in kept)
                              for k in range(i1, i2)]
            inserted[i1].extend(a[j1:j2])
    return deleted, inserted


def merge_edit(original: str, before: str, after: str, keep_comments: bool = True) -> str:
    """``original`` with the changes from ``before`` to ``after`` (ruamel's renderings of the file
    before and after an edit): lines ``before`` renders as the file has them are taken from the
    file; a stretch the file writes differently is kept as written unless the edit touches it, in
    which case ``after``'s rendering of it is used. With ``keep_comments``, a whole-line comment
    the edit would drop stays (ruamel attaches a comment to the entry above it, so deleting a key
    would take the comment on the next one with it). The caller checks that the result parses."""
    if before == original and not keep_comments:
        return after
    o, b, a = (s.splitlines(keepends=True) for s in (original, before, after))
    deleted, inserted = _edit_marks(b, a, keep_comments)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in _opcodes(b, o):
        if tag == "equal" or i1 == i2:
            if i1 == i2:
                out.extend(o[j1:j2])
            for k in range(i1, i2):
                out.extend(inserted[k])
                if not deleted[k]:
                    out.append(o[j1 + k - i1])
            continue
        touched = any(deleted[i1:i2]) or any(inserted[k] for k in range(i1 + 1, i2))
        if touched:
            for k in range(i1, i2):
                out.extend(inserted[k])
                if not deleted[k]:
                    out.append(b[k])
        else:
            out.extend(inserted[i1])
            out.extend(o[j1:j2])
    out.extend(inserted[len(b)])
    return "".join(out)
