"""Atomic file writes and the state-directory lock.

A write goes to a temporary file in the same directory, is flushed and renamed over the target,
so a reader (or a crash) never sees half a file. A run holds an exclusive ``flock`` on
``<state>/.karmactl/lock`` for its whole duration.
"""
from __future__ import annotations

import errno
import fcntl
import os
from contextlib import contextmanager
from pathlib import Path


class StateLockedError(RuntimeError):
    """Another karmactl process holds the state directory lock."""


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``text`` to ``path`` atomically (temp file + rename), creating parent directories.

    The temporary name is ``.<name>.<pid>.tmp`` in the same directory: unique per process, and a
    run holds the state lock, so no two writers share it.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except FileNotFoundError:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
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


def ensure_runtime_dir(state_dir: Path) -> Path:
    """``<state>/.karmactl`` (lock, parse cache, local members), created with a ``.gitignore`` of
    ``*`` so a state directory kept in git never tracks runtime data."""
    runtime = Path(state_dir) / ".karmactl"
    runtime.mkdir(parents=True, exist_ok=True)
    ignore = runtime / ".gitignore"
    if not ignore.exists():
        try:
            ignore.write_text("*\n")
        except OSError:
            pass
    return runtime


@contextmanager
def state_lock(state_dir: Path, wait: bool = False):
    """Hold the exclusive lock of a state directory.

    Raises:
        StateLockedError: another process holds it and ``wait`` is False.
    """
    lock_dir = ensure_runtime_dir(state_dir)
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
