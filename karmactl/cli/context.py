"""The command-line context: state directory, clock, consoles and exit codes.

Every command gets a :class:`Context` instead of reaching for globals, so tests run commands
in-process with a pinned clock and captured output (httpie's ``Environment`` pattern).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import IntEnum
from pathlib import Path

from karmactl.api.objects import format_time, parse_time


class ExitCode(IntEnum):
    """Exit codes of every karmactl command (documented in README)."""

    OK = 0
    NOT_FOUND = 1          # get/describe/delete of an object that does not exist
    CHANGES = 1            # plan/diff: there are changes
    INPUT_ERROR = 2        # bad input or usage: malformed YAML, unknown kind, invalid field, bad flag
    MEMBER_FAILURE = 3     # the run finished, but some member clusters failed (unreachable, apply errors)
    NOT_CONVERGED = 4      # the control plane did not settle, or --wait timed out
    LOCKED = 5             # another karmactl process holds the state directory


class CLIError(Exception):
    """An error the CLI prints as ``error: <message>`` and exits with ``code``."""

    def __init__(self, message: str, code: ExitCode = ExitCode.INPUT_ERROR):
        super().__init__(message)
        self.code = code


@dataclass
class Context:
    """What commands need from their environment.

    Attributes:
        state: the state directory.
        now_text: ``--now`` as given (None = the wall clock, read once when first asked).
        verbose: ``-v`` level.
    """

    state: Path
    now_text: str | None = None
    verbose: int = 0
    _now: str | None = field(default=None, repr=False)

    @property
    def now(self) -> str:
        """The run's clock, RFC 3339, read once (``--now`` pins it)."""
        if self._now is None:
            if self.now_text:
                try:
                    self._now = format_time(parse_time(self.now_text))
                except ValueError:
                    raise CLIError(f'invalid --now "{self.now_text}": expected RFC 3339, e.g. 2026-01-01T00:00:00Z') from None
            else:
                self._now = format_time(datetime.now(timezone.utc))
        return self._now

    @property
    def stdout_tty(self) -> bool:
        return sys.stdout.isatty()

    @property
    def stderr_tty(self) -> bool:
        return sys.stderr.isatty() and not os.environ.get("NO_COLOR")


def out(text: str = "") -> None:
    """Data to stdout (member credentials karmactl loaded are never echoed:
    :func:`karmactl.members.kubeconfig.redact_known`)."""
    from karmactl.members.kubeconfig import redact_known

    text = redact_known(text)
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")


def err(text: str) -> None:
    """Progress, warnings and errors to stderr, credentials redacted
    (:func:`karmactl.members.kubeconfig.redact`)."""
    from karmactl.members.kubeconfig import redact

    text = redact(text)
    sys.stderr.write(text if text.endswith("\n") else text + "\n")
