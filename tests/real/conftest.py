"""The real-member tier: karmactl against real kube-apiservers (v1.20.2, ``tests/kube_apiserver.py``).

Two members, ``member1`` and ``member2`` (the names Karmada's samples use), start once per session
and are shared: each test works in namespaces of its own (``ns``) and its own state directory, and
removes what it created on the members. karmactl is driven as a user drives it (the CLI in-process,
``tests/conftest.py: CLI``) and the real ``kubectl`` is the outside client of the members. The
servers run no controllers, so status a controller would write is written by the test through the
status subresource.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from kube_apiserver import RealMember, require_or_skip, start_member, unavailable_reason

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "manifests"
SAMPLES = REPO / "tests" / "e2e" / "data" / "karmada-samples"
MEMBER_NAMES = ("member1", "member2")
MAX_RUNS = 8  # reconciles allowed to converge (a CRD needs one run to land, one to be discovered)


def _skip_reason() -> str | None:
    """Why the tier cannot run here (None: it can, or ``KARMACTL_REQUIRE_REAL_APISERVER=1`` demands it)."""
    if os.environ.get("KARMACTL_REQUIRE_REAL_APISERVER") == "1":
        return None
    if shutil.which("kubectl") is None:
        return "kubectl is not installed"
    return unavailable_reason()


SKIP_REASON = _skip_reason()
if SKIP_REASON is not None:  # one line in the summary instead of a skip per test
    collect_ignore_glob = ["test_*.py"]


def pytest_terminal_summary(terminalreporter):
    if SKIP_REASON is not None:
        terminalreporter.write_line(f"real kube-apiserver tier (tests/real) skipped: {SKIP_REASON}")


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.real)
            item.add_marker(pytest.mark.xdist_group("real"))  # one worker starts the shared members


@pytest.fixture(scope="session")
def real_members(tmp_path_factory) -> dict[str, RealMember]:
    """``member1`` and ``member2``, real kube-apiservers started together once per session."""
    require_or_skip()
    if shutil.which("kubectl") is None:
        pytest.fail("KARMACTL_REQUIRE_REAL_APISERVER=1 but kubectl is not installed", pytrace=False)
    root = tmp_path_factory.mktemp("real-members")
    started: dict[str, RealMember] = {}
    with ThreadPoolExecutor(len(MEMBER_NAMES)) as pool:
        futures = {name: pool.submit(start_member, name, root / name) for name in MEMBER_NAMES}
        errors = []
        for name, fut in futures.items():
            try:
                started[name] = fut.result()
            except RuntimeError as exc:
                errors.append(str(exc))
    try:
        if errors:
            pytest.fail("\n".join(errors), pytrace=False)
        for member in started.values():
            member.namespaced_kinds()  # the built-in kinds, listed before any test adds a CRD
        yield started
    finally:
        for member in started.values():
            member.unpause()
            member.stop()


_counter = itertools.count(1)


@pytest.fixture
def ns(request, real_members) -> str:
    """A namespace name no other test uses; deleted from every member afterwards."""
    base = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower().removeprefix("test_"))[:40].strip("-")
    name = f"{base}-{next(_counter)}"
    yield name
    for member in real_members.values():
        member.unpause()
    with ThreadPoolExecutor(len(real_members)) as pool:
        list(pool.map(lambda m: m.delete_namespace(name), real_members.values()))


@pytest.fixture
def joined(cli, real_members, monkeypatch) -> dict[str, RealMember]:
    """The state directory with both real members joined through their kubeconfigs (TLS + token);
    the directory holding each kubeconfig is the operator's kubeconfig directory."""
    import os

    dirs = {os.path.dirname(os.path.realpath(m.kubeconfig)) for m in real_members.values()}
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", os.path.commonpath(sorted(dirs)))
    for name, member in real_members.items():
        cli.ok("join", name, "--kubeconfig", str(member.kubeconfig))
    return real_members


def sample(path: Path, namespace: str, out_dir: Path) -> Path:
    """Copy the YAML files under ``path`` into ``out_dir`` with every namespaced object of the sample
    put into ``namespace`` (cluster-scoped kinds of the samples keep no namespace). Returns out_dir."""
    cluster_scoped = {"CustomResourceDefinition", "ClusterPropagationPolicy", "ClusterOverridePolicy", "Namespace"}
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [path] if path.is_file() else sorted(path.glob("*.yaml"))
    for f in files:
        docs = [d for d in yaml.safe_load_all(f.read_text()) if d]
        for doc in docs:
            if doc["kind"] not in cluster_scoped:
                doc["metadata"]["namespace"] = namespace
        (out_dir / f.name).write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return out_dir


def write_yaml(path: Path, *docs: dict) -> Path:
    """Write ``docs`` as one multi-document YAML file (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False))
    return path


def settings(path: Path, **data: str) -> Path:
    """The settings ConfigMap ``karmada-system/karmactl-config`` with ``data``, written to ``path``."""
    return write_yaml(path, {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "karmactl-config", "namespace": "karmada-system"},
                             "data": data})


def converge(cli, *global_args: str, allowed_codes=(0,)) -> str:
    """``karmactl reconcile`` until a run changes nothing (at most ``MAX_RUNS``); returns the last
    run's stderr. ``global_args`` go before the command (e.g. ``--now``)."""
    for _ in range(MAX_RUNS):
        code, _out, err = cli(*global_args, "reconcile")
        assert code in allowed_codes, f"reconcile exited {code}: {err}"
        if "reconciled: 0 file(s) changed" in err:
            return err
    raise AssertionError(f"not converged after {MAX_RUNS} runs: {err}")


def get_json(member: RealMember, *args: str) -> dict | None:
    """``kubectl get ARGS -o json`` on ``member``; None when not found (or its kind is not served)."""
    res = member.kubectl("get", *args, "-o", "json", check=False)
    if res.returncode != 0:
        assert ("NotFound" in res.stderr or "not found" in res.stderr
                or "doesn't have a resource type" in res.stderr), res.stderr
        return None
    return json.loads(res.stdout)


def replicas(member: RealMember, namespace: str, name: str) -> int | None:
    """``spec.replicas`` of Deployment ``namespace/name`` on ``member`` (None when absent)."""
    obj = get_json(member, "deployment", name, "-n", namespace)
    return None if obj is None else obj["spec"]["replicas"]


def report_available(member: RealMember, namespace: str, name: str) -> None:
    """Write the status the member's Deployment controller would: all ``spec.replicas`` of the
    current generation updated, ready and available (the real server runs no controllers)."""
    dep = get_json(member, "deploy", name, "-n", namespace)
    n = dep["spec"]["replicas"]
    member.kubectl("patch", "deploy", name, "-n", namespace, "--subresource=status", "--type=merge", "-p", json.dumps(
        {"status": {"observedGeneration": dep["metadata"]["generation"], "replicas": n, "updatedReplicas": n,
                    "readyReplicas": n, "availableReplicas": n}}))
