"""Local member clusters as background processes: what ``karmactl local-up``/``local-down`` run.

A local member lives in ``<state>/.karmactl/members/<name>/`` (git-ignored) and is one of three kinds:

- ``emulator`` (the default, nothing to install): ``python -m karmactl.emulator serve`` with the fake
  controller and Nodes; it writes ``server.json`` itself once listening.
- ``kube-apiserver``: a real kube-apiserver binary (the path the user gives) on its own etcd (``etcd``
  on PATH, else ``/usr/bin/etcd``), TLS with a CA generated here, a bearer-token admin in
  ``system:masters``, plus :mod:`karmactl.emulator.status_writer` standing in for the controllers the
  real server lacks. The three processes' pids are in ``server.json``. Credentials (``pki/``,
  ``tokens.csv``, ``kubeconfig``) stay in the member directory, mode 0600 in 0700 directories, and
  are kept across restarts so the kubeconfig stays valid; they are never logged.
- ``kube-cluster``: a whole real cluster (controllers, scheduler, nodes) started by a cluster
  launcher the user names (``karmactl/emulator/launcher.py``); it writes the status itself.

Every process is started in its own session with stdin/stdout/stderr redirected, so the caller's
terminal and pipes are not held and Ctrl-C there does not stop the members. Processes are only
signalled when their command line still names the member (never a recycled pid).

Errors: :class:`LocalUsageError` for bad input (the CLI's exit 2), :class:`MemberStartError` when a
member does not start (exit 3).
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from karmactl.emulator import launcher

MEMBERS_DIR = Path(".karmactl") / "members"
NODE_COUNT = 3
READY_TIMEOUT = 20.0          # seconds for an emulator to listen
REAL_READY_TIMEOUT = 120.0    # seconds for etcd + kube-apiserver + status writer (busy machines are slow)
STOP_TIMEOUT = 10.0
EMULATOR = "emulator"
KUBE_APISERVER = "kube-apiserver"

# Popen objects of members this process started, so they can be reaped (no zombie, no ResourceWarning).
_CHILDREN: dict[int, subprocess.Popen] = {}
_CHILDREN_LOCK = threading.Lock()


class LocalUsageError(ValueError):
    """Bad input for local members: a bad count, a taken port, a missing binary, a kind mismatch."""


class MemberStartError(RuntimeError):
    """A local member did not start; the message quotes its log's tail."""


def members_root(state: Path) -> Path:
    """``<state>/.karmactl/members`` (the ``.karmactl`` directory gets a ``.gitignore`` of ``*``)."""
    return Path(state) / MEMBERS_DIR


def member_order(name: str):
    """Sort key: ``member2`` before ``member10``, other names after, alphabetically."""
    digits = name[len("member"):] if name.startswith("member") else ""
    return (0, int(digits)) if digits.isdigit() else (1, name)


# ============================================================================ processes
def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not count; our own exited children are reaped)."""
    child = _CHILDREN.get(pid)
    if child is not None:
        if child.poll() is not None:
            _CHILDREN.pop(pid, None)
            return False
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _cmdline(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0")]
    except OSError:
        return None


def _owned(pid: int, marker: str, path_marker: bool) -> bool:
    """Whether ``pid`` is still ours: an argument equals ``marker`` (an emulator's member name, next
    to ``karmactl.emulator``) or, for ``path_marker``, contains the member directory ``marker/``."""
    args = _cmdline(pid)
    if args is None:
        return pid_alive(pid)  # no /proc: trust the pid file
    if path_marker:
        return any(marker + os.sep in a for a in args)
    return "karmactl.emulator" in args and marker in args


def _spawn(cmd: list[str], log: Path, cwd: Path, env: dict | None = None) -> subprocess.Popen:
    """Start ``cmd`` detached (own session, no terminal), appending its output to ``log``."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True, env=env, cwd=str(cwd))
    with _CHILDREN_LOCK:
        _CHILDREN[proc.pid] = proc
    return proc


