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

The state directory may come from a stranger's merge request (issue 23), so nothing under it is
trusted, the runtime directory included:

* the journal records paths relative to the state directory, and a journal is checked before any
  of it is done (:func:`check_journal`: only steps karmactl itself journals, no ``..``, no absolute
  path, no symlink on the way, nothing into ``.git/`` or ``.karmactl/`` but karmactl's caches); one
  that fails is set aside as ``journal.json.rejected`` with a warning, never replayed, never fatal;
* ``.karmactl`` must be karmactl's own (:func:`check_runtime_dir`): a symlink, or a directory git
  tracks, is refused; files in it are never opened through a symlink (``O_NOFOLLOW``), temporary
  files are created anew (``O_EXCL``);
* readers (``plan``, ``get``, ``describe``) hold ``.karmactl/commit.lock`` shared
  (:func:`read_lock`), which a writer holds exclusive while it carries out a journal: a reader never
  sees half a commit, and never replays a journal without the state lock.

An ``OSError`` of :data:`ENVIRONMENT_ERRNOS` (permission, read-only or full file system, path too
long) names the path the user knows (the file to write, not a temporary one) and propagates: the
CLI exits 6.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import shutil
import signal
import stat
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
    lock stays its parent's, and dies with the parent alone); likewise of a reader's commit lock
    (:func:`read_lock`)."""
    global _LOCK_FD, _READ_FD
    for fd in (_LOCK_FD, _READ_FD):
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
    _LOCK_FD = _READ_FD = None


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
JOURNAL_FORMAT = 2
"""Version of the journal's layout: ``{"format": 2, "renames": [[src, dst]], "deletes": [[path,
stop]], "staging": ".karmactl/staging.<pid>" | null}``, every path relative to the state directory."""

RUNTIME_TARGETS = frozenset({".karmactl/cache/parsed.json", ".karmactl/run-index.json",
                             ".karmactl/run-index.shared.json", ".karmactl/run-index.detail.json"})
"""The files under ``.karmactl/`` that karmactl writes through a batch (the parse cache,
``karmactl/store/parse_cache.py``; the run index, ``karmactl/incremental/runindex.py``): the only targets of a
journal inside the runtime directory."""

MAX_JOURNAL_BYTES = 256 << 20
_TMP_NAME = re.compile(r"\.karmactl-[0-9]+-[0-9]+\.tmp")
_STAGING = re.compile(r"\.karmactl/staging\.[0-9]+")


class JournalRejected(ValueError):
    """A journal that is malformed or asks for a step karmactl never journals."""


def _journal_path(root) -> str:
    return os.path.join(str(root), ".karmactl", JOURNAL)


def _commit_journal(root, renames: list, deletes: list, staging: str | None) -> None:
    """Write the journal (the commit point), carry it out, remove it; signals held throughout,
    readers kept out (:func:`read_lock`) while it is carried out.

    Args:
        renames: ``[[source, target]]``, deletes ``[[path, stop]]`` and ``staging``: paths
            relative to ``root`` (``/``-separated), as :func:`check_journal` accepts them.

    Raises:
        OutsideStateError: a step :func:`check_journal` refuses (a bug or a hostile path).
        OSError: the file system refused (the journal stays and the next command finishes it).
    """
    job = {"format": JOURNAL_FORMAT, "renames": renames, "deletes": deletes, "staging": staging}
    real_root = os.path.realpath(str(root))
    try:
        check_journal(real_root, job, live=True)
    except JournalRejected as exc:
        raise OutsideStateError(f"refusing to write: {exc}") from None
    path = _journal_path(root)
    with _commit_lock(root):
        with critical():
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = path + f".{os.getpid()}.tmp"
            _unlink_quiet(tmp)
            _write_new(tmp, json.dumps(job).encode("utf-8"))
            os.replace(tmp, path)
            _CRASH_POINT("journal")
            _carry_out(real_root, job)
            os.unlink(path)


def _CRASH_POINT(_where: str) -> None:  # replaced by tests to die at a chosen step
    return None


def _hidden(rel: str) -> bool:
    return rel.startswith(".") or "/." in rel


class _Checker:
    """The path checks of :func:`check_journal`, the real path of each parent directory looked up
    once (a warm run of 10,000 templates journals 40,000 renames into a few dozen directories)."""

    def __init__(self, real_root: str):
        self.real_root = real_root
        self._parents: dict = {}

    def rel(self, rel, what: str) -> str:
        """``rel`` as a clean path relative to the state directory that reaches no symlinked directory.

        Raises:
            JournalRejected: naming ``what`` and why.
        """
        if type(rel) is not str or not rel:
            raise JournalRejected(f"{what}: not a path: {rel!r}"[:300])
        parts = rel.split("/")
        if "\0" in rel or "" in parts or "." in parts or ".." in parts:
            raise JournalRejected(f"{what}: {rel!r} is not a plain path relative to the state directory"[:300])
        parent = rel.rpartition("/")[0]
        ok = self._parents.get(parent)
        if ok is None:
            full = os.path.join(self.real_root, parent) if parent else self.real_root
            ok = self._parents[parent] = os.path.realpath(full) == full
        if not ok:
            raise JournalRejected(f"{what}: {rel!r} goes through a symbolic link"[:300])
        return rel

    def target(self, rel, what: str) -> str:
        """A path karmactl writes or deletes through a journal: not hidden (a user file, a computed
        file; never ``.git/``, ``.karmactl/``...), or one of :data:`RUNTIME_TARGETS`."""
        rel = self.rel(rel, what)
        if _hidden(rel) and rel not in RUNTIME_TARGETS:
            raise JournalRejected(f"{what}: {rel!r} is not a file karmactl writes"[:300])
        return rel


def check_journal(real_root: str, job, live: bool = False) -> None:
    """Check a journal before anything of it is done: it has :data:`JOURNAL_FORMAT`'s shape, and
    every step is one karmactl itself journals (``Batch.commit``, ``TreeWriter.commit``):

    * a rename's source is a temporary file of a batch (``.karmactl-<pid>-<n>.tmp``, beside its
      target) or lies in the journal's staging tree, and is no symlink; its target is a file
      karmactl writes: never hidden (so never under ``.git/`` or ``.karmactl/``) but
      :data:`RUNTIME_TARGETS`;
    * a delete names such a file (not a directory), and its ``stop`` (where removing emptied
      directories ends) is the state directory (``""``) or a directory above it;
    * ``staging`` is ``.karmactl/staging.<pid>`` or null;
    * every path is relative, normalised (no ``..``, no ``.``, no empty part) and reaches no
      symlinked directory (its parent's real path is itself).

    Args:
        real_root: the state directory's real path (``os.path.realpath``).
        live: the journal this process is about to write: its sources are the files it has just
            created, not looked at again.

    Raises:
        JournalRejected: naming the first step refused and why.
    """
    if not isinstance(job, dict) or job.get("format") != JOURNAL_FORMAT or \
            set(job) != {"format", "renames", "deletes", "staging"}:
        raise JournalRejected(f"not a journal of this karmactl (format {JOURNAL_FORMAT})")
    check = _Checker(real_root)
    staging = job["staging"]
    if staging is not None and (not isinstance(staging, str) or not _STAGING.fullmatch(staging)):
        raise JournalRejected(f"staging: {staging!r} is not .karmactl/staging.<pid>"[:300])
    if staging is not None:
        check.rel(staging, "staging")
    renames, deletes = job["renames"], job["deletes"]
    if type(renames) is not list or type(deletes) is not list:
        raise JournalRejected("renames and deletes must be lists")
    in_staging = staging + "/" if staging is not None else None
    for step in renames:
        _check_rename(check, real_root, step, in_staging, live)
    for step in deletes:
        if type(step) is not list or len(step) != 2:
            raise JournalRejected(f"delete: not a [path, stop] pair: {step!r}"[:300])
        rel = check.target(step[0], "delete")
        stop = step[1]
        if stop != "" and (type(stop) is not str or not rel.startswith(check.target(stop, "stop") + "/")):
            raise JournalRejected(f"delete: {stop!r} is not a directory above {rel!r}"[:300])
        full = os.path.join(real_root, rel)
        if not live and os.path.isdir(full) and not os.path.islink(full):
            raise JournalRejected(f"delete: {rel!r} is a directory"[:300])


def _check_rename(check: _Checker, real_root: str, step, in_staging: str | None, live: bool) -> None:
    """One rename step of :func:`check_journal` (its rules for renames).

    Raises:
        JournalRejected: naming the step and why.
    """
    if type(step) is not list or len(step) != 2:
        raise JournalRejected(f"rename: not a [source, target] pair: {step!r}"[:300])
    src = check.rel(step[0], "rename source")
    dst = check.target(step[1], "rename target")
    if not ((in_staging is not None and src.startswith(in_staging)) or
            (_TMP_NAME.fullmatch(src.rpartition("/")[2]) and src.rpartition("/")[0] == dst.rpartition("/")[0])):
        raise JournalRejected(f"rename source: {src!r} is neither a temporary file beside {dst!r} "
                              f"nor in the staging tree"[:300])
    if not live and os.path.islink(os.path.join(real_root, src)):
        raise JournalRejected(f"rename source: {src!r} is a symbolic link"[:300])


def _carry_out(real_root: str, job: dict) -> None:
    """Do the steps of a journal :func:`check_journal` accepted (each idempotent)."""
    for src, dst in job["renames"]:
        s, d = os.path.join(real_root, src), os.path.join(real_root, dst)
        if os.path.lexists(s):
            if os.path.isdir(s) and os.path.isdir(d) and not os.path.islink(d):
                _merge_dir(s, d)
            else:
                try:
                    os.replace(s, d)
                except FileNotFoundError:  # its directory went meanwhile (a `git checkout` of computed/)
                    if not os.path.lexists(s):
                        raise
                    os.makedirs(os.path.dirname(d), exist_ok=True)
                    os.replace(s, d)
    for rel, stop in job["deletes"]:
        _remove_now(Path(real_root, rel), Path(real_root, stop) if stop else Path(real_root))
    if job.get("staging"):
        shutil.rmtree(os.path.join(real_root, job["staging"]), ignore_errors=True)


def _merge_dir(src: str, dst: str) -> None:
    """Replay of a directory rename whose target appeared meanwhile (cannot happen under the lock;
    kept total): move the entries one by one (never into a symlinked directory)."""
    for name in os.listdir(src):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.isdir(s) and not os.path.islink(s) and os.path.isdir(d) and not os.path.islink(d):
            _merge_dir(s, d)
        else:
            os.replace(s, d)
    os.rmdir(src)


def _read_journal(path: str):
    """The journal's decoded JSON (not a symlink, at most :data:`MAX_JOURNAL_BYTES`).

    Raises:
        JournalRejected: unreadable as a journal.
        OSError: an environment error (permission, I/O).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise JournalRejected("it is a symbolic link") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise JournalRejected("not a regular file")
        data = os.read(fd, MAX_JOURNAL_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_JOURNAL_BYTES:
        raise JournalRejected(f"larger than {MAX_JOURNAL_BYTES} bytes")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise JournalRejected(f"not valid JSON ({exc})"[:300]) from None


REJECTED_SUFFIX = ".rejected"

# what a journal step may fail with because of the file system's state, not its own content: the
# journal stays (an environment error, ENVIRONMENT_ERRNOS) or is set aside (the rest)
ENVIRONMENT_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT,
                                errno.ENAMETOOLONG, errno.EIO, errno.EMFILE, errno.ENFILE, errno.EFBIG,
                                errno.ENOMEM, errno.ETXTBSY})
