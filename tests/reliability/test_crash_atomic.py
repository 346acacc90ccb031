"""Crash-atomic runs and edits, the lock dying with its owner, Ctrl-C and SIGTERM: real
``python -m karmactl`` processes killed at chosen points."""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.reconcile_offline import generate
from scripts import kill_loop

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-01-01T00:00:00Z"


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT))


def karmactl_with(state: Path, hook: str, *args: str, **kw) -> subprocess.Popen:
    """``karmactl --state state args`` in a new session, after running ``hook`` (Python) in it."""
    code = (f"import os, sys, time, signal\n{hook}\nfrom karmactl.cli.main import run\n"
            f"run({['--state', str(state), *args]!r})\n")
    return subprocess.Popen([sys.executable, "-c", code], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)


def _run(state: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "karmactl", "--state", str(state), *args], env=_env(),
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def fleet(tmp_path):
    state = tmp_path / "state"
    generate(state, 40, 4)
    kill_loop.flip(state, 0)
    assert _run(state, "reconcile", "--offline", "--now", NOW).returncode == 0
    old = kill_loop.tree_digest(state)
    kill_loop.flip(state, 1)
    return state, old


def _wait_for(path: Path, proc: subprocess.Popen) -> None:
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)


def test_kill_after_the_commit_point_is_finished_by_the_next_command(fleet):
    state, old = fleet
    # the process dies right after its journal is written, before any rename
    proc = karmactl_with(state, "import karmactl.store.fsio as f\nf._CRASH_POINT = lambda where: os._exit(9)",
                         "reconcile", "--offline", "--now", NOW)
    proc.communicate(timeout=300)
    assert proc.returncode == 9
    assert (state / ".karmactl" / "journal.json").exists()
    assert kill_loop.tree_digest(state) == old  # nothing renamed yet
    assert _run(state, "get", "clusters", "-o", "name").returncode == 0  # a reader finishes the batch
    assert not (state / ".karmactl" / "journal.json").exists()
    finished = kill_loop.tree_digest(state)
    assert finished != old
    assert _run(state, "plan").returncode == 0  # as a clean run leaves it: nothing left to change


def test_kill_before_the_commit_point_leaves_the_old_tree(fleet):
    state, old = fleet
    hook = ("import karmactl.store.fsio as f\n_real = f._commit_journal\n"
            "def _die(*a, **k): os._exit(9)\nf._commit_journal = _die")
    proc = karmactl_with(state, hook, "reconcile", "--offline", "--now", NOW)
    proc.communicate(timeout=300)
    assert proc.returncode == 9
    assert list((state / ".karmactl").glob("staging.*"))  # staged, never committed
    assert _run(state, "get", "clusters").returncode == 0
    assert kill_loop.tree_digest(state) == old
    r = _run(state, "reconcile", "--offline", "--now", NOW)  # the next writer drops the staging
    assert r.returncode == 0, r.stderr
    assert not list((state / ".karmactl").glob("staging.*"))


def test_apply_of_many_objects_lands_whole_or_not_at_all(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    docs = "---\n".join(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}, namespace: default}}\n"
                        for i in range(30))
    (tmp_path / "in.yaml").write_text(docs)
    proc = karmactl_with(state, "import karmactl.store.fsio as f\nf._CRASH_POINT = lambda where: os._exit(9)",
                         "apply", "-f", str(tmp_path / "in.yaml"))
    proc.communicate(timeout=120)
    assert proc.returncode == 9
    assert not list(state.rglob("*.yaml"))  # nothing visible: the batch is in the journal
    out = _run(state, "get", "cm", "-o", "name")
    assert out.returncode == 0 and len(out.stdout.split()) == 30, out


