"""Nothing outside the state directory is written, deleted or read through paths derived from
object data or placed by hand: refused with exit 2, the outside untouched."""
from __future__ import annotations

import os
import sys

from tests.reliability.hostile import HOSTILE, POLICY, deployment
from tests.reliability.test_hostile_input import _Stdin, _tree


def _outside(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "target").write_text("keep me\n")
    return victim


def test_crd_plural_with_dotdot_writes_nothing_outside(cli, state, tmp_path, monkeypatch):
    victim = _outside(tmp_path)
    monkeypatch.setattr(sys, "stdin", _Stdin(HOSTILE["crd plural escaping"][0]))
    code, _out, err = cli("apply", "-f", "-")
    assert code == 2 and "spec.names.plural" in err, err
    (state / "crd.yaml").write_bytes(HOSTILE["crd plural escaping"][0])
    code, _out, err = cli("reconcile", "--offline")
    assert code == 2 and "crd.yaml" in err and "spec.names.plural" in err, err
    assert sorted(os.listdir(tmp_path)) == ["state", "victim"]
    assert _tree(victim) == {"target": b"keep me\n"}


def test_hand_placed_computed_file_cannot_delete_outside(cli, state, tmp_path):
    victim = _outside(tmp_path)
    (state / "policy.yaml").write_bytes(POLICY)
    (state / "d.yaml").write_bytes(deployment())
    cli.ok("reconcile", "--offline")
    planted = state / "computed" / "resourcebindings" / "default" / "planted.json"
    planted.write_text('{"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "metadata": '
                       '{"name": "../../../../victim/target", "namespace": "default"}, "spec": {}}\n')
    code, _out, err = cli("reconcile", "--offline")
    assert code == 2 and "planted.json" in err, err
    assert (victim / "target").read_text() == "keep me\n"


def test_symlinked_directory_leading_outside_is_not_written(cli, state, tmp_path, monkeypatch):
    victim = _outside(tmp_path)
    os.symlink(victim, state / "deployments")
    monkeypatch.setattr(sys, "stdin", _Stdin(deployment()))
    code, _out, err = cli("apply", "-f", "-")
    assert code == 2 and "outside the state directory" in err, err
    assert _tree(victim) == {"target": b"keep me\n"}


def test_symlinked_computed_tree_leading_outside_is_not_written(cli, state, tmp_path):
    victim = _outside(tmp_path)
    os.symlink(victim, state / "computed")
    (state / "policy.yaml").write_bytes(POLICY)
    (state / "d.yaml").write_bytes(deployment())
    code, _out, err = cli("reconcile", "--offline")
    assert code == 2 and "outside the state directory" in err, err
    assert _tree(victim) == {"target": b"keep me\n"}


def test_symlinked_file_leading_outside_is_refused(cli, state, tmp_path):
    victim = _outside(tmp_path)
    (victim / "d.yaml").write_bytes(deployment())
    os.symlink(victim / "d.yaml", state / "d.yaml")
    code, _out, err = cli("get", "deploy")
    assert code == 2 and "d.yaml" in err and "outside the state directory" in err, err


def test_symlink_inside_the_state_directory_is_fine(cli, state):
    (state / ".real").mkdir()  # dot directories are not scanned: only the link is
    (state / ".real" / "d.yaml").write_bytes(deployment())
    os.symlink(".real/d.yaml", state / "d-link.yaml")
    (state / "other.yaml").write_bytes(deployment(name="other"))
    assert cli.ok("get", "deploy", "-o", "name").split() == ["deployment.apps/nginx", "deployment.apps/other"]