"""``errno`` values of an environment error: the state directory or a path karmactl needs cannot be
read or written (permission, read-only or full file system, path too long, I/O error). The CLI
exits 6 (``ExitCode.ENVIRONMENT``) with ``error: <path>: <strerror>``."""


def is_environment_error(exc: BaseException) -> bool:
    """Whether ``exc`` is an :class:`OSError` of :data:`ENVIRONMENT_ERRNOS`."""
    return isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS


def _reject(path: str, why: str) -> None:
    """Set a journal aside as ``journal.json.rejected`` (replacing an older one), with a warning."""
    aside = path + REJECTED_SUFFIX
    os.replace(path, aside)
    sys.stderr.write(f"warning: {path}: journal not replayed ({why}); moved to {aside}\n")


def recover(state_dir) -> bool:
    """Finish a batch a killed process committed (its journal) and drop staging it left before
    its commit point. Call with the state lock held. Returns True when a journal was replayed.

    A journal that is malformed, or asks for a step karmactl never journals (:func:`check_journal`:
    a path outside the state directory, through a symlink, into ``.git/`` or ``.karmactl/``...),
    is not replayed at all: it is moved aside to ``.karmactl/journal.json.rejected`` with a
    warning on stderr naming it and why, and the command goes on. A step failing for another
    reason than the environment (:data:`ENVIRONMENT_ERRNOS`: the journal stays for a later
    command) sets the rest of it aside the same way.

    Raises:
        OSError: an environment error.
    """
    root = str(state_dir)
    real_root = os.path.realpath(root)
    runtime = os.path.join(root, ".karmactl")
    replayed = False
    path = _journal_path(root)
    if os.path.lexists(path):
        with _commit_lock(root):
            try:
                job = _read_journal(path)
                check_journal(real_root, job)
            except JournalRejected as exc:
                _reject(path, f"{exc}; nothing of it was done")
            else:
                try:
                    with critical():
                        _carry_out(real_root, job)
                        os.unlink(path)
                    replayed = True
                except OSError as exc:
                    if is_environment_error(exc):
                        raise
                    _reject(path, f"a step failed: {exc}")
    if os.path.isdir(runtime) and not os.path.islink(runtime):
        for name in os.listdir(runtime):
            full = os.path.join(runtime, name)
            if name.startswith("staging."):
                if os.path.isdir(full) and not os.path.islink(full):
                    shutil.rmtree(full, ignore_errors=True)
                else:
                    _unlink_quiet(full)
            elif name.startswith(JOURNAL) and name.endswith(".tmp"):
                _unlink_quiet(full)
    return replayed


