"""``karmactl reconcile --watch`` (the continuous control loop, issue 25) against emulated members:
the loop runs as a separate process, as an operator runs it, while the test edits files, runs other
commands, stops and starts members, and finally stops it with SIGTERM. Nothing here pins the clock:
the thresholds are a few seconds (karmactl-config), and every wait is a poll with a generous bound
that only detects a hang."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import write
from tests.members.conftest import nginx, policy

REPO = Path(__file__).resolve().parents[2]
LIMIT = 60.0


def _cluster(state: Path, srv) -> None:
    srv.write_kubeconfig(str(state / ".karmactl" / "kubeconfigs" / srv.name), context=srv.name)
    write(state / "clusters" / f"{srv.name}.yaml", f"""
        apiVersion: cluster.karmada.io/v1alpha1
        kind: Cluster
        metadata:
          name: {srv.name}
          annotations:
            karmactl.io/kubeconfig: .karmactl/kubeconfigs/{srv.name}
            karmactl.io/context: {srv.name}
        spec:
          syncMode: Push
          apiEndpoint: {srv.url}
        """)


@pytest.fixture
def fleet(tmp_path, state):
    from karmactl.emulator import MemberServer

    servers = {}
    for name in ("member1", "member2"):
        srv = MemberServer(name=name, port=0, fake_controller=True, fake_delay=0.05, nodes=2).start()
        servers[name] = srv
        _cluster(state, srv)
    write(state / "settings.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: karmactl-config, namespace: karmada-system}
        data:
          clusterFailureThreshold: 2s
          clusterSuccessThreshold: 2s
          clusterStatusUpdateFrequency: 1s
          memberRequestTimeout: 1s
        """)
    nginx(state)
    policy(state)
    yield servers
    for srv in servers.values():
        srv.close()


