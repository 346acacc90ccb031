"""Bounded member I/O: a member answering garbage, the wrong shape, or trickling bytes is that
member's failure (exit 3, a clear message), within the request timeout; the others are served."""
from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import write
from tests.members.conftest import members, nginx  # noqa: F401  (fixture)
from tests.reliability.hostile import policy_for


class _Hostile(BaseHTTPRequestHandler):
    mode = "nonjson"

    def log_message(self, *a):
        pass

    def do_GET(self):  # noqa: N802
        if self.path in ("/readyz", "/healthz"):
            return self._send(b"ok")
        if self.mode == "nonjson":
            return self._send(b"<html>hello</html>")
        if self.mode == "shape":
            return self._send(b'["not", "an", "object"]' if self.path == "/version" else b'{"versions": 7, "groups": [1]}')
        if self.mode == "trickle":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "60")
            self.end_headers()
            try:
                for _ in range(60):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.5)
            except OSError:
                pass

    def _send(self, body: bytes):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def hostile(tmp_path, state):
    servers = []

    def start(name: str, mode: str):
        handler = type(f"H{mode}", (_Hostile,), {"mode": mode})
        srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        kc = tmp_path / "kubeconfigs" / f"{name}.yaml"
        kc.parent.mkdir(exist_ok=True)
        kc.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: {name}, cluster: {{server: "{url}"}}}}]
users: [{{name: {name}, user: {{token: secret-token-{name}}}}}]
contexts: [{{name: {name}, context: {{cluster: {name}, user: {name}}}}}]
current-context: {name}
""")
        write(state / "clusters" / f"{name}.yaml", f"""
            apiVersion: cluster.karmada.io/v1alpha1
            kind: Cluster
            metadata:
              name: {name}
              annotations: {{karmactl.io/kubeconfig: ../kubeconfigs/{name}.yaml, karmactl.io/context: {name}}}
            spec: {{syncMode: Push, apiEndpoint: "{url}"}}
            """)

    yield start
    for srv in servers:
        srv.shutdown()


@pytest.mark.parametrize("mode,phrase", [("nonjson", "malformed answer"), ("shape", "malformed"),
                                         ("trickle", "timed out after 1s")])
def test_one_bad_member_fails_alone(cli, state, members, hostile, mode, phrase):  # noqa: F811
    hostile("bad", mode)
    nginx(state)
    (state / "policy.yaml").write_bytes(policy_for("member1", "bad"))
    code, _out, err = cli("reconcile", "--now", "2026-01-01T00:00:10Z")
    assert code == 3, err
    assert "member bad:" in err and phrase in err, err
    assert "internal error" not in err and "secret-token" not in err, err
    assert members.deploy("member1") is not None
    code, out, err = cli("get", "clusters", "-o", "name")
    assert code == 0, err