def _unlink_quiet(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def pending_journal(state_dir) -> bool:
    """Whether a killed process left a committed batch to replay."""
    return os.path.lexists(_journal_path(state_dir))


class Batch:
    """Writes and deletes under ``root`` made while the lock is held, committed together."""

    def __init__(self, root):
        self.root = os.path.realpath(str(root))
        self.pending: dict[str, tuple] = {}  # absolute path -> ("write", bytes) | ("delete", stop_at)

    def owns(self, path) -> bool:
        real = os.path.realpath(os.path.dirname(os.path.abspath(str(path))))
        return real == self.root or real.startswith(self.root + "/")

    def rel(self, path: str) -> str:
        """``path`` (absolute, :meth:`owns`) relative to the state directory's real path."""
        return os.path.relpath(os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path)),
                               self.root)

    def commit(self) -> None:
        """Write every pending file to a temporary file beside it, then commit the batch (the
        journal). Raises OSError naming the file the file system refused (nothing changed)."""
        renames, deletes, tmps = [], [], []
        try:
            for n, (path, (action, arg)) in enumerate(self.pending.items()):
                rel = self.rel(path)
                if action == "write":
                    tmp = os.path.join(os.path.dirname(path), f".karmactl-{os.getpid()}-{n}.tmp")
                    try:
                        _unlink_quiet(tmp)
                        try:
                            _write_new(tmp, arg)
                        except FileNotFoundError:
                            os.makedirs(os.path.dirname(path), exist_ok=True)
                            _write_new(tmp, arg)
                    except OSError as exc:
                        raise _naming(exc, path) from None
                    tmps.append(tmp)
                    renames.append([os.path.join(os.path.dirname(rel), os.path.basename(tmp)), rel])
                else:
                    stop = os.path.realpath(str(arg))
                    deletes.append([rel, "" if stop == self.root else os.path.relpath(stop, self.root)])
        except BaseException:
            for tmp in tmps:
                _unlink_quiet(tmp)
            raise
        self.pending = {}
        if renames or deletes:
            try:
                _commit_journal(self.root, renames, deletes, None)
            except OutsideStateError:
                for tmp in tmps:
                    _unlink_quiet(tmp)
                raise