def _stop(pid: int, marker: str, path_marker: bool, timeout: float = STOP_TIMEOUT) -> bool:
    if pid <= 0 or not pid_alive(pid) or not _owned(pid, marker, path_marker):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child = _CHILDREN.pop(pid, None)
    if child is not None:
        child.wait(5)
    return True


def stop_pid(pid: int, name: str, timeout: float = STOP_TIMEOUT) -> bool:
    """SIGTERM an emulator process serving ``name`` and wait for it to exit (SIGKILL after ``timeout``
    seconds). Returns True if it ran."""
    return _stop(pid, name, False, timeout)


def _stop_in(pid: int, d: Path, timeout: float = STOP_TIMEOUT) -> bool:
    """As :func:`stop_pid` for a process whose command line names the member directory ``d``."""
    return _stop(pid, str(Path(d).resolve()), True, timeout)


def port_free(port: int) -> bool:
    """Whether nothing listens on ``127.0.0.1:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _log_tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "no output"
    # kube-apiserver may end with a goroutine dump: quote klog lines when there are any
    klog = [t for t in text if len(t) > 5 and t[0] in "IWEF" and t[1:5].isdigit()]
    return " | ".join(t[:300] for t in (klog or text)[-lines:]) or "no output"


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _ready(url: str, cafile: str | None = None, timeout: float = 2.0) -> bool:
    """``GET <url>/readyz`` answers 200 (anonymous: the real server lets anyone read /readyz)."""
    context = ssl.create_default_context(cafile=cafile) if cafile else None
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/readyz", timeout=timeout, context=context) as resp:
            return resp.status == 200
    except Exception:  # noqa: BLE001 - any failure means "not ready"
        return False


def _previous(d: Path) -> dict:
    """``local-up.json``: ``{"port", "kind"}`` of the member's last start (``{}`` when none)."""
    return _read_json(d / "local-up.json") or {}


def member_kind(d: Path) -> str | None:
    """The kind of member whose data ``d`` holds (``emulator`` / ``kube-apiserver``), None when empty."""
    kind = _previous(d).get("kind")
    if kind:
        return str(kind)
    if (d / "etcd").is_dir():
        return KUBE_APISERVER
    if (d / "objects.json").exists() or (d / "emulator.log").exists():
        return EMULATOR
    return None


# ============================================================================ emulator members
def start_member(name: str, d: Path, port: int = 0, nodes: int = NODE_COUNT, fake_controller: bool = True) -> subprocess.Popen:
    """Start ``python -m karmactl.emulator serve`` detached (own session), logging to ``d/emulator.log``.

    Returns the Popen; wait for it with :func:`wait_member`.
    """
    d = Path(d).resolve()
    _private_dir(d)  # its kubeconfig and data: 0700, as README says
    _unlink(d / "server.json")
    cmd = [sys.executable, "-m", "karmactl.emulator", "serve", "--name", name, "--port", str(port),
           "--data-dir", str(d), "--nodes", str(nodes)]
    if fake_controller:
        cmd.append("--fake-controller")
    return _spawn(cmd, d / "emulator.log", d, _child_env())


