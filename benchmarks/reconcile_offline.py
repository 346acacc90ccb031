"""Benchmark: N Deployments + N PropagationPolicies over 50 Clusters, `reconcile --offline`.

Generates a state directory, then times (as whole processes, median of --runs):
  parse   only parsing the same input files (the floor: read + YAML-load every user file)
  cold    `karmactl reconcile --offline` on a fresh copy (no computed files yet)
  noop    a second run with nothing changed (must write nothing)

Usage: python benchmarks/reconcile_offline.py --n 1000 [--runs 3] [--workdir benchmarks/out] [--settle 310]

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
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

NOW = "2026-01-01T00:00:00Z"


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


PARSE_ONLY = r"""
import os, sys
from karmactl.store.state import StateStore
store = StateStore(sys.argv[1])
n = 0
for p in store.user_files():
    n += len(store.read_documents(p))
print(n, file=sys.stderr)
"""


def timed(cmd: list[str], runs: int, prepare=None) -> list[float]:
    times = []
    for _ in range(runs):
        if prepare:
            prepare()
        os.sync()
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workdir", default="benchmarks/out")
    ap.add_argument("--settle", type=float, default=310.0,
                    help="seconds to wait after deleting an earlier invocation's copies")
    args = ap.parse_args()
    work = Path(args.workdir) / f"n{args.n}"
    src = work / "input"
    if not src.exists():
        generate(src, args.n)
    exe = [sys.executable, "-m", "karmactl"]
    # One fresh copy per cold run, all made (and flushed) before any timing: deleting a large
    # tree right before a timed run bills the file system's cleanup (discard) to that run.
    copies = [work / f"state-{i}" for i in range(args.runs)]
    stale = [p for p in work.glob("state-*") if p.is_dir()]
    for c in stale:
        shutil.rmtree(c, ignore_errors=True)
    os.sync()
    if stale and args.settle > 0:
        print(f"deleted {len(stale)} earlier copies; settling {args.settle:.0f} s", file=sys.stderr)
        time.sleep(args.settle)
    for c in copies:
        shutil.copytree(src, c)
    os.sync()
    parse = timed([sys.executable, "-c", PARSE_ONLY, str(src)], args.runs)
    cold = []
    for c in copies:
        cold += timed(exe + ["--state", str(c), "reconcile", "--offline", "--now", NOW], 1)
    state = copies[-1]
    noop = timed(exe + ["--state", str(state), "reconcile", "--offline", "--now", NOW], args.runs)
    files = sum(len(f) for _, _, f in os.walk(state / "computed"))
    med = statistics.median
    print(f"N={args.n} clusters=50 computed_files={files}")
    print(f"parse floor  median {med(parse):7.2f} s  (runs: {', '.join(f'{x:.2f}' for x in parse)})")
    print(f"cold         median {med(cold):7.2f} s  (runs: {', '.join(f'{x:.2f}' for x in cold)})  ratio to floor {med(cold) / med(parse):.2f}x")
    print(f"unchanged    median {med(noop):7.2f} s  (runs: {', '.join(f'{x:.2f}' for x in noop)})")
    # the copies stay until the next invocation (deleting them here would slow what runs next)


if __name__ == "__main__":
    main()
