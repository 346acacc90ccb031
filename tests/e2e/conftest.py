"""End-to-end fixtures: member clusters (in-process ``MemberServer``s or ``local-up`` processes),
the real kubectl, and "reconcile until converged".

Every member started here is stopped by a finalizer, background processes included.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "manifests"
SAMPLES = Path(__file__).resolve().parent / "data" / "karmada-samples"
KUBECTL = shutil.which("kubectl")



def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def member_layer():
    """The member layer online runs use (``karmactl.members.layer``); these tests must run, not skip."""
    import karmactl.members.layer as layer
    return layer


class Members:
    """In-process emulated members with the fake controller and 3 Nodes each, joined by ``join``."""

    def __init__(self, tmp_path: Path, cli):
        self.tmp, self.cli, self.servers = tmp_path, cli, {}

    def start(self, name: str, join: bool = True, **kw):
        from karmactl.emulator import MemberServer

        srv = MemberServer(name=name, port=0, data_dir=str(self.tmp / "members" / name), fake_controller=True,
                           fake_delay=kw.pop("fake_delay", 0.1), nodes=3, **kw).start()
        self.servers[name] = srv
        kubeconfig = srv.write_kubeconfig(str(self.tmp / "kubeconfigs" / f"{name}.yaml"), context=name)
        if join:
            self.cli.ok("join", name, "--kubeconfig", kubeconfig)
        return srv

    def kubeconfig(self, name: str) -> str:
        return str(self.tmp / "kubeconfigs" / f"{name}.yaml")

    def close(self):
        for srv in self.servers.values():
            srv.close()


@pytest.fixture
def members(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))  # the kubeconfigs are under tmp_path/kubeconfigs
    m = Members(tmp_path, cli)
    yield m
    m.close()


def _kill_local_members(state: Path) -> None:
    """Finalizer for tests that run ``local-up``: local-down, then SIGKILL whatever is left (an
    emulator, or a real member's kube-apiserver, etcd and status writer)."""
    from karmactl.emulator.local import local_down, member_pids

    try:
        local_down(state)
    finally:  # server.json files left mean local_down failed before stopping those members
        for pid in [p for ps in member_pids(state).values() for p in ps]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.fixture
def local_state(state, request):
    """A state directory whose ``local-up`` members are always stopped at the end."""
    request.addfinalizer(lambda: _kill_local_members(state))
    return state


class Kubectl:
    """The real kubectl with one kubeconfig and a private discovery cache (ports are reused)."""

    def __init__(self, cache_dir: Path):
        self.cache_dir = cache_dir

    def __call__(self, kubeconfig: str, *args: str, check: bool = True) -> str:
        proc = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "--cache-dir", str(self.cache_dir), *args],
                              capture_output=True, text=True, timeout=30)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc.stdout


@pytest.fixture
def kubectl(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
    return Kubectl(tmp_path / "kubectl-cache")


def binding_ready(state: Path, namespace: str, name: str) -> bool:
    """The binding is fully applied and every aggregated item Healthy."""
    from karmactl.reconcile import load
    from karmactl.store.state import StateStore

    snap = load(StateStore(state))
    b = snap.bindings.get(("work.karmada.io", "ResourceBinding", namespace, name))
    if b is None:
        return False
    conds = {c["type"]: c["status"] for c in (b.get("status") or {}).get("conditions") or []}
    items = (b.get("status") or {}).get("aggregatedStatus") or []
    return conds.get("FullyApplied") == "True" and bool(items) and all(i.get("health") == "Healthy" for i in items)


def reconcile_until(cli, predicate, timeout: float = 20.0, allow_member_errors: bool = False) -> int:
    """``karmactl reconcile`` (online) until ``predicate()`` holds and a run changes nothing; returns runs."""
    deadline = time.monotonic() + timeout
    runs = 0
    while True:
        runs += 1
        code, _out, err = cli("reconcile")
        assert code == 0 or (allow_member_errors and code == 3), f"reconcile exited {code}: {err}"
        if predicate() and "reconciled: 0 file(s) changed" in err:
            return runs
        assert time.monotonic() < deadline, f"not converged after {runs} runs: {err}"
        time.sleep(0.2)
