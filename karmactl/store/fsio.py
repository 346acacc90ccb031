"""Atomic file writes, crash-atomic batches and the state-directory lock.

A write goes to a temporary file in the same directory and is renamed over the target, so a reader
(or a crash) never sees half a file. A command that changes the state directory holds an exclusive
``flock`` on ``<state>/.karmactl/lock`` for its whole duration.

Crash atomicity (a batch of writes and deletes lands whole or not at all, whenever the process
dies): every batch is first staged beside its targets (temporary files, or a staging tree under
``.karmactl/``); then its *journal* ``.karmactl/journal.json`` (the list of renames and deletes
still to do) is written with one atomic rename, which is the commit point; then the renames and
deletes are done and the journal removed. Each journal step is idempotent (a rename whose source is
gone was done), so the next command that takes the lock (or reads) replays a journal left by a
killed process to the end, and removes staging left without a journal (a batch that never reached
its commit point, rolled back). SIGINT and SIGTERM are held off while a journal is being carried
out (:func:`critical`), so Ctrl-C never stops a commit half-way either.

Writes made while the lock is held are batched (:func:`write_atomic`, :func:`remove_file`) and
committed when the lock is released without an error: ``apply`` of twenty objects, ``suspend``,
``cordon`` each land as one batch. :func:`read_text` and :func:`exists` see the batch's pending
writes.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path

JOURNAL = "journal.json"
_BATCH: "Batch | None" = None
_LOCK_FD: int | None = None
LOCK_TIMEOUT: float = 0.0
"""Seconds :func:`state_lock` waits for a live holder before refusing (``--lock-timeout``)."""


# ---------------------------------------------------------------------------- signals
_CRITICAL = 0
_DEFERRED: list[int] = []


class Terminated(BaseException):
    """SIGTERM arrived: the command stops at a safe point and exits 143."""


def install_signal_handlers() -> None:
    """SIGINT raises KeyboardInterrupt and SIGTERM :class:`Terminated` in the main thread, except
    inside :func:`critical`, where they are held until the critical section ends."""
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def _on_signal(signum, _frame):
    if _CRITICAL:
        _DEFERRED.append(signum)
        return
    _raise_for(signum)


INTERRUPTED: list[int] = []
"""Signals that stopped the command (the CLI maps them to exit 130/143 whatever caught the
exception on the way up: click turns KeyboardInterrupt into ``Abort``)."""


def _raise_for(signum):
    INTERRUPTED.append(signum)
    if signum == signal.SIGTERM:
        raise Terminated()
    raise KeyboardInterrupt()


@contextmanager
def critical():
    """Hold SIGINT/SIGTERM (when :func:`install_signal_handlers` is in effect) until the block ends,
    then act on the first that arrived."""
    global _CRITICAL
    _CRITICAL += 1
    try:
        yield
    finally:
        _CRITICAL -= 1
        if not _CRITICAL and _DEFERRED:
            signum = _DEFERRED[0]
            _DEFERRED.clear()
            _raise_for(signum)


def die_with_parent() -> None:
    """In a forked worker: be killed when the parent dies (Linux ``PR_SET_PDEATHSIG``), drop the
    inherited state lock, and leave SIGINT/SIGTERM to the parent (which kills its workers), so no
    worker outlives its command holding the lock or the caller's pipes."""
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    drop_inherited_lock()


def drop_inherited_lock() -> None:
    """In a forked process: close this process's descriptor of the state lock it inherited (the
    lock stays its parent's, and dies with the parent alone)."""
    global _LOCK_FD
    if _LOCK_FD is not None:
        try:
            os.close(_LOCK_FD)
        except OSError:
            pass
        _LOCK_FD = None


def kill_pool(pool) -> None:
    """Kill a ``ProcessPoolExecutor``'s worker processes at once (after an interrupt or an
    error), rather than waiting for the work they hold."""
    for proc in list(getattr(pool, "_processes", {}).values() or []):
        try:
            proc.kill()
        except (OSError, AttributeError):
            pass
    pool.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------------------- journal
def _journal_path(root) -> str:
    return os.path.join(str(root), ".karmactl", JOURNAL)


def _commit_journal(root, renames: list, deletes: list, staging: str | None) -> None:
    """Write the journal (the commit point), carry it out, remove it; signals held throughout."""
    path = _journal_path(root)
    with critical():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + f".{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"renames": renames, "deletes": deletes, "staging": staging}, fh)
        os.replace(tmp, path)
        _CRASH_POINT("journal")
        _carry_out(root, path)