def _child_env() -> dict:
    """The environment for karmactl's own child processes: this karmactl first on PYTHONPATH."""
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def wait_member(name: str, d: Path, proc: subprocess.Popen, timeout: float = READY_TIMEOUT) -> dict:
    """Wait until the started emulator wrote ``server.json`` and answers ``/readyz``.

    Returns:
        ``server.json``: ``{"name", "port", "pid", "url"}``.

    Raises:
        MemberStartError: the process exits or is not ready within ``timeout`` seconds (the log's
            tail is quoted).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            _CHILDREN.pop(proc.pid, None)
            break
        info = _read_json(d / "server.json")
        if info and info.get("pid") == proc.pid and _ready(info["url"]):
            _write_json(d / "local-up.json", {"port": info["port"], "kind": EMULATOR})
            return info
        time.sleep(0.05)
    else:
        stop_pid(proc.pid, name)
    raise MemberStartError(f"member {name} did not start (log {d / 'emulator.log'}): {_log_tail(d / 'emulator.log')}")


# ============================================================================ kube-apiserver members
def find_etcd() -> str:
    """``etcd`` on PATH, else ``/usr/bin/etcd``.

    Raises:
        LocalUsageError: neither exists.
    """
    found = shutil.which("etcd") or ("/usr/bin/etcd" if os.access("/usr/bin/etcd", os.X_OK) else None)
    if not found:
        raise LocalUsageError("etcd is needed next to --kube-apiserver but is not on PATH nor at /usr/bin/etcd "
                              "(Debian/Ubuntu: apt-get install etcd-server)")
    return found


def check_binary(path: str) -> str:
    """The absolute path of an executable kube-apiserver binary.

    Raises:
        LocalUsageError: ``path`` is not an executable file.
    """
    p = Path(os.path.expanduser(path))
    if not p.is_file() or not os.access(p, os.X_OK):
        raise LocalUsageError(f"--kube-apiserver {path}: not an executable file (give the path of a kube-apiserver "
                              f"binary, e.g. one unpacked from the Kubernetes server release)")
    return str(p.resolve())


def _private_dir(d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _credentials(name: str, d: Path) -> dict:
    """Create once (and keep) the member's CA, serving certificate, service-account key and admin token.

    Returns ``{"ca", "cert", "key", "sa_key", "sa_pub", "tokens", "token"}`` (paths, and the token).
    """
    from .tls import ensure_certs

    pki = d / "pki"
    _private_dir(pki)
    ca, cert, key = ensure_certs(str(pki), name)
    sa_key, sa_pub = pki / "sa.key", pki / "sa.pub"
    if not (sa_key.exists() and sa_pub.exists()):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        k = ec.generate_private_key(ec.SECP256R1())
        _write_private(sa_key, k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        _write_private(sa_pub, k.public_key().public_bytes(serialization.Encoding.PEM,
                                                           serialization.PublicFormat.SubjectPublicKeyInfo))
    tokens = d / "tokens.csv"
    token = ""
    if tokens.exists():
        token = tokens.read_text(encoding="utf-8").split(",", 1)[0].strip()
    if not token:
        token = secrets.token_hex(24)
        _write_private(tokens, f'{token},admin,admin,"system:masters"\n'.encode())
    return {"ca": ca, "cert": cert, "key": key, "sa_key": str(sa_key), "sa_pub": str(sa_pub),
            "tokens": str(tokens), "token": token}


def _write_kubeconfig(path: Path, name: str, server: str, ca_file: str, token: str) -> None:
    import base64

    import yaml

    with open(ca_file, "rb") as f:
        ca_data = base64.b64encode(f.read()).decode()
    cfg = {"apiVersion": "v1", "kind": "Config", "preferences": {},
           "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
           "users": [{"name": name, "user": {"token": token}}],
           "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
           "current-context": name}
    _write_private(path, yaml.safe_dump(cfg, sort_keys=False).encode())


def _wait(ok: Callable[[], bool], proc: subprocess.Popen, deadline: float) -> bool:
    """Poll ``ok()`` until it holds (True), ``proc`` exits or ``deadline`` passes (False)."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if ok():
            return True
        time.sleep(0.2)
    return False


def _etcd_healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as resp:
            return json.loads(resp.read()).get("health") == "true"
    except Exception:  # noqa: BLE001 - any failure means "not healthy"
        return False


def _has_default_namespace(server: str, cafile: str, token: str) -> bool:
    """The bootstrap controller created namespace ``default`` (``/readyz`` can pass a moment before)."""
    req = urllib.request.Request(server + "/api/v1/namespaces/default", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=2, context=ssl.create_default_context(cafile=cafile)) as resp:
            return resp.status == 200
    except Exception:  # noqa: BLE001 - any failure means "not yet"
        return False


