"""``local-up``/``demo``/``local-down`` with ``--kube-apiserver PATH``: members on a real kube-apiserver
v1.20.2 and etcd, with the status writer standing in for controllers."""
from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import time
from pathlib import Path

import pytest
import yaml

from karmactl.emulator.local import member_pids, members_root, pid_alive

import kube_apiserver
from .conftest import binding_ready

STATEFULSET = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: default}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: once, image: busybox}]}
"""


@pytest.fixture(scope="session")
def kube_apiserver_binary() -> Path:
    kube_apiserver.require_or_skip()
    return kube_apiserver.binary()


def _processes_naming(directory: Path) -> list[int]:
    """Pids of every process whose command line names ``directory`` (what local-down must leave: none)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if str(directory).encode() + b"/" in f.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


def _until(what: str, check, timeout: float = 60.0):
    """Poll ``check()`` until it returns something truthy (the status writer works asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout:g}s"
        time.sleep(0.2)


def test_demo_on_real_kube_apiservers_then_local_down_stops_everything(local_state, cli, kubectl, member_layer,
                                                                        kube_apiserver_binary, monkeypatch):
    monkeypatch.chdir(local_state.parent)
    code, out, err = cli("demo", "--members", "2", "--kube-apiserver", str(kube_apiserver_binary))
    assert code == 0, err
    root = members_root(local_state).resolve()

    # FullyApplied and Healthy as with the emulator; the real kubectl sees each member's share
    assert binding_ready(local_state, "default", "nginx-deployment")
    rb = yaml.safe_load(cli.ok("get", "rb", "nginx-deployment", "-o", "yaml"))
    assert {i["clusterName"]: i["health"] for i in rb["status"]["aggregatedStatus"]} == {"member1": "Healthy",
                                                                                         "member2": "Healthy"}
    replicas = {name: kubectl(str(root / name / "kubeconfig"), "get", "deploy", "nginx", "-n", "default",
                              "-o", "jsonpath={.spec.replicas}") for name in ("member1", "member2")}
    assert replicas == {"member1": "1", "member2": "2"}
    member_table = out.split("$ karmactl get deploy -s members")[1].splitlines()
    assert [r.split()[:3] for r in member_table[2:4]] == [["nginx", "member1", "1/1"], ["nginx", "member2", "2/2"]]

    # a real API server: the Cluster reports its version, and the status writer's Nodes are its capacity
    cluster = yaml.safe_load(cli.ok("get", "cluster", "member1", "-o", "yaml"))
    assert cluster["status"]["kubernetesVersion"] == "v1.20.2"
    assert cluster["status"]["resourceSummary"]["allocatable"]["cpu"] == "24"  # 3 Nodes of cpu 8
    server = json.loads((root / "member1" / "server.json").read_text())
    assert server["kind"] == "kube-apiserver" and server["url"].startswith("https://127.0.0.1:")
    assert cluster["spec"]["apiEndpoint"] == server["url"]

    # credentials stay in the member directory, private, and nowhere else
    token = (root / "member1" / "tokens.csv").read_text().split(",")[0]
    for name in ("member1", "member2"):
        d = root / name
        assert stat.S_IMODE(d.stat().st_mode) == stat.S_IMODE((d / "pki").stat().st_mode) == 0o700
        for secret in ("kubeconfig", "tokens.csv", "pki/server.key", "pki/sa.key"):
            assert stat.S_IMODE((d / secret).stat().st_mode) == 0o600, secret
    leaks = [p for p in local_state.rglob("*") if p.is_file() and p.name not in ("kubeconfig", "tokens.csv")
             and token in p.read_text(errors="replace")]
    assert leaks == [] and token not in out + err

    # the status writer covers the other workloads too
    kubeconfig = str(root / "member2" / "kubeconfig")
    (local_state.parent / "extra.yaml").write_text(STATEFULSET)
    kubectl(kubeconfig, "apply", "-f", str(local_state.parent / "extra.yaml"))
    _until("StatefulSet ready", lambda: kubectl(kubeconfig, "get", "sts", "db", "-n", "default",
                                                  "-o", "jsonpath={.status.readyReplicas}") == "2")
    _until("Job complete", lambda: kubectl(kubeconfig, "get", "job", "once", "-n", "default",
                                             "-o", "jsonpath={.status.succeeded}") == "1")

    # local-up without the flag refuses to replace real members by emulators; with the environment
    # variable it reuses them (same processes)
    before = member_pids(local_state)
    code, _out, err = cli("local-up", "--members", "2")
    assert code == 2 and "member1" in err and "holds kube-apiserver data, not emulator" in err
    monkeypatch.setenv("KARMACTL_KUBE_APISERVER", str(kube_apiserver_binary))
    code, out, err = cli("local-up", "--members", "2")
    assert code == 0, err
    assert member_pids(local_state) == before and "already running" in err

    # a member whose status writer died gets a new one on the next local-up; the servers are kept
    writer = json.loads((root / "member2" / "server.json").read_text())["writerPid"]
    os.kill(writer, signal.SIGTERM)
    _until("the status writer to exit", lambda: not pid_alive(writer))
    assert cli("local-up", "--members", "2")[0] == 0
    after = member_pids(local_state)
    assert after["member1"] == before["member1"] and after["member2"][:2] == before["member2"][:2]
    assert after["member2"][2] != writer and pid_alive(after["member2"][2])
    kubectl(kubeconfig, "scale", "sts", "db", "-n", "default", "--replicas", "3")
    _until("StatefulSet scaled and ready", lambda: kubectl(kubeconfig, "get", "sts", "db", "-n", "default",
                                                             "-o", "jsonpath={.status.readyReplicas}") == "3")
    before = after

    # local-down stops kube-apiserver, etcd and the status writer of every member; data kept
    code, out, err = cli("local-down")
    assert code == 0, err
    assert out.split() == ["member1", "stopped", "member2", "stopped"]
    assert not any(pid_alive(p) for pids in before.values() for p in pids)
    assert _processes_naming(root) == []

    # a new local-up restarts on the kept etcd data and credentials: same kubeconfig, objects still there
    code, out, err = cli("local-up", "--members", "2")
    assert code == 0, err
    assert kubectl(kubeconfig, "get", "deploy", "nginx", "-n", "default", "-o", "jsonpath={.spec.replicas}") == "2"
    assert (root / "member1" / "tokens.csv").read_text().split(",")[0] == token

    code, out, err = cli("local-down", "--purge")
    assert code == 0, err
    assert _processes_naming(root) == []
    assert not members_root(local_state).exists()


def test_local_up_refuses_a_missing_kube_apiserver_binary(local_state, cli, tmp_path):
    not_executable = tmp_path / "kube-apiserver"
    not_executable.write_text("#!/bin/sh\n")
    for path in (tmp_path / "missing", not_executable):
        code, out, err = cli("local-up", "--members", "1", "--kube-apiserver", str(path))
        assert code == 2
        assert f"--kube-apiserver {path}: not an executable file" in err
    assert not (local_state / "clusters").exists()


def test_local_up_with_a_failing_kube_apiserver_stops_its_etcd(local_state, cli, tmp_path):
    if shutil.which("etcd") is None and not os.access("/usr/bin/etcd", os.X_OK):
        pytest.skip("etcd is not installed")
    broken = tmp_path / "kube-apiserver"
    broken.write_text("#!/bin/sh\necho 'F1124 12:00:00.000000 1 server.go:1] no way' >&2\nexit 1\n")
    broken.chmod(0o755)
    code, out, err = cli("local-up", "--members", "2", "--kube-apiserver", str(broken))
    assert code == 3
    assert "member1: kube-apiserver did not become ready" in err and "no way" in err
    assert _processes_naming(members_root(local_state).resolve()) == []
    assert member_pids(local_state) == {} and not (local_state / "clusters").exists()
