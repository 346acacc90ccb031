"""The test cases of ``testdata/`` (Karmada's ``*-test.yaml`` format: documents of ``desiredObj``/
``observedObj``/``statusItems``/``inputReplicas``, ``operation`` and the expected ``output``) cover
every operation of every built-in kind and hold for the built-in rules."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from karmactl.interpreter import Interpreter, thirdparty
from tests.conftest import NOW

TESTDATA = Path(__file__).parent / "testdata"
KINDS = thirdparty.kinds()


def test_every_operation_of_every_kind_has_cases():
    for api_version, kind in KINDS:
        group, version = api_version.split("/")
        found = {p.name for p in (TESTDATA / group / version / kind).glob("*-test.yaml")}
        assert found == {f"{op.lower()}-test.yaml" for op in thirdparty.operations_of(api_version, kind)}, kind


@pytest.mark.parametrize("api_version, kind", KINDS, ids=[f"{a}/{k}" for a, k in KINDS])
def test_cases_hold_for_the_built_in_rules(api_version, kind):
    group, version = api_version.split("/")
    for path in sorted((TESTDATA / group / version / kind).glob("*-test.yaml")):
        for index, case in enumerate(yaml.safe_load_all(path.read_text())):
            _check(case, f"{path.name}#{index}")


def _check(case: dict, where: str) -> None:
    results = Interpreter(now=NOW).run_rule(case["operation"], case.get("desiredObj"), case.get("observedObj"),
                                            case.get("statusItems"), case.get("inputReplicas") or 0, builtin=True)
    got = json.loads(json.dumps(dict(results)))
    for name, want in case["output"].items():
        if name == "dependencies":  # compared sorted, as Karmada's runner does
            key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
            assert sorted(got[name], key=key) == sorted(want, key=key), where
        else:
            assert got[name] == want, (where, name)