def _naming(exc: OSError, path) -> OSError:
    """``exc`` naming ``path`` (what the user knows: the file to write, not a temporary one)."""
    if exc.filename == str(path):
        return exc
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def flush_batch() -> None:
    """Commit the writes batched so far (before the state directory is read back)."""
    if _BATCH is not None and _BATCH.pending:
        _BATCH.commit()


def read_text(path, keep_line_ends: bool = False) -> str:
    """A file's text, as the current batch would leave it; ``\\r\\n`` read as ``\\n`` unless
    ``keep_line_ends`` (an edit that writes the file back keeps them).

    Raises:
        FileNotFoundError: absent (or deleted by the batch).
    """
    if _BATCH is not None:
        hit = _BATCH.pending.get(os.path.abspath(str(path)))
        if hit is not None:
            if hit[0] == "delete":
                raise FileNotFoundError(str(path))
            return hit[1].decode("utf-8")
    if keep_line_ends:
        return Path(path).read_bytes().decode("utf-8")
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
    It is created anew (never opened through a symlink someone left under that name).

    Raises:
        OSError: naming ``path`` when the file system refuses.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    if _BATCH is not None and _BATCH.owns(path):
        _BATCH.pending[os.path.abspath(str(path))] = ("write", data)
        return
    tmp = os.path.join(os.path.dirname(path), f".karmactl-{os.getpid()}.tmp")
    try:
        _unlink_quiet(tmp)
        try:
            _write_new(tmp, data)
        except FileNotFoundError:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            _write_new(tmp, data)
        os.replace(tmp, path)
    except OSError as exc:
        _unlink_quiet(tmp)
        raise _naming(exc, path) from None
    except BaseException:
        _unlink_quiet(tmp)
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