def _CRASH_POINT(_where: str) -> None:  # replaced by tests to die at a chosen step
    return None


def _carry_out(root, path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        job = json.load(fh)
    for src, dst in job["renames"]:
        if os.path.lexists(src):
            os.replace(src, dst) if not os.path.isdir(src) or not os.path.lexists(dst) else _merge_dir(src, dst)
    for rel_path, stop in job["deletes"]:
        _remove_now(Path(rel_path), Path(stop))
    if job.get("staging"):
        shutil.rmtree(job["staging"], ignore_errors=True)
    os.unlink(path)


def _merge_dir(src: str, dst: str) -> None:
    """Replay of a directory rename whose target appeared meanwhile (cannot happen under the lock;
    kept total): move the entries one by one."""
    for name in os.listdir(src):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.isdir(s) and os.path.isdir(d):
            _merge_dir(s, d)
        else:
            os.replace(s, d)
    os.rmdir(src)


def recover(state_dir) -> bool:
    """Finish a batch a killed process committed (its journal) and drop staging it left before
    its commit point. Call with the state lock held. Returns True when a journal was replayed."""
    root = str(state_dir)
    runtime = os.path.join(root, ".karmactl")
    replayed = False
    path = _journal_path(root)
    if os.path.exists(path):
        try:
            with critical():
                _carry_out(root, path)
            replayed = True
        except (ValueError, KeyError):  # a journal cut short is impossible (atomic rename); be total
            os.unlink(path)
    if os.path.isdir(runtime):
        for name in os.listdir(runtime):
            if name.startswith("staging.") or (name.startswith(JOURNAL) and name.endswith(".tmp")):
                shutil.rmtree(os.path.join(runtime, name), ignore_errors=True) if not name.endswith(".tmp") \
                    else _unlink_quiet(os.path.join(runtime, name))
    return replayed


def _unlink_quiet(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def pending_journal(state_dir) -> bool:
    """Whether a killed process left a committed batch to replay."""
    return os.path.exists(_journal_path(state_dir))


class Batch:
    """Writes and deletes under ``root`` made while the lock is held, committed together."""

    def __init__(self, root):
        self.root = os.path.realpath(str(root))
        self.pending: dict[str, tuple] = {}  # absolute path -> ("write", bytes) | ("delete", stop_at)

    def owns(self, path) -> bool:
        real = os.path.realpath(os.path.dirname(os.path.abspath(str(path))))
        return real == self.root or real.startswith(self.root + "/")

    def commit(self) -> None:
        renames, deletes = [], []
        try:
            for n, (path, (action, arg)) in enumerate(self.pending.items()):
                if action == "write":
                    tmp = os.path.join(os.path.dirname(path), f".karmactl-{os.getpid()}-{n}.tmp")
                    try:
                        _write_new(tmp, arg, exclusive=False)
                    except FileNotFoundError:
                        os.makedirs(os.path.dirname(path), exist_ok=True)
                        _write_new(tmp, arg, exclusive=False)
                    renames.append([tmp, path])
                else:
                    deletes.append([path, str(arg)])
        except BaseException:
            for tmp, _ in renames:
                _unlink_quiet(tmp)
            raise
        self.pending = {}
        if renames or deletes:
            _commit_journal(self.root, renames, deletes, None)


def flush_batch() -> None:
    """Commit the writes batched so far (before the state directory is read back)."""
    if _BATCH is not None and _BATCH.pending:
        _BATCH.commit()


def read_text(path) -> str:
    """A file's text, as the current batch would leave it.

    Raises:
        FileNotFoundError: absent (or deleted by the batch).
    """
    if _BATCH is not None:
        hit = _BATCH.pending.get(os.path.abspath(str(path)))
        if hit is not None:
            if hit[0] == "delete":
                raise FileNotFoundError(str(path))
            return hit[1].decode("utf-8")
    return Path(path).read_text(encoding="utf-8")


def exists(path) -> bool:
    """Whether ``path`` exists, as the current batch would leave it."""
    if _BATCH is not None:
        hit = _BATCH.pending.get(os.path.abspath(str(path)))
        if hit is not None:
            return hit[0] == "write"
    return os.path.exists(path)


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
    if _BATCH is not None and _BATCH.owns(path):
        _BATCH.pending[os.path.abspath(str(path))] = ("write", data)
        return
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
    """Delete ``path`` and then any parent directory left empty, up to (not including) ``stop_at``
    (with the lock held: when the batch commits)."""
    if _BATCH is not None and _BATCH.owns(path):
        _BATCH.pending[os.path.abspath(str(path))] = ("delete", str(stop_at))
        return
    _remove_now(Path(path), Path(stop_at))


def _remove_now(path: Path, stop_at: Path) -> None:
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
def state_lock(state_dir: Path, wait: bool = False, timeout: float | None = None):
    """Hold the exclusive lock of a state directory; writes made meanwhile form one batch,
    committed (crash-atomically) when the block ends without an error and dropped otherwise.

    The lock is an ``flock``, so it dies with its holder (and with no one else: worker processes
    drop it, :func:`die_with_parent`); a batch a killed holder committed is replayed first
    (:func:`recover`). The holder's pid and command line are written into the lock file.

    Args:
        wait: wait as long as it takes.
        timeout: seconds to wait for a live holder (default :data:`LOCK_TIMEOUT`).

    Raises:
        StateLockedError: another live process holds it (after ``timeout``), naming its pid and command.
    """
    global _BATCH, _LOCK_FD
    lock_dir = ensure_runtime_dir(state_dir)
    fd = os.open(str(lock_dir / "lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    outer = _BATCH
    try:
        deadline = time.monotonic() + (LOCK_TIMEOUT if timeout is None else timeout)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise StateLockedError(f"state directory {state_dir} is locked by another karmactl process "
                                           f"({_holder(fd)})") from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {' '.join(['karmactl', *sys.argv[1:]])[:500]}\n".encode(), 0)
        _LOCK_FD = fd
        recover(state_dir)
        batch = _BATCH = Batch(state_dir) if outer is None else outer
        yield
        if outer is None:
            batch.commit()
    finally:
        if outer is None:
            _BATCH = None
            _LOCK_FD = None
        os.close(fd)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 600, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "holder unknown"


def _write_new(path: str, data: bytes, exclusive: bool = True, signature: bool = False) -> tuple | None:
    """Create ``path`` (with ``exclusive``, it must not exist) holding ``data``: three system
    calls, where ``open()`` adds three more (fstat, ioctl, lseek) per file. With ``signature``,
    returns ``(mtime_ns, size, inode)`` of the file as written (a rename keeps them), else None."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC), 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if signature:
            st = os.fstat(fd)
            return st.st_mtime_ns, st.st_size, st.st_ino
        return None
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
        self.written: dict[str, tuple] = {}
        """``{rel: (mtime_ns, size, inode)}`` of each file written, as it will be after
        :meth:`commit` (renames keep all three): the run index records them without a ``stat``."""

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
            self.written[rel] = _write_new(tmp, data, signature=True)
            return
        self._tops.add(self._missing_top(rel_dir))
        target_dir = os.path.join(self.staging, rel_dir)
        if target_dir not in self._made:
            os.makedirs(target_dir, exist_ok=True)
            self._made.add(target_dir)
        self.written[rel] = _write_new(os.path.join(target_dir, name), data, signature=True)

    def delete(self, rel: str) -> None:
        """Remove ``root/rel`` at commit (and directories it leaves empty, up to its first path part).

        Raises:
            OutsideStateError: ``rel`` leads outside ``root``.
        """
        check_inside(self.root, os.path.join(self.root, rel))
        self._deletes.append(rel)

    def plan(self) -> dict:
        """What is staged, for another process to :meth:`adopt` and commit (plain data, picklable)."""
        return {"tmps": list(self._tmps), "tops": sorted(self._tops), "deletes": list(self._deletes),
                "written": self.written}

    def adopt(self, plan: dict) -> None:
        """Take over what another writer staged under the same ``root`` and ``staging``."""
        self._tmps.extend(tuple(t) for t in plan["tmps"])
        self._tops.update(plan["tops"])
        self._deletes.extend(plan["deletes"])
        self.written.update(plan.get("written") or {})

    def commit(self) -> None:
        """Make every staged write and delete visible, all together even if the process dies
        meanwhile (the journal of this module; raises OSError)."""
        renames = [[tmp, final] for tmp, final in self._tmps]
        renames += [[os.path.join(self.staging, top), os.path.join(self.root, top)] for top in sorted(self._tops)]
        deletes = [[os.path.join(self.root, rel), os.path.join(self.root, rel.split("/", 1)[0])]
                   for rel in self._deletes]
        self._tmps, self._tops, self._deletes = [], set(), []
        _commit_journal(self.root, renames, deletes, self.staging)

    def abort(self) -> None:
        """Drop everything staged (by this writer and by those it adopted); ``root`` is left as it was."""
        self._tmps = []
        self._tops = set()
        self._deletes = []
        shutil.rmtree(self.staging, ignore_errors=True)
