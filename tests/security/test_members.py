"""Member credentials and member I/O under a hostile merge request (issue 23, member part).

A merge request names a Cluster's kubeconfig (annotation ``karmactl.io/kubeconfig``) and writes the
``karmactl-config`` ConfigMap; both are untrusted. These tests play that merge request against
``plan --online`` / ``reconcile`` run as the pipeline runs them (a separate process, a time limit):

- a kubeconfig outside the kubeconfig directory (``--kubeconfig-dir``, default ``<state>/.karmactl``)
  is refused for its Cluster (exit 3, the other members served); symlinks are followed first;
- inside it, an ``exec`` credential plugin or an ``auth-provider`` never runs (canary) unless the
  operator passes ``--allow-exec-plugins``; ``tokenFile`` and the certificate/key paths must resolve
  inside the directory, so no file of the runner is sent as a bearer token (a recording server);
- ``conditionDetectionCommand`` runs only with ``KARMACTL_ALLOW_DETECTION_COMMAND=1`` (else exit 2);
- condition detection keeps the member's client key in memory (no file under ``TMPDIR``);
- a member trickling its response headers costs one request timeout, and a signal stops the run;
- Secret ``data`` of member copies is masked in ``plan --online`` as ``kubectl diff`` masks it.
"""
from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from tests.conftest import write
from tests.security.mr import REPO, SECRET, assert_no_secret, assert_refused, canary, run, secret_file

ENV_VARS = ("KARMACTL_KUBECONFIG_DIR", "KARMACTL_ALLOW_EXEC_PLUGINS", "KARMACTL_ALLOW_DETECTION_COMMAND",
            "KARMACTL_MEMBER_TIMEOUT")


@pytest.fixture(autouse=True)
def _operator_environment(monkeypatch):
    """The runner's environment names no kubeconfig directory and allows nothing."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KARMACTL_MEMBER_TIMEOUT", "2")


# ---------------------------------------------------------------------------- helpers
class _Recorder(BaseHTTPRequestHandler):
    """Answers every request 404 (a Status) and records its Authorization header."""

    seen: list

    def log_message(self, *a):
        pass

    def _answer(self):
        self.seen.append(self.headers.get("Authorization") or "")
        body = b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer  # noqa: N815


@pytest.fixture
def recorder():
    """A localhost HTTP server standing in for the MR's server: ``(url, seen Authorization headers)``."""
    seen: list = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), type("R", (_Recorder,), {"seen": seen}))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", seen
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def emulated(tmp_path):
    """Emulated members started on demand; their kubeconfigs in ``<state>/.karmactl/kubeconfigs``."""
    from karmactl.emulator import MemberServer

    servers = []

    def start(state: Path, name: str, **kw):
        srv = MemberServer(name=name, port=0, data_dir=str(tmp_path / "data" / name), **kw).start()
        servers.append(srv)
        kc = state / ".karmactl" / "kubeconfigs" / f"{name}.yaml"
        srv.write_kubeconfig(str(kc), context=name)
        cluster(state, name, f".karmactl/kubeconfigs/{name}.yaml", srv.url)
        return srv

    yield start
    for srv in servers:
        srv.set_hang(False)
        srv.close()


def kubeconfig(path: Path, server: str, user: dict, name: str = "evil", cluster_extra: dict | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": name,
        "clusters": [{"name": name, "cluster": {"server": server, **(cluster_extra or {})}}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}]}))
    return path


def cluster(state: Path, name: str, annotation: str, server: str) -> None:
    write(state / "clusters" / f"{name}.yaml", f"""
        apiVersion: cluster.karmada.io/v1alpha1
        kind: Cluster
        metadata:
          name: {name}
          annotations: {{karmactl.io/kubeconfig: "{annotation}", karmactl.io/context: {name}}}
        spec: {{syncMode: Push, apiEndpoint: "{server}"}}
        """)


def workload(state: Path, clusters: list[str]) -> None:
    write(state / "apps" / "nginx.yaml", f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: nginx, namespace: default}}
        spec:
          replicas: 1
          selector: {{matchLabels: {{app: nginx}}}}
          template:
            metadata: {{labels: {{app: nginx}}}}
            spec: {{containers: [{{name: nginx, image: nginx}}]}}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: nginx, namespace: default}}
        spec:
          resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: nginx}}]
          placement:
            clusterAffinity: {{clusterNames: [{", ".join(clusters)}]}}
            replicaScheduling: {{replicaSchedulingType: Duplicated}}
        """)


def plugin_script(base: Path, pwned: Path) -> Path:
    """A credential plugin the MR commits: it creates the canary and answers with the CI secret."""
    script = base / "state" / "evil" / "plugin.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"""import json