def _start_etcd(name: str, d: Path, etcd: str, deadline: float) -> tuple[subprocess.Popen, str]:
    """Start etcd on two free ports (retried when a port is taken meanwhile); returns it and its client URL."""
    log = d / "etcd.log"
    for _attempt in range(5):
        client, peer = _free_port(), _free_port()
        url, peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
        proc = _spawn([etcd, "--name", name, "--data-dir", str(d / "etcd"),
                       "--listen-client-urls", url, "--advertise-client-urls", url,
                       "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                       "--initial-cluster", f"{name}={peer_url}", "--initial-cluster-state", "new",
                       "--snapshot-count", "10000", "--logger", "zap", "--log-outputs", "stderr",
                       "--log-level", "warn"], log, d)
        if _wait(lambda: _etcd_healthy(url), proc, deadline):
            return proc, url
        _stop_in(proc.pid, d)
        if proc.poll() is None or "address already in use" not in _log_tail(log, 20):
            break
    raise MemberStartError(f"member {name}: etcd did not start (log {log}): {_log_tail(log)}")


def _start_apiserver(name: str, d: Path, binary: str, etcd_url: str, creds: dict, port: int,
                     deadline: float) -> tuple[subprocess.Popen, int]:
    """Start kube-apiserver (TLS, token auth, RBAC) and wait for ``/readyz`` and namespace ``default``."""
    log = d / "kube-apiserver.log"
    for _attempt in range(1 if port else 3):
        p = port or _free_port()
        server = f"https://127.0.0.1:{p}"
        proc = _spawn([binary, "--etcd-servers", etcd_url,
                       "--bind-address", "127.0.0.1", "--secure-port", str(p),
                       "--advertise-address", "127.0.0.1", "--endpoint-reconciler-type", "none",
                       "--tls-cert-file", creds["cert"], "--tls-private-key-file", creds["key"],
                       "--cert-dir", str(d / "pki"), "--token-auth-file", creds["tokens"],
                       "--authorization-mode", "RBAC",
                       "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
                       "--service-account-key-file", creds["sa_pub"],
                       "--service-account-signing-key-file", creds["sa_key"],
                       "--service-cluster-ip-range", "10.96.0.0/12",
                       "--disable-admission-plugins", "ServiceAccount",
                       "--allow-privileged=true", "--profiling=false"], log, d)
        if _wait(lambda: _ready(server, creds["ca"]) and
                 _has_default_namespace(server, creds["ca"], creds["token"]), proc, deadline):
            return proc, p
        _stop_in(proc.pid, d)
        if port or "address already in use" not in _log_tail(log, 20):
            break
    raise MemberStartError(f"member {name}: kube-apiserver did not become ready (log {log}): {_log_tail(log)}")


def _start_writer(name: str, d: Path, nodes: int, deadline: float) -> subprocess.Popen:
    """Start the status writer and wait until it has created the Nodes and watches workloads."""
    ready = d / "status-writer.json"
    _unlink(ready)
    log = d / "status-writer.log"
    proc = _spawn([sys.executable, "-m", "karmactl.emulator.status_writer", "--name", name,
                   "--kubeconfig", str(d / "kubeconfig"), "--nodes", str(nodes), "--ready-file", str(ready)],
                  log, d, _child_env())
    if _wait(lambda: (_read_json(ready) or {}).get("pid") == proc.pid, proc, deadline):
        return proc
    _stop_in(proc.pid, d)
    raise MemberStartError(f"member {name}: the status writer did not start (log {log}): {_log_tail(log)}")