RUNTIME = ".karmactl"


class RuntimeDirError(ValueError):
    """``<state>/.karmactl`` cannot be karmactl's own: a symlink, not a directory, or tracked by
    git (committed by someone). Exit 2: the state directory is bad input."""


_RUNTIME_CHECKED: set = set()


def check_runtime_dir(state_dir) -> bool:
    """Refuse a runtime directory ``<state>/.karmactl`` that karmactl did not make for itself.

    The state directory may come from a stranger's merge request, so its runtime directory (lock,
    journal, parse cache, run index, local members' kubeconfigs) must never be taken from the
    repository:

    * a ``.karmactl`` that is a symbolic link (it would send every write there, wherever it points)
      or not a directory is refused;
    * a ``.karmactl`` that git tracks (committed: a journal karmactl would replay, a parse cache
      it would believe) is refused, telling the user to ``git rm -r --cached`` it.

    The git check runs only when ``.karmactl`` exists and a ``.git`` is found in the state directory
    or above it, once per process (:func:`git_tracks`: the index is read and searched for the
    path, without starting git unless the path occurs in it: an unchanged offline run pays for one
    read of ``.git/index``, well under a millisecond at 20,000 tracked files).

    Returns:
        True when ``.karmactl`` exists.

    Raises:
        RuntimeDirError: naming the path, why, and what to do.
        OSError: the state directory cannot be read.
    """
    runtime = os.path.join(str(state_dir), RUNTIME)
    try:
        st = os.lstat(runtime)
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        return False
    key = os.path.realpath(runtime)
    if stat.S_ISLNK(st.st_mode):
        raise RuntimeDirError(f"{runtime} is a symbolic link (to {os.readlink(runtime)}): karmactl keeps its lock, "
                              f"journal and caches there and never follows a link out of the state directory; "
                              f"remove the link (karmactl creates the directory itself)")
    if not stat.S_ISDIR(st.st_mode):
        raise RuntimeDirError(f"{runtime} is not a directory: karmactl keeps its runtime data there; remove it")
    if key in _RUNTIME_CHECKED:
        return True
    tracked = git_tracks(key)
    if tracked:
        raise RuntimeDirError(f"{runtime} is tracked by git ({tracked}): it holds karmactl's runtime data (lock, "
                              f"journal, caches) and must never come from the repository; remove it from git "
                              f"with `git rm -r --cached -- {runtime}` (and commit that), then delete the "
                              f"directory if karmactl did not make it")
    _RUNTIME_CHECKED.add(key)
    return True


