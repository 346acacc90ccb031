"""Incremental offline runs (``karmactl/store/runindex.py``, ``reconcile._run_partial``): after any
sequence of edits and clock moves, a run that uses the index of the last run leaves ``computed/``
byte for byte as a run without it would, and fails the same way."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from karmactl import reconcile
from karmactl.api.objects import add_seconds
from karmactl.store import runindex
from karmactl.store.state import StateStore
from tests.conftest import NOW, cluster_yaml, write

CLUSTERS = ("member1", "member2", "member3")
APPS = 4


def deployment(i: int, replicas: int = 2, image: str = "1.0", tier: str = "web", ns: str = "default") -> str:
    return f"""
    apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: app{i}, namespace: {ns}, labels: {{tier: {tier}}}}}
    spec:
      replicas: {replicas}
      selector: {{matchLabels: {{app: app{i}}}}}
      template:
        metadata: {{labels: {{app: app{i}}}}}
        spec: {{containers: [{{name: main, image: "registry.example/app{i}:{image}"}}]}}
    """


def policy(name: str, tier: str, clusters: tuple, weights: tuple | None = None, toleration: int | None = None) -> str:
    if weights:
        rows = "\n".join(f"            - {{targetCluster: {{clusterNames: [{c}]}}, weight: {w}}}"
                         for c, w in zip(clusters, weights))
        scheduling = f"""replicaScheduling:
          replicaSchedulingType: Divided
          replicaDivisionPreference: Weighted
          weightPreference:
            staticWeightList:
{rows}"""
    else:
        scheduling = "replicaScheduling: {replicaSchedulingType: Duplicated}"
    tolerations = ""
    if toleration is not None:
        tolerations = (f"\n        clusterTolerations: [{{key: cluster.karmada.io/not-ready, operator: Exists, "
                       f"effect: NoExecute, tolerationSeconds: {toleration}}}]")
    return f"""
    apiVersion: policy.karmada.io/v1alpha1
    kind: PropagationPolicy
    metadata: {{name: {name}, namespace: default}}
    spec:
      resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, labelSelector: {{matchLabels: {{tier: {tier}}}}}}}]
      placement:
        clusterAffinity: {{clusterNames: [{", ".join(clusters)}]}}{tolerations}
        {scheduling}
      failover:
        cluster: {{purgeMode: Gracefully}}
    """


def make_state(root: Path) -> None:
    for c in CLUSTERS:
        write(root / "clusters" / f"{c}.yaml", cluster_yaml(c))
    for i in range(APPS):
        write(root / "apps" / f"app{i}.yaml", deployment(i, tier="web" if i % 2 else "batch"))
    # two templates in one file
    write(root / "apps" / "pair.yaml", deployment(10) + "---\n" + deployment(11, tier="batch"))
    write(root / "policies" / "web.yaml", policy("web", "web", ("member1", "member2", "member3"), (1, 2, 1)))
    write(root / "policies" / "batch.yaml", policy("batch", "batch", ("member1", "member2")))
    # written long ago: a file modified less than a second before a run is read again by the next
    # one (runindex.RACY_NS), which would hide what the index spares
    old = os.stat(root).st_mtime - 3600
    for path in root.rglob("*.yaml"):
        os.utime(path, (old, old))


def computed_tree(root: Path) -> dict:
    base = root / "computed"
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()} \
        if base.is_dir() else {}


def outcome(root: Path, now: str):
    try:
        report = reconcile.run(StateStore(root), reconcile.RunOptions(now=now, offline=True))
    except (reconcile.InputError, reconcile.NotConvergedError) as exc:
        return type(exc).__name__, str(exc)
    return "ok", sorted(report.warnings)


def copy_without_index(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".karmactl"), symlinks=True)


# ------------------------------------------------------------------------------------------ edits

def edit_template(root: Path, i: int, replicas: int, image: str, tier: str) -> None:
    write(root / "apps" / f"app{i}.yaml", deployment(i, replicas, image, tier))


def edit_pair(root: Path, replicas: int) -> None:
    write(root / "apps" / "pair.yaml", deployment(10, replicas) + "---\n" + deployment(11, replicas, tier="batch"))


def remove_template(root: Path, i: int) -> None:
    (root / "apps" / f"app{i}.yaml").unlink(missing_ok=True)


def edit_policy(root: Path, which: str, toleration: int | None, weight: int) -> None:
    if which == "web":
        write(root / "policies" / "web.yaml", policy("web", "web", ("member1", "member2", "member3"), (1, weight, 1),
                                                    toleration))
    else:
        write(root / "policies" / "batch.yaml", policy("batch", "batch", ("member1", "member2"), None, toleration))


def edit_cluster(root: Path, name: str, ready: str) -> None:
    write(root / "clusters" / f"{name}.yaml", cluster_yaml(name, ready))


def break_file(root: Path, i: int) -> None:
    write(root / "apps" / f"app{i}.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: [\n")


def duplicate(root: Path, i: int) -> None:
    write(root / "apps" / f"copy-of-app{i}.yaml", deployment(i))


def hand_edit_computed(root: Path) -> None:
    works = sorted((root / "computed" / "works").rglob("*.json")) if (root / "computed" / "works").is_dir() else []
    if works:
        works[0].unlink()


EDITS = st.one_of(
    st.tuples(st.just(edit_template), st.integers(0, APPS - 1), st.integers(0, 6), st.sampled_from(["1.0", "2.0"]),
              st.sampled_from(["web", "batch", "none"])),
    st.tuples(st.just(edit_pair), st.integers(1, 5)),
    st.tuples(st.just(remove_template), st.integers(0, APPS - 1)),
    st.tuples(st.just(edit_policy), st.sampled_from(["web", "batch"]), st.sampled_from([None, 0, 60, 600]),
              st.integers(1, 3)),
    st.tuples(st.just(edit_cluster), st.sampled_from(CLUSTERS), st.sampled_from(["True", "False"])),
    st.tuples(st.just(break_file), st.integers(0, APPS - 1)),
    st.tuples(st.just(duplicate), st.integers(0, APPS - 1)),
    st.tuples(st.just(hand_edit_computed)),
)
STEP = st.tuples(st.lists(EDITS, max_size=2), st.sampled_from([0, 1, 30, 61, 301, 700]))
EXAMPLES = int(os.environ.get("KARMACTL_INCREMENTAL_EXAMPLES", "6"))  # CI: 6; set it for long runs


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(STEP, min_size=1, max_size=6))
def test_incremental_runs_write_what_full_runs_write(steps):
    with tempfile.TemporaryDirectory() as tmp:
        root, cold = Path(tmp) / "state", Path(tmp) / "cold"
        make_state(root)
        now = NOW
        assert outcome(root, now)[0] == "ok"
        for edits, seconds in steps:
            for edit, *args in edits:
                edit(root, *args)
            now = add_seconds(now, seconds)
            shutil.rmtree(cold, ignore_errors=True)
            copy_without_index(root, cold)
            expected = outcome(cold, now)
            got = outcome(root, now)
            assert got[0] == expected[0], (got, expected)
            if got[0] != "ok":
                assert got == expected
            assert computed_tree(root) == computed_tree(cold)


# ------------------------------------------------------------------------------------ targeted


@pytest.fixture
def ran(state) -> Path:
    make_state(state)
    assert outcome(state, NOW)[0] == "ok"
    return state


def test_unchanged_run_reads_no_file_and_writes_nothing(ran, monkeypatch):
    before = {p: p.stat().st_mtime_ns for p in (ran / "computed").rglob("*")}

    def no_load(*_a, **_k):
        raise AssertionError("an unchanged run loaded the state directory")

    monkeypatch.setattr(reconcile, "load", no_load)
    report = reconcile.run(StateStore(ran), reconcile.RunOptions(now=add_seconds(NOW, 60), offline=True))
    assert report.changes == []
    assert {p: p.stat().st_mtime_ns for p in (ran / "computed").rglob("*")} == before


def test_one_template_changed_writes_only_its_files(ran, monkeypatch):
    edit_template(ran, 1, 5, "2.0", "web")
    monkeypatch.setattr(reconcile, "load", lambda *_a, **_k: pytest.fail("a one-template change ran in full"))
    report = reconcile.run(StateStore(ran), reconcile.RunOptions(now=add_seconds(NOW, 60), offline=True))
    assert report.changes
    for _action, rel in report.changes:
        assert "app1" in rel, rel


@pytest.mark.parametrize("damage", ["garbage", "empty", "other-karmactl"])
def test_a_corrupt_or_foreign_index_costs_a_full_run(ran, damage):
    path = Path(runindex.index_path(ran))
    if damage == "garbage":
        path.write_bytes(b"\x00not json")
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.write_bytes(path.read_bytes().replace(b'"tag":"karmactl-', b'"tag":"other-'))
    edit_template(ran, 2, 4, "1.0", "batch")
    cold = ran.parent / "cold"
    copy_without_index(ran, cold)
    assert outcome(ran, NOW) == outcome(cold, NOW)
    assert computed_tree(ran) == computed_tree(cold)
    assert runindex.read_index(ran, reconcile._index_tag()) is not None  # rebuilt


def test_a_policy_change_runs_in_full(ran):
    edit_policy(ran, "web", None, 3)
    cold = ran.parent / "cold"
    copy_without_index(ran, cold)
    report = reconcile.run(StateStore(ran), reconcile.RunOptions(now=NOW, offline=True))
    assert report.incremental == "full: policies/web.yaml holds objects other templates read"
    assert report.changes
    assert outcome(cold, NOW)[0] == "ok"
    assert computed_tree(ran) == computed_tree(cold)


def test_verbose_run_says_how_it_used_the_index(ran, cli):
    cli.state = ran
    code, _out, err = cli("-v", "reconcile", "--offline", "--now", NOW)
    assert code == 0 and "run: unchanged" in err and "0 file(s) changed" in err
    edit_template(ran, 3, 1, "1.0", "web")
    code, _out, err = cli("-v", "reconcile", "--offline", "--now", NOW)
    assert code == 0 and "run: partial: 1 template(s)" in err, err


def test_a_toleration_window_end_recomputes_its_bindings(ran):
    """A NotReady cluster is tainted NoExecute; a policy tolerating it 60 s: the bindings are due at
    the window's end although nothing changes on disk."""
    edit_policy(ran, "web", 60, 2)
    edit_cluster(ran, "member2", "False")
    assert outcome(ran, NOW)[0] == "ok"
    index = runindex.read_index(ran, reconcile._index_tag())
    assert index.wakes, "no wake-up time recorded for the toleration window"
    later = add_seconds(NOW, 120)
    cold = ran.parent / "cold"
    copy_without_index(ran, cold)
    assert outcome(ran, later) == outcome(cold, later)
    assert computed_tree(ran) == computed_tree(cold)


def test_lua_customizations_make_every_run_a_full_one(ran):
    """Lua may read the clock (os.time): with a ResourceInterpreterCustomization no run is spared."""
    write(ran / "customizations.yaml", """
    apiVersion: config.karmada.io/v1alpha1
    kind: ResourceInterpreterCustomization
    metadata: {name: deploy-replicas}
    spec:
      target: {apiVersion: apps/v1, kind: Deployment}
      customizations:
        replicaResource:
          luaScript: |
            function GetReplicas(obj)
              return obj.spec.replicas, {}
            end
    """)
    first = reconcile.run(StateStore(ran), reconcile.RunOptions(now=NOW, offline=True))
    assert first.incremental.startswith("full: ")
    again = reconcile.run(StateStore(ran), reconcile.RunOptions(now=NOW, offline=True))
    assert again.incremental.startswith("full: a time-based rule of the whole state is due"), again.incremental
