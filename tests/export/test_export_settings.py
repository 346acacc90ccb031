"""``export --to-karmada`` carries every karmactl-config setting with a Karmada equivalent into a
component flag and lists every other one in REPORT.md (issue 27, item 8)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import write
from tests.export.test_export import member_clusters

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _kubeconfig_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))


def _settings(state, data: str) -> None:
    write(state / "settings.yaml", f"""
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: karmactl-config, namespace: karmada-system}}
        data: {data}
        """)


def test_stateful_failover_injection_and_the_scheduling_gates_become_feature_gates(cli, state, tmp_path):
    member_clusters(state)
    _settings(state, '{statefulFailoverInjection: "true", priorityBasedScheduling: "false", workloadAffinity: "true"}')
    out = tmp_path / "handoff"
    code, _out, err = cli("export", "--to-karmada", str(out))
    assert code == 0, err
    cm = (out / "karmada-controller-manager.flags").read_text().split()
    gates = next(f for f in cm if f.startswith("--feature-gates="))
    assert "StatefulFailoverInjection=true" in gates
    assert "PriorityBasedScheduling=false" in gates and "WorkloadAffinity=true" in gates
    assert (out / "karmada-scheduler.flags").read_text().split() == [
        "--feature-gates=PriorityBasedScheduling=false,WorkloadAffinity=true"]
    report = (out / "REPORT.md").read_text()
    assert "## karmada-scheduler flags" in report


def test_member_retries_has_no_karmada_equivalent_and_is_listed(cli, state, tmp_path):
    member_clusters(state)
    _settings(state, '{memberRetries: "3"}')
    out = tmp_path / "handoff"
    code, _out, err = cli("export", "--to-karmada", str(out))
    assert code == 1 and "data.memberRetries" in err
    report = (out / "REPORT.md").read_text()
    assert "`data.memberRetries`" in report and "client-go" in report
    assert not (out / "karmada-scheduler.flags").exists()
    assert "karmada-scheduler needs no flags" in report


def test_every_documented_setting_is_translated_or_listed():
    """A karmactl-config key documented in README's table is either turned into a Karmada flag or
    listed in REPORT.md with its reason: a new setting without either fails here."""
    from karmactl.api.export import TRANSLATED_SETTINGS, UNTRANSLATED_SETTINGS

    readme = (REPO / "README.md").read_text()
    table = readme.split("| `data` key |", 1)[1].split("\n\n", 1)[0]
    keys = set()
    for row in table.splitlines()[2:]:
        first = row.split("|")[1]
        keys.update(re.findall(r"`([A-Za-z]+)`", first))
    assert keys, "README's karmactl-config table was not found"
    missing = sorted(k for k in keys if k not in TRANSLATED_SETTINGS and k not in UNTRANSLATED_SETTINGS)
    assert missing == []
    assert not TRANSLATED_SETTINGS & set(UNTRANSLATED_SETTINGS)
