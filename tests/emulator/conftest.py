"""Fixtures: an emulated member on a free port, its kubeconfig, the official dynamic client, kubectl."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from karmactl.emulator import MemberServer

KUBECTL = shutil.which("kubectl")


@pytest.fixture
def member(tmp_path):
    srv = MemberServer(name="member1", port=0, data_dir=str(tmp_path / "member1")).start()
    yield srv
    srv.close()


@pytest.fixture
def kubeconfig(member, tmp_path) -> str:
    return member.write_kubeconfig(str(tmp_path / "kubeconfig"), context="member1")


def make_dynamic(kubeconfig: str, cache_file: str, timeout: float | None = None):
    """A DynamicClient for a kubeconfig; its discovery cache lives under the test's tmp dir because
    ports are reused between tests."""
    from kubernetes import config, dynamic

    api = config.new_client_from_config(config_file=kubeconfig, context="member1")
    api.configuration.retries = 0
    return dynamic.DynamicClient(api, cache_file=cache_file)


@pytest.fixture
def dyn(kubeconfig, tmp_path):
    client = make_dynamic(kubeconfig, str(tmp_path / "discovery.json"))
    yield client
    client.client.close()


class Kubectl:
    """Runs the real kubectl against one kubeconfig with a private discovery cache."""

    def __init__(self, kubeconfig: str, cache_dir: Path) -> None:
        self.kubeconfig, self.cache_dir = kubeconfig, cache_dir

    def run(self, *args: str, input: str | None = None, check: bool = True, timeout: float = 30):
        cmd = [KUBECTL, "--kubeconfig", self.kubeconfig, "--cache-dir", str(self.cache_dir), *args]
        proc = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def json(self, *args: str):
        return json.loads(self.run(*args, "-o", "json").stdout)


@pytest.fixture
def kubectl(kubeconfig, tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
    return Kubectl(kubeconfig, tmp_path / "kubectl-cache")


def deployment(name: str = "web", replicas: int = 2, image: str = "nginx:1.25", labels: dict | None = None) -> dict:
    labels = labels or {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": dict(labels)},
        "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                 "template": {"metadata": {"labels": dict(labels)},
                              "spec": {"containers": [{"name": "app", "image": image,
                                                       "ports": [{"containerPort": 80}]}]}}},
    }


def raw(url: str, method: str, path: str, body: bytes | None = None, content_type: str = "application/json",
        timeout: float = 10, headers: dict | None = None) -> tuple[int, dict | str]:
    """A plain HTTP request (urllib): (status, parsed JSON body or text)."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url + path, data=body, method=method,
                                 headers={"Content-Type": content_type, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            code, data = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        code, data = e.code, e.read()
    try:
        return code, json.loads(data)
    except ValueError:
        return code, data.decode()
