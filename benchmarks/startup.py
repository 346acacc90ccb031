"""Benchmark: start-up of `karmactl --help` and of a completion request, against `kubectl version --client`.

Times whole processes, interleaved run by run so machine noise falls on all three alike:

  help        karmactl --help                                (target: < 100 ms median)
  complete    karmactl __complete get deploy ""              (a bash <TAB> after `get deploy `; < 100 ms),
              after one `karmactl get deploy` left the store's parse cache, as any command does
  cold        the same request in a state directory no command has read yet (every file parsed)
  kubectl     kubectl version --client                       (the reference a kubectl user knows)

The completion requests read a state directory of --objects Deployments (default 20) written into a
temporary directory. Prints each median (and min) in milliseconds and the ratios to kubectl's median.

Usage: python benchmarks/startup.py [--runs 21] [--objects 20] [--kubectl kubectl]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def timed(cmd: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--objects", type=int, default=20)
    ap.add_argument("--kubectl", default="kubectl")
    args = ap.parse_args()
    kubectl = shutil.which(args.kubectl)
    if not kubectl:
        sys.exit(f"{args.kubectl} not found on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        text = "---\n".join(DEPLOYMENT.format(i=i) for i in range(args.objects))
        for d in ("state", "cold"):
            (cwd / d).mkdir()
            (cwd / d / "apps.yaml").write_text(text)
        karmactl = [sys.executable, "-m", "karmactl"]
        subprocess.run(karmactl + ["get", "deploy"], cwd=cwd, capture_output=True, check=True)
        cases = {"help": karmactl + ["--help"],
                 "complete": karmactl + ["__complete", "get", "deploy", ""],
                 "cold": karmactl + ["__complete", "--state", "cold", "get", "deploy", ""],
                 "kubectl": [kubectl, "version", "--client"]}
        for name in ("complete", "cold"):
            probe = subprocess.run(cases[name], cwd=cwd, capture_output=True, text=True)
            if "app-0" not in probe.stdout:
                sys.exit(f"the completion request did not list the Deployments: {probe.stdout!r} {probe.stderr}")
        if (cwd / "cold" / ".karmactl").exists():
            sys.exit("a completion request wrote into the state directory")
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, cmd in cases.items():
                times[name].append(timed(cmd, cwd))
    ref = statistics.median(times["kubectl"])
    print(f"{'case':<10} {'median ms':>10} {'min ms':>8} {'x kubectl':>10}   ({args.runs} runs each, interleaved)")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<10} {med * 1000:>10.1f} {min(ts) * 1000:>8.1f} {med / ref:>10.2f}")


if __name__ == "__main__":
    main()
