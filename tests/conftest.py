"""Shared fixtures: run the CLI in-process on a real state directory."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from karmactl.cli.main import main_exit_code

NOW = "2026-01-01T00:00:00Z"


class CLI:
    """Runs ``karmactl`` in-process against one state directory; returns (exit code, stdout, stderr)."""

    def __init__(self, state: Path, capsys):
        self.state = state
        self.capsys = capsys

    def __call__(self, *args: str):
        self.capsys.readouterr()
        code = main_exit_code(["--state", str(self.state), *args])
        captured = self.capsys.readouterr()
        return code, captured.out, captured.err

    def ok(self, *args: str) -> str:
        code, out, err = self(*args)
        assert code == 0, f"karmactl {' '.join(args)} exited {code}: {err}"
        return out


@pytest.fixture(autouse=True)
def _every_size_path(monkeypatch):
    """``KARMACTL_TEST_LARGE_PATHS=1`` runs every test through the code paths of large state
    directories (parsing in worker processes, offline runs computed in shards), so the whole
    suite checks that they behave exactly as the small-directory paths do."""
    if os.environ.get("KARMACTL_TEST_LARGE_PATHS") == "1":
        from karmactl.incremental import sharded
        from karmactl.store import parsing

        monkeypatch.setattr(sharded, "SHARD_MIN_OBJECTS", 0)
        monkeypatch.setattr(parsing, "PARALLEL_PARSE_MIN_FILES", 1)


def _example_state_files() -> dict:
    root = Path(__file__).resolve().parent.parent / "state"
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")
            if p.is_file() and ".karmactl" not in p.relative_to(root).parts}


@pytest.fixture(autouse=True, scope="session")
def _example_state_untouched():
    """The repository's example ``state/`` is committed: no test may write into it (tests use
    ``tmp_path``); its ignored runtime directory ``.karmactl/`` excepted."""
    before = _example_state_files()
    yield
    assert _example_state_files() == before, "a test wrote into the repository's state/ directory"


@pytest.fixture
def state(tmp_path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


@pytest.fixture
def cli(state, capsys) -> CLI:
    return CLI(state, capsys)


def write(path: Path, text: str) -> Path:
    """Write dedented YAML to ``path`` (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def cluster_yaml(name: str, ready: str = "True", extra_status: str = "") -> str:
    return f"""
    apiVersion: cluster.karmada.io/v1alpha1
    kind: Cluster
    metadata:
      name: {name}
    spec:
      syncMode: Push
      apiEndpoint: https://{name}.example:6443
    status:
      conditions:
      - type: Ready
        status: "{ready}"
        reason: ClusterReady
        message: cluster is healthy and ready to accept workloads
        lastTransitionTime: "2025-12-31T00:00:00Z"
      apiEnablements:
      - groupVersion: apps/v1
        resources:
        - {{name: deployments, kind: Deployment}}
      - groupVersion: rbac.authorization.k8s.io/v1
        resources:
        - {{name: clusterroles, kind: ClusterRole}}
      - groupVersion: v1
        resources:
        - {{name: services, kind: Service}}
        - {{name: configmaps, kind: ConfigMap}}
        - {{name: namespaces, kind: Namespace}}
    """


def app_failover_policy(toleration: int, purge: str = "Gracefully", extra: str = "") -> str:
    """A PropagationPolicy duplicating Deployment default/nginx to member1 and member2 with
    application failover after ``toleration`` seconds of Unhealthy (``extra``: more ``spec`` lines,
    indented by two spaces)."""
    return f"""
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: nginx, namespace: default}}
        spec:
          resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: nginx}}]
          propagateDeps: true
          placement:
            clusterAffinity: {{clusterNames: [member1, member2]}}
            replicaScheduling: {{replicaSchedulingType: Duplicated}}
          failover:
            application:
              decisionConditions: {{tolerationSeconds: {toleration}}}
              purgeMode: {purge}
        {extra}
        """


# Hypothesis: modest example counts by default; CI (HYPOTHESIS_PROFILE=ci) keeps them small too,
# with no deadline because these 2-core machines are noisy.
try:
    import os

    from hypothesis import HealthCheck, settings

    settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
except ImportError:  # pragma: no cover
    pass
