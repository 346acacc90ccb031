"""The real-cluster tier: karmactl against whole real clusters (``tests/kube_cluster.py``).

Two members, ``member1`` and ``member2``, each a real v1.20.2 control plane with its controllers and
scheduler and two hollow nodes, start once per session and are shared (``clusters``): each test works
in namespaces of its own (``cluster_ns``) and its own state directory. Status is written by the
members' own controllers and kubelets, never by the test. A test that stops a node or an API server
starts a cluster of its own with :func:`kube_cluster.start_cluster` instead of using the shared ones.
"""
from __future__ import annotations

import itertools
import os
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from kube_cluster import RealCluster, require_or_skip, start_cluster, unavailable_reason

MEMBER_NAMES = ("member1", "member2")
ZONES = {"member1": "zone-a", "member2": "zone-b"}


def _skip_reason() -> str | None:
    if os.environ.get("KARMACTL_REQUIRE_REAL_CLUSTER") == "1":
        return None
    return unavailable_reason()


SKIP_REASON = _skip_reason()
if SKIP_REASON is not None:  # one line in the summary instead of a skip per test
    collect_ignore_glob = ["test_*.py"]


def pytest_terminal_summary(terminalreporter):
    if SKIP_REASON is not None:
        terminalreporter.write_line(f"real cluster tier (tests/cluster) skipped: {SKIP_REASON}")


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if os.path.abspath(str(item.fspath)).startswith(here + os.sep):
            item.add_marker(pytest.mark.cluster)
            item.add_marker(pytest.mark.xdist_group("cluster"))  # one worker starts the shared members


@pytest.fixture(scope="session")
def clusters(tmp_path_factory) -> dict[str, RealCluster]:
    """``member1`` and ``member2``: real clusters of 2 hollow nodes each (8 CPU, 32Gi, 110 pods per
    node; nodes labelled ``topology.kubernetes.io/zone`` = ``zone-a`` / ``zone-b``), started together
    once per session."""
    require_or_skip()
    root = tmp_path_factory.mktemp("real-clusters")
    started: dict[str, RealCluster] = {}
    errors: list[str] = []
    with ThreadPoolExecutor(len(MEMBER_NAMES)) as pool:
        futures = {name: pool.submit(start_cluster, name, root / name, nodes=2,
                                     env={"KUBE_CLUSTER_NODE_LABELS": f"topology.kubernetes.io/zone={ZONES[name]}"})
                   for name in MEMBER_NAMES}
        for name, fut in futures.items():
            try:
                started[name] = fut.result()
            except RuntimeError as exc:
                errors.append(str(exc))
    try:
        if errors:
            pytest.fail("\n".join(errors), pytrace=False)
        yield started
    finally:
        for cluster in started.values():
            cluster.unpause()
            cluster.stop()


_counter = itertools.count(1)


@pytest.fixture
def cluster_ns(request, clusters) -> str:
    """A namespace name no other test uses; deleted from every member afterwards (the members run
    a namespace controller, so the deletion finishes by itself)."""
    base = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower().removeprefix("test_"))[:40].strip("-")
    name = f"{base}-{next(_counter)}"
    yield name
    for cluster in clusters.values():
        cluster.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found", check=False)


@pytest.fixture
def cluster_joined(cli, clusters, monkeypatch) -> dict[str, RealCluster]:
    """The state directory with both real clusters joined through their kubeconfigs; the directory
    holding the kubeconfigs is the operator's kubeconfig directory."""
    dirs = {os.path.dirname(os.path.realpath(c.kubeconfig)) for c in clusters.values()}
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", os.path.commonpath(sorted(dirs)))
    for name, cluster in clusters.items():
        cli.ok("join", name, "--kubeconfig", str(cluster.kubeconfig))
    return clusters
