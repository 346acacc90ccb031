"""Lua source with its table constructors marked, so that ``pairs`` can follow gopher-lua's order.

gopher-lua (Karmada's Lua) keeps a table's keys in two parts (``table.go``): the positive
integers below 2^26 in an array, iterated in numeric order, then every other key in the order it
was first set (a key set to nil and set again keeps its place). Lua 5.1's tables remember no
order, so the sandbox (:mod:`karmactl.interpreter.luasandbox`) records it: a metatable's
``__newindex`` sees every key a script adds by assignment, and this module rewrites each table
constructor ``{...}`` into ``MARK({...}, id)``, ``id`` numbering the list of keys the constructor
writes (``name = v`` and ``["literal"] = v`` fields, in source order). The chunk starts with
``local MARK = (...)({{"k1", "k2"}, ...})``: the sandbox's ``marker`` turns those lists into the
chunk's marking function. A constructor key computed at run time (``[expr] = v``) is not known
here: ``MARK({...}, id, true)`` records it after the others, in Lua's order.

The rewrite keeps every line where it was (error messages name script lines), runs in time
linear in the script, and is checked by the caller: when the rewritten text does not compile
while the original does, the original runs (without the order).
"""
from __future__ import annotations

MARK = "__karmactl_ordered"
"""The name of the local the rewritten chunk binds to the sandbox's marking function."""

_KEYWORDS = frozenset("and break do else elseif end false for function if in local nil not or repeat return "
                      "then true until while".split())
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
_DIGITS = frozenset("0123456789")
_THREE = ("...",)
_TWO = ("..", "==", "~=", "<=", ">=")


def tokens(src: str):
    """Lua 5.1 tokens of ``src`` as ``(kind, start, end)``: kind ``name``, ``string``, ``number``
    or the punctuation itself; whitespace and comments are skipped. An unterminated string or
    comment ends the tokens (the compiler reports it)."""
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in " \t\r\n\f\v":
            i += 1
            continue
        if src.startswith("--", i):
            i = _comment_end(src, i)
            if i < 0:
                return
            continue
        kind, end = _token(src, i)
        if end < 0:
            return
        yield kind, i, end
        i = end


def _comment_end(src: str, i: int) -> int:
    """Where the comment starting at ``i`` (``--``) ends; -1 when a long one is not closed."""
    level = _long_bracket(src, i + 2)
    if level is not None:
        end = src.find("]" + "=" * level + "]", i + 4 + level)
        return -1 if end < 0 else end + level + 2
    end = src.find("\n", i)
    return len(src) if end < 0 else end + 1


def _token(src: str, i: int) -> tuple[str, int]:
    """``(kind, end)`` of the token starting at ``i``; end -1 for an unterminated string."""
    c, n = src[i], len(src)
    if c in _NAME_START:
        j = i + 1
        while j < n and src[j] in _NAME_CHARS:
            j += 1
        return "name", j
    if c in _DIGITS or (c == "." and i + 1 < n and src[i + 1] in _DIGITS):
        return "number", _number_end(src, i)
    if c in "\"'":
        return "string", _quoted_end(src, i)
    if c == "[":
        level = _long_bracket(src, i)
        if level is not None:
            end = src.find("]" + "=" * level + "]", i + 2 + level)
            return "string", -1 if end < 0 else end + level + 2
    for p in _THREE + _TWO:
        if src.startswith(p, i):
            return p, i + len(p)
    return c, i + 1


def _number_end(src: str, i: int) -> int:
    j, n = i + 1, len(src)
    hexadecimal = src.startswith(("0x", "0X"), i)
    while j < n and (src[j] in _NAME_CHARS or src[j] == "." or
                     (src[j] in "+-" and src[j - 1] in "eE" and not hexadecimal)):
        j += 1
    return j


def _quoted_end(src: str, i: int) -> int:
    quote, j, n = src[i], i + 1, len(src)
    while j < n and src[j] != quote:
        if src[j] == "\n":
            return -1
        j += 2 if src[j] == "\\" else 1
    return -1 if j >= n else j + 1