def start_real_member(name: str, d: Path, binary: str, etcd: str, port: int = 0, nodes: int = NODE_COUNT,
                      timeout: float = REAL_READY_TIMEOUT) -> dict:
    """Start etcd, kube-apiserver and the status writer for one member and wait until it serves.

    Data (``etcd/``), credentials and logs stay in ``d``; a restart reuses them, so the member keeps
    its objects and its kubeconfig. ``port`` 0 picks a free one.

    Returns:
        ``server.json``: ``{"name", "kind": "kube-apiserver", "url", "port", "pid" (kube-apiserver),
        "etcdPid", "writerPid"}``.

    Raises:
        MemberStartError: a process did not start within ``timeout`` seconds; whatever was started
            is stopped again and the failing log's tail is quoted.
    """
    d = Path(d).resolve()
    _private_dir(d)
    _unlink(d / "server.json")
    deadline = time.monotonic() + timeout
    creds = _credentials(name, d)
    started: list[subprocess.Popen] = []
    try:
        etcd_proc, etcd_url = _start_etcd(name, d, etcd, deadline)
        started.append(etcd_proc)
        api_proc, api_port = _start_apiserver(name, d, binary, etcd_url, creds, port, deadline)
        started.append(api_proc)
        server = f"https://127.0.0.1:{api_port}"
        _write_kubeconfig(d / "kubeconfig", name, server, creds["ca"], creds["token"])
        writer = _start_writer(name, d, nodes, deadline)
        started.append(writer)
    except BaseException:
        for proc in reversed(started):
            _stop_in(proc.pid, d)
        raise
    info = {"name": name, "kind": KUBE_APISERVER, "url": server, "port": api_port, "pid": api_proc.pid,
            "etcdPid": etcd_proc.pid, "writerPid": writer.pid}
    _write_json(d / "server.json", info)
    _write_json(d / "local-up.json", {"port": api_port, "kind": KUBE_APISERVER})
    return info


def _stop_real(d: Path, info: dict) -> bool:
    """Stop the status writer, then kube-apiserver, then etcd; True if any of them ran."""
    ran = False
    for key in ("writerPid", "pid", "etcdPid"):
        ran = _stop_in(int(info.get(key) or 0), d) or ran
    return ran


# ============================================================================ both kinds
def running_member(d: Path) -> dict | None:
    """``server.json`` of a member that runs and answers ``/readyz``, else None.

    A kube-apiserver member whose status writer died gets a new writer (its Nodes and workloads are
    then handled again).
    """
    d = Path(d).resolve()
    info = _read_json(d / "server.json")
    if info is None:
        return None
    if info.get("kind") == launcher.KUBE_CLUSTER:
        alive = all(p > 0 and pid_alive(p) for p in launcher.cluster_pids(info))
        return info if alive and _ready(info.get("url", ""), str(d / "pki" / "ca.crt")) else None
    if info.get("kind") != KUBE_APISERVER:
        return _running_emulator(info)
    for key in ("pid", "etcdPid"):
        p = int(info.get(key) or 0)
        if p <= 0 or not pid_alive(p) or not _owned(p, str(d), True):
            return None
    if not _ready(info.get("url", ""), str(d / "pki" / "ca.crt")):
        return None
    writer = int(info.get("writerPid") or 0)
    if writer <= 0 or not pid_alive(writer) or not _owned(writer, str(d), True):
        nodes = int((_read_json(d / "status-writer.json") or {}).get("nodes") or NODE_COUNT)
        info["writerPid"] = _start_writer(str(info.get("name") or d.name), d, nodes,
                                          time.monotonic() + REAL_READY_TIMEOUT).pid
        _write_json(d / "server.json", info)
    return info


def _running_emulator(info: dict) -> dict | None:
    """``info`` of an emulator member whose process is ours and answers ``/readyz``, else None."""
    pid = int(info.get("pid") or 0)
    if pid <= 0 or not pid_alive(pid) or not _owned(pid, str(info.get("name", "")), False):
        return None
    return info if _ready(info.get("url", "")) else None


def _stop_leftovers(d: Path) -> None:
    """Stop the processes of a member that no longer serves (e.g. etcd alive, kube-apiserver dead)."""
    info = _read_json(d / "server.json")
    if info and info.get("kind") in (KUBE_APISERVER, launcher.KUBE_CLUSTER):
        _stop_member(d, info)


