"""Writes of one run land together: a run that fails while writing leaves the state directory as it was."""
from __future__ import annotations

import json
import os

import pytest

from karmactl.store import computed
from karmactl.store.fsio import TreeWriter
from tests.conftest import NOW, cluster_yaml, write
from tests.core.test_bad_input import tree_digest

PP = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: pp
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
"""


def _deploy(name: str, replicas: int = 2) -> str:
    return f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: {replicas}\n"


@pytest.fixture
def inputs(state):
    write(state / "clusters.yaml", cluster_yaml("member1") + "\n---\n" + cluster_yaml("member2"))
    write(state / "pp.yaml", PP)
    for i in range(5):
        write(state / "apps" / f"app{i}.yaml", _deploy(f"app{i}"))
    return state


def _leftovers(root):
    return [str(p.relative_to(root)) for p in root.rglob("*") if p.name.endswith(".tmp") or p.name.startswith("staging.")]


def _fail_after(monkeypatch, n: int):
    real = computed.dump_computed
    calls = {"n": 0}

    def dump(obj):
        calls["n"] += 1
        if calls["n"] > n:
            raise OSError(28, "No space left on device")
        return real(obj)

    monkeypatch.setattr(computed, "dump_computed", dump)


def test_cold_run_creates_the_whole_computed_tree(cli, inputs):
    code, out, _err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0
    works = sorted(p.name for p in (inputs / "computed" / "works").rglob("*.json"))
    assert len(works) == 10  # 5 apps x 2 clusters
    rb = json.loads((inputs / "computed" / "resourcebindings" / "default" / "app0-deployment.json").read_text())
    assert rb["kind"] == "ResourceBinding"
    assert _leftovers(inputs) == []


def test_failure_in_a_cold_write_leaves_no_computed_tree(cli, inputs, monkeypatch):
    before = tree_digest(inputs)
    _fail_after(monkeypatch, 3)
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code != 0 and "No space left on device" in err and "Traceback" not in err
    assert not (inputs / "computed").exists()
    assert tree_digest(inputs) == before and _leftovers(inputs) == []


def test_failure_in_a_warm_write_changes_no_file(cli, inputs, monkeypatch):
    cli.ok("reconcile", "--offline", "--now", NOW)
    for i in range(5):  # every binding and Work changes
        write(inputs / "apps" / f"app{i}.yaml", _deploy(f"app{i}", replicas=4))
    write(inputs / "apps" / "new.yaml", _deploy("brand-new"))  # and a new one appears
    before = tree_digest(inputs)
    _fail_after(monkeypatch, 3)
    code, _out, _err = cli("reconcile", "--offline", "--now", "2026-01-02T00:00:00Z")
    assert code != 0
    assert tree_digest(inputs) == before and _leftovers(inputs) == []
    monkeypatch.undo()
    cli.ok("reconcile", "--offline", "--now", "2026-01-02T00:00:00Z")
    work = next((inputs / "computed" / "works" / "karmada-es-member1").glob("brand-new-*.json"))
    assert json.loads(work.read_text())["spec"]["workload"]["manifests"][0]["spec"]["replicas"] == 2


def test_deleted_objects_take_their_empty_directories_along(cli, inputs):
    cli.ok("reconcile", "--offline", "--now", NOW)
    (inputs / "pp.yaml").unlink()
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert not (inputs / "computed" / "works").exists()
    assert not (inputs / "computed" / "resourcebindings").exists()


def test_staging_left_by_a_killed_run_is_cleared(cli, inputs):
    stale = inputs / ".karmactl" / "staging.99999" / "computed" / "works"
    stale.mkdir(parents=True)
    (stale / "junk.json").write_text("{}")
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert not (inputs / ".karmactl" / "staging.99999").exists()
    assert not list((inputs / "computed").rglob("junk.json"))


def test_tree_writer_moves_missing_directories_in_whole(tmp_path):
    (tmp_path / "computed" / "works" / "karmada-es-a").mkdir(parents=True)
    (tmp_path / "computed" / "works" / "karmada-es-a" / "old.json").write_text("old")
    w = TreeWriter(tmp_path, tmp_path / ".karmactl" / "staging.1")
    w.write("computed/works/karmada-es-a/old.json", b"new")
    w.write("computed/works/karmada-es-b/x.json", b"x")
    w.write("computed/works/karmada-es-b/y.json", b"y")
    w.write("computed/status/deployments.apps/default/d.json", b"d")
    assert not (tmp_path / "computed" / "works" / "karmada-es-b").exists()  # nothing visible before commit
    assert (tmp_path / "computed" / "works" / "karmada-es-a" / "old.json").read_text() == "old"
    w.commit()
    assert (tmp_path / "computed" / "works" / "karmada-es-a" / "old.json").read_text() == "new"
    assert sorted(os.listdir(tmp_path / "computed" / "works" / "karmada-es-b")) == ["x.json", "y.json"]
    assert (tmp_path / "computed" / "status" / "deployments.apps" / "default" / "d.json").read_text() == "d"
    assert not (tmp_path / ".karmactl" / "staging.1").exists() and _leftovers(tmp_path) == []