def _long_bracket(src: str, i: int) -> int | None:
    """The level of a long bracket ``[==[`` opening at ``i``, or None."""
    if i >= len(src) or src[i] != "[":
        return None
    j = i + 1
    while j < len(src) and src[j] == "=":
        j += 1
    return j - i - 1 if j < len(src) and src[j] == "[" else None


def mark_constructors(src: str) -> str:
    """``src`` with every table constructor wrapped in ``MARK(ctor, id)`` (``id`` numbers its key
    list) and the binding of ``MARK`` in front, on the first line; ``f{...}`` calls become
    ``f(MARK(...))``."""
    toks = list(tokens(src))
    inserts: dict[int, list[str]] = {}  # position -> texts to insert there, in order
    lists: dict[tuple, int] = {}  # a constructor's key list -> its number in the chunk's lists
    stack: list = []  # open brackets: a _Constructor, or "(" / "["
    previous = None
    for t, (kind, start, end) in enumerate(toks):
        frame = stack[-1] if stack and isinstance(stack[-1], _Constructor) else None
        if frame is not None and frame.field_start:
            frame.field(src, toks, t)
        if kind == "{":
            frame = _Constructor(_is_call(src, previous))
            inserts.setdefault(start, []).append(f"({MARK}(" if frame.call else f"{MARK}(")
            stack.append(frame)
        elif kind == "}" and frame is not None:
            stack.pop()
            inserts.setdefault(end, []).append(frame.closing(lists))
        elif kind in ("(", "["):
            stack.append(kind)
        elif kind in (")", "]", "}"):
            if stack and not isinstance(stack[-1], _Constructor):
                stack.pop()
        elif kind in (",", ";") and frame is not None:
            frame.field_start = True
        previous = (kind, start, end)
    table = ", ".join("{" + ", ".join(keys) + "}" for keys in lists)
    out, last = [f"local {MARK} = (...)({{{table}}}); "], 0
    for pos in sorted(inserts):
        out.append(src[last:pos])
        out.extend(inserts[pos])
        last = pos
    out.append(src[last:])
    return "".join(out)


class _Constructor:
    """An open table constructor: the keys it writes so far, whether one is computed at run time,
    whether it is a call's argument (``f{...}``), whether the next token starts a field."""

    def __init__(self, call: bool):
        self.keys: list[str] = []
        self.computed = False
        self.call = call
        self.field_start = True

    def field(self, src: str, toks: list, t: int) -> None:
        self.field_start = False
        key = _static_key(src, toks, t)
        if key is not None:
            self.keys.append(key)
        elif toks[t][0] == "[":
            self.computed = True

    def closing(self, lists: dict) -> str:
        """What follows the constructor's ``}``: its key list's number, the computed flag, the
        closing parentheses."""
        listed = f", {lists.setdefault(tuple(self.keys), len(lists) + 1)}" if self.keys else \
            (", nil" if self.computed else "")
        return listed + (", true)" if self.computed else ")") + (")" if self.call else "")


def _is_call(src: str, previous) -> bool:
    """Whether a ``{`` after the token ``previous`` is a call's argument (``f{...}``, ``f"x"{...}``)."""
    if previous is None:
        return False
    kind, start, end = previous
    return kind in ("string", ")", "]", "}") or (kind == "name" and src[start:end] not in _KEYWORDS)


def _static_key(src: str, toks: list, t: int) -> str | None:
    """The Lua literal of the key a constructor field starting at token ``t`` writes, when it is
    known before running: ``name = v`` -> ``"name"``, ``["text"] = v`` -> ``"text"``."""
    kind, start, end = toks[t]
    if kind == "name" and t + 1 < len(toks) and toks[t + 1][0] == "=":
        return '"' + src[start:end] + '"'
    if kind == "[" and t + 3 < len(toks) and toks[t + 1][0] == "string" and toks[t + 2][0] == "]" \
            and toks[t + 3][0] == "=":
        literal = src[toks[t + 1][1]:toks[t + 1][2]]
        return literal if literal[0] in "\"'" else None  # a long string: its text is not re-quoted here
    return None


__all__ = ["MARK", "mark_constructors", "tokens"]
