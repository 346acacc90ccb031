"""Benchmark: start-up of `karmactl --help`, of a completion request, of `get` and `describe` on a
10,000-object state directory, against `kubectl version --client`.

Times whole processes, interleaved run by run so machine noise falls on all of them alike:

  help        karmactl --help                                (target: < 100 ms median)
  complete    karmactl __complete get deploy ""              (a bash <TAB> after `get deploy `; < 100 ms),
              after one `karmactl get deploy` left the store's parse cache, as any command does
  cold        the same request in a state directory no command has read yet (every file parsed)
  get         karmactl get deploy           on --big Deployments (default 10,000 in 10 files) after a
              first command filled the parse cache           (target: < 500 ms median)
  get-other   karmactl get clusters         on the same state directory (one kind of few objects)
  describe    karmactl describe deploy app-<n/2>   on the same state directory
  kubectl     kubectl version --client                       (the reference a kubectl user knows)

With --reconciled, the big state directory also holds a Cluster and a PropagationPolicy and is
reconciled offline first (its computed/ tree then holds a ResourceBinding and a status file per
Deployment, and Events), so `get` and `describe` read as after everyday use.

The small completion states hold --objects Deployments (default 20). Each process runs with its
bytecode cached (PYTHONPYCACHEPREFIX in the temporary directory, after one warm-up run), as an
installed karmactl has its .pyc files even where PYTHONDONTWRITEBYTECODE is set. Prints, per case,
the median and min wall time, the median CPU time (user + system: what a loaded machine's noise
inflates least) and the ratios of the medians to kubectl's.

Usage: python benchmarks/startup.py [--runs 21] [--objects 20] [--big 10000] [--reconciled] [--kubectl kubectl]
"""
from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reconcile_offline import compile_checkout, process_env  # noqa: E402

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: app-{i}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: app-{i}}}}}
  template:
    metadata: {{labels: {{app: app-{i}}}}}
    spec: {{containers: [{{name: app, image: nginx}}]}}
"""
PLACEMENT = """apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member1}
spec: {syncMode: Push, apiEndpoint: "https://127.0.0.1:6443"}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
"""
FILES_PER_BIG_STATE = 10
TARGETS_MS = {"help": 100, "complete": 100, "get": 500}


def timed(cmd: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one process; exits when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_big_state(root: Path, count: int, reconciled: bool) -> None:
    root.mkdir()
    per_file = -(-count // FILES_PER_BIG_STATE)
    for f in range(FILES_PER_BIG_STATE):
        docs = [DEPLOYMENT.format(i=i) for i in range(f * per_file, min(count, (f + 1) * per_file))]
        if docs:
            (root / f"apps-{f}.yaml").write_text("---\n".join(docs))
    if reconciled:
        (root / "placement.yaml").write_text(PLACEMENT)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--objects", type=int, default=20)
    ap.add_argument("--big", type=int, default=10000, help="Deployments in the state directory of get/describe")
    ap.add_argument("--reconciled", action="store_true", help="reconcile the big state directory offline first")
    ap.add_argument("--kubectl", default="kubectl")
    args = ap.parse_args()
    kubectl = shutil.which(args.kubectl)
    if not kubectl:
        sys.exit(f"{args.kubectl} not found on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        env = process_env(cwd)
        compile_checkout(env)
        text = "---\n".join(DEPLOYMENT.format(i=i) for i in range(args.objects))
        for d in ("state", "cold"):
            (cwd / d).mkdir()
            (cwd / d / "apps.yaml").write_text(text)
        write_big_state(cwd / "big", args.big, args.reconciled)
        karmactl = [sys.executable, "-m", "karmactl"]
        big = karmactl + ["--state", "big", "--now", "2026-01-01T00:00:00Z"]
        subprocess.run(karmactl + ["get", "deploy"], cwd=cwd, env=env, capture_output=True, check=True)
        if args.reconciled:
            subprocess.run(big + ["reconcile", "--offline"], cwd=cwd, env=env, capture_output=True, check=True)
        subprocess.run(big + ["get", "deploy"], cwd=cwd, env=env, capture_output=True, check=True)
        cases = {"help": karmactl + ["--help"],
                 "complete": karmactl + ["__complete", "get", "deploy", ""],
                 "cold": karmactl + ["__complete", "--state", "cold", "get", "deploy", ""],
                 "get": big + ["get", "deploy"],
                 "get-other": big + ["get", "clusters"],
                 "describe": big + ["describe", "deploy", f"app-{args.big // 2}"],
                 "kubectl": [kubectl, "version", "--client"]}
        for name in ("complete", "cold"):
            probe = subprocess.run(cases[name], cwd=cwd, env=env, capture_output=True, text=True)
            if "app-0" not in probe.stdout:
                sys.exit(f"the completion request did not list the Deployments: {probe.stdout!r} {probe.stderr}")
        rows = subprocess.run(cases["get"], cwd=cwd, env=env, capture_output=True, text=True).stdout.count("\n")
        if rows != args.big + 1:
            sys.exit(f"get deploy printed {rows} lines, not a header and {args.big} rows")
        if (cwd / "cold" / ".karmactl").exists():
            sys.exit("a completion request wrote into the state directory")
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, cmd in cases.items():
                times[name].append(timed(cmd, cwd, env))
    ref = statistics.median(w for w, _c in times["kubectl"])
    ref_cpu = statistics.median(c for _w, c in times["kubectl"])
    state = f"{args.big} Deployments{', reconciled' if args.reconciled else ''}"
    print(f"{'case':<10} {'median ms':>10} {'min ms':>8} {'cpu ms':>8} {'x kubectl':>10} {'cpu x':>6} {'target':>8}"
          f"   ({args.runs} runs each, interleaved; get/describe on {state})")
    for name, ts in times.items():
        med = statistics.median(w for w, _c in ts)
        cpu = statistics.median(c for _w, c in ts)
        target = f"< {TARGETS_MS[name]}" if name in TARGETS_MS else ""
        print(f"{name:<10} {med * 1000:>10.1f} {min(w for w, _c in ts) * 1000:>8.1f} {cpu * 1000:>8.1f} "
              f"{med / ref:>10.2f} {cpu / ref_cpu:>6.2f} {target:>8}")


if __name__ == "__main__":
    main()