def _find_git(path: str) -> tuple[str, str] | None:
    """``(work tree, git directory)`` of the nearest ``.git`` at or above ``path`` (a real path),
    or None. A ``.git`` file (worktree, submodule) is followed through its ``gitdir:`` line."""
    d = path
    while True:
        dot = os.path.join(d, ".git")
        try:
            st = os.stat(dot)
        except OSError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                return d, dot
            try:
                with open(dot, encoding="utf-8", errors="replace") as fh:
                    line = fh.read(4096).strip()
            except OSError:
                return d, dot
            if line.startswith("gitdir:"):
                return d, os.path.join(d, line[len("gitdir:"):].strip())
            return d, dot
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def git_tracks(runtime: str) -> str | None:
    """Whether git tracks anything under ``runtime`` (a real path): a description (the first
    tracked path) or None.

    The index (``<git dir>/index``) is read and searched for ``<path relative to the work tree>/``:
    index versions 2 and 3 store every path whole, so when those bytes do not occur nothing under
    it is tracked, and git is not started. Otherwise (the bytes occur, index version 4's prefix
    compression, a split index, ``GIT_DIR``/``GIT_INDEX_FILE`` set) ``git ls-files`` answers, with
    the repository's file system monitor and optional locks off (it only reads the index). When
    git cannot answer (not installed, refuses the repository), the bytes' presence decides.
    """
    found = _find_git(os.path.dirname(runtime))
    if found is None:
        return None
    work, gitdir = found
    rel = os.path.relpath(runtime, work)
    needle = (rel + "/").encode("utf-8", "surrogateescape")
    env_override = os.environ.get("GIT_DIR") or os.environ.get("GIT_INDEX_FILE")
    if not env_override:
        try:
            with open(os.path.join(gitdir, "index"), "rb") as fh:
                data = fh.read()
        except OSError:
            return None  # no index: nothing is tracked
        if data[:4] == b"DIRC" and data[4:8] in (b"\0\0\0\x02", b"\0\0\0\x03") and needle not in data \
                and b"link" not in data:
            return None
    else:
        data = b""
    import subprocess

    try:
        proc = subprocess.run(["git", "-c", "core.fsmonitor=false", "--no-optional-locks", "-C", work,
                               "ls-files", "-z", "--", rel],
                              capture_output=True, timeout=30, stdin=subprocess.DEVNULL,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.SubprocessError):
        proc = None
    if proc is not None and proc.returncode == 0:
        first = proc.stdout.split(b"\0", 1)[0]
        return first.decode("utf-8", "backslashreplace") if first else None
    return f"its path occurs in {os.path.join(gitdir, 'index')}" if needle in data else None


def ensure_runtime_dir(state_dir: Path) -> Path:
    """``<state>/.karmactl`` (lock, parse cache, local members), created with a ``.gitignore`` of
    ``*`` so a state directory kept in git never tracks runtime data; refused when it is not
    karmactl's own (:func:`check_runtime_dir`).

    Raises:
        RuntimeDirError: a symlinked or tracked ``.karmactl``.
        OSError: it cannot be created.
    """
    runtime = Path(state_dir) / RUNTIME
    if not check_runtime_dir(state_dir):
        runtime.mkdir(parents=True, exist_ok=True)
        check_runtime_dir(state_dir)
    ignore = os.path.join(str(runtime), ".gitignore")
    if not os.path.lexists(ignore):
        try:
            _write_new(ignore, b"*\n")
        except OSError:
            pass
    return runtime


def runtime_subdir_ok(state_dir, *parts: str) -> bool:
    """Whether ``<state>/.karmactl/<parts...>`` holds no symlink and nothing but directories on
    its way (each part absent or a real directory): a place karmactl may read its own files from and
    write them to (the parse cache's ``cache/``)."""
    d = os.path.join(str(state_dir), RUNTIME)
    for part in parts:
        d = os.path.join(d, part)
        try:
            st = os.lstat(d)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode):
            return False
    return True


