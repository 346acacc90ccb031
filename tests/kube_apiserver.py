"""Real kube-apiservers (v1.20.2, ``../shared/tools/kube-apiserver/``) as member clusters in tests.

One home for starting and stopping them, shared by ``tests/real/`` (the real-member tier) and the
emulator's differential check. A member is started with the shared ``start.sh NAME DIR`` (its own
etcd, TLS, a bearer-token admin) and stopped with ``stop.sh DIR``.

Availability: the tool needs ``../shared`` beside the checkout (or beside an ancestor, as a git
worktree needs), linux/amd64, and etcd (Debian's ``etcd-server``; ``start.sh`` installs it with apt
when run as root). When it is missing the caller skips with one line saying why, unless ``KARMACTL_REQUIRE_REAL_APISERVER=1`` (set by ``.ci/run``),
in which case it fails.
"""
from __future__ import annotations

import hashlib
import lzma
import os
import platform
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# ../shared beside the checkout; a git worktree under <main>/../wt/<name> finds it two levels up
SHARED = next((base / "shared" for base in REPO.parents if (base / "shared" / "tools" / "kube-apiserver").is_dir()),
              REPO.parent / "shared")
TOOL = SHARED / "tools" / "kube-apiserver"
KARMADA_CRDS = SHARED / "data" / "karmada-crds"
START_TIMEOUT = 120  # seconds for start.sh (cold start unpacks 105 MiB; busy machines are slow)
ARTIFACT = "kube-apiserver-v1.20.2-linux-amd64"


def unavailable_reason() -> str | None:
    """Why real kube-apiservers cannot run here, or None when they can."""
    if not (TOOL / "start.sh").is_file():
        return f"no real kube-apiserver tool at {TOOL} (../shared is not beside this checkout)"
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return "the shared kube-apiserver binary is linux/amd64 only"
    if shutil.which("etcd") is None and not os.path.exists("/usr/bin/etcd") and os.geteuid() != 0:
        return "etcd is not installed (Debian's etcd-server) and start.sh cannot install it without root"
    return None


def require_or_skip() -> None:
    """Skip the calling test (or fixture) when real members cannot run; fail instead when
    ``KARMACTL_REQUIRE_REAL_APISERVER=1``."""
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get("KARMACTL_REQUIRE_REAL_APISERVER") == "1":
        pytest.fail(f"KARMACTL_REQUIRE_REAL_APISERVER=1 but {reason}", pytrace=False)
    pytest.skip(f"real kube-apiserver tier skipped: {reason}")


@dataclass
class RealMember:
    """One running real member: ``name``, its data ``dir``, ``kubeconfig`` path and ``server`` URL."""

    name: str
    dir: Path
    kubeconfig: Path
    server: str
    _namespaced_kinds: str | None = field(default=None, repr=False)

    def stop(self) -> None:
        """Stop the kube-apiserver and its etcd and remove the member's data (idempotent)."""
        subprocess.run([str(TOOL / "stop.sh"), str(self.dir)], capture_output=True, timeout=60, check=False)

    def kubectl(self, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
        """Run the real ``kubectl`` against this member (its own cache dir); text in and out."""
        cmd = ["kubectl", "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.dir / "kubectl-cache"), *args]
        res = subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=120)
        if check and res.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr}")
        return res

    def env(self) -> dict[str, str]:
        """``member.env`` as a dict (``SERVER``, ``APISERVER_PID``, ``ETCD_PID``, ports)."""
        lines = (self.dir / "member.env").read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line)

    def pause(self) -> None:
        """Make the member unreachable without losing its data: SIGSTOP its kube-apiserver.

        ``stop.sh`` deletes the data and ``start.sh`` cannot restart on it, so a stopped process is
        the realistic outage the tool allows: connections are accepted by the kernel and then hang,
        as with a hung or partitioned API server. Always pair with :meth:`unpause`."""
        os.kill(int(self.env()["APISERVER_PID"]), signal.SIGSTOP)

    def unpause(self) -> None:
        """Undo :meth:`pause` (SIGCONT); harmless when the process runs."""
        os.kill(int(self.env()["APISERVER_PID"]), signal.SIGCONT)

    def namespaced_kinds(self) -> str:
        """The namespaced kinds the member serves that can be listed and deleted, comma-separated,
        as of the first call (call it before adding CRDs, whose kinds would go stale when deleted)."""
        if self._namespaced_kinds is None:
            kinds = self.kubectl("api-resources", "--namespaced=true", "--verbs=list,delete", "-o", "name").stdout
            self._namespaced_kinds = ",".join(k for k in kinds.split() if k not in ("events", "events.events.k8s.io"))
        return self._namespaced_kinds

    def delete_namespace(self, namespace: str) -> None:
        """Delete ``namespace`` and everything in it, and finish the deletion.

        The server runs no namespace controller, so a deleted namespace would stay ``Terminating``
        forever: its objects are deleted here by kind first, then its finalizer is cleared."""
        if self.kubectl("get", "namespace", namespace, check=False).returncode != 0:
            return
        self.kubectl("delete", self.namespaced_kinds(), "--all", "-n", namespace, "--wait=false", "--ignore-not-found")
        self.kubectl("delete", "namespace", namespace, "--wait=false", "--ignore-not-found")
        body = ('{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"},"spec":{"finalizers":[]}}'
                % namespace)
        self.kubectl("replace", "--raw", f"/api/v1/namespaces/{namespace}/finalize", "-f", "-", input=body,
                     check=False)


