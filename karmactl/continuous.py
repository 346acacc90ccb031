"""The continuous control loop: ``karmactl reconcile --watch``.

Karmada's controllers run all the time and react to events; karmactl's reconcile is one pass
(:func:`karmactl.reconcile.run`). This module makes passes happen when something they decide on
changes, on one machine, without holding the state directory between passes:

- **files**: a change under the state directory (people's YAML, a ``git pull``, ``karmactl apply``)
  — inotify through the ``watchdog`` library, or its polling observer where inotify is not available
  (:class:`FileTrigger`). karmactl's own writes (``computed/``, ``.karmactl/``) are not triggers;
- **cluster health**: every ``clusterStatusUpdateFrequency`` seconds (Karmada's
  ``--cluster-status-update-frequency``, default 10 s) the members are probed against the last
  pass's snapshot, held in memory; a pass runs only when a Cluster's status would change (a
  failure's first sighting, a threshold crossed, a member back), as Karmada's cluster status
  controller updates a Cluster only on change (``pkg/controllers/status/cluster_status_controller.go``);
- **the clock**: the earliest wake time the last pass's controllers gave
  (:func:`karmactl.pipeline.registry.wake_times`: toleration ends, grace periods, TTLs);
- **members**: a Kubernetes watch of every kind the Works dispatch, on every member
  (``karmactl/members/watching.py``): a member copy that changes (a workload getting ready, an
  edit by hand, a deletion) triggers a pass, as Karmada's work status controller reacts to its
  member informers;
- **resync**: a whole pass every ``resync`` seconds even when nothing triggered one (the resync
  period of Kubernetes informers), a safety net for a watch that could not be kept.

Online, each pass is as small as the incremental engine can prove enough
(``karmactl.reconcile.run_online_pass``, ``karmactl/incremental/engine.py: plan_online``): the
templates whose files changed or whose wake time came, and the bindings whose member copies a watch
saw change (:class:`MemberTargets`), or for a settle pass those not converged yet, computed alone
with their member copies read one GET each; a full pass (every member observed, every binding
computed, the run index written) at the start, on a resync, when a Cluster's status changed, after a
watch listed again, and whenever the engine says full (with its reason), that one in a forked
process (:meth:`ControlLoop._forked`). The loop keeps of a pass only its :class:`PassSummary`: its
view (:func:`loop_view`), the targets, the bindings not converged and the wake times, never a whole
snapshot.

Each pass takes the state lock for the pass alone (so ``apply``, ``edit``, ``get``... work while
the loop runs), is crash-atomic as any run, and logs one line on stderr. A member that fails is
a line in the log, never the end of the loop; invalid input is reported and the loop waits for the
files to change. SIGINT/SIGTERM stop it between or inside a pass (never inside a commit).

The loop keeps no state a restart would miss: every clock (threshold records, eviction tasks,
graceful eviction timeouts) lives in the state directory's files.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from karmactl.api.objects import parse_time, seconds_between
from karmactl.gcpause import return_free_memory
from karmactl.reconcile import RunOptions, RunReport, run

IGNORED_TOP = ("computed", ".karmactl", ".git")
"""Top-level entries of the state directory whose changes are karmactl's own (or git's)."""

SETTLE_FIRST = 0.5
SETTLE_MAX = 60.0
"""Seconds before the first and at most between *settle* passes (see :meth:`ControlLoop.run`)."""

CLIENT_TTL = 300.0
"""Seconds the loop keeps a member's client from one pass or probe to the next
(``MemberLayer.client_ttl``): a kubeconfig rewritten in place is read again within this time (a
changed Cluster object at once)."""

DEBOUNCE = 0.2
"""Seconds the loop waits after a file event for the rest of the same edit (an editor's save, a
``git pull`` of many files) before it runs a pass."""


@dataclass
class LoopOptions:
    """How the loop runs.

    Attributes:
        frequency: seconds between cluster health probes; None: the settings'
            ``clusterStatusUpdateFrequency`` (10 s), read again after each pass.
        resync: seconds between whole passes when nothing else triggered one (1,800).
        offline: no members: passes are offline (files and the clock trigger them).
        max_passes: stop after this many passes (None: until a signal); for tests and ``--once``-like use.
    """

    frequency: float | None = None
    resync: float = 1800.0
    offline: bool = False
    max_passes: int | None = None


@dataclass
class PassRecord:
    """One pass, as logged and counted: its number, what triggered it, its report (None when it
    failed), the error message (bad input, a bug), and its wall seconds."""

    number: int
    trigger: str
    report: RunReport | None
    error: str = ""
    seconds: float = 0.0
    kind: str = ""  # "" ok, "input" bad input, "internal" a bug
    ready: int | None = None  # Clusters Ready after the pass (online), for the metrics
    unsettled: bool = False  # what the pass applied has not settled (see ControlLoop.run)
    new_watches: bool = False  # the pass started watches: what members did before they listed is unseen


class Triggers:
    """Reasons to run a pass, fired from any thread; :meth:`wait` collects them."""

    def __init__(self):
        self._cond = threading.Condition()
        self._reasons: list[str] = []

    def fire(self, reason: str) -> None:
        """Ask for a pass (thread-safe)."""
        with self._cond:
            if reason not in self._reasons:
                self._reasons.append(reason)
            self._cond.notify_all()

    def wait(self, timeout: float) -> list[str]:
        """The reasons fired so far, waiting at most ``timeout`` seconds for one; [] on timeout.
        Waits in slices, so a signal handler of the main thread runs within 0.25 s."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self._cond:
            while not self._reasons:
                left = deadline - time.monotonic()
                if left <= 0:
                    return []
                self._cond.wait(min(left, 0.25))
            reasons, self._reasons = self._reasons, []
            return reasons


