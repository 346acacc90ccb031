"""``karmactl interpret``: run one customized operation, and ``--check`` customizations against their
test cases (Karmada's third-party customizations layout)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import write

DATA = Path(__file__).resolve().parents[1] / "interpreter" / "data"
CUSTOMIZATIONS = sorted(DATA.glob("*/*/*/customizations.yaml"))
GUESTBOOK = DATA / "webapp.my.domain" / "v1" / "Guestbook"
WORKLOAD = DATA / "workload.example.io" / "v1alpha1" / "Workload"
TASK = DATA / "batch.example.io" / "v1alpha1" / "Task"


def results(text: str) -> dict:
    """karmadactl's output (``---`` / ``# [i/n] name:`` / YAML) as {name: value}."""
    out = {}
    for block in text.split("---\n")[1:]:
        header, _, body = block.partition("\n")
        out[header.split("] ", 1)[1].rstrip(":")] = yaml.safe_load(body)
    return out


def test_every_kind_of_customizations_is_checked(cli):
    assert len(CUSTOMIZATIONS) >= 4
    for path in CUSTOMIZATIONS:
        code, out, err = cli("interpret", "-f", str(path), "--check")
        assert code == 0, out + err
        assert "FAIL" not in out and "ERROR" not in out
        former = path.parent / "customizations_tests.yaml"
        cases = len(yaml.safe_load(former.read_text())["tests"]) if former.is_file() else 0
        cases += sum(len([d for d in yaml.safe_load_all(f.read_text()) if d])
                     for f in (path.parent / "testdata").glob("*-test.yaml"))
        assert cases and out.count("PASS [") == cases


@pytest.mark.parametrize("kind_dir, case, key, wrong", [
    pytest.param(GUESTBOOK, 0, "replica", 3, id="replicas"),
    pytest.param(TASK, 0, "healthy", True, id="health"),
    pytest.param(TASK, 2, "aggregatedStatus", {"status": {"phase": "Failed"}}, id="status aggregation"),
    pytest.param(WORKLOAD, 3, "dependencies", [], id="dependencies"),
])
def test_check_names_the_case_whose_output_differs(cli, tmp_path, kind_dir, case, key, wrong):
    copy = tmp_path / kind_dir.name
    shutil.copytree(kind_dir, copy)
    tests_file = copy / "customizations_tests.yaml"
    tests = yaml.safe_load(tests_file.read_text())
    tests["tests"][case]["expectedOutput"][key] = wrong
    tests_file.write_text(yaml.safe_dump(tests))
    code, out, _err = cli("interpret", "-f", str(copy / "customizations.yaml"), "--check")
    assert code == 1
    failed = [line for line in out.splitlines() if line.startswith("FAIL")]
    name = yaml.safe_load((copy / "customizations.yaml").read_text())["metadata"]["name"]
    assert len(failed) == 1 and failed[0].startswith(f"FAIL [{name}/{tests['tests'][case]['operation']}]:tests[{case}]")
    assert f"unexpected result for {key}" in failed[0]


def test_check_reports_a_script_that_does_not_load(cli, tmp_path):
    doc = yaml.safe_load((TASK / "customizations.yaml").read_text())
    doc["spec"]["customizations"]["healthInterpretation"]["luaScript"] = "function InterpretHealth(obj)\n  return (\nend"
    path = tmp_path / "customizations.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, out, _err = cli("interpret", "-f", str(path), "--check")
    assert code == 1
    assert "    InterpretHealth: ERROR: luaScript:3: unexpected symbol near 'end'" in out
    assert "    InterpretStatus: PASS" in out and "    Retain: UNSET" in out