def local_up(state: Path, count: int = 3, port_base: int | None = None, nodes: int = NODE_COUNT,
             kube_apiserver: str | None = None, notify: Callable[[str], None] = lambda _m: None,
             kube_cluster: str | None = None, shape: "launcher.NodeShape | None" = None,
             zones: list[str] | None = None) -> list[dict]:
    """Start (or reuse) the processes of ``member1..N`` under ``<state>/.karmactl/members/``.

    Each member runs the emulator (default) or, with ``kube_apiserver`` (a binary path), a real
    kube-apiserver on etcd plus the status writer; either way with ``nodes`` Nodes (cpu 8, memory
    32Gi, pods 110) and workloads marked ready. With ``kube_cluster`` (a cluster launcher's
    directory, :mod:`karmactl.emulator.launcher`) each member is a whole real cluster of ``nodes``
    nodes shaped by ``shape``, member ``i``'s nodes in zone ``zones[i-1]`` when given; ``port_base``
    does not apply to it (the launcher picks its ports). It listens on ``port_base + i - 1`` when given, else
    on the port it had before when free, else on any free port. A member already running (its
    processes alive and ours, ``/readyz`` ok) is reused. Members are started in parallel; if one
    fails, those started by this call are stopped again. Joining is the caller's business. The role
    of Karmada's ``hack/local-up-karmada.sh`` (member clusters for a local tour), without kind.

    Args:
        notify: called with one line per member (reused / started), for the user.

    Returns:
        ``[{"name", "kind", "url", "port", "pid", "kubeconfig", "reused", ...}]`` in member order.

    Raises:
        LocalUsageError: a bad count, a taken ``port_base`` port, an unusable binary or no etcd, or
            a member whose data is of the other kind (``local-down --purge`` first).
        MemberStartError: a member did not start.
    """
    if count < 1:
        raise LocalUsageError(f"--members must be at least 1, not {count}")
    kind = EMULATOR
    binary = etcd = ""
    if kube_apiserver and kube_cluster:
        raise LocalUsageError("--kube-apiserver and --kube-cluster exclude each other")
    if kube_apiserver:
        kind, binary, etcd = KUBE_APISERVER, check_binary(kube_apiserver), find_etcd()
    if kube_cluster:
        try:
            kind, binary = launcher.KUBE_CLUSTER, str(launcher.check_tool(kube_cluster))
        except launcher.LauncherError as exc:
            raise LocalUsageError(str(exc)) from None
        if zones and len(zones) != count:
            raise LocalUsageError(f"--zones names {len(zones)} zone(s) for {count} member(s): give one per member")
    root = members_root(state)
    _private_dir(root)
    plans: dict[str, tuple[Path, int]] = {}
    result: dict[str, dict] = {}
    for i in range(1, count + 1):
        name = f"member{i}"
        d = (root / name).resolve()
        info = running_member(d)
        if info is not None and info.get("kind", EMULATOR) == kind:
            notify(f"{name}: already running at {info['url']} (pid {info['pid']})")
            result[name] = dict(info, reused=True)
            continue
        have = member_kind(d)
        if have is not None and have != kind:
            hint = "drop --kube-apiserver/--kube-cluster" if have == EMULATOR else f"pass --{have}"
            raise LocalUsageError(f"{name} in {d} holds {have} data, not {kind}: run karmactl local-down --purge "
                                  f"first, or {hint}")
        _stop_leftovers(d)
        if port_base:
            port = port_base + i - 1
            if not port_free(port):
                raise LocalUsageError(f"port {port} for {name} is already in use (choose another --port-base)")
        else:
            port = int(_previous(d).get("port") or 0)
            if port and not port_free(port):
                port = 0
        plans[name] = (d, port)
    started, errors = _start_all(plans, kind, binary, etcd, nodes, shape or launcher.NodeShape(), zones)
    if errors:
        for name, info in started.items():  # a failed local-up leaves nothing running
            _stop_member(plans[name][0], info)
        raise errors[sorted(errors, key=member_order)[0]]
    for name, info in started.items():
        log = plans[name][0] / {EMULATOR: "emulator.log", launcher.KUBE_CLUSTER: "kube-controller-manager.log"}.get(
            kind, "kube-apiserver.log")
        notify(f"{name}: started at {info['url']} (pid {info['pid']}, log {log})")
        result[name] = dict(info, reused=False)
    return [dict(result[n], kind=result[n].get("kind", EMULATOR), kubeconfig=str(root / n / "kubeconfig"))
            for n in sorted(result, key=member_order)]


