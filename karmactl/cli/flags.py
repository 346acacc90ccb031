"""Values of command-line flags shared by several commands: durations (``--timeout``, ``--wait``,
``--resync``, ``--lock-timeout``) in Go's syntax, as Karmada's flags take them."""
from __future__ import annotations

from karmactl.cli.context import CLIError


def parse_duration(text: str, flag: str) -> float:
    """The seconds of the duration flag ``flag`` (``--timeout``): Go's syntax (``90s``, ``1.5m``,
    ``500ms``, ``1h30m``) or a plain number of seconds (:func:`karmactl.api.durations.parse_duration`).

    Raises:
        CLIError: not a duration, or a negative one; the message names the flag and the value (exit 2).
    """
    from karmactl.api.durations import parse_duration as parse

    try:
        seconds = parse(text)
    except ValueError as exc:
        raise CLIError(f"invalid value for {flag}: {exc}") from None
    if seconds < 0:
        raise CLIError(f'invalid value for {flag}: "{text}" is negative')
    return seconds
