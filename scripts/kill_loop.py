"""Kill loop: SIGKILL (or SIGINT/SIGTERM) `karmactl reconcile --offline` at random moments of a
run that rewrites every computed file, and check after each kill that

* the next command sees ``computed/`` exactly as before the run or exactly as after it (never mixed);
* no process of the killed command survives and the lock is free (the next command is not refused);
* nothing was written outside the state directory; no exit code 70;
* an interrupted run (SIGINT/SIGTERM) says "interrupted" and exits 130/143.

Each kill is classified by what the killed command left in ``.karmactl/`` (``phases``): ``commit``
(its journal: killed between the commit point and the end of the commit, which the next command
finishes), ``staging`` (staged files without a journal: killed before the commit point, which the
next command rolls back), ``finished`` (the command had already exited), ``early`` (nothing staged
yet: loading or computing). The run's duration, against which kill times are drawn, is measured
again every ``--remeasure`` trials (with and without the parse cache, which every other trial
keeps), so kills keep covering the whole run on a machine whose load
changes.

Usage: ``python scripts/kill_loop.py --deployments 3000 --clusters 20 --kills 300`` (CI runs a few
kills on a small directory through ``tests/reliability/test_crash_atomic.py``). Prints one summary
line of JSON.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
from benchmarks.reconcile_offline import generate  # noqa: E402

NOW_A, NOW_B = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"


def tree_digest(root: Path) -> str:
    """Digest of every file under ``root/computed`` (paths and contents)."""
    h = hashlib.sha256()
    base = root / "computed"
    for dirpath, dirs, files in sorted(os.walk(base)):
        dirs.sort()
        for f in sorted(files):
            p = Path(dirpath) / f
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def karmactl(state: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(HERE))
    return subprocess.run([sys.executable, "-m", "karmactl", "--state", str(state), *args], env=env,
                          capture_output=True, text=True, **kw)


def flip(state: Path, variant: int) -> None:
    """Make the next run rewrite every binding and Work: every Deployment's replicas change."""
    for f in (state / "deployments").glob("*.yaml"):
        text = f.read_text()
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if line.startswith("  replicas: "):
                lines[i] = f"  replicas: {3 + variant}"
        f.write_text("\n".join(lines))


def session_alive(sid: int, grace: float = 10.0) -> bool:
    """Whether a live (not zombie) process of session ``sid`` remains after ``grace`` seconds (a
    killed worker is a zombie until init reaps it)."""
    deadline = time.monotonic() + grace
    while True:
        alive = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":  # fields after "pid (comm)": state ppid pgrp session
                alive = True
                break
        if not alive:
            return False
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)


