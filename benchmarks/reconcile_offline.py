"""Benchmark: N Deployments + N PropagationPolicies over 50 Clusters, `reconcile --offline`.

Generates a state directory, then times (as whole processes, median of --runs):
  floor   the parse floor: read every user file and load it with PyYAML's C loader
          (``yaml.load_all(text, Loader=yaml.CSafeLoader)``), nothing else
  read    karmactl's own reading of the same files (``StateStore.read_documents``: its YAML
          loader with the input limits and checks)
  cold    `karmactl reconcile --offline` on a fresh copy (no computed files yet)
  noop    a second run with nothing changed (must write nothing)
  warm    a warm full run: on each reconciled copy, one Cluster's labels changed (a shared object:
          the run index plans a full run over the computed files of the last run)
and prints the ratios of cold and noop to the floor, and the peak memory of the cold and warm runs
across all their processes (the karmactl process and the workers it forks), measured on a second
set of copies: sampling the memory of a run slows it down (by 10-15 % at N=10,000), so the times
come from runs that are not sampled.

Peak memory: a sampler thread reads, every ``--sample`` seconds, ``/proc/<pid>/smaps_rollup`` of
the karmactl process and of each of its descendants (found by parent pid in ``/proc/*/stat``) and
sums them; the largest sum over a run is reported as PSS (proportional set size: a page shared by
forked processes is split between them, so the sum counts it once; the memory target is about this
figure) and as RSS (shared pages counted in every process: an upper bound). A peak shorter than the
interval can be missed. The largest single-process RSS (``getrusage`` maxrss of the children) is
printed too.

Usage: python benchmarks/reconcile_offline.py --n 1000 [--clusters 50] [--runs 3] [--workdir benchmarks/out] [--settle 310]

The copies are made fresh per run, before any timing. Copies left by an earlier invocation are
deleted first, and then the script waits ``--settle`` seconds: ext4 without a journal (these
machines) skips, when it allocates an inode, every free inode deleted less than about five minutes
ago whose inode-table block is dirty, so creating 40,000 files within five minutes of deleting a few
hundred thousand costs up to several times more kernel time. That cost belongs to the benchmark's
own cleanup, not to karmactl.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

NOW = "2026-01-01T00:00:00Z"
CHECKOUT = Path(__file__).resolve().parent.parent
"""The checkout measured: every timed process runs in it with it first on ``sys.path`` (``-m`` and
``-c`` put the working directory first, before ``PYTHONPATH`` and the installed package)."""


def process_env(workdir: Path) -> dict:
    """The environment of every timed karmactl process: this checkout first on the path, and its
    bytecode compiled once (:func:`compile_checkout`) and cached under ``workdir``
    (``PYTHONPYCACHEPREFIX``), even where ``PYTHONDONTWRITEBYTECODE`` is set, as an installed
    package has it: otherwise every run would compile each module it imports again."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(CHECKOUT), PYTHONPYCACHEPREFIX=str(Path(workdir).resolve() / "pycache"))
    return env


def compile_checkout(env: dict) -> None:
    """Compile the checkout's modules into ``env``'s bytecode cache before anything is timed."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(CHECKOUT / "karmactl")], env=env, check=True,
                   stdout=subprocess.DEVNULL)


def generate(root: Path, n: int, clusters: int = 50) -> None:
    """Write the input state: clusters/, deployments/, policies/ (one object per file)."""
    (root / "clusters").mkdir(parents=True, exist_ok=True)
    for i in range(1, clusters + 1):
        (root / "clusters" / f"member{i}.yaml").write_text(f"""apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: member{i}
  labels: {{region: r{i % 5}}}
spec:
  syncMode: Push
  apiEndpoint: https://127.0.0.1:{7000 + i}
  region: r{i % 5}
status:
  conditions:
  - {{type: Ready, status: "True", reason: ClusterReady, message: ok, lastTransitionTime: "2025-12-31T00:00:00Z"}}
  apiEnablements:
  - groupVersion: apps/v1
    resources:
    - {{name: deployments, kind: Deployment}}
  resourceSummary:
    allocatable: {{cpu: "64", memory: 256Gi, pods: "1100"}}
