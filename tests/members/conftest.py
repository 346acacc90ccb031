"""Fixtures: three emulated members on localhost ports, Clusters pointing at them, the CLI in-process.

Each member has 2 Nodes and the fake controller (workloads ready 50 ms after a change); its
kubeconfig is written under ``tmp_path/kubeconfigs`` and the Cluster's annotations point at it
(relative to the state directory, as ``karmactl join`` writes them).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import write

T0 = "2026-01-01T00:00:00Z"
KUBECTL = shutil.which("kubectl")


def at(seconds: float) -> str:
    """``T0 + seconds`` as RFC 3339."""
    from karmactl.api.objects import add_seconds
    return add_seconds(T0, seconds)


class Members:
    def __init__(self, tmp_path: Path, state: Path):
        self.tmp, self.state, self.servers = tmp_path, state, {}

    def start(self, name: str):
        from karmactl.emulator import MemberServer

        srv = MemberServer(name=name, port=0, fake_controller=True, fake_delay=0.05, nodes=2).start()
        srv.hooks.hang_max = 10.0
        self.servers[name] = srv
        srv.write_kubeconfig(str(self.kubeconfig(name)), context=name)
        write(self.state / "clusters" / f"{name}.yaml", f"""
            apiVersion: cluster.karmada.io/v1alpha1
            kind: Cluster
            metadata:
              name: {name}
              annotations:
                karmactl.io/kubeconfig: ../kubeconfigs/{name}.yaml
                karmactl.io/context: {name}
            spec:
              syncMode: Push
              apiEndpoint: {srv.url}
            """)
        return srv

    def kubeconfig(self, name: str) -> Path:
        return self.tmp / "kubeconfigs" / f"{name}.yaml"

    def __getitem__(self, name: str):
        return self.servers[name]

    def clear_logs(self) -> None:
        for srv in self.servers.values():
            srv.clear_request_log()

    def writes(self) -> dict:
        """Requests that change a member (a server-side dry run changes nothing), per member."""
        return {n: [f"{e['method']} {e['path']}" for e in s.request_log if e["method"] in ("POST", "PUT", "PATCH", "DELETE")
                    and "dryRun=All" not in (e.get("query") or "")]
                for n, s in self.servers.items()}

    def deploy(self, name: str, obj: str = "nginx", ns: str = "default") -> dict | None:
        return self.servers[name].get_object("apps/v1", "Deployment", ns, obj)

    def close(self) -> None:
        for srv in self.servers.values():
            srv.set_hang(False)
            srv.close()


@pytest.fixture
def members(tmp_path, state, monkeypatch):
    # short per-request timeout: the hanging-member tests wait for it
    monkeypatch.setenv("KARMACTL_MEMBER_TIMEOUT", "1")
    # the kubeconfigs live under tmp_path/kubeconfigs: the operator's kubeconfig directory
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))
    m = Members(tmp_path, state)
    for name in ("member1", "member2", "member3"):
        m.start(name)
    yield m
    m.close()


def someone_elses_nginx(member) -> None:
    """A Deployment ``default/nginx`` on ``member`` that Karmada does not manage (a conflict)."""
    member.store.create(member._type("apps/v1", "Deployment"), "default", {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"owner": "someone"}},
        "spec": {"replicas": 7, "selector": {"matchLabels": {"app": "x"}},
                 "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "x", "image": "x"}]}}}})


def nginx(state: Path, replicas: int = 3, annotations: str = "") -> None:
    write(state / "apps" / "nginx.yaml", f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: nginx
          namespace: default
          labels: {{app: nginx}}{annotations}
        spec:
          replicas: {replicas}
          selector: {{matchLabels: {{app: nginx}}}}
          template:
            metadata: {{labels: {{app: nginx}}}}
            spec:
              containers:
              - name: nginx
                image: nginx:1.25
                resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}
        """)


def policy(state: Path, extra: str = "", clusters=("member1", "member2")) -> None:
    write(state / "policies" / "nginx.yaml", f"""
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata:
          name: nginx
          namespace: default
        spec:
          resourceSelectors:
          - {{apiVersion: apps/v1, kind: Deployment, name: nginx}}
          placement:
            clusterAffinity:
              clusterNames: [{", ".join(clusters)}]
            replicaScheduling:
              replicaSchedulingType: Divided
              replicaDivisionPreference: Weighted
              weightPreference:
                staticWeightList:
                - {{targetCluster: {{clusterNames: [member1]}}, weight: 1}}
                - {{targetCluster: {{clusterNames: [member2]}}, weight: 2}}
        """)
    if extra:  # lines under spec, given already indented for the final document
        path = state / "policies" / "nginx.yaml"
        path.write_text(path.read_text() + extra.lstrip("\n") + "\n")


def computed(state: Path, *parts: str) -> dict | None:
    path = state / "computed" / Path(*parts)
    return json.loads(path.read_text()) if path.exists() else None


def work(state: Path, cluster: str, name: str = "nginx-687f7fb96f") -> dict | None:
    return computed(state, "works", f"karmada-es-{cluster}", f"{name}.json")


def condition(obj: dict, ctype: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == ctype), None)


def files(state: Path) -> dict:
    """Every state file (lock and cache excluded) -> (mtime_ns, content)."""
    return {str(p.relative_to(state)): (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(state.rglob("*"))
            if p.is_file() and ".karmactl" not in p.parts}


def reconcile(cli, seconds: float = 0, expect: int = 0) -> str:
    code, _out, err = cli("reconcile", "--now", at(seconds))
    assert code == expect, f"reconcile exited {code}: {err}"
    return err


def settle(cli, members, seconds: float = 0, until=None, timeout: float = 10.0) -> str:
    """Reconcile at ``seconds`` until ``until()`` holds (the fake controller works in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        err = reconcile(cli, seconds)
        if until is None or until():
            return err
        assert time.monotonic() < deadline, f"not settled: {err}"
        time.sleep(0.06)


def kubectl(kubeconfig: Path, cache: Path, *args: str) -> str:
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
    proc = subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache), *args],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
