"""The command-line context: state directory, clock, consoles and exit codes.

Every command gets a :class:`Context` instead of reaching for globals, so tests run commands
in-process with a pinned clock and captured output (httpie's ``Environment`` pattern).
"""
from __future__ import annotations

import os
import stat
import sys
from datetime import datetime, timezone
from enum import IntEnum
from pathlib import Path

from karmactl.api.objects import format_time, parse_time, time_error


class ExitCode(IntEnum):
    """Exit codes of every karmactl command (documented in README)."""

    OK = 0
    NOT_FOUND = 1          # get/describe/delete of an object that does not exist
    CHANGES = 1            # plan/diff: there are changes
    INPUT_ERROR = 2        # bad input or usage: malformed YAML, unknown kind, invalid field, bad flag
    MEMBER_FAILURE = 3     # the run finished, but some member clusters failed (unreachable, apply errors)
    NOT_CONVERGED = 4      # the control plane did not settle, or --wait timed out
    LOCKED = 5             # another karmactl process holds the state directory
    ENVIRONMENT = 6        # the state directory or a path karmactl needs cannot be read or written
                           # (permission denied, read-only or full file system, path too long)
    LOSSY = 1              # export --to-karmada: fields Karmada would drop, or objects its CRDs reject


class CLIError(Exception):
    """An error the CLI prints as ``error: <message>`` and exits with ``code``."""

    def __init__(self, message: str, code: ExitCode = ExitCode.INPUT_ERROR):
        super().__init__(message)
        self.code = code


class Context:
    """What commands need from their environment.

    Attributes:
        state: the state directory; reading it checks that it exists (:func:`check_state_dir`),
            so only commands that use it fail on a mistyped ``--state``.
        now_text: ``--now`` as given (None = the wall clock, read once when first asked).
        verbose: ``-v`` level.
        command: the subcommand being run (``apply``, ``get``...), None in tests that build one.
    """

    def __init__(self, state: Path, now_text: str | None = None, verbose: int = 0, command: str | None = None):
        self._state = Path(state)
        self.now_text = now_text
        self.verbose = verbose
        self.command = command
        self._now: str | None = None
        self._state_checked = False

    def __repr__(self) -> str:
        return f"Context(state={self._state!r}, now_text={self.now_text!r}, verbose={self.verbose})"

    @property
    def state(self) -> Path:
        if not self._state_checked:
            check_state_dir(self._state, self.command)
            self._state_checked = True
        return self._state

    @property
    def now(self) -> str:
        """The run's clock, RFC 3339, read once (``--now`` pins it)."""
        if self._now is None:
            if self.now_text:
                problem = time_error(self.now_text)
                if problem is not None:
                    raise CLIError(f'invalid --now "{self.now_text}": {problem}')
                self._now = format_time(parse_time(self.now_text))
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


def show_notes(verbose: int) -> None:
    """Print karmactl's informational notes (files the state directory loader ignored...) on
    stderr as ``note: ...`` when ``verbose`` > 0, and drop them otherwise. Nothing is imported
    without ``-v`` (start-up time)."""
    mod = sys.modules.get("karmactl.store.notes")
    if verbose > 0 and mod is None:
        from karmactl.store import notes as mod
    if mod is not None:
        mod.note_sink = (lambda text: err(f"note: {text}")) if verbose > 0 else None


# commands that make the state directory when it is missing; every other command needs it
CREATES_STATE = ("apply", "local-up", "demo")


def check_state_dir(state: Path, command: str | None) -> None:
    """Refuse a ``--state`` directory that does not exist (a typo must not look like an empty
    fleet), except for the commands that create it, which say so on stderr.

    Raises:
        CLIError: exit 2, naming the directory and how to choose or create one.
        OSError: it cannot be looked up (permission denied, path too long: exit 6).
    """
    try:
        st = os.stat(state)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise CLIError(f'state directory "{state}" is not a directory') from None
    # other errors (permission denied, path too long...) propagate: exit 6 naming the path
    if st is not None and stat.S_ISDIR(st.st_mode):
        return
    if st is not None:
        raise CLIError(f'state directory "{state}" is not a directory')
    if command is None or command in CREATES_STATE:
        err(f'creating state directory "{state}"')
        return
    raise CLIError(f'state directory "{state}" does not exist (choose one with --state or KARMACTL_STATE; '
                   f'`karmactl apply`, `local-up` and `demo` create it)')


def start_context(state: Path, now: str | None, verbose: int, lock_timeout: str, command: str | None,
                  kubeconfig_dir: Path | str | None = None, allow_exec_plugins=False,
                  allow_proxy: str | None = None) -> Context:
    """The :class:`Context` of a command from the global flags (``--state``, ``--now``, ``-v``,
    ``--lock-timeout``, ``--kubeconfig-dir``, ``--allow-exec-plugins``, ``--allow-proxy``), as the typer app's callback and
    :mod:`karmactl.cli.light` build it; sets the store's lock timeout, the member credential policy
    (:func:`karmactl.members.kubeconfig.configure`) and where loader notes go.

    Raises:
        CLIError: a malformed ``--lock-timeout`` (exit 2).
    """
    from karmactl.cli.flags import parse_duration
    from karmactl.members import kubeconfig
    from karmactl.store import fsio

    kubeconfig.configure(kubeconfig_dir, allow_exec_plugins, allow_proxy)
    fsio.LOCK_TIMEOUT = parse_duration(lock_timeout, "--lock-timeout")
    c = Context(state=state, now_text=now, verbose=verbose, command=command)
    show_notes(verbose)
    return c
