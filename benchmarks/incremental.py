"""Benchmark: incremental offline runs (``karmactl/incremental/runindex.py``) against a cold run and the
parse floor, N Deployments + N PropagationPolicies over 50 Clusters (``reconcile_offline.generate``).

For each --n, in one invocation, as whole processes (median of --runs):
  parse      only parsing the input files (the floor: read + YAML-load every user file)
  cold       `karmactl reconcile --offline` on a fresh copy (no computed files, no index)
  unchanged  a run with nothing changed (must write nothing)
  one        one Deployment's image changed, then a run (prints the files it wrote)
  policy     one PropagationPolicy's weights changed (it names its Deployment), then a run (prints
             how the run used the index and the files it wrote)

Targets (issue 15): at N=10,000, unchanged under 5 % of cold and under 0.5x the parse floor; one
template changed under 5 % of cold, writing only that template's files; one policy changed likewise
(issue 15: recompute only the bindings whose fingerprint, which includes the matched policy, changed).

Usage: python benchmarks/incremental.py --n 1000 10000 [--runs 3] [--workdir benchmarks/out-incremental]
       [--settle 310]

Each edited file is given an mtime one hour back (same size, new content), so the run
after it does not count it as "racily clean" (runindex.RACY_NS) when measuring the next edit.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reconcile_offline import CHECKOUT, NOW, PARSE_FLOOR, compile_checkout, generate, process_env, timed  # noqa: E402


def run_once(cmd: list[str], env: dict) -> tuple[float, str]:
    os.sync()
    t = time.perf_counter()
    proc = subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=CHECKOUT,
                          env=env)  # this checkout's karmactl (reconcile_offline.process_env)
    return time.perf_counter() - t, proc.stderr


def changed_files(stderr: str) -> list[str]:
    return [line.split(None, 1)[1] for line in stderr.splitlines() if re.match(r"^(write|delete)\s", line)]


def how(stderr: str) -> str:
    """How a ``-v`` run used the index (its ``run:`` line)."""
    found = re.search(r"^run: (.*)$", stderr, re.M)
    return found.group(1) if found else "?"


def fmt(xs: list[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in xs)


def bench(n: int, runs: int, workdir: Path, settle: float) -> None:
    work = workdir / f"n{n}"
    src = work / "input"
    if not src.exists():
        generate(src, n)
    exe = [sys.executable, "-m", "karmactl"]
    stale = [p for p in work.glob("state-*") if p.is_dir()]
    for c in stale:
        shutil.rmtree(c, ignore_errors=True)
    os.sync()
    if stale and settle > 0:  # see reconcile_offline.py: ext4 without a journal and fresh deletes
        print(f"deleted {len(stale)} earlier copies; settling {settle:.0f} s", file=sys.stderr)
        time.sleep(settle)
    copies = [work / f"state-{i}" for i in range(runs)]
    for c in copies:
        shutil.copytree(src, c)
    os.sync()
    env = process_env(work)
    compile_checkout(env)
    parse, _ = timed([sys.executable, "-c", PARSE_FLOOR, str(src)], runs, env=env)
    cold = []
    for c in copies:
        cold.append(run_once(exe + ["--state", str(c), "reconcile", "--offline", "--now", NOW], env)[0])
    state = copies[-1]
    cmd = exe + ["--state", str(state), "-v", "reconcile", "--offline", "--now", NOW]
    unchanged, written = [], []
    for _ in range(runs):
        seconds, err = run_once(cmd, env)
        unchanged.append(seconds)
        written.extend(changed_files(err))
    one, one_files = [], []
    for r in range(runs):
        path = state / "deployments" / f"app{r}.yaml"
        text = path.read_text()
        path.write_text(text.replace(f"app{r}:1.0", f"app{r}:2.0"))
        old = time.time() - 3600
        os.utime(path, (old, old))
        seconds, err = run_once(cmd, env)
        one.append(seconds)
        one_files.append(changed_files(err))
    policy, policy_files, policy_how = [], [], []
    for r in range(runs):
        path = state / "policies" / f"app{r}.yaml"
        text = path.read_text()
        path.write_text(text.replace("weight: 2", "weight: 3") if "weight: 2" in text else
                        text.replace("weight: 3", "weight: 2"))
        old = time.time() - 3600
        os.utime(path, (old, old))
        seconds, err = run_once(cmd, env)
        policy.append(seconds)
        policy_files.append(changed_files(err))
        policy_how.append(how(err))
    med = statistics.median
    files = sum(len(f) for _, _, f in os.walk(state / "computed"))
    print(f"N={n} clusters=50 computed_files={files} runs={runs}")
    print(f"parse floor      median {med(parse):7.2f} s  (runs: {fmt(parse)})")
    print(f"cold             median {med(cold):7.2f} s  (runs: {fmt(cold)})")
    print(f"unchanged        median {med(unchanged):7.2f} s  (runs: {fmt(unchanged)})  "
          f"{100 * med(unchanged) / med(cold):.1f} % of cold, {med(unchanged) / med(parse):.2f}x parse floor, "
          f"files written: {len(written)}")
    print(f"one template     median {med(one):7.2f} s  (runs: {fmt(one)})  {100 * med(one) / med(cold):.1f} % of cold")
    print_files(one_files)
    print(f"one policy       median {med(policy):7.2f} s  (runs: {fmt(policy)})  "
          f"{100 * med(policy) / med(cold):.1f} % of cold  ({'; '.join(sorted(set(policy_how)))})")
    print_files(policy_files)


def print_files(per_run: list) -> None:
    """The files each edit's run wrote (run r edited app{r}'s file): any other app's is flagged
    (Event files, buckets of several objects' Events named by kind and hash, excepted)."""
    for r, names in enumerate(per_run):
        foreign = [x for x in names if not x.startswith("computed/events/")
                   and not re.search(rf"(^|\.)app{r}[-.]", x.rsplit("/", 1)[-1])]
        print(f"  app{r}: {len(names)} file(s) written{'' if not foreign else ', NOT ITS OWN: ' + ', '.join(foreign)}")
        for name in names:
            print(f"    {name}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workdir", default="benchmarks/out-incremental")
    ap.add_argument("--settle", type=float, default=310.0,
                    help="seconds to wait after deleting an earlier invocation's copies")
    args = ap.parse_args()
    for n in args.n:
        bench(n, args.runs, Path(args.workdir), args.settle)


if __name__ == "__main__":
    main()
