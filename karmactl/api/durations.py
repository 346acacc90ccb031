"""Durations as Karmada reads them: Go's ``time.ParseDuration`` syntax (``1.5m``, ``500ms``,
``1h30m``), parsed with ``durationpy``; used by every flag (``--timeout``, ``--lock-timeout``,
``--resync``, ``--wait``) and every setting (``clusterFailureThreshold``, ``memberRequestTimeout``...)
that holds a duration. API fields that Kubernetes and Karmada define as whole seconds
(``tolerationSeconds``, ``ttlSecondsAfterFinished``) stay integers and do not come here."""
from __future__ import annotations

import math
import re

_GO_DURATION = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+")
_SECONDS = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
EXAMPLES = "a Go duration such as 90s, 1.5m, 500ms or 1h30m"


def parse_duration(text: str) -> float:
    """Seconds of a duration: Go's syntax (a sequence of decimal numbers, each with a unit of
    ``ns``, ``us``/``µs``, ``ms``, ``s``, ``m`` or ``h``; ``0`` alone), or, as karmactl has always
    accepted, a plain number of seconds (``30``). Units Go does not have (``d``, ``w``, ``y``) are
    refused, as Karmada's flags refuse them.

    Raises:
        ValueError: not a duration, or not a finite one; the message quotes ``text`` and says what
            is expected (the caller names the flag or setting).
    """
    import durationpy

    value = str(text).strip()
    if _SECONDS.fullmatch(value):
        seconds = float(value)
    elif _GO_DURATION.fullmatch(value):
        try:
            seconds = durationpy.from_str(value).total_seconds()
        except (durationpy.DurationError, ValueError, OverflowError):
            raise ValueError(f'"{text}" is out of range for a duration') from None
    else:
        raise ValueError(f'"{text}" is not a duration ({EXAMPLES})')
    if not math.isfinite(seconds):
        raise ValueError(f'"{text}" is not a finite duration')
    return seconds
