"""karmactl promote (issue 14, item 1): an object already running on a member is put under management,
as karmadactl promote does, against an emulated member over HTTP and the real kubectl."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from tests.e2e.conftest import Members

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

RUNNING = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: legacy, namespace: default, labels: {app: legacy}}
spec:
  replicas: 2
  selector: {matchLabels: {app: legacy}}
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: web, image: "nginx:1.25"}]}
"""


@pytest.fixture
def member(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))  # the kubeconfigs are under tmp_path/kubeconfigs
    m = Members(tmp_path, cli)
    m.start("member1")
    manifest = tmp_path / "legacy.yaml"
    manifest.write_text(RUNNING)
    subprocess.run([KUBECTL, "--kubeconfig", m.kubeconfig("member1"), "apply", "-f", str(manifest)],
                   check=True, capture_output=True, timeout=120)
    yield m
    m.close()


def test_promote_writes_template_and_policy_then_reconcile_adopts(member, cli, state):
    out = cli.ok("promote", "deployment", "legacy", "-n", "default", "-C", "member1")
    lines = out.splitlines()
    assert re.fullmatch(r"PropagationPolicy \(default/legacy-[a-z0-9]+\) is created successfully", lines[0])
    assert lines[1] == 'Resource "apps/v1, Resource=deployments"(default/legacy) is promoted successfully'
    template = yaml.safe_load(cli.ok("get", "deploy", "legacy", "-o", "yaml"))
    stored = yaml.safe_load((state / "deployments" / "default" / "legacy.yaml").read_text())
    for field in ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"):
        assert field not in stored["metadata"]
    assert "status" not in stored
    assert stored["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] == "overwrite"
    assert template["spec"]["replicas"] == 2
    [pp_file] = (state / "propagationpolicies" / "default").glob("legacy-*.yaml")
    pp = yaml.safe_load(pp_file.read_text())
    assert pp["spec"]["placement"]["clusterAffinity"]["clusterNames"] == ["member1"]
    assert pp["spec"]["conflictResolution"] == "Overwrite" and pp["spec"]["preserveResourcesOnDeletion"] is True
    assert pp["spec"]["resourceSelectors"] == [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "legacy"}]
    cli.ok("reconcile")
    rows = [line.split() for line in cli.ok("get", "deploy", "legacy", "-s", "members").splitlines()]
    assert rows[1][0] == "legacy" and rows[1][1] == "member1" and rows[1][-1] == "Y"  # now managed by karmactl


def test_promote_dry_run_and_refusals(member, cli, state):
    out = cli.ok("promote", "deploy", "legacy", "-C", "member1", "--dry-run")
    docs = list(yaml.safe_load_all(out))
    assert [d["kind"] for d in docs] == ["Deployment", "PropagationPolicy"]
    assert not (state / "deployments").exists()
    code, _out, err = cli("promote", "deploy", "missing", "-C", "member1")
    assert code == 2 and "don't exist in cluster(member1)" in err
    code, _out, err = cli("promote", "deploy", "legacy", "-C", "member9")
    assert code == 2 and 'cluster "member9" is not registered' in err
    code, _out, err = cli("promote", "deploy", "legacy")
    assert code == 2 and "the cluster cannot be empty" in err
    cli.ok("promote", "deploy", "legacy", "-C", "member1", "--no-auto-create-policy")
    assert cli("get", "pp")[2].startswith("No resources found")
    code, _out, err = cli("promote", "deploy", "legacy", "-C", "member1")
    assert code == 2 and 'deployments.apps "legacy" already exists in the state directory' in err
