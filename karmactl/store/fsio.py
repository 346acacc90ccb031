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


class OutsideStateError(ValueError):
    """A path that would resolve outside the state directory (through ``..`` or a symlink)."""


def check_inside(root: Path | str, path: Path | str) -> None:
    """Refuse ``path`` unless it resolves (symlinks followed, as far as it exists) inside ``root``.

    Raises:
        OutsideStateError: naming the path and where it leads.
    """
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if real != real_root and not real.startswith(real_root.rstrip("/") + "/"):
        raise OutsideStateError(f"{path} leads outside the state directory (to {real}); refused")


class StateLockedError(RuntimeError):
    """Another karmactl process holds the state directory lock."""


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``text`` to ``path`` atomically (temp file + rename), creating parent directories.

    The temporary name is ``.karmactl-<pid>.tmp`` in the same directory (short, so any valid file
    name has room): unique per process, and a run holds the state lock, so no two writers share it.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    tmp = os.path.join(os.path.dirname(path), f".karmactl-{os.getpid()}.tmp")
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


def _write_new(path: str, data: bytes) -> None:
    """Create ``path`` (it must not exist) holding ``data``: three system calls, where ``open()``
    adds three more (fstat, ioctl, lseek) per file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


class TreeWriter:
    """Writes a batch of files under ``root`` so that the batch lands together, with few file
    system operations.

    Everything is first written under ``staging`` (a directory on the same file system, e.g.
    ``<state>/.karmactl/staging.<pid>``). A file whose directory exists is written to a temporary
    name in ``staging/.tmp`` and renamed over its target at :meth:`commit`. A file whose directory
    does not exist yet is written under its plain name into a mirror tree in ``staging``; at
    :meth:`commit` each top-most missing directory is renamed into place in one step. A cold run,
    which creates the whole ``computed/`` tree, is thus one rename, and no file needs a rename of
    its own.

    Until :meth:`commit`, nothing under ``root`` changes; :meth:`abort` (or removing ``staging``,
    as the next run does after a killed one) drops everything written so far. Several processes
    may stage into one ``staging`` (each writer names its temporary files after its process id);
    one of them takes over the others' plans (:meth:`plan`, :meth:`adopt`) and commits.
    Paths are relative to ``root`` with ``/`` separators (e.g. ``computed/works/karmada-es-m1/w.json``).
    """

    def __init__(self, root: Path | str, staging: Path | str):
        self.root = str(root)
        self.staging = str(staging)
        self._dir_exists: dict[str, bool] = {}
        self._made: set[str] = set()
        self._tmps: list[tuple[str, str]] = []  # (temporary path, final path)
        self._tops: set[str] = set()  # top-most missing directories, relative to root
        self._deletes: list[str] = []
        self._checked: set[str] = set()
        self._tmp_dir = os.path.join(self.staging, ".tmp")
        self._tmp_prefix = os.path.join(self._tmp_dir, f"{os.getpid()}-")
        self._tmp_made = False

    def _exists(self, rel_dir: str) -> bool:
        hit = self._dir_exists.get(rel_dir)
        if hit is None:
            hit = os.path.isdir(os.path.join(self.root, rel_dir)) if rel_dir else True
            self._dir_exists[rel_dir] = hit
        return hit

    def _missing_top(self, rel_dir: str) -> str:
        top = rel_dir
        while True:
            parent = top.rpartition("/")[0]
            if self._exists(parent):
                return top
            top = parent

    def write(self, rel: str, data: bytes) -> None:
        """Stage ``data`` for ``root/rel``.

        Raises:
            OSError: the file system refused.
            OutsideStateError: ``rel`` (or a symlinked directory on its way) leads outside ``root``.
        """
        rel_dir, _, name = rel.rpartition("/")
        if rel_dir not in self._checked:
            check_inside(self.root, os.path.join(self.root, rel))
            self._checked.add(rel_dir)
        if self._exists(rel_dir):
            final = os.path.join(self.root, rel)
            if not self._tmp_made:
                os.makedirs(self._tmp_dir, exist_ok=True)
                self._tmp_made = True
            tmp = f"{self._tmp_prefix}{len(self._tmps)}"
            self._tmps.append((tmp, final))
            _write_new(tmp, data)
            return
        self._tops.add(self._missing_top(rel_dir))
        target_dir = os.path.join(self.staging, rel_dir)
        if target_dir not in self._made:
            os.makedirs(target_dir, exist_ok=True)
            self._made.add(target_dir)
        _write_new(os.path.join(target_dir, name), data)

    def delete(self, rel: str) -> None:
        """Remove ``root/rel`` at commit (and directories it leaves empty, up to its first path part).

        Raises:
            OutsideStateError: ``rel`` leads outside ``root``.
        """
        check_inside(self.root, os.path.join(self.root, rel))
        self._deletes.append(rel)

    def plan(self) -> dict:
        """What is staged, for another process to :meth:`adopt` and commit (plain data, picklable)."""
        return {"tmps": list(self._tmps), "tops": sorted(self._tops), "deletes": list(self._deletes)}

    def adopt(self, plan: dict) -> None:
        """Take over what another writer staged under the same ``root`` and ``staging``."""
        self._tmps.extend(tuple(t) for t in plan["tmps"])
        self._tops.update(plan["tops"])
        self._deletes.extend(plan["deletes"])

    def commit(self) -> None:
        """Make every staged write and delete visible (raises OSError)."""
        import shutil

        try:
            for tmp, final in self._tmps:
                os.replace(tmp, final)
            self._tmps = []
            for top in sorted(self._tops):
                os.rename(os.path.join(self.staging, top), os.path.join(self.root, top))
            self._tops = set()
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)
        for rel in self._deletes:
            stop = Path(self.root) / rel.split("/", 1)[0]
            remove_file(Path(self.root) / rel, stop)

    def abort(self) -> None:
        """Drop everything staged (by this writer and by those it adopted); ``root`` is left as it was."""
        import shutil

        self._tmps = []
        self._tops = set()
        self._deletes = []
        shutil.rmtree(self.staging, ignore_errors=True)