def read_runtime_file(path) -> bytes:
    """The bytes of a file karmactl keeps under ``.karmactl/`` (never read through a symlink).

    Raises:
        OSError: missing, unreadable, a symlink (ELOOP) or not a regular file.
    """
    fd = os.open(str(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _open_lock_file(path: str, create: bool = True) -> int:
    """A descriptor of a lock file in the runtime directory (never through a symlink).

    Raises:
        RuntimeDirError: it is a symlink.
        OSError: it cannot be opened (or created).
    """
    flags = os.O_CLOEXEC | os.O_NOFOLLOW | ((os.O_RDWR | os.O_CREAT) if create else os.O_RDONLY)
    try:
        return os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RuntimeDirError(f"{path} is a symbolic link: karmactl never follows a link out of its runtime "
                                  f"directory; remove it") from None
        raise


# ---------------------------------------------------------------------------- readers
COMMIT_LOCK = "commit.lock"
READ_WAIT = 60.0
"""Seconds a reader waits at most for a commit (or a killed writer's journal) to end, when
:data:`LOCK_TIMEOUT` is shorter."""
_READ_FD: int | None = None
_READ_ROOT: str | None = None


def _flock_until(fd: int, op: int, deadline: float | None) -> bool:
    """Take ``flock(fd, op)``, polling until ``deadline`` (``time.monotonic()``; None: block)."""
    if deadline is None:
        fcntl.flock(fd, op)
        return True
    while True:
        try:
            fcntl.flock(fd, op | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


@contextmanager
def _commit_lock(root):
    """``.karmactl/commit.lock`` held exclusive: readers (:func:`read_lock`) are kept out while a
    journal is carried out (a writer holds the state lock already: no other writer competes).
    Waits for the readers under way (they hold it for one command's reading)."""
    release_read_lock()
    runtime = os.path.join(str(root), RUNTIME)
    os.makedirs(runtime, exist_ok=True)
    fd = _open_lock_file(os.path.join(runtime, COMMIT_LOCK))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def read_lock(state_dir) -> None:
    """Make this process a reader of a consistent tree, until :func:`release_read_lock` (or its end).

    Readers (``plan``, ``get``, ``describe``, dry runs) take no state lock: a writer holds that for a
    whole command (an online reconcile, minutes with ``--wait``) and its changes land only when it
    commits (:func:`_commit_journal`). So a reader takes ``.karmactl/commit.lock`` shared, which a
    writer takes exclusive around each commit only: the reader waits for a commit under way (at most
    ``max(LOCK_TIMEOUT, READ_WAIT)`` seconds), and no commit starts while it reads. A journal a
    killed writer left is replayed first, by taking the state lock (exclusive, as every replay) when
    it is free; when another process holds it, that one replays it, and the reader waits.

    A process that holds the state lock is a writer: nothing else can commit, and it reads without
    this. A state directory where the lock file cannot be created (read-only) cannot be written by
    anyone: read as it is.

    Raises:
        RuntimeDirError: ``.karmactl`` is not karmactl's own (:func:`check_runtime_dir`).
        StateLockedError: the wait ran out.
    """
    global _READ_FD, _READ_ROOT
    if _LOCK_FD is not None:
        return
    real = os.path.realpath(str(state_dir))
    if _READ_FD is not None:
        if _READ_ROOT == real:
            return
        release_read_lock()  # another state directory (commands run in one process, as tests do)
    deadline = time.monotonic() + max(LOCK_TIMEOUT, READ_WAIT)
    while True:
        try:
            runtime = ensure_runtime_dir(state_dir)
            fd = _open_lock_file(str(runtime / COMMIT_LOCK))
        except OSError as exc:
            if not is_environment_error(exc) and exc.errno != errno.ENOENT:
                raise
            check_runtime_dir(state_dir)
            try:
                fd = _open_lock_file(os.path.join(str(state_dir), RUNTIME, COMMIT_LOCK), create=False)
            except FileNotFoundError:
                return  # nobody can write here
        if not _flock_until(fd, fcntl.LOCK_SH, deadline):
            os.close(fd)
            raise StateLockedError(f"state directory {state_dir}: a commit did not end within "
                                   f"{max(LOCK_TIMEOUT, READ_WAIT):g} s")
        if not pending_journal(state_dir):
            _READ_FD, _READ_ROOT = fd, real
            return
        os.close(fd)
        try:
            with state_lock(state_dir, timeout=0):  # replays it (recover)
                pass
        except StateLockedError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def release_read_lock() -> None:
    """Stop being a reader (:func:`read_lock`): commits may go on."""
    global _READ_FD
    if _READ_FD is not None:
        fd, _READ_FD = _READ_FD, None
        os.close(fd)


@contextmanager
def state_lock(state_dir: Path, wait: bool = False, timeout: float | None = None):
    """Hold the exclusive lock of a state directory; writes made meanwhile form one batch,
    committed (crash-atomically) when the block ends without an error and dropped otherwise.

    The lock is an ``flock``, so it dies with its holder (and with no one else: worker processes
    drop it, :func:`die_with_parent`); a batch a killed holder committed is replayed first
    (:func:`recover`). The holder's pid and command line are written into the lock file. A
    process that was a reader (:func:`read_lock`) stops being one.

    Args:
        wait: wait as long as it takes.
        timeout: seconds to wait for a live holder (default :data:`LOCK_TIMEOUT`).

    Raises:
        StateLockedError: another live process holds it (after ``timeout``), naming its pid and command.
        RuntimeDirError: ``.karmactl`` is not karmactl's own (:func:`check_runtime_dir`).
        OSError: the runtime directory or its lock cannot be created.
    """
    global _BATCH, _LOCK_FD
    release_read_lock()
    lock_dir = ensure_runtime_dir(state_dir)
    fd = _open_lock_file(str(lock_dir / "lock"))
    outer = _BATCH
    try:
        deadline = None if wait else time.monotonic() + (LOCK_TIMEOUT if timeout is None else timeout)
        if not _flock_until(fd, fcntl.LOCK_EX, deadline):
            raise StateLockedError(f"state directory {state_dir} is locked by another karmactl process "
                                   f"({_holder(fd)})")
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
    returns ``(mtime_ns, size, inode)`` of the file as written (a rename keeps them), else None.
    Never opens a symlink (``O_NOFOLLOW``; with ``exclusive`` one is EEXIST)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_EXCL if exclusive else os.O_TRUNC), 0o644)
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
                try:
                    os.makedirs(self._tmp_dir, exist_ok=True)
                except OSError as exc:
                    raise _naming(exc, final) from None
                self._tmp_made = True
            tmp = f"{self._tmp_prefix}{len(self._tmps)}"
            try:
                self.written[rel] = _write_new(tmp, data, signature=True)
            except OSError as exc:
                raise _naming(exc, final) from None
            self._tmps.append((tmp, final))
            return
        self._tops.add(self._missing_top(rel_dir))
        target_dir = os.path.join(self.staging, rel_dir)
        try:
            if target_dir not in self._made:
                os.makedirs(target_dir, exist_ok=True)
                self._made.add(target_dir)
            self.written[rel] = _write_new(os.path.join(target_dir, name), data, signature=True)
        except OSError as exc:
            raise _naming(exc, os.path.join(self.root, rel)) from None

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
        meanwhile (the journal of this module).

        Raises:
            OSError: the file system refused (then the next command finishes the commit).
        """
        rel = lambda path: os.path.relpath(path, self.root)  # noqa: E731 - both under root, as given
        staging = rel(self.staging)
        renames = [[rel(tmp), rel(final)] for tmp, final in self._tmps]
        renames += [[f"{staging}/{top}", top] for top in sorted(self._tops)]
        deletes = [[r, r.split("/", 1)[0]] for r in self._deletes]
        self._tmps, self._tops, self._deletes = [], set(), []
        _commit_journal(self.root, renames, deletes, staging)

    def abort(self) -> None:
        """Drop everything staged (by this writer and by those it adopted); ``root`` is left as it was."""
        self._tmps = []
        self._tops = set()
        self._deletes = []
        shutil.rmtree(self.staging, ignore_errors=True)
