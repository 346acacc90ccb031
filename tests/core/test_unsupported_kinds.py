"""Karmada kinds karmactl does not run are refused by name, not stored and never acted upon."""
from __future__ import annotations

import pytest

from tests.conftest import write


@pytest.mark.parametrize("api_version, kind", [("autoscaling.karmada.io/v1alpha1", "FederatedHPA")])
def test_karmada_kinds_karmactl_does_not_run_are_refused_by_name(cli, state, tmp_path, api_version, kind):
    write(tmp_path / "in.yaml", f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x, namespace: default}}\nspec: {{}}\n")
    code, _out, err = cli("apply", "-f", str(tmp_path / "in.yaml"))
    assert code == 2
    assert f"{kind} ({'federated' if 'HPA' in kind else 'multi-cluster'}" in err and "is not supported by karmactl" in err