open({str(pwned)!r}, "w").write("ran")
token = open({str(base / "ci-secret")!r}).read().strip()
print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                  "status": {{"token": token}}, "access_token": token, "token_expiry": "2099-01-01T00:00:00Z"}}))
""")
    return script


def _state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    secret_file(tmp_path)
    return state


# ---------------------------------------------------------------------------- 1. credential plugins and files
@pytest.mark.parametrize("where", ["committed-in-state", "inside-kubeconfig-dir"])
def test_an_exec_plugin_named_by_the_mr_never_runs(tmp_path, recorder, where):
    state = _state(tmp_path)
    url, seen = recorder
    pwned = canary(tmp_path)
    script = plugin_script(tmp_path, pwned)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": [str(script)], "interactiveMode": "Never"}}
    rel = "evil/kubeconfig.yaml" if where == "committed-in-state" else ".karmactl/kubeconfigs/evil.yaml"
    kubeconfig(state / rel, url, user)
    cluster(state, "evil", rel, url)
    result = run(state, "plan", "--online")
    assert not pwned.exists(), "the exec plugin ran"
    assert not any(SECRET in h for h in seen), seen
    assert_no_secret(result, state)
    phrase = "outside the kubeconfig directory" if where == "committed-in-state" else "--allow-exec-plugins"
    assert_refused(result, "member evil:", phrase, codes=(1, 3))
    if where == "inside-kubeconfig-dir":  # the operator's opt-in runs it: the canary can catch a run
        allowed = run(state, "--allow-exec-plugins", "plan", "--online")
        assert pwned.exists(), allowed.err


def test_an_auth_provider_command_never_runs(tmp_path, recorder):
    state = _state(tmp_path)
    url, seen = recorder
    pwned = canary(tmp_path)
    script = plugin_script(tmp_path, pwned)
    user = {"auth-provider": {"name": "gcp", "config": {"cmd-path": f"{sys.executable} {script}",
                                                         "token-key": "{.access_token}"}}}
    kubeconfig(state / ".karmactl" / "kubeconfigs" / "evil.yaml", url, user)
    cluster(state, "evil", ".karmactl/kubeconfigs/evil.yaml", url)
    result = run(state, "plan", "--online")
    assert not pwned.exists(), "the auth-provider command ran"
    assert not any(SECRET in h for h in seen), seen
    assert_refused(result, "member evil:", "auth-provider", "--allow-exec-plugins", codes=(1, 3))


@pytest.mark.parametrize("field", ["tokenFile", "tokenFile-relative", "client-certificate", "client-key",
                                   "certificate-authority"])
def test_credential_files_outside_the_kubeconfig_dir_are_refused(tmp_path, recorder, field):
    state = _state(tmp_path)
    url, seen = recorder
    secret = str(tmp_path / "ci-secret")
    cluster_extra, user, server = {}, {}, url
    if field == "tokenFile":
        user = {"tokenFile": secret}
    elif field == "tokenFile-relative":
        user = {"tokenFile": "../../../ci-secret"}
    elif field.startswith("client-"):
        server = url.replace("http:", "https:")
        inside = state / ".karmactl" / "kubeconfigs" / "client.pem"
        inside.parent.mkdir(parents=True, exist_ok=True)
        inside.write_text("not a certificate")
        user = {"client-certificate": secret if field == "client-certificate" else str(inside),
                "client-key": secret if field == "client-key" else str(inside)}
    else:
        server = url.replace("http:", "https:")
        cluster_extra = {"certificate-authority": secret}
    kubeconfig(state / ".karmactl" / "kubeconfigs" / "evil.yaml", server, user, cluster_extra=cluster_extra)
    cluster(state, "evil", ".karmactl/kubeconfigs/evil.yaml", server)
    result = run(state, "plan", "--online")
    assert not any(SECRET in h for h in seen), seen
    assert seen == [], "a request was sent with a refused kubeconfig"
    assert_no_secret(result, state)
    assert_refused(result, "member evil:", field.split("-relative")[0], "outside the kubeconfig directory", codes=(1, 3))


@pytest.mark.parametrize("how", ["relative", "absolute", "symlink"])
def test_a_kubeconfig_outside_the_dir_is_refused_and_the_others_served(tmp_path, recorder, emulated, how):
    state = _state(tmp_path)
    url, seen = recorder
    good = emulated(state, "good")
    outside = kubeconfig(tmp_path / "outside.yaml", url, {"token": "mr-token"})
    annotation = {"relative": "../outside.yaml", "absolute": str(outside)}.get(how)
    if how == "symlink":
        link = state / ".karmactl" / "kubeconfigs" / "link.yaml"
        link.symlink_to(outside)
        annotation = ".karmactl/kubeconfigs/link.yaml"
    cluster(state, "evil", annotation, url)
    workload(state, ["good", "evil"])
    result = run(state, "reconcile")
    assert_refused(result, "member evil:", "Cluster evil", "karmactl.io/kubeconfig", "outside the kubeconfig directory",
                   codes=(3,))
    assert seen == [], "the refused kubeconfig was used"
    assert good.get_object("apps/v1", "Deployment", "default", "nginx") is not None, result.err
    # the operator names a directory that holds it: it is used
    allowed = run(state, "--kubeconfig-dir", str(tmp_path), "plan", "--online")
    assert "outside the kubeconfig directory" not in allowed.err, allowed.err
    assert seen, allowed.err


def test_join_refuses_a_kubeconfig_outside_the_dir_and_says_where_to_put_it(tmp_path, emulated):
    from karmactl.emulator import MemberServer

    state = _state(tmp_path)
    srv = MemberServer(name="m9", port=0).start()
    try:
        kc = srv.write_kubeconfig(str(tmp_path / "elsewhere" / "m9.yaml"), context="m9")
        result = run(state, "join", "m9", "--kubeconfig", kc)
        assert_refused(result, "outside the kubeconfig directory", str(state / ".karmactl"), "--kubeconfig-dir")
        assert not (state / "clusters").exists() or not list((state / "clusters").iterdir())
        inside = srv.write_kubeconfig(str(state / ".karmactl" / "kubeconfigs" / "m9.yaml"), context="m9")
        result = run(state, "join", "m9", "--kubeconfig", inside)
        assert result.code == 0, result.err
        assert "karmactl.io/kubeconfig: .karmactl/kubeconfigs/m9.yaml" in (state / "clusters" / "m9.yaml").read_text()
    finally:
        srv.close()


# ---------------------------------------------------------------------------- 2. conditionDetectionCommand
REMEDY = """
apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: dns}
spec:
  decisionMatches:
  - clusterConditionMatch: {conditionType: ServiceDomainNameResolutionReady, operator: Equal, conditionStatus: "False"}
  actions: [TrafficControl]