""")
    dep, pol = root / "deployments", root / "policies"
    dep.mkdir(exist_ok=True)
    pol.mkdir(exist_ok=True)
    for j in range(n):
        a, b = j % clusters + 1, (j + 7) % clusters + 1
        (dep / f"app{j}.yaml").write_text(f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: app{j}
  namespace: default
  labels: {{app: app{j}}}
spec:
  replicas: {3 + j % 5}
  selector:
    matchLabels: {{app: app{j}}}
  template:
    metadata:
      labels: {{app: app{j}}}
    spec:
      containers:
      - name: main
        image: registry.example/app{j}:1.0
        resources:
          requests: {{cpu: 100m, memory: 128Mi}}
""")
        (pol / f"app{j}.yaml").write_text(f"""apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: app{j}
  namespace: default
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: app{j}
  placement:
    clusterAffinity:
      clusterNames: [member{a}, member{b}]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {{clusterNames: [member{a}]}}
          weight: 1
        - targetCluster: {{clusterNames: [member{b}]}}
          weight: 2
""")


PARSE_FLOOR = r"""
import sys, yaml
from karmactl.store.state import StateStore
n = 0
for p in StateStore(sys.argv[1]).user_files():
    with open(p, "rb") as fh:
        n += sum(1 for d in yaml.load_all(fh.read().decode("utf-8"), Loader=yaml.CSafeLoader) if d is not None)
print(n, file=sys.stderr)
"""

KARMACTL_READ = r"""
import sys
from karmactl.store.state import StateStore
store = StateStore(sys.argv[1])
n = 0
for p in store.user_files():
    n += len(store.read_documents(p))
print(n, file=sys.stderr)
"""


