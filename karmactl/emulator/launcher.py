"""Local members that are whole real clusters, started by a *cluster launcher* (``local-up --kube-cluster TOOL``).

A launcher is a directory with two programs, the contract of ``../shared/tools/kube-cluster`` (and
easy to write around kind, k3d or a script of one's own):

- ``TOOL/start.sh NAME DIR --nodes N`` starts one cluster whose data lives in ``DIR``, prints the path
  of its kubeconfig (``DIR/kubeconfig``) as the last line of stdout once every node is Ready, and
  writes ``DIR/member.env`` (``SERVER=``, ``APISERVER_PID=``, ``ETCD_PID=``); its CA is ``DIR/pki/ca.crt``;
- ``TOOL/stop.sh DIR`` stops that cluster and deletes its data.

The nodes' size and labels go to ``start.sh`` as the environment variables ``KUBE_CLUSTER_NODE_CPU``,
``KUBE_CLUSTER_NODE_MEMORY``, ``KUBE_CLUSTER_NODE_PODS`` and ``KUBE_CLUSTER_NODE_LABELS`` (``k=v,k2=v2``).
The member directory is ``<state>/.karmactl/members/<name>/`` as for the other kinds, with
``server.json`` ``{"name", "kind": "kube-cluster", "url", "port", "pid" (kube-apiserver), "etcdPid",
"tool"}``. A launcher's cluster cannot restart on its data: ``local-down`` stops it and its data goes
(``stop.sh``'s contract), so the next ``local-up`` starts it empty and karmactl's next reconcile
applies every Work again.

The launcher is the operator's (a flag, never read from the state directory) and runs with the
operator's rights; hollow nodes of ``../shared/tools/kube-cluster`` need root.
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

KUBE_CLUSTER = "kube-cluster"
START_TIMEOUT = 300.0  # seconds for start.sh (controllers and nodes of a cluster on a busy machine)
STOP_TIMEOUT = 90.0


class LauncherError(RuntimeError):
    """A launcher is unusable (exit 2) or a cluster did not start (exit 3: ``start_failed``)."""

    def __init__(self, message: str, start_failed: bool = False):
        super().__init__(message)
        self.start_failed = start_failed


@dataclass(frozen=True)
class NodeShape:
    """What each hollow node reports: ``cpu`` whole cores, ``memory`` a quantity (``32Gi``), ``pods``,
    ``labels`` ``{key: value}`` (the member's zone added by :func:`start_cluster`); None keeps the
    launcher's default."""

    cpu: int | None = None
    memory: str | None = None
    pods: int | None = None
    labels: tuple[tuple[str, str], ...] = ()

    def env(self, extra_labels: dict[str, str] | None = None) -> dict[str, str]:
        """The launcher's environment variables for this shape (``KUBE_CLUSTER_NODE_*``)."""
        out = {}
        if self.cpu is not None:
            out["KUBE_CLUSTER_NODE_CPU"] = str(self.cpu)
        if self.memory is not None:
            out["KUBE_CLUSTER_NODE_MEMORY"] = self.memory
        if self.pods is not None:
            out["KUBE_CLUSTER_NODE_PODS"] = str(self.pods)
        labels = dict(self.labels)
        labels.update(extra_labels or {})
        if labels:
            out["KUBE_CLUSTER_NODE_LABELS"] = ",".join(f"{k}={v}" for k, v in labels.items())
        return out


def check_tool(tool: str) -> Path:
    """The launcher directory, resolved.

    Raises:
        LauncherError: it has no executable ``start.sh`` and ``stop.sh``.
    """
    path = Path(tool).expanduser().resolve()
    for name in ("start.sh", "stop.sh"):
        if not os.access(path / name, os.X_OK):
            raise LauncherError(f"--kube-cluster {tool}: no executable {name} there (a cluster launcher has "
                                "start.sh NAME DIR --nodes N and stop.sh DIR)")
    return path


def _env_file(d: Path) -> dict[str, str]:
    try:
        lines = (d / "member.env").read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in lines if "=" in line)


def start_cluster(name: str, d: Path, tool: Path, nodes: int, shape: NodeShape, zone: str | None = None) -> dict:
    """Start one cluster with ``tool/start.sh`` and return its ``server.json`` (written into ``d``).

    ``zone`` labels its nodes ``topology.kubernetes.io/zone``.

    Raises:
        LauncherError: ``start.sh`` failed or printed no kubeconfig (``start_failed``; the message
            quotes the end of its stderr, never the kubeconfig's content).
    """
    d.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **shape.env({"topology.kubernetes.io/zone": zone} if zone else None)}
    try:
        res = subprocess.run([str(tool / "start.sh"), name, str(d), "--nodes", str(nodes)], capture_output=True,
                             text=True, timeout=START_TIMEOUT, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        stop_cluster(d, tool)
        raise LauncherError(f"member {name}: {tool / 'start.sh'} did not finish within {START_TIMEOUT:.0f} s",
                            start_failed=True) from None
    kubeconfig = (res.stdout.strip().splitlines() or [""])[-1]
    values = _env_file(d)
    if res.returncode != 0 or not values.get("SERVER") or Path(kubeconfig).resolve() != (d / "kubeconfig").resolve():
        stop_cluster(d, tool)
        tail = "\n".join(res.stderr.strip().splitlines()[-6:])
        raise LauncherError(f"member {name}: {tool / 'start.sh'} failed (exit {res.returncode}):\n{tail}",
                            start_failed=True)
    server = values["SERVER"]
    info = {"name": name, "kind": KUBE_CLUSTER, "url": server, "port": int(server.rsplit(":", 1)[1]),
            "pid": int(values.get("APISERVER_PID") or 0), "etcdPid": int(values.get("ETCD_PID") or 0),
            "tool": str(tool), "nodes": nodes}
    tmp = d / "server.json.tmp"
    tmp.write_text(json.dumps(info))
    os.replace(tmp, d / "server.json")
    return info


def stop_cluster(d: Path, tool: Path | str) -> bool:
    """``tool/stop.sh d`` (its data goes); True when a cluster was running there."""
    from karmactl.emulator.local import pid_alive  # local imports this module: at call time

    values = _env_file(d)
    was = any(pid > 0 and pid_alive(pid) for pid in (int(values.get(k) or 0) for k in ("APISERVER_PID", "ETCD_PID")))
    try:
        subprocess.run([str(Path(tool) / "stop.sh"), str(d)], capture_output=True, timeout=STOP_TIMEOUT,
                       check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        pass
    return was


def cluster_pids(info: dict) -> list[int]:
    """The pids recorded for a launcher's cluster (kube-apiserver and etcd; the launcher's own
    controllers and nodes are in its pid files)."""
    return [int(info[k]) for k in ("pid", "etcdPid") if info.get(k)]