"""


def _detection_config(state: Path, code: str) -> None:
    write(state / "settings.yaml", f"""
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: karmactl-config, namespace: karmada-system}}
        data:
          conditionDetectionCommand: {json.dumps(f'{sys.executable} -c "{code}"')}
        """)


def test_the_detection_command_of_the_configmap_runs_only_when_the_operator_allows_it(tmp_path, emulated):
    state = _state(tmp_path)
    emulated(state, "member1")
    write(state / "remedy.yaml", REMEDY)
    pwned = canary(tmp_path)
    _detection_config(state, f"open(r'{pwned}', 'w'); import sys; "
                             f"print('password: ' + open(r'{tmp_path / 'ci-secret'}').read(), file=sys.stderr); sys.exit(1)")
    before = sorted(p for p in state.rglob("*") if ".karmactl" not in p.parts)
    result = run(state, "reconcile")
    assert not pwned.exists(), "the ConfigMap's command ran"
    assert_refused(result, "karmactl-config", "conditionDetectionCommand", "KARMACTL_ALLOW_DETECTION_COMMAND")
    assert sorted(p for p in state.rglob("*") if ".karmactl" not in p.parts) == before
    allowed = run(state, "reconcile", env={"KARMACTL_ALLOW_DETECTION_COMMAND": "1"})
    assert pwned.exists(), allowed.err
    assert allowed.code == 0, allowed.err
    assert_no_secret(allowed, state)  # its stderr is redacted before it reaches a condition or a log
    assert_no_secret(run(state, "plan", "--online", env={"KARMACTL_ALLOW_DETECTION_COMMAND": "1"}), state)


# ---------------------------------------------------------------------------- 3. no key material on disk
def test_condition_detection_writes_no_key_file(tmp_path, monkeypatch, cli, state):
    import tempfile

    from karmactl.emulator import MemberServer
    from karmactl.emulator.tls import ensure_certs

    srv = MemberServer(name="tls1", port=0, tls=True, nodes=1).start()
    try:
        pki = tmp_path / "client-pki"
        pki.mkdir()
        _ca, crt, key = ensure_certs(str(pki), "client")
        kc = state / ".karmactl" / "kubeconfigs" / "tls1.yaml"
        srv.write_kubeconfig(str(kc), context="tls1")
        cfg = yaml.safe_load(kc.read_text())
        cfg["users"][0]["user"] = {"client-certificate-data": base64.b64encode(Path(crt).read_bytes()).decode(),
                                   "client-key-data": base64.b64encode(Path(key).read_bytes()).decode()}
        kc.write_text(yaml.safe_dump(cfg))
        cluster(state, "tls1", ".karmactl/kubeconfigs/tls1.yaml", srv.url)
        write(state / "remedy.yaml", REMEDY)
        tmp = tmp_path / "tmpdir"
        tmp.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(tmp))
        monkeypatch.setenv("TMPDIR", str(tmp))
        code, _out, err = cli("reconcile")
        assert code in (0, 3), err
        assert (srv.request_log and any("kube-system" in e["path"] for e in srv.request_log)), "detection probed nothing"
        assert list(tmp.rglob("*")) == [], list(tmp.rglob("*"))
    finally:
        srv.close()


# ---------------------------------------------------------------------------- 4. a member trickling headers
@pytest.fixture
def trickler():
    """A server that answers every connection with one byte of a status line per 0.5 second."""
    listener = socket.create_server(("127.0.0.1", 0))
    connected = threading.Event()
    stop = threading.Event()

    def serve(conn):
        with conn:
            try:
                conn.recv(65536)
                connected.set()
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100000:
                    if stop.wait(0.5):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:
                pass

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", connected
    stop.set()
    listener.close()


def test_a_member_trickling_headers_costs_one_timeout(tmp_path, emulated, trickler):
    state = _state(tmp_path)
    url, _connected = trickler
    good = emulated(state, "good")
    kubeconfig(state / ".karmactl" / "kubeconfigs" / "slow.yaml", url, {"token": "t0ken-slow"}, name="slow")
    cluster(state, "slow", ".karmactl/kubeconfigs/slow.yaml", url)
    workload(state, ["good", "slow"])
    result = run(state, "reconcile", env={"KARMACTL_MEMBER_TIMEOUT": "2"}, timeout=40)
    assert result.code == 3, result.err
    assert "member slow:" in result.err and "timed out" in result.err, result.err
    assert good.get_object("apps/v1", "Deployment", "default", "nginx") is not None


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_a_run_waiting_on_trickled_headers(tmp_path, trickler, sig, code):
    state = _state(tmp_path)
    url, connected = trickler
    kubeconfig(state / ".karmactl" / "kubeconfigs" / "slow.yaml", url, {"token": "t0ken-slow"}, name="slow")
    cluster(state, "slow", ".karmactl/kubeconfigs/slow.yaml", url)
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env.update(PYTHONPATH=str(REPO), KARMACTL_MEMBER_TIMEOUT="300")
    proc = subprocess.Popen([sys.executable, "-m", "karmactl", "--state", str(state), "reconcile"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert connected.wait(30), "karmactl never reached the member"
        start = time.monotonic()
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
        assert time.monotonic() - start < 10, "the signal did not stop the run"
        assert proc.returncode == code, err
        assert b"interrupted" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------------------- 5. Secret data in diffs
def test_plan_online_masks_the_data_of_member_secrets(tmp_path, emulated):
    state = _state(tmp_path)
    srv = emulated(state, "member1")
    write(state / "apps" / "secret.yaml", """
        apiVersion: v1
        kind: Secret
        metadata: {name: db, namespace: default}
        type: Opaque
        data: {password: djEtdmFsdWU=, user: YWRtaW4=}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: db, namespace: default}
        spec:
          resourceSelectors: [{apiVersion: v1, kind: Secret, name: db}]
          placement: {clusterAffinity: {clusterNames: [member1]}}
        """)
    assert run(state, "reconcile").code == 0
    live = srv.get_object("v1", "Secret", "default", "db")
    assert live is not None
    encoded = base64.b64encode(SECRET.encode()).decode()
    live["data"] = {"password": encoded, "user": "YWRtaW4=", "extra": encoded}
    srv.store.replace(srv._type("v1", "Secret"), "default", "db", live)
    result = run(state, "plan", "--online")
    assert result.code == 1, result.err
    assert encoded not in result.text and SECRET not in result.text, result.out
    assert "*** (before)" in result.out and "*** (after)" in result.out, result.out
    assert "djEtdmFsdWU=" not in result.out and "YWRtaW4=" not in result.out, result.out
    # describe shows sizes, as kubectl describe secret does
    described = run(state, "describe", "secret", "db")
    assert "password:  8 bytes" in described.out and "djEtdmFsdWU=" not in described.out, described.out