class FileTrigger:
    """Fires ``files: <path>`` when a file under the state directory changes (created, modified,
    moved, deleted), except karmactl's own (:data:`IGNORED_TOP`) and editors' temporary files.

    Uses ``watchdog``'s native observer (inotify on Linux) and falls back to its polling observer
    (every second) when the native one cannot start (no inotify, its watch limit reached).
    """

    def __init__(self, root: Path, triggers: Triggers):
        self.root = os.path.realpath(str(root))
        self.triggers = triggers
        self.observer = None
        self.polling = False

    def start(self) -> "FileTrigger":
        """Start watching: the top of the state directory alone, and each of its subdirectories
        but :data:`IGNORED_TOP` recursively (karmactl's own trees, some 40,000 files in a large
        state, are never watched); a subdirectory created later is added when it appears."""
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        owner = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):  # noqa: D401 - watchdog's callback
                if event.event_type in ("opened", "closed_no_write"):
                    return
                for path in (event.src_path, getattr(event, "dest_path", "") or ""):
                    rel = owner.relevant(path)
                    if rel:
                        owner.triggers.fire(f"files: {rel}")
                        if event.is_directory and os.sep not in rel and event.event_type in ("created", "moved"):
                            owner._watch_tree(rel)

        self._handler = Handler()
        self._trees: dict = {}
        try:
            observer = Observer()
            observer.daemon = True
            observer.schedule(self._handler, self.root, recursive=False)
            observer.start()
        except OSError:
            observer = PollingObserver(timeout=1.0)
            observer.daemon = True
            observer.schedule(self._handler, self.root, recursive=False)
            observer.start()
            self.polling = True
        self.observer = observer
        with os.scandir(self.root) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and entry.name not in IGNORED_TOP:
                    self._watch_tree(entry.name)
        return self

    def _watch_tree(self, name: str) -> None:
        """Watch the top-level directory ``name`` recursively (once)."""
        path = os.path.join(self.root, name)
        if name in self._trees or not os.path.isdir(path) or os.path.islink(path):
            return
        try:
            self._trees[name] = self.observer.schedule(self._handler, path, recursive=True)
        except OSError:  # gone again, or the watch limit: the next pass still reads every file
            pass

    def relevant(self, path) -> str:
        """The path relative to the state directory when its change matters, else ""."""
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not path:
            return ""
        rel = os.path.relpath(path, self.root)
        if rel == "." or rel.startswith(".."):
            return ""
        parts = rel.split(os.sep)
        if parts[0] in IGNORED_TOP:
            return ""
        name = parts[-1]
        if name.startswith(".karmactl-") or name.endswith((".swp", ".swx", "~")) or name.startswith(".#"):
            return ""
        return rel

    def stop(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer.join(timeout=2)


def summarize(reasons: list) -> str:
    """One short trigger text for a pass: ``files: a.yaml (+3)``, ``cluster status: member2``..."""
    files = [r[len("files: "):] for r in reasons if r.startswith("files: ")]
    changes = [r[len("member: "):] for r in reasons if r.startswith("member: ")]
    others = [r for r in reasons if not r.startswith(("files: ", "member: "))]
    if files:
        named = sorted(files, key=lambda f: (f.rsplit(os.sep, 1)[-1].startswith("."), -f.count(os.sep), f))[0]
        others.append(f"files: {named}" + (f" (+{len(files) - 1})" if len(files) > 1 else ""))
    if changes:
        others.append(f"member: {changes[0]}" + (f" (+{len(changes) - 1})" if len(changes) > 1 else ""))
    return ", ".join(others)


def seconds_until(when: str, epoch: float) -> float:
    """Seconds from ``epoch`` (Unix time, sub-second) to the RFC 3339 time ``when``. The clock's
    strings have whole seconds: measured from the exact time, a pass started once this many seconds
    have passed reads a clock at or after ``when``.

    Raises:
        ValueError: ``when`` does not parse.
    """
    return parse_time(when).timestamp() - epoch


def cluster_status_changed(members, snap, now: str) -> list:
    """Probe the members against ``snap`` (the last pass's computed snapshot) and return the names
    of the Clusters whose overlay (status, threshold record) the probe would change, plus those whose
    probe failed for another reason than before. Writes nothing."""
    report = RunReport()
    probed = members.probe(snap, now, report)
    changed = []
    for key, overlay in probed.overlays.items():
        if key[1] == "Cluster" and snap.overlays.get(key) is not overlay and snap.overlays.get(key) != overlay:
            changed.append(key[3])
    return sorted(changed)


class PassFailed(Exception):
    """A pass run in a forked process failed: ``str(exc)`` the message, ``kind`` ``input`` or
    ``internal`` (as :attr:`PassRecord.kind`)."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


@dataclass
class PassSummary:
    """What the loop keeps of one pass, made where the pass ran (:func:`summarize_pass`).

    Attributes:
        report: the pass's ``RunReport``, its ``after`` let go.
        full: the pass computed everything (not ``partial``/``unchanged``).
        view: :func:`loop_view` of its snapshot (None without one).
        targets: ``{owner: [(target, apiVersion)]}`` (:meth:`MemberTargets.collect`).
        owners: the owners of the bindings it computed.
        unsettled: those of them not converged (``reconcile.unsettled_bindings``).
        wakes: the wake times its controllers gave (RFC 3339).
        probes: the member layer's probe results of the pass (a forked pass hands them back).
    """

    report: RunReport
    full: bool = True
    view: Any = None
    targets: dict = field(default_factory=dict)
    owners: set = field(default_factory=set)
    unsettled: set = field(default_factory=set)
    wakes: list = field(default_factory=list)
    probes: dict | None = None


def summarize_pass(report: RunReport, now: str, members=None) -> PassSummary:
    """The :class:`PassSummary` of a pass at ``now`` that ended well; ``report.after`` is let go."""
    from karmactl.incremental.runindex import owner_of_binding
    from karmactl.reconcile import settings_of, unsettled_bindings

    after, report.after = report.after, None
    summary = PassSummary(report, full=not report.incremental.startswith(("partial", "unchanged")),
                          probes=getattr(members, "_probes", None))
    if after is None:
        return summary
    summary.view = loop_view(after)
    summary.targets = MemberTargets.collect(after.works)
    summary.owners = {owner_of_binding(k) for k in after.bindings}
    summary.unsettled = {owner_of_binding(k) for k in unsettled_bindings(after)}
    try:
        from karmactl.pipeline.registry import wake_times

        summary.wakes = [when for _key, when in wake_times(after, now, settings_of(after))]
    except Exception:  # noqa: BLE001 - a snapshot the controllers cannot read: the next pass says why
        pass
    return summary


FORKED_STOP_SECONDS = 10.0  # seconds a signalled pass process gets to finish or roll back before SIGKILL
# A forked pass that runs longer than FORKED_HANG_FACTOR times the longest one so far, and at least
# FORKED_HANG_MIN seconds, is taken as hung and killed (the loop goes on; the next pass is full).
# Forking a process whose other threads (member watches) hold a lock of a C library (OpenSSL) at
# that moment can leave the child waiting on it forever; a pass must never freeze the loop.
FORKED_HANG_MIN = 60.0
FORKED_HANG_FACTOR = 5.0


def _read_result(fd: int, pid: int, deadline: float | None = None) -> bytes:
    """Everything the pass process ``pid`` writes on the pipe ``fd`` until it exits (reaped here).

    The end of the pipe is not waited for once the process has exited: a process it forked in
    turn (a parsing worker) may hold the pipe's write end open longer. ``deadline`` (a
    ``time.monotonic`` value, or None) bounds the wait.

    Raises:
        PassFailed: the process was still running at ``deadline`` (it is killed).
    """
    import select
    import signal

    chunks = []
    exited = False
    while True:
        if deadline is not None and not exited and time.monotonic() > deadline:
            _end_child(pid, signal.SIGKILL, FORKED_STOP_SECONDS)
            raise PassFailed("the pass's process did not finish in time and was killed (a hung process: the "
                             "next pass runs again in full)", "internal")
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            continue
        if exited:
            break  # exited and nothing more to read
        exited = os.waitpid(pid, os.WNOHANG)[0] == pid
    if not exited:
        os.waitpid(pid, 0)
    return b"".join(chunks)


def _end_child(pid: int, sig: int, grace: float) -> None:
    """Send ``sig`` to the pass process ``pid`` and reap it; SIGKILL when it has not ended within
    ``grace`` seconds (a pass that cannot finish never keeps the loop from exiting)."""
    import signal

    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _run_forked_pass(loop: "ControlLoop", now: str, full: str, owners: set, write: int) -> None:
    """The forked process of :meth:`ControlLoop._forked`: run the pass, send ``(kind, value)``
    pickled on the pipe ``write`` (``("ok", PassSummary)``, ``("input"|"internal", message)``),
    and exit (143 after SIGTERM, 130 after SIGINT). Never returns."""
    import pickle

    from karmactl.reconcile import NotConvergedError
    from karmactl.store.fsio import Terminated, drop_inherited_lock
    from karmactl.store.state import InputError

    code = 70
    try:
        drop_inherited_lock()
        if hasattr(loop.members, "_clients"):  # the parent's connections stay the parent's
            loop.members._clients, loop.members._made = {}, {}
        try:
            with loop.locked():
                out = ("ok", summarize_pass(loop._online_pass(now, full, owners), now, loop.members))
            code = 0
        except (InputError, NotConvergedError) as exc:
            out, code = ("input", str(exc)), 0
        except Terminated:
            out, code = ("internal", "interrupted (SIGTERM)"), 143
        except KeyboardInterrupt:
            out, code = ("internal", "interrupted (SIGINT)"), 130
        except BaseException as exc:  # noqa: BLE001 - reported by the loop as a bug in the pass
            out, code = ("internal", f"{type(exc).__name__}: {exc}"), 0
        data = pickle.dumps(out)
        view = memoryview(data)
        while view:
            view = view[os.write(write, view):]
    finally:
        os._exit(code)


class ControlLoop:
    """The continuous control loop over one state directory (see the module docstring).

    Args:
        store: the state directory (``karmactl.store.state.StateStore``).
        members: the member layer (``karmactl.members.layer.MemberLayer``), or None with ``options.offline``.
        clock: ``f() -> RFC 3339``, read once per pass and per probe.
        options: :class:`LoopOptions`.
        locked: ``f() -> context manager`` holding the state lock for one pass.
        on_pass: ``f(PassRecord)`` after each pass (the CLI's log line, metrics).
        triggers: the trigger queue (a :class:`FileTrigger` fires into it).
    """

    def __init__(self, store, members, clock: Callable[[], str], options: LoopOptions, locked: Callable,
                 on_pass: Callable[[PassRecord], None], triggers: Triggers | None = None):
        self.store = store
        self.members = members
        self.clock = clock
        self.options = options
        self.locked = locked
        self.on_pass = on_pass
        self.triggers = triggers or Triggers()
        self.passes = 0
        self.last = None  # the loop's view (:func:`loop_view`): Clusters, their status, the settings
        self.settings = None
        self._observed_at = None  # the clock of the probe that triggered the next pass
        self.watches = None  # karmactl.members.watching.MemberWatches, online only
        self._watch_clients: dict = {}  # cluster name -> (Cluster object, MemberClient)
        self._longest_fork = 0.0  # seconds of the longest forked pass so far (0: none yet, no deadline)
        self.targets = MemberTargets()
        self.wakes: list = []  # the wake times (RFC 3339) of the last pass's index
        self.unsettled: set = set()  # owners of the bindings not converged after the last passes
        self._full = "the loop started"  # why the next online pass must be full ("" when it need not)
        if hasattr(members, "client_ttl"):
            members.client_ttl = CLIENT_TTL
        self.fork = True
        """Run full online passes in a forked process (where there is ``fork``)."""

    def frequency(self) -> float:
        """Seconds between probes: the flag, else the settings' ``clusterStatusUpdateFrequency``."""
        if self.options.frequency is not None:
            return self.options.frequency
        return getattr(self.settings, "status_update_frequency", 10.0) if self.settings is not None else 10.0

    def one_pass(self, trigger: str, reasons: list | None = None) -> PassRecord:
        """Run one pass under the lock; never raises for bad input or a member (the record says).

        ``reasons`` are the triggers (:class:`Triggers`): online, they choose the pass
        (:meth:`_full_reason`). The loop keeps of a pass only its :class:`PassSummary`; a full
        online pass runs in a forked process (:meth:`_forked`), so the loop's own memory stays
        that of its view, whatever the size of the state (a whole snapshot of 10,000 templates
        is about a gigabyte, which the allocator would not give back)."""
        from karmactl.reconcile import NotConvergedError
        from karmactl.store.state import InputError

        self.passes += 1
        started = time.monotonic()
        record = PassRecord(self.passes, trigger, None)
        try:
            # a pass a probe triggered runs at the probe's clock: a failure's first sighting is
            # recorded when it was seen, not after the pass's own probe timed out again
            probed_at, self._observed_at = self._observed_at, None
            now = probed_at or self.clock()
            if probed_at and hasattr(self.members, "reuse_probe_at"):
                self.members.reuse_probe_at = probed_at  # the probe just made at this clock stands
            if self.options.offline:
                with self.locked():
                    summary = summarize_pass(run(self.store, RunOptions(now=now, offline=True), self.members), now)
            else:
                summary = self._online(now, reasons if reasons is not None else [trigger])
            record.report = summary.report
            self._keep(summary, record, now)
        except (InputError, NotConvergedError, PassFailed) as exc:
            record.error, record.kind = str(exc), getattr(exc, "kind", "input")
            if record.kind == "internal":
                self._failed()
            else:
                self.last = None  # no probes until a pass goes through: they would only repeat the error
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - the loop outlives a bug in one pass; it is logged
            from karmactl.store.fsio import Terminated

            if isinstance(exc, Terminated):
                raise
            record.error, record.kind = f"{type(exc).__name__}: {exc}", "internal"
            self._failed()
        record.seconds = time.monotonic() - started
        self.on_pass(record)
        return_free_memory()
        return record

    def _failed(self) -> None:
        """After a bug in a pass: the next is full (an input error needs not: it wrote nothing, and
        the engine sees what the fix changes)."""
        self.last = None
        self._full = "the last pass failed"

    def _online(self, now: str, reasons: list) -> "PassSummary":
        """One online pass for ``reasons``: planned here under the lock; a full one (the reasons
        call for it, or the engine says so) runs in a forked process (:meth:`_forked`)."""
        from karmactl.reconcile import FullPassNeeded

        full, owners = self._full_reason(reasons)
        forking = self.fork and hasattr(os, "fork")
        if not (full and forking):
            try:
                with self.locked():
                    return summarize_pass(self._online_pass(now, full, owners, forking), now, self.members)
            except FullPassNeeded as exc:  # nothing was written; the lock is taken again by the process
                full = str(exc)
        return self._forked(now, full, owners)

    def _online_pass(self, now: str, full: str, owners: set, defer_full: bool = False) -> RunReport:
        """One online pass (``karmactl.reconcile.run_online_pass``): full with the reason ``full``,
        else what the incremental engine proves enough, ``owners`` due (``defer_full``: raise
        ``FullPassNeeded`` rather than run a full one)."""
        from karmactl.reconcile import run_online_pass

        targeted = self.members.targeted_members() if hasattr(self.members, "targeted_members") else None
        if targeted is None:
            full = full or "the member layer cannot reach single member objects"
        return run_online_pass(self.store, now, self.members, targeted, owners, full, defer_full)

    def _forked(self, now: str, full: str, owners: set) -> "PassSummary":
        """:meth:`_online_pass` in a forked process, which takes the lock, runs the pass and sends
        back its :class:`PassSummary` (pickled, through a pipe). SIGTERM or Ctrl-C meanwhile reach
        it too (it finishes or rolls back its pass as any pass does) and are raised here once it
        has ended.

        Raises:
            PassFailed: the pass failed (``kind`` ``input`` or ``internal``, as :class:`PassRecord`).
        """
        import pickle
        import signal

        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's lines run in the forked process
            os.close(read)
            _run_forked_pass(self, now, full, owners, write)
        os.close(write)
        longest = self._longest_fork
        deadline = time.monotonic() + max(FORKED_HANG_MIN, FORKED_HANG_FACTOR * longest) if longest else None
        started = time.monotonic()
        try:
            data = _read_result(read, pid, deadline)
            self._longest_fork = max(longest, time.monotonic() - started)
        except BaseException:  # a signal: the child has it too, or gets it now; it ends its pass
            _end_child(pid, signal.SIGTERM, FORKED_STOP_SECONDS)
            raise
        finally:
            os.close(read)
        if not data:
            raise PassFailed("the pass's process ended without a result (killed?)", "internal")
        kind, value = pickle.loads(data)
        if kind != "ok":
            raise PassFailed(value, kind)
        if value.probes is not None and hasattr(self.members, "_probes"):
            self.members._probes = value.probes  # what TargetedMembers reports of unreachable members
        return value

    def _full_reason(self, reasons: list) -> tuple:
        """``(why the pass must be full or "", owners of the bindings whose member copies changed)``.

        Full: the first pass, one after a failed pass, a resync, a Cluster's status changed
        (taints, evictions and rescheduling may reach any binding), a failed probe, a watch that
        listed again (events may have been missed). A settle pass observes again the bindings not
        converged yet."""
        full = self._full
        owners: set = set()
        for reason in reasons:
            if reason.startswith("files: ") or reason == "wake":
                continue  # the engine compares the files and the wake times with its index
            if reason == "settle":
                owners |= self.unsettled
                continue
            if reason.startswith("member: "):
                target = reason[len("member: "):]
                if target.endswith(" re-listed"):
                    full = full or f"the watch of {target[:-len(' re-listed')]} listed again"
                    continue
                owner = self.targets.owner(target)
                if owner is not None:
                    owners.add(owner)
                continue
            full = full or {"resync": "resync", "start": "the loop started"}.get(reason, reason)
        return full, owners

    def _keep(self, summary: "PassSummary", record: PassRecord, now: str) -> None:
        """Keep what the next passes and probes need of a pass that ended well."""
        from karmactl.reconcile import settings_of
        from karmactl.store.state import InputError

        self._full = ""
        if summary.view is not None and (summary.full or self.last is None):
            # (a partial pass's snapshot holds every Cluster and the settings too)
            self.last = summary.view
            try:
                self.settings = settings_of(self.last)
            except (ValueError, InputError):
                pass
        self.targets.apply(summary.targets, whole=summary.full, owners=summary.owners)
        if summary.full:
            self.unsettled = set()
        self.unsettled -= summary.owners
        self.unsettled |= summary.unsettled
        record.unsettled = summary.report.member_writes > 0 or bool(summary.unsettled)
        self.wakes = self._index_wakes(summary.wakes, now)
        if self.last is not None and not self.options.offline:
            record.ready = ready_clusters(self.last)
            record.new_watches = self._update_watches(summary.report)

    def _index_wakes(self, wakes: list, now: str) -> list:
        """The wake times the run index records (the last pass left it), else ``wakes`` (those
        the pass's controllers gave)."""
        from karmactl.incremental import engine, runindex

        index = runindex.read_index(self.store.root, engine.index_tag())
        if index is not None:
            return sorted(set(index.wakes.values()))
        return sorted(set(wakes))

    def run(self, first: str = "start") -> int:
        """Run passes until :attr:`LoopOptions.max_passes` (returns the number of passes) or a signal
        (KeyboardInterrupt / ``fsio.Terminated`` propagate).

        After a pass that wrote to the members, or whose bindings have not settled
        (:func:`karmactl.reconcile.converged`), a *settle* pass follows after :data:`SETTLE_FIRST`
        seconds, then twice as long each time up to :data:`SETTLE_MAX`: the members' answers to
        what was applied (workloads getting ready) reach the status files as Karmada's work status
        controller reports them on member events. Settle passes stop after the one :data:`SETTLE_MAX`
        seconds apart (about two minutes in all): what has not settled by then (a member down, a
        workload that never gets ready) waits for the probes, the clock or the resync.
        """
        inf = float("inf")
        reasons = [first]
        last_probe = last_pass = time.monotonic()
        settle = SETTLE_FIRST
        settle_at = inf
        while True:
            if reasons:
                rec = self.one_pass(summarize(reasons), reasons)
                last_pass = last_probe = time.monotonic()
                if self.options.max_passes is not None and self.passes >= self.options.max_passes:
                    return self.passes
                if self._unsettled(rec) and (settle < SETTLE_MAX or rec.trigger != "settle"):
                    settle_at = last_pass + settle
                    settle = min(settle * 2, SETTLE_MAX)
                else:  # settled, or still not after settle passes for some 2 minutes (a member down)
                    settle, settle_at = SETTLE_FIRST, inf
                reasons = []
            now_m = time.monotonic()
            wake = self._wake_in()
            wake_at = now_m + wake + 0.05 if wake is not None else inf
            probing = not self.options.offline and self.members is not None and self.last is not None
            probe_at = last_probe + self.frequency() if probing else inf
            threshold = self._threshold_in() if probing else None
            if threshold is not None:  # a Ready flip is due: probe at that moment
                probe_at = min(probe_at, now_m + threshold + 0.05)
            resync_at = last_pass + self.options.resync
            fired = self.triggers.wait(min(wake_at, probe_at, resync_at, settle_at) - now_m)
            if fired:
                time.sleep(DEBOUNCE)
                reasons = fired + [r for r in self.triggers.wait(0) if r not in fired]
                settle = SETTLE_FIRST
                continue
            now_m = time.monotonic()
            if now_m >= resync_at:
                reasons = ["resync"]
            elif now_m >= wake_at:
                reasons = ["wake"]
            elif now_m >= settle_at:
                reasons = ["settle"]
            elif now_m >= probe_at:
                last_probe = now_m
                observed_at = self.clock()
                changed = self._probe(observed_at)
                if changed:
                    reasons = ["cluster status: " + ",".join(changed)]
                    self._observed_at = observed_at

    def _update_watches(self, report: RunReport) -> bool:
        """Watch every (member, kind) the Works dispatch (``karmactl/members/watching.py``): a change
        on a member fires ``member: <cluster> <kind> <ns>/<name>``. Members that failed this pass are
        left out until a pass reaches them again; without a member layer that can build watch
        clients, nothing is watched (the settle passes and the resync stand in). Whether a watch
        was started (it sees only what happens after its LIST)."""
        if self.options.offline or self.members is None or not hasattr(self.members, "watch_client"):
            return False
        from karmactl.members.watching import MemberWatches

        if self.watches is None:
            self.watches = MemberWatches(self.triggers.fire)
        snap = self.last
        clusters = {k[3]: snap.user[k] for k in snap.keys_of_kind("cluster.karmada.io", "Cluster")}
        kinds = self.targets.kinds(clusters)
        wanted: dict = {}
        for cluster, pairs in sorted(kinds.items()):
            client = self._watch_client(cluster, clusters[cluster], len(pairs) + 1, report)
            if client is not None:
                self._want_watches(cluster, client, pairs, report, wanted)
        watched = set(self.watches.watches)
        self.watches.update(wanted)
        for cluster in set(self._watch_clients) - set(kinds):
            self._watch_clients.pop(cluster)[1].close()
        return bool(set(self.watches.watches) - watched)

    def _watch_client(self, cluster: str, cluster_obj: dict, streams: int, report: RunReport) -> Any:
        """The watch client of ``cluster`` (one for ``streams`` connections), kept while its Cluster
        object is unchanged (closed when it changed); a new one built unless the member failed this
        pass. None when there is none: its changes wait for the resync."""
        held = self._watch_clients.get(cluster)
        if held is not None and held[0] is not cluster_obj and held[0] != cluster_obj:
            held[1].close()
            held = None
        if held is None:
            if cluster in report.member_errors:
                return None
            try:
                held = (cluster_obj, self.members.watch_client(cluster_obj, streams))
            except Exception:  # noqa: BLE001 - no client: this member's changes wait for the resync
                return None
            self._watch_clients[cluster] = held
        return held[1]

    def _want_watches(self, cluster: str, client: Any, pairs: set, report: RunReport, wanted: dict) -> None:
        """Add to ``wanted`` ``{(cluster, apiVersion, kind): (client, path or None)}`` for each of
        ``pairs`` on ``cluster``: a live watch keeps its path; a new one (unless the member failed
        this pass) gets the path discovery gives (None when discovery failed: retried next pass)."""
        for api_version, kind in sorted(pairs):
            key = (cluster, api_version, kind)
            if key in self.watches.watches and self.watches.watches[key].is_alive():
                wanted[key] = (client, self.watches.watches[key].path)
                continue
            if cluster in report.member_errors:
                continue
            try:
                resource = client.resource_for(api_version, kind)
            except Exception:  # noqa: BLE001 - discovery failed: try again after the next pass
                resource = None
            wanted[key] = (client, resource.path() if resource is not None else None)

    def watching(self) -> bool:
        """Whether every kind the Works dispatch is being watched on its member."""
        return bool(self.watches and self.watches.watches) and all(
            w.is_alive() for w in self.watches.watches.values())

    def close(self) -> None:
        """Stop the watches and close their clients."""
        if self.watches is not None:
            self.watches.stop()
        for _cluster, client in self._watch_clients.values():
            client.close()
        self._watch_clients.clear()

    def _unsettled(self, rec: PassRecord) -> bool:
        report = rec.report
        if report is None or self.options.offline:
            return False
        if self.watching() and not report.member_errors and not rec.new_watches:
            return False  # the members' answers arrive as watch events
        return rec.unsettled

    def _wake_in(self) -> float | None:
        """Seconds until the earliest wake time after the clock (:func:`next_wake`'s rule)."""
        if not self.wakes:
            return None
        now, epoch = self.clock(), time.time()
        for when in self.wakes:
            try:
                if seconds_between(now, when) > 0:
                    return max(0.0, seconds_until(when, epoch))
            except ValueError:
                continue
        return None

    def _threshold_in(self) -> float | None:
        """Seconds until the earliest pending Ready threshold of a Cluster expires (a probe is due
        then), or None (:func:`karmactl.controllers.cluster_status.threshold_due`)."""
        from karmactl.controllers.cluster_status import threshold_due

        if self.last is None or self.settings is None or self.options.offline:
            return None
        epoch = time.time()
        best = None
        for key in self.last.keys_of_kind("cluster.karmada.io", "Cluster"):
            due = threshold_due(self.last.overlays.get(key), self.settings.success_threshold,
                                self.settings.failure_threshold)
            if due is not None:
                try:
                    delta = max(0.0, seconds_until(due, epoch))
                except ValueError:
                    continue
                best = delta if best is None else min(best, delta)
        return best

    def _probe(self, now: str) -> list:
        try:
            return cluster_status_changed(self.members, self.last, now)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - a probe that cannot run: run a pass, which reports it
            return [f"probe failed ({type(exc).__name__})"]


class MemberTargets:
    """The member objects the Works of the last passes target, and the binding each belongs to:
    what a watch event (``member: <cluster> <kind> <namespace>/<name>``) touches.

    ``{"<cluster> <kind> <ref>": (owner, apiVersion)}`` with ``ref`` ``namespace/name`` (``name``
    cluster-scoped) as ``karmactl/members/watching.py`` names it, ``owner`` the binding
    (``runindex.owner_of_binding``; ``""``: a Work no single binding owns, a namespace the namespace
    sync propagates). Some 100 bytes per Work: 3 MB at 10,000 templates x 3 members."""

    def __init__(self):
        self.targets: dict = {}
        self.of_owner: dict = {}  # owner -> [target]

    def owner(self, target: str) -> str | None:
        """The owner of the member object ``target``, or None when no Work targets it."""
        hit = self.targets.get(target)
        return hit[0] if hit is not None else None

    def update(self, works: dict, whole: bool, owners=()) -> None:
        """Record the targets of ``works`` (``{Work key: Work}``); ``whole``: they are every Work (a
        full pass), else the Works of the bindings a partial pass computed, which replace theirs
        (``owners``: those bindings, whose targets go even when no Work of theirs is left)."""
        self.apply(self.collect(works), whole, owners)

    @staticmethod
    def collect(works: dict) -> dict:
        """``{owner: [(target, apiVersion)]}`` of ``works`` (``{Work key: Work}``)."""
        from karmactl.api.names import cluster_of_execution_namespace
        from karmactl.controllers.helper.work import work_binding_key
        from karmactl.incremental.runindex import SHARED, owner_of_binding

        found: dict = {}
        for wkey, work in works.items():
            cluster = cluster_of_execution_namespace(wkey[2])
            if cluster is None:
                continue
            bkey = work_binding_key(work)
            owner = owner_of_binding(bkey) if bkey is not None else SHARED
            for m in ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []:
                if isinstance(m, dict) and m.get("apiVersion") and m.get("kind"):
                    md = m.get("metadata") or {}
                    ref = f"{md['namespace']}/{md.get('name')}" if md.get("namespace") else str(md.get("name"))
                    found.setdefault(owner, []).append((f"{cluster} {m['kind']} {ref}", m["apiVersion"]))
        return found

    def apply(self, found: dict, whole: bool, owners=()) -> None:
        """Record ``found`` (:meth:`collect`), as :meth:`update` says."""
        found = dict(found)
        if whole:
            self.targets, self.of_owner = {}, {}
        for owner in owners:
            found.setdefault(owner, [])
        for owner, hits in found.items():
            for target in self.of_owner.pop(owner, ()):
                if self.targets.get(target, ("",))[0] == owner:
                    self.targets.pop(target)
            if hits:
                self.of_owner[owner] = [t for t, _v in hits]
            self.targets.update((t, (owner, v)) for t, v in hits)

    def kinds(self, clusters) -> dict:
        """``{cluster: {(apiVersion, kind)}}`` of the targets on the Clusters named in ``clusters``."""
        out: dict = {}
        for target, (_owner, api_version) in self.targets.items():
            cluster, kind, _ref = target.split(" ", 2)
            if cluster in clusters:
                out.setdefault(cluster, set()).add((api_version, kind))
        return out


def loop_view(snap):
    """What the loop keeps of a full pass's snapshot ``snap`` (``karmactl.api.snapshot.Snapshot``):
    the Clusters with their sources and status overlays and the settings ConfigMap, all its probes
    (:func:`cluster_status_changed`) and thresholds read."""
    from karmactl.api.snapshot import Settings, Snapshot

    keys = list(snap.keys_of_kind("cluster.karmada.io", "Cluster"))
    if Settings.SETTINGS_KEY in snap.user:
        keys.append(Settings.SETTINGS_KEY)
    view = Snapshot(snap.registry, {k: snap.user[k] for k in keys},
                    {k: snap.sources[k] for k in keys if k in snap.sources},
                    {k: snap.overlays[k] for k in keys if k in snap.overlays})
    return view


@dataclass
class Metrics:
    """The loop's Prometheus metrics (``prometheus_client``), served with :func:`serve_metrics`.

    karmactl_passes_total{trigger,result}, karmactl_pass_duration_seconds (histogram),
    karmactl_member_clusters_ready (gauge), karmactl_member_errors (gauge: members failing in the
    last pass), karmactl_files_changed_total, karmactl_member_writes_total,
    karmactl_last_pass_timestamp_seconds, karmactl_last_error_timestamp_seconds.
    """

    registry: object = None
    counters: dict = field(default_factory=dict)
    healthy: bool = True
    last_error: str = ""

    def __post_init__(self):
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        r = self.registry
        self.counters = {
            "passes": Counter("karmactl_passes", "Reconcile passes of the control loop", ["trigger", "result"], registry=r),
            "duration": Histogram("karmactl_pass_duration_seconds", "Seconds one pass took", registry=r,
                                  buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)),
            "ready": Gauge("karmactl_member_clusters_ready", "Member clusters whose Ready condition is True", registry=r),
            "member_errors": Gauge("karmactl_member_errors", "Member clusters that failed in the last pass", registry=r),
            "files": Counter("karmactl_files_changed", "Files of the state directory written by passes", registry=r),
            "writes": Counter("karmactl_member_writes", "Writes sent to member clusters", registry=r),
            "evictions": Counter("karmactl_evictions", "Eviction events of passes (taint manager, application "
                                                       "failover, graceful eviction)", registry=r),
            "last_pass": Gauge("karmactl_last_pass_timestamp_seconds", "Unix time the last pass ended", registry=r),
            "last_error": Gauge("karmactl_last_error_timestamp_seconds", "Unix time of the last failed pass", registry=r),
        }

    def record(self, rec: PassRecord) -> None:
        """Count one pass."""
        c = self.counters
        kind = rec.trigger.split(":", 1)[0].split(",", 1)[0].strip() or "start"
        c["passes"].labels(trigger=kind, result=rec.kind or "ok").inc()
        c["duration"].observe(rec.seconds)
        c["last_pass"].set(time.time())
        if rec.error:
            c["last_error"].set(time.time())
            self.last_error = rec.error
            self.healthy = rec.kind != "internal"
        else:
            self.healthy, self.last_error = True, ""
        if rec.report is not None:
            c["files"].inc(len(rec.report.changes))
            c["writes"].inc(rec.report.member_writes)
            c["member_errors"].set(len(rec.report.member_errors))
            c["evictions"].inc(sum(1 for e in rec.report.events if "evict" in e.lower()))
            if rec.ready is not None:
                c["ready"].set(rec.ready)
            elif rec.report.after is not None:
                c["ready"].set(ready_clusters(rec.report.after))


