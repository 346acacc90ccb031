"""Whole real member clusters (v1.20.2, ``../shared/tools/kube-cluster/``) in tests.

A cluster is the real kube-apiserver and etcd of ``tests/kube_apiserver.py`` plus the real
kube-controller-manager, kube-scheduler and N hollow nodes (kubemark: a real kubelet with a fake
container runtime), so Deployments get ReplicaSets and Pods that are scheduled and become Ready, and a
killed node goes NotReady. One home for starting and stopping them, shared by the tier in
``tests/cluster/``. The tool's README gives its limits (root for hollow nodes, no logs/exec, no
Service traffic) and figures (about 0.7 GB and 22 s per 2-node cluster).

Availability: as ``tests/kube_apiserver.py`` (``../shared`` beside the checkout, linux/amd64, etcd),
plus root for hollow nodes. Missing: the caller skips with one line, unless
``KARMACTL_REQUIRE_REAL_CLUSTER=1`` (set by ``.ci/run`` where the tool exists), which makes it fail.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from kube_apiserver import SHARED, RealMember, unavailable_reason as apiserver_unavailable

TOOL = SHARED / "tools" / "kube-cluster"
START_TIMEOUT = 180  # seconds for controllers and nodes on a busy 2-core machine


def unavailable_reason() -> str | None:
    """Why whole real clusters cannot run here, or None when they can."""
    if not (TOOL / "start.sh").is_file():
        return f"no kube-cluster tool at {TOOL} (../shared is not beside this checkout)"
    reason = apiserver_unavailable()
    if reason:
        return reason
    if os.geteuid() != 0:
        return "hollow nodes need root (the kubelet opens /dev/kmsg)"
    return None


def require_or_skip() -> None:
    """Skip the caller when clusters cannot run; fail instead when ``KARMACTL_REQUIRE_REAL_CLUSTER=1``."""
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get("KARMACTL_REQUIRE_REAL_CLUSTER") == "1":
        pytest.fail(f"KARMACTL_REQUIRE_REAL_CLUSTER=1 but {reason}", pytrace=False)
    pytest.skip(f"real cluster tier skipped: {reason}")


@dataclass
class RealCluster(RealMember):
    """One running real cluster: a :class:`RealMember` (``kubectl``, ``pause``/``unpause`` of its API
    server) with ``nodes`` hollow nodes named ``<name>-node-1`` … ``<name>-node-N``."""

    nodes: int = 2

    def stop(self) -> None:
        """Stop every process of the cluster and delete its data (idempotent)."""
        subprocess.run([str(TOOL / "stop.sh"), str(self.dir)], capture_output=True, timeout=90, check=False)

    def kill_node(self, index: int) -> None:
        """Kill hollow node ``index`` (1-based): its Node goes NotReady after the node monitor grace
        period (``KUBE_CLUSTER_NODE_MONITOR_GRACE_PERIOD``). There is no restart."""
        pid = int((self.dir / f"hollow-node-{index}.pid").read_text().strip())
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def start_cluster(name: str, directory: Path, *, nodes: int = 2, env: dict[str, str] | None = None) -> RealCluster:
    """Start one real cluster with ``start.sh NAME DIR --nodes N`` (call :func:`require_or_skip`
    first). ``env`` adds the tool's variables (``KUBE_CLUSTER_NODE_CPU``, ``KUBE_CLUSTER_NODE_LABELS``,
    ``KUBE_CLUSTER_NODE_MONITOR_GRACE_PERIOD`` …).

    A start that fails is tried once more (on a busy machine a component may miss its start
    deadline, or a random port may be taken between the tool's check and its use).

    Raises:
        RuntimeError: start.sh failed twice (its stderr tail is in the message).
    """
    try:
        return _start_once(name, directory, nodes, env)
    except RuntimeError:
        return _start_once(name, directory, nodes, env)


def _start_once(name: str, directory: Path, nodes: int, env: dict[str, str] | None) -> RealCluster:
    directory.mkdir(parents=True, exist_ok=True)
    res = subprocess.run([str(TOOL / "start.sh"), name, str(directory), "--nodes", str(nodes)],
                         capture_output=True, text=True, timeout=START_TIMEOUT + 60,
                         env={**os.environ, "KUBE_CLUSTER_TIMEOUT": str(START_TIMEOUT),
                              "KUBE_APISERVER_TIMEOUT": str(START_TIMEOUT), **(env or {})})
    if res.returncode != 0:
        subprocess.run([str(TOOL / "stop.sh"), str(directory)], capture_output=True, timeout=90, check=False)
        raise RuntimeError(f"kube-cluster start.sh {name} failed (exit {res.returncode}):\n{res.stderr[-3000:]}")
    kubeconfig = Path(res.stdout.strip().splitlines()[-1])
    values = dict(line.split("=", 1) for line in (directory / "member.env").read_text().splitlines() if "=" in line)
    return RealCluster(name=name, dir=directory, kubeconfig=kubeconfig, server=values["SERVER"], nodes=nodes)
