"""Benchmark: apply N Deployments to 3 local members, karmactl against kubectl, cold and unchanged.

Starts three emulated members with `karmactl local-up` (background processes, fake controller
off so no status churn), writes N Deployments and one PropagationPolicy duplicating them to the
three members, then times whole processes, each on fresh members:

  karmactl cold        the first `karmactl reconcile` (every Work applied to every member)
  karmactl unchanged   a second run with nothing changed (target: zero writes to members)
  kubectl sequential   `kubectl apply --server-side -f <the N Deployments>` per member, one after the other
  kubectl parallel     the same three kubectl processes at once
  kubectl unchanged    kubectl sequential again on the members it just wrote (it re-sends every object)
  karmactl cold with   (optional, --karmactl-env NAME=VALUE ...) a cold run with other member knobs,
                       e.g. the defaults before issue 15: KARMACTL_MEMBER_QPS=50 KARMACTL_MEMBER_WORKERS=1

Writes sent to members are counted from the emulators' request logs (POST/PUT/PATCH/DELETE).
The ratios printed are karmactl's median over kubectl's median of the same invocation, so the
machine's load cancels out (target: karmactl cold / kubectl parallel <= 1.0).

Usage: python benchmarks/members_apply.py [--n 500] [--runs 3] [--workdir benchmarks/out] [--kubectl kubectl]
           [--karmactl-env NAME=VALUE ...]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reconcile_offline import compile_checkout, process_env  # noqa: E402

ENV = dict(os.environ)  # main() sets reconcile_offline.process_env


def karmactl(state: Path, *args: str, check: bool = True, env: dict | None = None) -> float:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "karmactl", "--state", str(state), *args],
                          capture_output=True, text=True, env={**ENV, **(env or {})})
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


@contextlib.contextmanager
def fresh_members(root: Path, n: int):
    """A new state directory under ``root`` with three emulated members (fake controller off) and
    the N Deployments written; yields (state, member name -> URL) and stops the members after."""
    state = root / "state"
    if state.exists():
        karmactl(state, "local-down", "--purge", check=False)
        shutil.rmtree(state)
    state.mkdir(parents=True)
    karmactl(state, "local-up")
    try:
        urls = member_urls(state)
        for u in urls.values():
            hook(u, "/_emulator/fake-controller", "POST", {"enabled": False})
        generate(state, n)
        clear(urls)
        yield state, urls
    finally:
        karmactl(state, "local-down", "--purge", check=False)


def kubectl_apply(kubectl: str, state: Path, names: list[str], parallel: bool) -> float:
    """Seconds for `kubectl apply --server-side` of the Deployments to each member (one process per
    member, all at once with ``parallel``)."""
    manifest = state / "apps" / "deployments.yaml"
    cmds = [[kubectl, "--kubeconfig", str(state / ".karmactl" / "members" / name / "kubeconfig"),
             "apply", "--server-side", "-f", str(manifest)] for name in names]
    t = time.perf_counter()
    if parallel:
        procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for c in cmds]
        results = [(p, p.communicate()[1]) for p in procs]
    else:
        results = []
        for c in cmds:
            p = subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            results.append((p, p.stderr))
    elapsed = time.perf_counter() - t
    for p, err in results:
        if p.returncode != 0:
            raise SystemExit(f"kubectl apply failed ({p.returncode}): {err}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workdir", default="benchmarks/out")
    ap.add_argument("--kubectl", default="kubectl", help="the kubectl binary to compare with")
    ap.add_argument("--karmactl-env", action="append", default=[], metavar="NAME=VALUE",
                    help="also time a cold karmactl run with these variables (e.g. KARMACTL_MEMBER_QPS=50)")
    args = ap.parse_args()
    root = Path(args.workdir) / f"members-{args.n}"
    ENV.clear()
    ENV.update(process_env(root))
    compile_checkout(ENV)
    variant = dict(kv.split("=", 1) for kv in args.karmactl_env)
    times: dict[str, list[float]] = {k: [] for k in ("kcold", "knoop", "seq", "par", "seqnoop")}
    if variant:
        times["vcold"] = []
    writes_of: dict[str, list[int]] = {k: [] for k in times}

    def timed(key: str, run, urls: dict) -> None:
        clear(urls)
        times[key].append(run())
        writes_of[key].append(writes(urls))

    for r in range(args.runs):
        with fresh_members(root / "karmactl", args.n) as (state, urls):  # cold, then unchanged
            timed("kcold", lambda: karmactl(state, "reconcile"), urls)  # probe, compute, apply, collect status
            timed("knoop", lambda: karmactl(state, "reconcile"), urls)
        with fresh_members(root / "kubectl-seq", args.n) as (state, urls):  # one member after the other, twice
            names = sorted(urls)
            timed("seq", lambda: kubectl_apply(args.kubectl, state, names, parallel=False), urls)
            timed("seqnoop", lambda: kubectl_apply(args.kubectl, state, names, parallel=False), urls)
        with fresh_members(root / "kubectl-par", args.n) as (state, urls):  # the three members at once
            timed("par", lambda: kubectl_apply(args.kubectl, state, sorted(urls), parallel=True), urls)
        if variant:
            with fresh_members(root / "karmactl-variant", args.n) as (state, urls):
                timed("vcold", lambda: karmactl(state, "reconcile", env=variant), urls)
        print(f"run {r + 1}: " + ", ".join(f"{k} {times[k][-1]:.2f} s ({writes_of[k][-1]} writes)" for k in times),
              file=sys.stderr)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"N={args.n} Deployments x 3 members, {args.runs} runs (medians; writes per run)")
    labels = {"kcold": "karmactl cold", "knoop": "karmactl unchanged", "seq": "kubectl sequential",
              "par": "kubectl parallel", "seqnoop": "kubectl unchanged"}
    if variant:
        labels["vcold"] = "karmactl cold with " + " ".join(args.karmactl_env)
    for k, label in labels.items():
        print(f"{label:20s} {med[k]:6.2f} s  writes {writes_of[k]}")
    print(f"karmactl cold / kubectl sequential   {med['kcold'] / med['seq']:.2f}x")
    print(f"karmactl cold / kubectl parallel     {med['kcold'] / med['par']:.2f}x  (target <= 1.00x)")
    print(f"karmactl unchanged / karmactl cold   {med['knoop'] / med['kcold']:.1%}")
    print(f"karmactl unchanged / kubectl unchanged {med['knoop'] / med['seqnoop']:.2f}x")
    if variant:
        print(f"karmactl cold with {' '.join(args.karmactl_env)} / kubectl parallel  {med['vcold'] / med['par']:.2f}x")


if __name__ == "__main__":
    main()
