"""Hostile input gets exit 2 with a message naming file and field, never exit 70, a signal, a hang,
or a write: through ``apply -f -``, ``apply -f <file>`` and files placed by hand in the state
directory (then ``reconcile``, ``get``)."""
from __future__ import annotations

import io
import os
import sys

import pytest

from tests.reliability.hostile import HOSTILE, POLICY, deployment


def _tree(root) -> dict:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            if ".karmactl" not in p:
                out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


class _Stdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)

    def read(self, *a):
        return self.buffer.read(*a).decode("utf-8")

    def close(self):  # a forked worker process closes its stdin first (multiprocessing)
        self.buffer.close()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_apply_from_stdin_refuses_with_exit_2(cli, state, monkeypatch, case):
    data, phrase = HOSTILE[case]
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    code, _out, err = cli("apply", "-f", "-")
    assert code == 2, err
    assert err.startswith("error: <stdin>"), err
    assert phrase in err, err
    assert _tree(state) == {}


# a hand-placed document that is no object at all is ignored, as any non-Kubernetes file of a
# repository is (tests/statedir); apply -f still refuses it
IGNORED_WHEN_PLACED = {"not a mapping"}


@pytest.mark.parametrize("case", sorted(set(HOSTILE) - IGNORED_WHEN_PLACED))
def test_hand_placed_file_refused_by_every_command(cli, state, tmp_path, case):
    data, phrase = HOSTILE[case]
    (state / "bad.yaml").write_bytes(data)
    (state / "policy.yaml").write_bytes(POLICY)
    before = _tree(state)
    for args in (("reconcile", "--offline"), ("get", "deploy", "-A"), ("plan",)):
        code, _out, err = cli(*args)
        assert code == 2, (args, err)
        assert "bad.yaml" in err and phrase in err, (args, err)
    assert _tree(state) == before
    # apply -f of the same file names it too
    (state / "bad.yaml").unlink()
    f = tmp_path / "in.yaml"
    f.write_bytes(data)
    code, _out, err = cli("apply", "-f", str(f))
    assert code == 2 and "in.yaml" in err and phrase in err, err


def test_valid_253_character_name_is_stored_and_reconciled(cli, state, monkeypatch):
    name = "a" * 253
    monkeypatch.setattr(sys, "stdin", _Stdin(deployment(name=name) + b"---\n" + POLICY))
    cli.ok("apply", "-f", "-")
    cli.ok("reconcile", "--offline")
    out = cli.ok("get", "deploy", name, "-o", "name")
    assert out.strip() == f"deployment.apps/{name}"
    assert all(len(p.name) <= 255 for p in state.rglob("*"))
    cli.ok("delete", "deploy", name)
    cli.ok("reconcile", "--offline")
    assert not [p for p in (state / "computed").rglob("*.json") if "resourcebindings" in str(p)]


def test_fifo_named_yaml_is_refused_not_waited_on(cli, state):
    os.mkfifo(state / "pipe.yaml")
    code, _out, err = cli("reconcile", "--offline")
    assert code == 2 and "pipe.yaml" in err and "not a regular file" in err, err
    code, _out, err = cli("apply", "-f", str(state / "pipe.yaml"))
    assert code == 2 and "not a regular file" in err, err


def test_symlink_to_a_device_is_refused(cli, state):
    os.symlink("/dev/zero", state / "zero.yaml")
    code, _out, err = cli("get", "deploy")
    assert code == 2 and "zero.yaml" in err, err


def test_bom_and_crlf_are_fine(cli, state, monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Stdin(b"\xef\xbb\xbf" + deployment().replace(b"\n", b"\r\n")))
    cli.ok("apply", "-f", "-")
    assert cli.ok("get", "deploy", "-o", "name").strip() == "deployment.apps/nginx"


def test_document_lines_are_reported_in_a_large_multi_document_file(cli, state):
    docs = [deployment(name=f"d{i}").decode() for i in range(2000)]
    docs[1500] = deployment(name="d1500", replicas="1.5").decode()
    (state / "many.yaml").write_text("---\n".join(docs))
    code, _out, err = cli("reconcile", "--offline")
    line = 1 + sum(d.count("\n") + 1 for d in docs[:1500])
    assert code == 2 and f"many.yaml:{line}:" in err and "d1500" in err, err


def test_int32_maximum_replicas_are_divided(cli, state, monkeypatch):
    """Karmada's largest replica count (int32) divided by weight over two clusters: the run ends
    (the Webster division hands seats out in bulk, not once per replica) and the split is exact."""
    from tests.conftest import cluster_yaml, write

    for name in ("m1", "m2"):
        write(state / "clusters" / f"{name}.yaml", cluster_yaml(name))
    monkeypatch.setattr(sys, "stdin", _Stdin(deployment(replicas=str(2 ** 31 - 1)) + b"---\n" + POLICY))
    cli.ok("apply", "-f", "-")
    cli.ok("reconcile", "--offline")
    out = cli.ok("get", "rb", "-n", "default", "-o", "jsonpath={range .items[*].spec.clusters[*]}{.name}={.replicas} {end}")
    split = dict(item.split("=") for item in out.split())
    assert sorted(split) == ["m1", "m2"]
    assert sorted(int(v) for v in split.values()) == [1073741823, 1073741824]  # the odd one by the UID tie-break