def test_lock_holder_named_timeout_waits_and_dead_holder_is_taken_over(fleet):
    state, _old = fleet
    ready = state.parent / "holding"
    hold = (f"import time\nimport karmactl.store.fsio as f\n"
            f"with f.state_lock(__import__('pathlib').Path({str(state)!r})):\n"
            f"    open({str(ready)!r}, 'w').close()\n    time.sleep(600)\n")
    holder = subprocess.Popen([sys.executable, "-c", hold], env=_env(), start_new_session=True)
    try:
        while not ready.exists():
            time.sleep(0.02)
        r = _run(state, "--lock-timeout", "0.3s", "reconcile", "--offline", "--now", NOW)
        assert r.returncode == 5, r.stderr
        assert f"pid {holder.pid}" in r.stderr, r.stderr
        # a waiting command gets the lock once the holder dies (SIGKILL: no clean-up at all)
        waiter = subprocess.Popen([sys.executable, "-m", "karmactl", "--state", str(state), "--lock-timeout", "5m",
                                   "reconcile", "--offline", "--now", NOW], env=_env(), stderr=subprocess.PIPE,
                                  text=True)
        holder.kill()
        holder.wait()
        _out, err = waiter.communicate(timeout=300)
        assert waiter.returncode == 0, err
    finally:
        holder.kill()


def test_workers_die_with_their_parent_and_free_the_lock(tmp_path):
    state = tmp_path / "state"
    generate(state, 30, 3)
    ready = tmp_path / "worker-ready"
    # large-directory paths (parse workers, compute shards) on a small directory; a shard worker
    # signals when it computes, then the parent is SIGKILLed
    hook = (f"import karmactl.incremental.sharded as r, karmactl.store.parsing as s\n"
            f"r.SHARD_MIN_OBJECTS = 0\ns.PARALLEL_PARSE_MIN_FILES = 1\n_real = r._compute_shard\n"
            f"def _slow(i):\n    if i:\n        open({str(ready)!r}, 'w').close(); time.sleep(600)\n"
            f"    return _real(i)\nr._compute_shard = _slow\n")
    proc = karmactl_with(state, hook, "reconcile", "--offline", "--now", NOW)
    _wait_for(ready, proc)
    os.kill(proc.pid, signal.SIGKILL)
    _out, _err = proc.communicate(timeout=60)  # returns only once no process holds its pipes
    deadline = time.monotonic() + 60
    while True:  # the kernel delivers the parent-death signal asynchronously
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "a worker outlived its parent"
        time.sleep(0.05)
    with open(state / ".karmactl" / "lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # free


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_at_a_safe_point_with_130_or_143(fleet, sig, code):
    state, old = fleet
    ready = state.parent / "computing"
    hook = (f"import karmactl.reconcile as r\n_real = r.compute\n"
            f"def _slow(*a, **k):\n    open({str(ready)!r}, 'w').close(); time.sleep(600)\n"
            f"r.compute = _slow\n")
    proc = karmactl_with(state, hook, "reconcile", "--offline", "--now", NOW)
    _wait_for(ready, proc)
    os.kill(proc.pid, sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "interrupted" in err and "Traceback" not in err, err
    assert kill_loop.tree_digest(state) == old
    assert _run(state, "reconcile", "--offline", "--now", NOW).returncode == 0  # lock free


def test_interrupt_during_the_commit_waits_for_its_end(fleet):
    state, old = fleet
    # SIGINT arrives while the journal is carried out: the batch completes, then the command stops
    hook = ("import karmactl.store.fsio as f\n"
            "f._CRASH_POINT = lambda where: os.kill(os.getpid(), signal.SIGINT)")
    proc = karmactl_with(state, hook, "reconcile", "--offline", "--now", NOW)
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "interrupted" in err, err
    assert not (state / ".karmactl" / "journal.json").exists()
    assert kill_loop.tree_digest(state) != old
    assert _run(state, "plan").returncode == 0  # complete: nothing left to change


def test_small_kill_loop_never_leaves_a_mixed_tree(tmp_path):
    stats = kill_loop.main(["--deployments", "60", "--clusters", "4", "--kills", "4", "--signal", "mixed",
                            "--workdir", str(tmp_path / "loop")])
    assert stats["kills"] == 4
    for k in ("mixed", "orphans", "locked_after", "exit70", "outside_writes", "interrupt_exit_wrong"):
        assert stats[k] == 0, stats
