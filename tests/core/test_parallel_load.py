"""Large state directories are parsed and checked by two worker processes; what a user sees
(objects loaded, bad-input messages, exit codes) must not depend on that."""
from __future__ import annotations

import pytest

from karmactl import reconcile
from karmactl.store import parsing
from karmactl.store.state import InputError, StateStore
from tests.conftest import NOW, cluster_yaml, write
from tests.core.test_bad_input import CASES, GOOD_PP, tree_digest

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Gizmo, plural: gizmos, singular: gizmo}
  versions:
  - {name: v1, served: true, storage: true}
"""


@pytest.fixture
def parallel(monkeypatch):
    """Every load takes the worker-process path, however few files there are."""
    monkeypatch.setattr(parsing, "PARALLEL_PARSE_MIN_FILES", 1)


def _mixed_state(root):
    write(root / "clusters.yaml", cluster_yaml("member1") + "\n---\n" + cluster_yaml("member2"))
    write(root / "pp.yaml", GOOD_PP)
    # a custom resource in a file sorted before its CRD, next to built-in kinds in one file
    write(root / "a-gizmo.yaml", "apiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: g1\nspec: {size: 3}\n"
          "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata: {a: b}\n")
    write(root / "z-crd.yaml", CRD)
    write(root / "nginx.json", '{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx"},'
          ' "spec": {"replicas": 2}}')
    for i in range(6):
        write(root / "more" / f"svc{i}.yaml", f"apiVersion: v1\nkind: Service\nmetadata:\n  name: s{i}\n  namespace: n{i % 2}\n")


def _load(root):
    snap = reconcile.load(StateStore(root))
    return snap.user, {k: (s.path, s.index, s.line) for k, s in snap.sources.items()}


def test_parallel_load_equals_serial_load(tmp_path, monkeypatch):
    _mixed_state(tmp_path / "s")
    serial = _load(tmp_path / "s")
    (tmp_path / "s" / ".karmactl" / "cache" / "parsed.json").unlink()
    monkeypatch.setattr(parsing, "PARALLEL_PARSE_MIN_FILES", 1)
    par = _load(tmp_path / "s")
    assert par == serial
    assert ("example.com", "Gizmo", "default", "g1") in par[0]  # the custom resource was checked after its CRD
    # defaulting ran in the workers: the policy carries Karmada's defaults
    pp = par[0][("policy.karmada.io", "PropagationPolicy", "default", "nginx-propagation")]
    assert pp["spec"]["conflictResolution"] == "Abort" and pp["spec"]["resourceSelectors"][0]["namespace"] == "default"
    # equal string values of different files are one object (parsing.share_strings): memory, not content
    services = [par[0][("", "Service", f"n{i % 2}", f"s{i}")] for i in (0, 2, 4)]
    assert services[0]["metadata"]["namespace"] is services[1]["metadata"]["namespace"] is \
        services[2]["metadata"]["namespace"]
    # and the cache written by a parallel load serves the next (serial or parallel) load
    assert _load(tmp_path / "s") == serial


@pytest.mark.parametrize("name, text, expected", CASES)
def test_bad_input_through_the_workers(cli, tmp_path, state, parallel, name, text, expected):
    d = tmp_path / "in"
    write(d / "clusters.yaml", cluster_yaml("member1"))
    write(d / "pp.yaml", GOOD_PP)
    cli.ok("apply", "-f", str(d))
    cli.ok("reconcile", "--offline", "--now", NOW)
    (state / name).write_text(text)
    before = tree_digest(state)
    code, out, err = cli("reconcile", "--offline", "--now", "2026-01-02T00:00:00Z")
    assert code == 2, err
    for piece in expected:
        assert piece in err
    assert "Traceback" not in err and out == ""
    assert tree_digest(state) == before


def test_first_bad_file_in_path_order_is_reported(tmp_path, parallel):
    for i in range(8):
        write(tmp_path / f"f{i}.yaml", f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n")
    write(tmp_path / "f3.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels: {}\n")
    write(tmp_path / "f6.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: [a\n")
    with pytest.raises(InputError) as info:
        reconcile.load(StateStore(tmp_path))
    assert info.value.file == "f3.yaml" and info.value.field == "metadata.name"


def test_custom_resource_errors_name_the_field(tmp_path, parallel):
    _mixed_state(tmp_path)
    write(tmp_path / "a-gizmo.yaml", "apiVersion: example.com/v2\nkind: Gizmo\nmetadata:\n  name: g1\n")
    with pytest.raises(InputError) as info:
        reconcile.load(StateStore(tmp_path))
    assert info.value.file == "a-gizmo.yaml" and info.value.field == "kind"