def ready_clusters(snap) -> int:
    """How many Clusters of ``snap`` have Ready True (the overlay's status, else the file's)."""
    n = 0
    for key in snap.keys_of_kind("cluster.karmada.io", "Cluster"):
        obj = snap.overlays.get(key) or snap.user.get(key) or {}
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "Ready" and cond.get("status") == "True":
                n += 1
    return n


def serve_metrics(metrics: Metrics, address: str):
    """Serve ``/metrics`` (Prometheus text format) and ``/healthz`` (200 ``ok``, or 503 and the
    last internal error) on ``address`` (``HOST:PORT``; ``:PORT`` means 127.0.0.1) in a daemon
    thread; returns the server (``.server_port``, ``.shutdown()``).

    Raises:
        ValueError: ``address`` is not ``HOST:PORT``.
        OSError: the port cannot be bound.
    """
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from prometheus_client import make_wsgi_app

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f'--metrics-addr "{address}": expected HOST:PORT, e.g. 127.0.0.1:9464')
    prom = make_wsgi_app(metrics.registry)

    def app(environ, start_response):
        if environ.get("PATH_INFO") in ("/healthz", "/livez", "/readyz"):
            ok = metrics.healthy
            body = b"ok\n" if ok else f"last pass failed: {metrics.last_error}\n".encode()
            start_response("200 OK" if ok else "503 Service Unavailable", [("Content-Type", "text/plain")])
            return [body]
        return prom(environ, start_response)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):  # no access log on stderr: the pass lines are the log
            pass

    server = make_server(host or "127.0.0.1", int(port), app, handler_class=Quiet)
    threading.Thread(target=server.serve_forever, name="karmactl-metrics", daemon=True).start()
    return server


__all__ = ["ControlLoop", "FileTrigger", "LoopOptions", "Metrics", "PassRecord", "Triggers",
           "MemberTargets", "PassFailed", "PassSummary", "cluster_status_changed", "loop_view", "ready_clusters",
           "serve_metrics", "summarize_pass"]
