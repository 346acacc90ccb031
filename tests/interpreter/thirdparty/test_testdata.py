"""The test cases of ``testdata/`` (Karmada's ``*-test.yaml`` format: documents of ``desiredObj``/
``observedObj``/``statusItems``/``inputReplicas``, ``operation`` and the expected ``output``) cover
every operation of every built-in kind, and pass through ``karmactl interpret --check --testdata``
against the built-in rules (issue 26: "Test cases ... for every built-in kind pass through
``interpret --check``")."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

from karmactl.interpreter import thirdparty

TESTDATA = Path(__file__).parent / "testdata"
KINDS = thirdparty.kinds()


def kind_dir(api_version: str, kind: str) -> Path:
    group, version = api_version.split("/")
    return TESTDATA / group / version / kind


def case_count(directory: Path) -> int:
    return sum(len([d for d in yaml.safe_load_all(f.read_text()) if d]) for f in directory.glob("*-test.yaml"))


def label(api_version: str, kind: str) -> str:
    group, version = api_version.split("/")
    return f"{kind}.{version}.{group}"


def test_every_operation_of_every_kind_has_cases():
    assert len(KINDS) == 27
    for api_version, kind in KINDS:
        found = {p.name for p in kind_dir(api_version, kind).glob("*-test.yaml")}
        assert found == {f"{op.lower()}-test.yaml" for op in thirdparty.operations_of(api_version, kind)}, kind


def test_every_case_of_every_kind_passes_interpret_check(cli):
    code, out, err = cli("interpret", "--check", "--testdata", str(TESTDATA))
    assert code == 0, out + err
    summary = dict(re.findall(r"^    (\S+): (\d+) passed, 0 failed$", out, re.M))
    expected = {label(a, k): str(case_count(kind_dir(a, k))) for a, k in KINDS}
    assert summary == expected
    total = sum(int(n) for n in expected.values())
    assert len([line for line in out.splitlines() if line.startswith("PASS [")]) == total
    assert out.rstrip().endswith(f"{total} cases: {total} passed, 0 failed")
    assert "PASS [CloneSet.v1alpha1.apps.kruise.io/InterpretReplica]:" in out


def test_a_wrong_expected_output_fails_naming_the_case(cli, tmp_path):
    copy = tmp_path / "testdata"
    shutil.copytree(kind_dir("apps.kruise.io/v1alpha1", "CloneSet"), copy / "CloneSet")
    replica = copy / "CloneSet" / "interpretreplica-test.yaml"
    docs = list(yaml.safe_load_all(replica.read_text()))
    docs[0]["output"]["replica"] += 1
    replica.write_text(yaml.safe_dump_all(docs))
    code, out, _err = cli("interpret", "--check", "--testdata", str(copy))
    assert code == 1
    (failed,) = [line for line in out.splitlines() if line.startswith("FAIL")]
    title = f"[CloneSet.v1alpha1.apps.kruise.io/InterpretReplica]:{docs[0]['name']}"
    assert failed.startswith(f"FAIL {title} ({replica}:")
    assert f"unexpected result for replica: expected {docs[0]['output']['replica']}, got " in failed
    passed = case_count(copy / "CloneSet") - 1
    assert f"    CloneSet.v1alpha1.apps.kruise.io: {passed} passed, 1 failed\n        FAILED {title}" in out


def test_testdata_flag_errors(cli, tmp_path):
    code, _out, err = cli("interpret", "--check")
    assert code == 2 and "--testdata DIR" in err
    code, _out, err = cli("interpret", "--testdata", str(TESTDATA))
    assert code == 2 and "with --check" in err
    customization = Path(__file__).parents[1] / "data" / "webapp.my.domain" / "v1" / "Guestbook" / "customizations.yaml"
    code, _out, err = cli("interpret", "-f", str(customization), "--check", "--testdata", str(TESTDATA))
    assert code == 2 and "without -f" in err
    code, _out, err = cli("interpret", "--check", "--testdata", str(tmp_path / "absent"))
    assert code == 2 and "no such file or directory" in err
    (tmp_path / "empty").mkdir()
    code, _out, err = cli("interpret", "--check", "--testdata", str(tmp_path / "empty"))
    assert code == 2 and "no test cases found" in err
