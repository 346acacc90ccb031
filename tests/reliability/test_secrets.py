"""Secrets are never printed or left behind: every output of runs against TLS members with a bearer
token and an inline client key (failures, ``-v``, kills, Ctrl-C) is scanned for the credentials;
no temporary key file survives a SIGKILL; kubeconfigs karmactl writes are mode 0600."""
from __future__ import annotations

import base64
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from tests.conftest import write

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cr3t-token-0123456789abcdef"


@pytest.fixture
def tls_member(tmp_path, state, monkeypatch):
    from karmactl.emulator import MemberServer

    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))  # the operator's kubeconfig directory
    from karmactl.emulator.tls import ensure_certs

    srv = MemberServer(name="tls1", port=0, tls=True, nodes=1).start()
    srv.hooks.hang_max = 30.0
    pki = tmp_path / "client-pki"
    pki.mkdir()
    _ca, crt, key = ensure_certs(str(pki), "client")
    key_pem = Path(key).read_bytes()
    kc = tmp_path / "kubeconfigs" / "tls1.yaml"
    srv.write_kubeconfig(str(kc), context="tls1")
    cfg = yaml.safe_load(kc.read_text())
    # the user: a token with a trailing newline (an invalid header) plus an inline client key
    cfg["users"][0]["user"] = {"token": TOKEN + "\n",
                               "client-certificate-data": base64.b64encode(Path(crt).read_bytes()).decode(),
                               "client-key-data": base64.b64encode(key_pem).decode()}
    kc.write_text(yaml.safe_dump(cfg))
    write(state / "clusters" / "tls1.yaml", f"""
        apiVersion: cluster.karmada.io/v1alpha1
        kind: Cluster
        metadata:
          name: tls1
          annotations: {{karmactl.io/kubeconfig: ../kubeconfigs/tls1.yaml, karmactl.io/context: tls1}}
        spec: {{syncMode: Push, apiEndpoint: "{srv.url}"}}
        """)
    write(state / "d.yaml", """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: nginx, namespace: default}
        spec:
          replicas: 1
          selector: {matchLabels: {app: nginx}}
          template:
            metadata: {labels: {app: nginx}}
            spec: {containers: [{name: nginx, image: nginx}]}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: nginx, namespace: default}
        spec:
          resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
          placement: {clusterAffinity: {clusterNames: [tls1]}}
        """)
    yield srv, key_pem
    srv.set_hang(False)
    srv.close()


def _secret_bytes(key_pem: bytes) -> list[bytes]:
    body = b"".join(key_pem.splitlines()[1:-1])
    return [TOKEN.encode(), TOKEN[:16].encode(), body[:40], base64.b64encode(key_pem)[:40]]


def _clean(output: str, key_pem: bytes) -> bool:
    data = output.encode()
    return not any(s in data for s in _secret_bytes(key_pem))


def test_no_output_holds_a_credential(cli, state, tls_member):
    _srv, key_pem = tls_member
    outputs = []
    for args in (("reconcile",), ("-v", "reconcile"), ("get", "deploy", "-s", "members"),
                 ("get", "clusters", "-o", "yaml"), ("describe", "cluster", "tls1"), ("plan", "--online")):
        code, out, err = cli(*args)
        assert code not in (70,), (args, err)
        outputs.append(out + err)
    assert any("<redacted>" in o or "Invalid header" in o or "header" in o.lower() for o in outputs), outputs
    for o in outputs:
        assert _clean(o, key_pem), o


def test_kill_and_interrupt_leave_no_key_file_and_print_no_secret(state, tls_member, tmp_path):
    srv, key_pem = tls_member
    kc = tmp_path / "kubeconfigs" / "tls1.yaml"
    cfg = yaml.safe_load(kc.read_text())
    cfg["users"][0]["user"]["token"] = TOKEN  # a usable token: requests are sent
    kc.write_text(yaml.safe_dump(cfg))
    started = threading.Event()
    real_delay = srv.hooks.delay

    def delay():
        started.set()
        real_delay()

    srv.hooks.delay = delay
    srv.set_hang(True)  # every request blocks: the command is killed in the middle of a member call
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp), KARMACTL_MEMBER_TIMEOUT="30")
    for sig in (signal.SIGKILL, signal.SIGINT, signal.SIGTERM):
        proc = subprocess.Popen([sys.executable, "-m", "karmactl", "--state", str(state), "-v", "reconcile"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        started.clear()
        assert started.wait(60), "no member request"  # a member request is under way
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
        if sig != signal.SIGKILL:
            assert proc.returncode == 128 + sig and b"interrupted" in err, err
        assert _clean((out + err).decode(errors="replace"), key_pem), err
        assert list(tmp.rglob("*")) == [], list(tmp.rglob("*"))


def test_kubeconfigs_karmactl_writes_are_private(tmp_path):
    from karmactl.emulator import MemberServer

    srv = MemberServer(name="m", port=0).start()
    try:
        path = srv.write_kubeconfig(str(tmp_path / "kc.yaml"))
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    finally:
        srv.close()
