"""Regular expressions written by users, compiled with RE2: linear time, Go's syntax.

Every regular expression karmactl takes from the state directory (the karmactl-config ConfigMap's
``skippedPropagatingNamespaces``; a ``pattern`` of a schema) is untrusted input: Python's ``re``
backtracks, so ``(a+)+$`` against a 42-character name runs for minutes. RE2 (``google-re2``, the
engine Go's ``regexp`` package implements) matches in time linear in the input and accepts the
syntax Karmada's Go code accepts (Karmada compiles ``--skipped-propagating-namespaces`` with
``regexp.Compile``): no backreferences, no lookaround. A pattern RE2 refuses is bad input.

Pure: no I/O. RE2's own error log is off (errors come back as :class:`RegexError`).
"""
from __future__ import annotations

import functools

import re2

MAX_PATTERN_LENGTH = 4096
"""Longest pattern accepted (characters): a namespace or field pattern is a line, not a document."""


class RegexError(ValueError):
    """A pattern RE2 (Go's regexp syntax) cannot compile; the message names where it came from."""


def _options() -> "re2.Options":
    options = re2.Options()
    options.log_errors = False
    return options


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str):
    return re2.compile(pattern, options=_options())


def compile_user_regex(pattern, where: str, anchored: bool = False):
    """Compile a user's regular expression with RE2 (Go's ``regexp`` syntax and semantics).

    Args:
        pattern: the expression as written (must be a string).
        where: what the pattern is, for the message (``karmactl-config data.skippedPropagatingNamespaces``).
        anchored: match whole strings only (``^(?:pattern)$``, as Karmada anchors skipped namespaces).

    Returns:
        A compiled RE2 pattern (``search``/``match``/``fullmatch`` as :mod:`re`, in linear time).

    Raises:
        RegexError: not a string, longer than :data:`MAX_PATTERN_LENGTH`, or not valid RE2 syntax
            (backreferences such as ``\\1`` and lookaround such as ``(?=...)`` are not: Go refuses
            them too); the message names ``where`` and the pattern.
    """
    if not isinstance(pattern, str):
        raise RegexError(f"{where}: a regular expression must be a string, not {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise RegexError(f"{where}: regular expression longer than {MAX_PATTERN_LENGTH} characters")
    try:
        compiled = _compile(pattern)  # alone first: "a)|(.*" must not escape the anchoring group
        return _compile(f"^(?:{pattern})$") if anchored else compiled
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise RegexError(f'{where}: invalid regular expression "{pattern}": {reason} (Go regexp / RE2 '
                         f"syntax: no backreferences or lookaround)") from None
    except (TypeError, ValueError) as exc:  # e.g. a NUL or lone surrogate the binding cannot encode
        raise RegexError(f'{where}: invalid regular expression "{pattern}": {exc}') from None
