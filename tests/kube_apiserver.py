"""Real kube-apiservers (v1.20.2, ``../shared/tools/kube-apiserver/``) as member clusters in tests.

One home for starting and stopping them, shared by ``tests/real/`` (the real-member tier) and the
emulator's differential check. A member is started with the shared ``start.sh NAME DIR`` (its own
etcd, TLS, a bearer-token admin) and stopped with ``stop.sh DIR``.

Availability: the tool needs ``../shared`` beside the checkout, linux/amd64, and etcd (Debian's
``etcd-server``; ``start.sh`` installs it with apt when run as root). When it is missing the caller
skips with one line saying why, unless ``KARMACTL_REQUIRE_REAL_APISERVER=1`` (set by ``.ci/run``),
in which case it fails.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# ../shared beside the checkout; a git worktree under <main>/../wt/<name> finds it two levels up
SHARED = next((base / "shared" for base in REPO.parents if (base / "shared" / "tools" / "kube-apiserver").is_dir()),
              REPO.parent / "shared")
TOOL = SHARED / "tools" / "kube-apiserver"
KARMADA_CRDS = SHARED / "data" / "karmada-crds"
START_TIMEOUT = 120  # seconds for start.sh (cold start unpacks 105 MiB; busy machines are slow)


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
