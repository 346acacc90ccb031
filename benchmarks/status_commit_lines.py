"""Benchmark: the lines a status commit adds to git (issue 28, item 4), by kind of computed file.

Starts two emulated members (fake controller on), makes a git repository holding a state
directory, joins the members, commits, then runs `karmactl reconcile --wait` and counts what
`git diff --cached --numstat` adds under `state/computed/` (the commit docs/gitops/karmactl-ci.sh
makes), then does the same after scaling every Deployment (the next status commit). Scenarios:

  nginx     the nginx sample (manifests/nginx): one Deployment, weighted 1:2 on member1/member2
  deploy100 100 Deployments propagated by one PropagationPolicy (static weights 1:2)

Run it once per version of karmactl to compare them, e.g. the code before and after a change:
`--code DIR` puts DIR first on PYTHONPATH of the karmactl processes (default: this checkout).

Usage: python benchmarks/status_commit_lines.py [--code DIR] [--workdir benchmarks/out/status-lines]
"""
from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from karmactl.emulator import MemberServer  # noqa: E402

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]

POLICY = """apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
  namespace: default
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
  placement:
    clusterAffinity:
      clusterNames: [member1, member2]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
          - targetCluster: {clusterNames: [member1]}
            weight: 1
          - targetCluster: {clusterNames: [member2]}
            weight: 2
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i}
  namespace: default
  labels: {{app: web-{i}}}
spec:
  replicas: 3
  selector:
    matchLabels: {{app: web-{i}}}
  template:
    metadata:
      labels: {{app: web-{i}}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
"""


def category(path: str) -> str:
    parts = path.split("/")
    if parts[2] == "status":
        return "status/" + parts[3].split(".")[0]
    return parts[2]


def lines_added(repo: Path) -> dict:
    subprocess.run(["git", "add", "-A", "--", "state/computed"], cwd=repo, check=True)
    out = subprocess.run(["git", "diff", "--cached", "--numstat"], cwd=repo, check=True, capture_output=True,
                         text=True).stdout
    added = collections.Counter()
    for line in out.splitlines():
        plus, _minus, path = line.split("\t")
        if path.startswith("state/computed/"):
            added[category(path)] += int(plus)
    subprocess.run([*GIT, "commit", "-qm", "status"], cwd=repo, check=True)
    return dict(added)


def scenario(name: str, workdir: Path, env: dict) -> tuple[dict, dict]:
    """``(first status commit, status commit after scaling)`` lines added by category."""
    base = workdir / name
    shutil.rmtree(base, ignore_errors=True)
    repo = base / "repo"
    state = repo / "state"
    state.mkdir(parents=True)
    servers = [MemberServer(name=f"member{i}", port=0, data_dir=str(base / f"member{i}"), fake_controller=True,
                            fake_delay=0.05, nodes=3).start() for i in (1, 2)]
    try:
        def karmactl(*args):
            proc = subprocess.run([sys.executable, "-m", "karmactl", "--state", str(state), *args], env=env, cwd=base,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"karmactl {' '.join(args)} exited {proc.returncode}: {proc.stderr}")

        if name == "nginx":
            shutil.copytree(ROOT / "manifests" / "nginx", state / "nginx")
            files = [state / "nginx" / "deployment.yaml"]
        else:
            (state / "policy.yaml").write_text(POLICY)
            (state / "apps").mkdir()
            files = []
            for i in range(100):
                files.append(state / "apps" / f"web-{i}.yaml")
                files[-1].write_text(DEPLOYMENT.format(i=i))
        for srv in servers:
            kubeconfig = srv.write_kubeconfig(str(state / ".karmactl" / "kubeconfigs" / srv.name), context=srv.name)
            karmactl("join", srv.name, "--kubeconfig", kubeconfig)
        shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run([*GIT, "commit", "-qm", "state"], cwd=repo, check=True)
        karmactl("reconcile", "--wait", "--timeout", "300s")
        first = lines_added(repo)
        for f in files:
            f.write_text(f.read_text().replace("replicas: 3", "replicas: 6"))
        subprocess.run([*GIT, "commit", "-qam", "scale"], cwd=repo, check=True)
        karmactl("reconcile", "--wait", "--timeout", "300s")
        return first, lines_added(repo)
    finally:
        for srv in servers:
            srv.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", default=str(ROOT), help="karmactl's code to measure (first on PYTHONPATH)")
    ap.add_argument("--workdir", default=str(ROOT / "benchmarks" / "out" / "status-lines"))
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(args.code).resolve()), str(ROOT)]))
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"code: {Path(args.code).resolve()}")
    for name in ("nginx", "deploy100"):
        for label, added in zip(("first status commit", "after scaling 3 -> 6"), scenario(name, workdir, env)):
            detail = ", ".join(f"{k} {v}" for k, v in sorted(added.items()))
            print(f"{name:9} {label:21} {sum(added.values()):7} lines added  ({detail})")


if __name__ == "__main__":
    main()
