"""Benchmark: apply 500 Deployments to 3 local members, cold and unchanged.

Starts three emulated members with `karmactl local-up` (background processes, fake controller
off so no status churn), writes N Deployments and one PropagationPolicy duplicating them to the
three members, then times whole `karmactl reconcile` processes:

  cold       the first run (every Work applied to every member)
  unchanged  a second run with nothing changed (target: < 10% of cold, zero writes to members)

Writes sent to members are counted from the emulators' request logs (POST/PUT/PATCH/DELETE).

Usage: python benchmarks/members_apply.py [--n 500] [--runs 3] [--workdir benchmarks/out]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def karmactl(state: Path, *args: str, check: bool = True) -> float:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "karmactl", "--state", str(state), *args],
                          capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SystemExit(f"karmactl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return time.perf_counter() - t


def member_urls(state: Path) -> dict[str, str]:
    out = {}
    for info in sorted((state / ".karmactl" / "members").glob("*/server.json")):
        data = json.loads(info.read_text())
        out[data["name"]] = data["url"]
    return out


def hook(url: str, path: str, method: str = "GET", body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        raw = resp.read()
    return json.loads(raw) if raw else {}


def writes(urls: dict[str, str]) -> int:
    return sum(hook(u, "/_emulator/requests").get("writeCount", 0) for u in urls.values())


def clear(urls: dict[str, str]) -> None:
    for u in urls.values():
        hook(u, "/_emulator/requests", "DELETE")


def generate(state: Path, n: int) -> None:
    apps = state / "apps"
    apps.mkdir(parents=True, exist_ok=True)
    docs = []
    for i in range(n):
        docs.append(f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: app{i}
  namespace: default
  labels: {{app: app{i}, bench: "true"}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: app{i}}}
  template:
    metadata:
      labels: {{app: app{i}}}
    spec:
      containers:
      - name: main
        image: registry.example/app{i}:1.0
""")
    (apps / "deployments.yaml").write_text("---\n".join(docs))
    (apps / "policy.yaml").write_text("""apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: bench
  namespace: default
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    labelSelector:
      matchLabels: {bench: "true"}
  placement:
    clusterAffinity:
      clusterNames: [member1, member2, member3]
    replicaScheduling:
      replicaSchedulingType: Duplicated
""")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workdir", default="benchmarks/out")
    args = ap.parse_args()
    cold, noop, cold_writes, noop_writes = [], [], [], []
    for r in range(args.runs):
        state = Path(args.workdir) / f"members-{args.n}" / "state"
        if state.exists():
            karmactl(state, "local-down", "--purge", check=False)
            shutil.rmtree(state)
        state.mkdir(parents=True)
        karmactl(state, "local-up")
        try:
            urls = member_urls(state)
            for u in urls.values():
                hook(u, "/_emulator/fake-controller", "POST", {"enabled": False})
            generate(state, args.n)
            clear(urls)
            cold.append(karmactl(state, "reconcile"))  # probe, compute, apply every Work, collect status
            cold_writes.append(writes(urls))
            clear(urls)
            noop.append(karmactl(state, "reconcile"))
            noop_writes.append(writes(urls))
        finally:
            karmactl(state, "local-down", "--purge", check=False)
        print(f"run {r + 1}: cold {cold[-1]:.2f} s ({cold_writes[-1]} writes), unchanged {noop[-1]:.2f} s "
              f"({noop_writes[-1]} writes)", file=sys.stderr)
    med = statistics.median
    print(f"N={args.n} Deployments x 3 members, {args.runs} runs")
    print(f"cold       median {med(cold):6.2f} s  writes {cold_writes}")
    print(f"unchanged  median {med(noop):6.2f} s  writes {noop_writes}  ratio {med(noop) / med(cold):.1%}")


if __name__ == "__main__":
    main()