def _tree(root: int) -> list[int]:
    """``root`` and its live descendants (by the parent pid field of ``/proc/<pid>/stat``)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _memory_kb(pids: list[int]) -> tuple[int, int]:
    """Summed (PSS, RSS) in KiB of ``pids`` (processes that are gone count 0)."""
    pss = rss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
                text = fh.read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith(b"Pss:"):
                pss += int(line.split()[1])
            elif line.startswith(b"Rss:"):
                rss += int(line.split()[1])
    return pss, rss


class Sampler(threading.Thread):
    """Largest summed PSS and RSS (KiB) of a process tree, sampled every ``interval`` seconds
    until :meth:`stop`."""

    def __init__(self, pid: int, interval: float):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_pss = self.peak_rss = 0
        self.samples = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            pss, rss = _memory_kb(_tree(self.pid))
            self.peak_pss, self.peak_rss = max(self.peak_pss, pss), max(self.peak_rss, rss)
            self.samples += 1
            self._done.wait(self.interval)

    def stop(self) -> None:
        self._done.set()
        self.join()


def timed(cmd: list[str], runs: int, sample: float = 0.0, env: dict | None = None) -> tuple[list[float], list[tuple[int, int]]]:
    """Wall times of ``runs`` runs of ``cmd`` (in ``env``, :func:`process_env`) and, with
    ``sample`` > 0, each run's peak summed (PSS, RSS) in KiB across its process tree."""
    times, peaks = [], []
    for _ in range(runs):
        os.sync()
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=CHECKOUT,
                                env=env or dict(os.environ, PYTHONPATH=str(CHECKOUT)))
        sampler = Sampler(proc.pid, sample) if sample > 0 else None
        if sampler:
            sampler.start()
        rc = proc.wait()
        times.append(time.perf_counter() - t)
        if sampler:
            sampler.stop()
            peaks.append((sampler.peak_pss, sampler.peak_rss))
        if rc:
            raise subprocess.CalledProcessError(rc, cmd)
    return times, peaks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--clusters", type=int, default=50, help="Clusters every Deployment may go to")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workdir", default="benchmarks/out")
    ap.add_argument("--settle", type=float, default=310.0,
                    help="seconds to wait after deleting an earlier invocation's copies")
    ap.add_argument("--sample", type=float, default=0.05,
                    help="seconds between memory samples of a cold run (0: no sampling)")
    args = ap.parse_args()
    work = Path(args.workdir).resolve() / (f"n{args.n}" if args.clusters == 50 else f"n{args.n}c{args.clusters}")
    src = work / "input"
    if not src.exists():
        generate(src, args.n, args.clusters)
    exe = [sys.executable, "-m", "karmactl"]
    # One fresh copy per cold run, all made (and flushed) before any timing: deleting a large
    # tree right before a timed run bills the file system's cleanup (discard) to that run.
    copies = [work / f"state-{i}" for i in range(args.runs)]
    sampled = [work / f"state-mem-{i}" for i in range(args.runs if args.sample > 0 else 0)]
    stale = [p for p in work.glob("state-*") if p.is_dir()]
    for c in stale:
        shutil.rmtree(c, ignore_errors=True)
    os.sync()
    if stale and args.settle > 0:
        print(f"deleted {len(stale)} earlier copies; settling {args.settle:.0f} s", file=sys.stderr)
        time.sleep(args.settle)
    for c in copies + sampled:
        shutil.copytree(src, c)
    os.sync()
    env = process_env(work)
    compile_checkout(env)
    floor, _ = timed([sys.executable, "-c", PARSE_FLOOR, str(src)], args.runs, env=env)
    read, _ = timed([sys.executable, "-c", KARMACTL_READ, str(src)], args.runs, env=env)
    reconcile = exe + ["reconcile", "--offline", "--now", NOW]
    cold, peaks = [], []
    for c in copies:
        cold += timed(reconcile + ["--state", str(c)], 1, env=env)[0]
    for c in sampled:
        peaks += timed(reconcile + ["--state", str(c)], 1, args.sample, env)[1]
    state = copies[-1]
    noop, _ = timed(exe + ["--state", str(state), "reconcile", "--offline", "--now", NOW], args.runs, env=env)
    files = sum(len(f) for _, _, f in os.walk(state / "computed"))
    warm, warm_peaks = [], []
    for i, c in enumerate(copies + sampled):  # every copy is reconciled now: a Cluster edit makes the next run full
        cluster = c / "clusters" / "member1.yaml"
        text = cluster.read_text()
        edited = text.replace("labels: {region: r1}", f"labels: {{region: r1, warm: w{i}}}", 1)
        assert edited != text, "the generated Cluster member1 has changed shape"
        cluster.write_text(edited)
        if c in sampled:
            warm_peaks += timed(reconcile + ["--state", str(c)], 1, args.sample, env)[1]
        else:
            warm += timed(reconcile + ["--state", str(c)], 1, env=env)[0]
    med = statistics.median
    runs = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
    print(f"N={args.n} clusters={args.clusters} computed_files={files}")
    print(f"parse floor  median {med(floor):7.2f} s  (runs: {runs(floor)})")
    print(f"karmactl read median {med(read):6.2f} s  (runs: {runs(read)})  ratio to floor {med(read) / med(floor):.2f}x")
    print(f"cold         median {med(cold):7.2f} s  (runs: {runs(cold)})  ratio to floor {med(cold) / med(floor):.2f}x")
    print(f"unchanged    median {med(noop):7.2f} s  (runs: {runs(noop)})  ratio to floor {med(noop) / med(floor):.2f}x")
    print(f"warm full    median {med(warm):7.2f} s  (runs: {runs(warm)})  ratio to floor {med(warm) / med(floor):.2f}x")
    if peaks:
        maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        for label, pk in (("cold", peaks), ("warm full", warm_peaks)):
            print(f"{label} peak memory, all processes: PSS {max(p for p, _ in pk) / 1024:.0f} MB "
                  f"(runs: {', '.join(f'{p / 1024:.0f}' for p, _ in pk)}), RSS {max(r for _, r in pk) / 1024:.0f} MB")
        print(f"largest single process RSS {maxrss:.0f} MB (any run); sampled every {args.sample:g} s")
    # the copies stay until the next invocation (deleting them here would slow what runs next)


if __name__ == "__main__":
    main()
