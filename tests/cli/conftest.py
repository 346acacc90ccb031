"""Fixtures of the CLI tests that reach members: two emulated members with nginx placed on both."""
from __future__ import annotations

from pathlib import Path

import pytest

from karmactl.emulator import MemberServer

REPO = Path(__file__).resolve().parents[2]
NGINX = REPO / "manifests" / "nginx"


def _pod(name: str, containers=("nginx",), labels=None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": "nginx"}},
            "spec": {"containers": [{"name": c, "image": "nginx"} for c in containers]}}


@pytest.fixture
def fleet(tmp_path, cli, monkeypatch):
    """member1 and member2 (emulated, joined), nginx applied and placed on both (1 and 2 replicas),
    one nginx Pod on each member with a recorded log."""
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))
    servers = {}
    try:
        for name in ("member1", "member2"):
            srv = MemberServer(name=name, fake_controller=True, fake_delay=0.05, nodes=2).start()
            servers[name] = srv
            cli.ok("join", name, "--kubeconfig", srv.write_kubeconfig(str(tmp_path / "kc" / f"{name}.yaml")))
        cli.ok("apply", "-f", str(NGINX))
        cli.ok("reconcile")
        for name, srv in servers.items():
            srv.store.create(srv.catalogue.lookup("", "v1", "pods"), "default", _pod(f"nginx-{name}"))
            srv.pod_logs.write("default", f"nginx-{name}", "nginx", f"hello from {name}\nsecond line")
        yield servers
    finally:
        for srv in servers.values():
            srv.close()