class Loop:
    """``karmactl reconcile --watch`` in a process of its own; its stderr goes to a file."""

    def __init__(self, state: Path, *args: str):
        self.log = state.parent / "watch.log"
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        env.pop("KARMACTL_STATE", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "karmactl", "--state", str(state), "reconcile", "--watch",
                                      *args], stdout=subprocess.DEVNULL, stderr=self.log.open("w"), env=env,
                                     stdin=subprocess.DEVNULL)

    def text(self) -> str:
        return self.log.read_text()

    def stop(self, sig=signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("reconcile --watch did not stop on " + signal.Signals(sig).name)


def until(what: str, check, loop: Loop, limit: float = LIMIT):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        assert loop.proc.poll() is None, f"the loop exited {loop.proc.returncode} while waiting for {what}:\n{loop.text()}"
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {limit} s\n{loop.text()}")


def replicas(servers) -> dict:
    out = {}
    for name, srv in servers.items():
        if srv.running:
            d = srv.get_object("apps/v1", "Deployment", "default", "nginx")
            out[name] = d["spec"]["replicas"] if d else 0
    return out


def cli(state: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("KARMACTL_STATE", None)
    return subprocess.run([sys.executable, "-m", "karmactl", "--state", str(state), *args], capture_output=True,
                          text=True, env=env, timeout=LIMIT, stdin=subprocess.DEVNULL)


def ready(state: Path, name: str) -> str:
    path = state / "computed" / "status" / "clusters.cluster.karmada.io" / f"{name}.json"
    if not path.exists():
        return ""
    conds = (json.loads(path.read_text()).get("status") or {}).get("conditions") or []
    return next((c["status"] for c in conds if c["type"] == "Ready"), "")


def test_watch_follows_edits_fails_over_and_recovers(state, fleet):
    loop = Loop(state, "--resync", "1h")  # every pass below comes from a file, a member or a probe
    try:
        until("the first placement (1:2)", lambda: replicas(fleet) == {"member1": 1, "member2": 2}, loop)

        # a template edited while the loop runs reaches the members without any command
        deploy = state / "apps" / "nginx.yaml"
        deploy.write_text(deploy.read_text().replace("replicas: 3", "replicas: 6"))
        until("the edit on the members (2:4)", lambda: replicas(fleet) == {"member1": 2, "member2": 4}, loop)

        # other commands work while it runs: the lock is held per pass
        assert cli(state, "get", "deploy", "nginx").returncode == 0
        applied = cli(state, "--lock-timeout", "30s", "create", "namespace", "team-a")  # waits out a pass
        assert applied.returncode == 0, applied.stderr
        until("the namespace on the members", lambda: all(
            srv.get_object("v1", "Namespace", None, "team-a") for srv in fleet.values()), loop)

        # a change made on a member by hand is undone at once: the loop watches the member copies
        kubectl = shutil.which("kubectl")
        if kubectl:
            patched = subprocess.run([kubectl, "--kubeconfig", str(state / ".karmactl" / "kubeconfigs" / "member2"),
                                      "--cache-dir", str(state.parent / "kubectl-cache"), "patch", "deployment", "nginx",
                                      "-n", "default", "--type=merge", "-p", '{"spec":{"replicas":9}}'],
                                     capture_output=True, text=True, timeout=LIMIT)
            assert patched.returncode == 0, patched.stderr
            until("the hand edit undone", lambda: replicas(fleet) == {"member1": 2, "member2": 4}, loop)
            until("the pass the watch triggered", lambda: "(member: member2 Deployment default/nginx" in loop.text(),
                  loop)

        # member1 stops answering: Ready goes False after the threshold, it is tainted and its
        # replicas move to member2, with no command run
        fleet["member1"].stop()
        until("member1 NotReady", lambda: ready(state, "member1") == "False", loop)
        until("every replica on member2", lambda: replicas(fleet).get("member2") == 6, loop)
        taints = json.loads((state / "computed" / "status" / "clusters.cluster.karmada.io" / "member1.json")
                            .read_text()).get("spec", {}).get("taints") or []
        assert any(t["key"] == "cluster.karmada.io/not-ready" and t["effect"] == "NoExecute" for t in taints)
        until("the failing member logged", lambda: "member member1:" in loop.text(), loop)  # the loop goes on

        # member1 returns: Ready again after the success threshold
        fleet["member1"].start()
        until("member1 Ready again", lambda: ready(state, "member1") == "True", loop)
        until("the pass a probe called for", lambda: "cluster status: member1" in loop.text(), loop)
    finally:
        code = loop.stop()
    assert code == 143, loop.text()
    assert "interrupted" in loop.text()
    # stopped between or inside a pass: the state directory is complete, nothing left to replay
    assert not (state / ".karmactl" / "journal.json").exists()
    assert cli(state, "get", "rb").returncode == 0


def test_watch_offline_recomputes_on_file_changes_only(state, tmp_path):
    nginx(state)
    policy(state)
    write(state / "clusters" / "member1.yaml", """
        apiVersion: cluster.karmada.io/v1alpha1
        kind: Cluster
        metadata: {name: member1}
        spec: {syncMode: Push, apiEndpoint: "https://127.0.0.1:1"}
        status:
          conditions: [{type: Ready, status: "True", reason: ClusterReady, lastTransitionTime: "2026-01-01T00:00:00Z"}]
        """)
    loop = Loop(state, "--offline", "--resync", "1h", "--metrics-addr", "127.0.0.1:0")
    rb = state / "computed" / "resourcebindings" / "default" / "nginx-deployment.json"
    try:
        until("the first offline pass", lambda: "pass 1 (start)" in loop.text(), loop)
        assert rb.exists()
        url = re.search(r"metrics on (http://\S+)/metrics", loop.text()).group(1)
        metrics = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
        assert 'karmactl_passes_total{result="ok",trigger="start"} 1.0' in metrics
        assert urllib.request.urlopen(url + "/healthz", timeout=10).read() == b"ok\n"
        first = rb.stat().st_mtime_ns
        time.sleep(1.5)
        assert rb.stat().st_mtime_ns == first and "pass 2" not in loop.text()  # idle: no pass
        deploy = state / "apps" / "nginx.yaml"
        deploy.write_text(deploy.read_text().replace("replicas: 3", "replicas: 5"))
        until("the edit computed", lambda: '"replicas": 5' in rb.read_text(), loop)
        until("the pass the edit triggered", lambda: "files: apps/nginx.yaml" in loop.text(), loop)
        # a broken edit is reported and the loop waits for the next one
        deploy.write_text(deploy.read_text().replace("replicas: 5", 'replicas: "five"'))
        until("the error logged", lambda: "spec.replicas" in loop.text(), loop)
        metrics = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
        assert 'karmactl_passes_total{result="input",trigger="files"} 1.0' in metrics
        deploy.write_text(deploy.read_text().replace('replicas: "five"', "replicas: 4"))
        until("the fix computed", lambda: '"replicas": 4' in rb.read_text(), loop)
    finally:
        code = loop.stop(signal.SIGINT)
    assert code == 130, loop.text()


def test_watch_refuses_flags_that_make_no_sense(state, tmp_path):
    for args in (["--dry-run"], ["--wait"]):
        r = cli(state, "reconcile", "--watch", "--offline", *args)
        assert r.returncode == 2 and "--watch" in r.stderr, r.stderr
    r = cli(state, "--now", "2026-01-01T00:00:00Z", "reconcile", "--watch", "--offline")
    assert r.returncode == 2 and "--now" in r.stderr
    r = cli(state, "reconcile", "--watch", "--offline", "--metrics-addr", "nowhere")
    assert r.returncode == 2 and "HOST:PORT" in r.stderr
