"""Bad input: exit 2, a message naming the file (and line), the object and the field; nothing changes."""
from __future__ import annotations

import hashlib

import pytest

from tests.conftest import NOW, cluster_yaml, write

GOOD_PP = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  placement:
    clusterAffinity:
      clusterNames: [member1]
"""

CASES = [
    pytest.param("bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: [a\n",
                 ["bad.yaml:", "invalid YAML"], id="malformed YAML"),
    pytest.param("bad.yaml", "apiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: g\n",
                 ["bad.yaml:1", "Gizmo g", "kind", 'unknown kind "Gizmo"'], id="unknown kind"),
    pytest.param("bad.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels: {}\n",
                 ["bad.yaml:1", "metadata.name", "required field is missing"], id="missing name"),
    pytest.param("bad.yaml", GOOD_PP.replace("  resourceSelectors:\n  - apiVersion: apps/v1\n    kind: Deployment\n    name: nginx\n", ""),
                 ["bad.yaml:1", "PropagationPolicy default/nginx-propagation", "spec.resourceSelectors", "Required value"],
                 id="missing required field"),
    pytest.param("bad.yaml", GOOD_PP + "    replicaScheduling:\n      replicaSchedulingType: Divided\n      replicaDivisionPreference: Balanced\n",
                 ["spec.placement.replicaScheduling.replicaDivisionPreference", 'Unsupported value: "Balanced"'],
                 id="invalid enum value"),
    pytest.param("bad.yaml", GOOD_PP + "    clusterAffinities:\n    - affinityName: a\n      clusterNames: [member1]\n",
                 ["PropagationPolicy default/nginx-propagation", "clusterAffinities cannot co-exist with clusterAffinity"],
                 id="rejected by Karmada's webhook"),
    pytest.param("bad.yaml", "---\n" + GOOD_PP.lstrip() + "---\n" + GOOD_PP.replace("clusterNames: [member1]",
                 "clusterNames: [member1]\n    clusterTolerations:\n    - key: a\n      operator: Gt").replace("nginx-propagation", "second"),
                 ["bad.yaml:15", "PropagationPolicy default/second", "clusterTolerations"], id="line of the second document"),
]


def tree_digest(root):
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and ".karmactl" not in p.parts:
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture
def populated(cli, tmp_path, state):
    d = tmp_path / "in"
    write(d / "clusters.yaml", cluster_yaml("member1"))
    write(d / "nginx.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx\nspec:\n  replicas: 1\n")
    write(d / "pp.yaml", GOOD_PP)
    cli.ok("apply", "-f", str(d))
    cli.ok("reconcile", "--offline", "--now", NOW)
    return state


@pytest.mark.parametrize("name, text, expected", CASES)
def test_bad_file_in_state_fails_reconcile_and_changes_nothing(cli, populated, name, text, expected):
    (populated / name).write_text(text)
    before = tree_digest(populated)
    code, out, err = cli("reconcile", "--offline", "--now", "2026-01-02T00:00:00Z")
    assert code == 2, err
    for piece in expected:
        assert piece in err
    assert "Traceback" not in err and out == ""
    assert tree_digest(populated) == before


@pytest.mark.parametrize("name, text, expected", CASES)
def test_bad_file_given_to_apply_is_refused_whole(cli, populated, tmp_path, name, text, expected):
    bad = tmp_path / "new"
    write(bad / "ok.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\ndata: {}\n")
    (bad / name).write_text(text)
    before = tree_digest(populated)
    code, _out, err = cli("apply", "-f", str(bad))
    assert code == 2
    for piece in expected[1:]:
        assert piece in err
    assert tree_digest(populated) == before


def test_duplicate_object_names_both_files(cli, populated):
    write(populated / "again.yaml", GOOD_PP)
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 2
    assert "again.yaml" in err and "propagationpolicies/default/nginx-propagation.yaml" in err


def test_unknown_resource_type_and_bad_flags(cli, populated):
    code, _out, err = cli("get", "gizmos")
    assert code == 2 and 'doesn\'t have a resource type "gizmos"' in err
    code, _out, err = cli("get", "deploy", "-o", "xml")
    assert code == 2 and "output format" in err
    code, _out, err = cli("reconcile", "--offline", "--now", "yesterday")
    assert code == 2 and "invalid --now" in err


def test_state_lock_refuses_a_second_writer(cli, populated):
    from karmactl.store.fsio import state_lock
    with state_lock(populated):
        code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 5 and "locked" in err
