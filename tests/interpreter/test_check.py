"""``karmactl interpret --check`` on Karmada's current test format (``testdata/*-test.yaml``) and the
former one, compared as Karmada's runner compares (issue 26, item 4), through the CLI on files."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from karmactl.interpreter.checking import same_result
from tests.conftest import write

DATA = Path(__file__).parent / "data"
ROLLOUT = DATA / "apps.example.io" / "v1alpha1" / "Rollout"
TASK = DATA / "batch.example.io" / "v1alpha1" / "Task"
ROOT = Path(__file__).resolve().parents[2]
# Karmada's own third-party customizations (pkg/resourceinterpreter/default/thirdparty/resourcecustomizations),
# when a copy lies in ../shared beside the checkout
KARMADA = next((base / "shared" / "data" / "karmada-resourcecustomizations" for base in ROOT.parents
                if (base / "shared" / "data" / "karmada-resourcecustomizations").is_dir()), None)


def case_count(kind_dir: Path) -> int:
    return sum(len([d for d in yaml.safe_load_all(f.read_text()) if d]) for f in (kind_dir / "testdata").glob("*-test.yaml"))


def copy_of(kind_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / kind_dir.name
    shutil.copytree(kind_dir, copy)
    return copy


def lines(out: str, prefix: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(prefix)]


def test_karmada_format_cases_run_and_pass(cli):
    code, out, err = cli("interpret", "-f", str(ROLLOUT / "customizations.yaml"), "--check")
    assert code == 0, out + err
    count = case_count(ROLLOUT)
    assert count == 10 and len(lines(out, "PASS [declarative-configuration-rollout/")) == count
    assert "    declarative-configuration-rollout: 10 passed, 0 failed" in out
    assert out.rstrip().endswith("10 cases: 10 passed, 0 failed")
    assert "PASS [declarative-configuration-rollout/AggregateStatus]:Rollout without status items" in out


def test_a_failing_case_is_named_and_the_others_still_run(cli, tmp_path):
    copy = copy_of(ROLLOUT, tmp_path)
    health = copy / "testdata" / "interprethealth-test.yaml"
    docs = list(yaml.safe_load_all(health.read_text()))
    docs[1]["output"]["healthy"] = True
    health.write_text(yaml.safe_dump_all(docs))
    code, out, _err = cli("interpret", "-f", str(copy / "customizations.yaml"), "--check")
    assert code == 1
    (failed,) = lines(out, "FAIL")
    assert failed.startswith("FAIL [declarative-configuration-rollout/InterpretHealth]:Rollout unhealthy without "
                             f"status ({health}:")
    assert "unexpected result for healthy: expected true, got false" in failed
    assert len(lines(out, "PASS [")) == 9
    assert "    declarative-configuration-rollout: 9 passed, 1 failed" in out
    assert "        FAILED [declarative-configuration-rollout/InterpretHealth]:Rollout unhealthy without status" in out


@pytest.mark.parametrize("key, value, message", [
    pytest.param("requires", {"resourceRequest": {"cpu": "250m", "memory": "1Gi"}}, "unexpected result for requires",
                 id="requires without the node claim"),
    pytest.param("replica", "4", "unexpected result for replica", id="a string is not a number"),
    pytest.param("components", [], "output key 'components' is defined but not present", id="a result not returned"),
])
def test_output_is_compared_strictly_where_karmada_is(cli, tmp_path, key, value, message):
    copy = copy_of(ROLLOUT, tmp_path)
    replica = copy / "testdata" / "interpretreplica-test.yaml"
    docs = list(yaml.safe_load_all(replica.read_text()))
    docs[0]["output"][key] = value
    replica.write_text(yaml.safe_dump_all(docs))
    code, out, _err = cli("interpret", "-f", str(copy / "customizations.yaml"), "--check")
    assert code == 1
    (failed,) = lines(out, "FAIL")
    assert "Rollout with requests and a node selector" in failed and message in failed


@pytest.mark.parametrize("name, expected, actual, same", [
    pytest.param("requires", {"resourceRequest": {"cpu": "0.25", "memory": "1024Mi"}},
                 {"resourceRequest": {"cpu": "250m", "memory": "1Gi"}}, True, id="quantities by value"),
    pytest.param("requires", {"resourceRequest": {"memory": "1G"}}, {"resourceRequest": {"memory": "1Gi"}}, False,
                 id="1G is not 1Gi"),
    pytest.param("requires", None, {}, False, id="nil is not an empty ReplicaRequirements"),
    pytest.param("dependencies", [{"kind": "Secret", "name": "b"}, {"kind": "ConfigMap", "name": "a"}],
                 [{"kind": "ConfigMap", "name": "a"}, {"kind": "Secret", "name": "b"}], True, id="dependencies sorted"),
    pytest.param("dependencies", [{"kind": "Secret", "name": "b", "namespace": ""}], [{"kind": "Secret", "name": "b"}],
                 True, id="an empty field of a struct is absent"),
    pytest.param("components", [{"name": "tm", "replicas": 2}, {"name": "jm", "replicas": 1,
                                                               "replicaRequirements": {"resourceRequest": {"cpu": "1"}}}],
                 [{"name": "jm", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "1000m"}}},
                  {"name": "tm", "replicas": 2}], True, id="components sorted by name, quantities by value"),
    pytest.param("aggregatedStatus", {"status": {"at": "{{EXCLUDE}}", "n": 1}}, {"status": {"at": "now", "n": 1}},
                 True, id="an excluded field"),
    pytest.param("aggregatedStatus", {"status": {"list": [{"at": "{{EXCLUDE}}"}, {"at": "x"}]}},
                 {"status": {"list": [{"at": 1}, {"at": "y"}]}}, False, id="exclusion is per list index"),
    pytest.param("aggregatedStatus", {"status": {"conditions": []}}, {"status": {"conditions": {}}}, False,
                 id="an empty list is not an empty map"),
    pytest.param("aggregatedStatus", {"status": {"n": 1}}, {"status": {"n": 1, "m": {}}}, False,
                 id="a field more is a difference"),
    pytest.param("healthy", True, 1, False, id="a boolean is not a number"),
    pytest.param("replica", 2, 2.0, True, id="numbers by value"),
    pytest.param("status", {}, [], False, id="JSON results compared as JSON"),
])
def test_same_result_compares_as_karmada(name, expected, actual, same):
    assert same_result(name, expected, actual) is same


def test_a_refused_customization_is_one_failure_and_the_rest_run(cli, tmp_path):
    copy_of(ROLLOUT, tmp_path / "kinds")
    refused = write(tmp_path / "kinds" / "Broken" / "customizations.yaml", """
    apiVersion: config.karmada.io/v1alpha1
    kind: ResourceInterpreterCustomization
    metadata: {name: broken}
    spec:
      target: {kind: Broken}
      customizations:
        healthInterpretation:
          luaScript: "function InterpretHealth(obj) return true end"
    """)
    code, out, _err = cli("interpret", "-f", str(tmp_path / "kinds"), "--check")
    assert code == 1
    assert f"REFUSED: {refused}:1: ResourceInterpreterCustomization broken: spec.target.apiVersion: Required value" \
        in out
    assert len(lines(out, "PASS [declarative-configuration-rollout/")) == 10
    assert "    broken: 0 passed, 1 failed" in out
    assert "10 cases: 10 passed, 0 failed; 1 other failures" in out


def test_a_script_that_does_not_load_fails_the_check(cli, tmp_path):
    copy = copy_of(ROLLOUT, tmp_path)
    doc = yaml.safe_load((copy / "customizations.yaml").read_text())
    doc["spec"]["customizations"]["healthInterpretation"]["luaScript"] = "function InterpretHealth(obj)\n  return (\nend"
    (copy / "customizations.yaml").write_text(yaml.safe_dump(doc))
    code, out, _err = cli("interpret", "-f", str(copy / "customizations.yaml"), "--check")
    assert code == 1
    assert "    InterpretHealth: ERROR: luaScript:3: unexpected symbol near 'end'" in out
    assert len(lines(out, "FAIL [declarative-configuration-rollout/InterpretHealth]")) == 2
    assert "        FAILED InterpretHealth: the script does not load: luaScript:3" in out


def test_a_malformed_case_is_one_failure(cli, tmp_path):
    copy = copy_of(ROLLOUT, tmp_path)
    write(copy / "testdata" / "typo-test.yaml", """
    name: "a typo"
    operation: InterpretHealth
    ouput: {healthy: true}
    """)
    code, out, _err = cli("interpret", "-f", str(copy / "customizations.yaml"), "--check")
    assert code == 1
    assert f"FAIL {copy / 'testdata' / 'typo-test.yaml'}:1: unknown field 'ouput'" in out
    assert len(lines(out, "PASS [")) == 10


def test_a_case_of_a_kind_no_customization_targets_fails(cli, tmp_path):
    copy = copy_of(ROLLOUT, tmp_path)
    write(copy / "testdata" / "other-test.yaml", """
    name: "another kind"
    operation: InterpretHealth
    observedObj: {apiVersion: apps/v1, kind: Deployment, metadata: {name: x}}
    output: {healthy: true}
    """)
    code, out, _err = cli("interpret", "-f", str(copy / "customizations.yaml"), "--check")
    assert code == 1 and f"no customization in {copy} targets apps/v1 Deployment" in out


def test_interpret_component_case(cli, tmp_path):
    """A case of Karmada's InterpretComponent runs when this karmactl has componentResource, and is
    otherwise refused saying so; either way this customization defines no component rule."""
    from karmactl.interpreter.customized import OPERATIONS

    copy = copy_of(ROLLOUT, tmp_path)
    write(copy / "testdata" / "interpretcomponent-test.yaml", """
    name: "components"
    operation: InterpretComponent
    desiredObj: {apiVersion: apps.example.io/v1alpha1, kind: Rollout, metadata: {name: web, namespace: shop}}
    output: {components: []}
    """)
    code, out, _err = cli("interpret", "-f", str(copy / "customizations.yaml"), "--check")
    assert code == 1
    (failed,) = lines(out, "FAIL")
    assert failed.startswith("FAIL [declarative-configuration-rollout/InterpretComponent]:components")
    if "componentResource" in OPERATIONS:
        assert "rule is not enabled" in failed
    else:
        assert "refused: this karmactl cannot run InterpretComponent" in failed


def test_no_cases_is_exit_2(cli, tmp_path):
    path = tmp_path / "customizations.yaml"
    shutil.copy(ROLLOUT / "customizations.yaml", path)
    code, _out, err = cli("interpret", "-f", str(path), "--check")
    assert code == 2 and "no test cases found" in err


def test_both_formats_in_one_directory(cli, tmp_path):
    copy = copy_of(TASK, tmp_path)
    shutil.copy(ROLLOUT / "testdata" / "interprethealth-test.yaml", copy / "testdata" / "rollout-test.yaml")
    write(copy / "testdata" / "task-health-test.yaml", """
    name: "a running task is healthy"
    operation: InterpretHealth
    observedObj: {apiVersion: batch.example.io/v1alpha1, kind: Task, metadata: {name: t}, status: {phase: Running}}
    output: {healthy: true}
    """)
    (copy / "testdata" / "rollout-test.yaml").unlink()
    code, out, err = cli("interpret", "-f", str(copy / "customizations.yaml"), "--check")
    assert code == 0, out + err
    former = len(yaml.safe_load((copy / "customizations_tests.yaml").read_text())["tests"])
    assert len(lines(out, "PASS [")) == former + 1
    assert "PASS [declarative-configuration-task/InterpretHealth]:a running task is healthy" in out


@pytest.mark.skipif(KARMADA is None, reason="no copy of Karmada's resourcecustomizations in ../shared/data")
def test_karmada_own_customizations(cli):
    """Every case of Karmada's own customizations that karmactl can load passes; the ones refused
    are named (componentResource, when this karmactl does not support it)."""
    code, out, _err = cli("interpret", "-f", str(KARMADA), "--check")
    assert not lines(out, "FAIL [") and not lines(out, "FAIL ")
    refused = lines(out, "REFUSED:")
    assert all("componentResource" in line for line in refused)
    assert code == (1 if refused else 0)
    assert len(lines(out, "PASS [")) > 300
