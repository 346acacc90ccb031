"""Atomic file writes and the state-directory lock.

A write goes to a temporary file in the same directory, is flushed and renamed over the target,
so a reader (or a crash) never sees half a file. A run holds an exclusive ``flock`` on
``<state>/.karmactl/lock`` for its whole duration.
"""
from __future__ import annotations

import errno
import fcntl
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


class StateLockedError(RuntimeError):
    """Another karmactl process holds the state directory lock."""


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file + fsync-free rename), creating parents."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def remove_file(path: Path, stop_at: Path) -> None:
    """Delete ``path`` and then any parent directory left empty, up to (not including) ``stop_at``."""
    try:
        path.unlink()
    except FileNotFoundError:
        return
    parent = path.parent
    while parent != stop_at and stop_at in parent.parents:
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


@contextmanager
def state_lock(state_dir: Path, wait: bool = False):
    """Hold the exclusive lock of a state directory.

    Raises:
        StateLockedError: another process holds it and ``wait`` is False.
    """
    lock_dir = state_dir / ".karmactl"
    lock_dir.mkdir(parents=True, exist_ok=True)
    fh = open(lock_dir / "lock", "a+")
    try:
        flags = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(fh.fileno(), flags)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise StateLockedError(f"state directory {state_dir} is locked by another karmactl process") from None
            raise
        yield
    finally:
        fh.close()