def outside_snapshot(parent: Path) -> set:
    return {str(p) for p in parent.rglob("*") if "state" not in p.relative_to(parent).parts[:1]}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--deployments", type=int, default=3000)
    ap.add_argument("--clusters", type=int, default=20)
    ap.add_argument("--kills", type=int, default=300)
    ap.add_argument("--signal", choices=["KILL", "INT", "TERM", "mixed"], default="KILL")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--remeasure", type=int, default=20, help="Time an uninterrupted run every N trials.")
    ap.add_argument("--progress", action="store_true", help="Print the counts after every trial (stderr).")
    a = ap.parse_args(argv)
    rnd = random.Random(a.seed)
    work = Path(a.workdir or tempfile.mkdtemp(prefix="karmactl-kill-"))
    state = work / "state"
    shutil.rmtree(state, ignore_errors=True)
    generate(state, a.deployments, a.clusters)
    # the two trees a run may leave: A (replicas 3) and B (replicas 4), each computed cleanly
    flip(state, 0)
    assert karmactl(state, "reconcile", "--offline", "--now", NOW_A).returncode == 0
    tree_a = tree_digest(state)
    saved_a = work / "computed-a"
    shutil.rmtree(saved_a, ignore_errors=True)
    shutil.copytree(state / "computed", saved_a)
    flip(state, 1)

    def reset(computed: bool, keep_cache: bool) -> None:
        """Back to tree A (as a clean run left it) with inputs at B; the runtime directory emptied,
        but for the parse cache when ``keep_cache``."""
        if computed:
            shutil.rmtree(state / "computed")
            shutil.copytree(saved_a, state / "computed")
        runtime_dir = state / ".karmactl"
        if runtime_dir.is_dir():
            for entry in os.listdir(runtime_dir):
                if not keep_cache or entry != "cache":
                    path = runtime_dir / entry
                    shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()

    def measure() -> list:
        """Seconds of one uninterrupted A -> B run without the parse cache, then one with it."""
        times = []
        for keep_cache in (False, True):
            reset(True, keep_cache)
            t0 = time.monotonic()
            assert karmactl(state, "reconcile", "--offline", "--now", NOW_B).returncode == 0
            times.append(time.monotonic() - t0)
        return times

    run_times = measure()
    tree_b = tree_digest(state)
    assert tree_a != tree_b
    outside_before = outside_snapshot(work)
    stats = {"kills": 0, "mixed": 0, "old": 0, "new": 0, "orphans": 0, "locked_after": 0, "exit70": 0,
             "outside_writes": 0, "interrupt_exit_wrong": 0, "run_seconds": [round(t, 2) for t in run_times],
             "phases": {"early": 0, "staging": 0, "commit": 0, "finished": 0}}
    env = dict(os.environ, PYTHONPATH=str(HERE))
    last_digest = tree_b
    for trial in range(a.kills):
        if trial and a.remeasure and trial % a.remeasure == 0:
            run_times = measure()
            stats["run_seconds"] = [round(t, 2) for t in run_times]
            last_digest = tree_b
        # every other trial keeps the parse cache, so kills also land in computing and committing
        # of a run that parses nothing, and not only in parsing
        keep_cache = trial % 2 == 1
        reset(last_digest != tree_a, keep_cache)
        sig = {"KILL": signal.SIGKILL, "INT": signal.SIGINT, "TERM": signal.SIGTERM}.get(
            a.signal, rnd.choice([signal.SIGKILL, signal.SIGKILL, signal.SIGINT, signal.SIGTERM]))
        proc = subprocess.Popen([sys.executable, "-m", "karmactl", "--state", str(state), "reconcile", "--offline",
                                 "--now", NOW_B], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        time.sleep(rnd.uniform(0.0, run_times[keep_cache] * 1.1))
        try:
            os.kill(proc.pid, sig)  # the command only, as a kill -9 of its pid would; not its group
        except ProcessLookupError:
            pass
        try:
            _out, err = proc.communicate(timeout=120)  # returns only when every holder of the pipes is gone
        except subprocess.TimeoutExpired:
            stats["orphans"] += 1
            os.killpg(proc.pid, signal.SIGKILL)
            _out, err = proc.communicate()
        stats["kills"] += 1
        if session_alive(proc.pid):
            stats["orphans"] += 1  # a process of the killed command's session survived
            os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.returncode
        left = os.listdir((state / ".karmactl")) if (state / ".karmactl").is_dir() else []
        phase = ("finished" if rc == 0 else "commit" if "journal.json" in left
                 else "staging" if any(n.startswith("staging.") for n in left) else "early")
        stats["phases"][phase] += 1
        if rc == 70:
            stats["exit70"] += 1
        if sig != signal.SIGKILL and rc not in (0, -sig) and (
                rc != 128 + sig or "interrupted" not in err.decode(errors="replace")):
            stats["interrupt_exit_wrong"] += 1
        probe = karmactl(state, "get", "clusters", "-o", "name")  # any command recovers first
        if probe.returncode == 5:
            stats["locked_after"] += 1
        if probe.returncode == 70:
            stats["exit70"] += 1
        digest = last_digest = tree_digest(state)
        if digest == tree_a:
            stats["old"] += 1
        elif digest == tree_b:
            stats["new"] += 1
        else:
            stats["mixed"] += 1
        if outside_snapshot(work) != outside_before:
            stats["outside_writes"] += 1
            outside_before = outside_snapshot(work)
        if a.progress:
            print(json.dumps(dict(stats, trial=trial + 1)), file=sys.stderr, flush=True)
    print(json.dumps(stats))
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return stats


if __name__ == "__main__":
    s = main()
    sys.exit(1 if s["mixed"] or s["orphans"] or s["locked_after"] or s["exit70"] or s["outside_writes"]
             or s["interrupt_exit_wrong"] else 0)