@pytest.mark.parametrize("args, expected", [
    pytest.param(["--operation", "InterpretReplica", "--desired-file", str(WORKLOAD / "testdata" / "workload.yaml")],
                 {"replica": 3, "requires": {"nodeClaim": {"nodeSelector": {"disktype": "ssd"}},
                                             "resourceRequest": {"cpu": "250m", "memory": "64Mi"}}},
                 id="interpretReplica"),
    pytest.param(["--operation", "reviseReplica", "--desired-file", str(GUESTBOOK / "testdata" / "guestbook.yaml"),
                  "--desired-replica", "5"],
                 {"revised": {"apiVersion": "webapp.my.domain/v1", "kind": "Guestbook",
                              "metadata": {"name": "guestbook-sample", "namespace": "default"},
                              "spec": {"size": 5, "configMapName": "test", "alias": "Name"}}}, id="reviseReplica"),
    pytest.param(["--operation", "interpretHealth", "--observed-file",
                  str(GUESTBOOK / "testdata" / "observed-guestbook.yaml")], {"healthy": True}, id="interpretHealth"),
    pytest.param(["--operation", "interpretStatus", "--observed-file", str(TASK / "testdata" / "observed-task.yaml")],
                 {"status": {"phase": "Failed", "failed": 1}}, id="interpretStatus"),
    pytest.param(["--operation", "aggregateStatus", "--desired-file", str(TASK / "testdata" / "task.yaml"),
                  "--status-file", str(TASK / "testdata" / "status-task.yaml")],
                 {"aggregatedStatus": {"apiVersion": "batch.example.io/v1alpha1", "kind": "Task",
                                       "metadata": {"name": "nightly", "namespace": "default"},
                                       "spec": {"command": ["backup"]},
                                       "status": {"phase": "Running", "succeeded": 3, "failed": 0}}},
                 id="aggregateStatus"),
    pytest.param(["--operation", "retain", "--desired-file", str(WORKLOAD / "testdata" / "workload.yaml"),
                  "--observed-file", str(WORKLOAD / "testdata" / "observed-workload.yaml")],
                 {"paused": True}, id="retain"),
    pytest.param(["--operation", "interpretDependency", "--desired-file", str(WORKLOAD / "testdata" / "workload.yaml")],
                 {"dependencies": [
                     {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "web-settings"},
                     {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "shop", "name": "web-data"},
                     {"apiVersion": "v1", "kind": "Secret", "namespace": "shop", "name": "web-secret"},
                     {"apiVersion": "v1", "kind": "ServiceAccount", "namespace": "shop", "name": "web"}]},
                 id="interpretDependency"),
])
def test_operation_prints_results(cli, args, expected):
    files = []
    for path in CUSTOMIZATIONS:
        files += ["-f", str(path)]
    out = cli.ok("interpret", *files, *args)
    got = results(out)
    if "paused" in expected:
        assert got["retained"]["spec"]["paused"] is True and got["retained"]["spec"]["replicas"] == 3
    else:
        assert got == expected


@pytest.mark.parametrize("args, message", [
    pytest.param(["--operation", "interpretHealth", "--desired-file", str(WORKLOAD / "testdata" / "workload.yaml")],
                 "rule is not enabled", id="no such rule for the kind"),
    pytest.param(["--operation", "scale", "--desired-file", str(WORKLOAD / "testdata" / "workload.yaml")],
                 "operation scale is not supported", id="unknown operation"),
    pytest.param(["--operation", "retain", "--desired-file", str(WORKLOAD / "testdata" / "workload.yaml")],
                 "observed, observed-file options are not set", id="missing input"),
    pytest.param([], "operation is not set", id="neither --operation nor --check"),
])
def test_operation_errors_exit_2(cli, args, message):
    code, _out, err = cli("interpret", "-f", str(WORKLOAD / "customizations.yaml"), *args)
    assert code == 2 and message in err, err


def test_not_a_customization_is_refused_naming_file_and_object(cli, tmp_path):
    path = write(tmp_path / "deploy.yaml", """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: nginx}
    """)
    code, _out, err = cli("interpret", "-f", str(path), "--check")
    assert code == 2 and "deploy.yaml:1: Deployment nginx: kind: not a ResourceInterpreterCustomization" in err


def test_endless_script_fails_the_operation_within_the_time_limit(cli, tmp_path):
    doc = yaml.safe_load((TASK / "customizations.yaml").read_text())
    doc["spec"]["customizations"]["healthInterpretation"]["luaScript"] = \
        "function InterpretHealth(obj)\n  while true do end\nend"
    path = tmp_path / "customizations.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, _out, err = cli("interpret", "-f", str(path), "--operation", "InterpretHealth",
                          "--observed-file", str(TASK / "testdata" / "observed-task.yaml"))
    assert code == 2
    assert "ResourceInterpreterCustomization declarative-configuration-task: healthInterpretation (InterpretHealth)" \
           in err and "time limit" in err