def _start_all(plans: dict[str, tuple[Path, int]], kind: str, binary: str, etcd: str, nodes: int,
               shape: "launcher.NodeShape", zones: list[str] | None) -> tuple[dict[str, dict], dict[str, Exception]]:
    """Start the planned members in parallel; returns what started and what failed, by name.
    ``binary`` is the kube-apiserver binary, or the launcher's directory for ``kube-cluster``."""
    started: dict[str, dict] = {}
    errors: dict[str, Exception] = {}
    if kind == EMULATOR:
        procs = {name: (d, start_member(name, d, port, nodes)) for name, (d, port) in plans.items()}
        for name, (d, proc) in procs.items():
            try:
                started[name] = wait_member(name, d, proc)
            except MemberStartError as exc:
                errors[name] = exc
        return started, errors
    def one(name: str, d: Path, port: int) -> dict:
        if kind != launcher.KUBE_CLUSTER:
            return start_real_member(name, d, binary, etcd, port, nodes)
        zone = zones[int(name[len("member"):]) - 1] if zones else None
        try:
            info = launcher.start_cluster(name, d, Path(binary), nodes, shape, zone)
        except launcher.LauncherError as exc:
            raise MemberStartError(str(exc)) from None
        _write_json(d / "local-up.json", {"kind": launcher.KUBE_CLUSTER})
        return info

    with ThreadPoolExecutor(max_workers=max(len(plans), 1)) as pool:
        futures = {name: pool.submit(one, name, d, port) for name, (d, port) in plans.items()}
        for name, fut in futures.items():
            try:
                started[name] = fut.result()
            except (MemberStartError, OSError) as exc:
                errors[name] = exc if isinstance(exc, MemberStartError) else MemberStartError(f"member {name}: {exc}")
    return started, errors


def _stop_member(d: Path, info: dict) -> bool:
    if info.get("kind") == launcher.KUBE_CLUSTER:
        return launcher.stop_cluster(d, info.get("tool") or "")
    if info.get("kind") == KUBE_APISERVER:
        return _stop_real(d, info)
    return stop_pid(int(info.get("pid") or 0), str(info.get("name") or d.name))


def local_down(state: Path, purge: bool = False) -> list[str]:
    """Stop every local member (SIGTERM, wait, SIGKILL after 10 s; a real member's status writer,
    then kube-apiserver, then etcd); data kept unless ``purge``.

    With ``purge`` the members' directories go too (their Cluster files stay in the state
    directory: ``karmactl unjoin NAME --force`` removes them).

    Returns the names of the members that were running, in member order.
    """
    root = members_root(state)
    stopped: list[str] = []
    if not root.is_dir():
        return stopped
    for d in sorted((p.resolve() for p in root.iterdir() if p.is_dir()), key=lambda p: member_order(p.name)):
        info = _read_json(d / "server.json")
        if info and _stop_member(d, info):
            stopped.append(d.name)
        _unlink(d / "server.json")
        _unlink(d / "status-writer.json")
        if purge:
            shutil.rmtree(d, ignore_errors=True)
    if purge:
        try:
            root.rmdir()
        except OSError:
            pass
    return stopped


def member_pids(state: Path) -> dict[str, list[int]]:
    """Every pid recorded for each local member (emulator; or kube-apiserver, etcd and status writer)."""
    root = members_root(state)
    pids: dict[str, list[int]] = {}
    for d in sorted(root.iterdir() if root.is_dir() else [], key=lambda p: member_order(p.name)):
        info = _read_json(d / "server.json")
        if info:
            pids[d.name] = [int(info[k]) for k in ("pid", "etcdPid", "writerPid") if info.get(k)]
    return pids


def stop_real_member(d: Path) -> bool:
    """Stop a kube-apiserver member started with :func:`start_real_member` (its status writer,
    kube-apiserver and etcd, by the pids in ``d/server.json``); True if any of them ran. Its data
    stays in ``d``."""
    d = Path(d).resolve()
    info = _read_json(d / "server.json")
    return bool(info) and _stop_real(d, info)