def start_member(name: str, directory: Path) -> RealMember:
    """Start one real member with ``start.sh`` (call :func:`require_or_skip` first).

    Raises:
        RuntimeError: start.sh failed (its stderr, which ends with the logs' tail, is in the message).
    """
    directory.mkdir(parents=True, exist_ok=True)
    res = subprocess.run([str(TOOL / "start.sh"), name, str(directory)], capture_output=True, text=True,
                         timeout=START_TIMEOUT + 30, env={**os.environ, "KUBE_APISERVER_TIMEOUT": str(START_TIMEOUT)})
    if res.returncode != 0:
        subprocess.run([str(TOOL / "stop.sh"), str(directory)], capture_output=True, timeout=60, check=False)
        raise RuntimeError(f"start.sh {name} failed (exit {res.returncode}):\n{res.stderr[-3000:]}")
    kubeconfig = Path(res.stdout.strip().splitlines()[-1])
    env = dict(line.split("=", 1) for line in (directory / "member.env").read_text().splitlines() if "=" in line)
    return RealMember(name=name, dir=directory, kubeconfig=kubeconfig, server=env["SERVER"])


def binary() -> Path:
    """The decompressed kube-apiserver binary (call :func:`require_or_skip` first), for tests that
    give karmactl the path itself (``local-up --kube-apiserver PATH``).

    Shares ``start.sh``'s cache (``$KUBE_APISERVER_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/kube-apiserver``,
    file ``kube-apiserver-v1.20.2-<first 12 of sha256>``); unpacks the ``.xz`` there when missing,
    checking the sha256 of ``SHA256SUMS`` and renaming atomically as start.sh does.

    Raises:
        RuntimeError: no checksum for the artifact, or the unpacked binary does not match it.
    """
    sums = {name: digest for digest, name in (line.split() for line in (TOOL / "SHA256SUMS").read_text().splitlines()
                                              if line.strip())}
    sha = sums.get(ARTIFACT)
    if not sha:
        raise RuntimeError(f"no checksum for {ARTIFACT} in {TOOL / 'SHA256SUMS'}")
    cache = Path(os.environ.get("KUBE_APISERVER_CACHE")
                 or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kube-apiserver")
    path = cache / f"kube-apiserver-v1.20.2-{sha[:12]}"
    if os.access(path, os.X_OK):
        return path
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".kube-apiserver.{os.getpid()}"
    digest = hashlib.sha256()
    with lzma.open(TOOL / f"{ARTIFACT}.xz") as src, open(tmp, "wb") as dst:
        while chunk := src.read(1 << 20):
            digest.update(chunk)
            dst.write(chunk)
    if digest.hexdigest() != sha:
        tmp.unlink()
        raise RuntimeError(f"checksum mismatch for {ARTIFACT}: {digest.hexdigest()}")
    tmp.chmod(0o755)
    os.replace(tmp, path)
    return path
