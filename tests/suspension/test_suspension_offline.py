"""Dispatch suspension, offline: policy -> binding -> Work flow, CLI edits, validation."""
from __future__ import annotations

import json

import pytest

from karmactl.cli.cmd.suspend import desired_suspension
from tests.conftest import NOW, cluster_yaml, write

DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
spec:
  replicas: 3
  template:
    spec:
      containers: [{name: nginx, image: "nginx:1.25"}]
"""

PP = """
# rollout policy: keep this comment
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx   # inline comment
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinity:
      clusterNames: [member1, member2, member3]
    replicaScheduling:
      replicaSchedulingType: Duplicated
"""


@pytest.fixture
def propagated(cli, state):
    for i in (1, 2, 3):
        write(state / "clusters" / f"member{i}.yaml", cluster_yaml(f"member{i}"))
    write(state / "app" / "deploy.yaml", DEPLOY)
    write(state / "app" / "pp.yaml", PP)
    cli.ok("reconcile", "--offline", "--now", NOW)
    return state


def work(cli, cluster):
    return json.loads(cli.ok("get", "work", "nginx-687f7fb96f", "-n", f"karmada-es-{cluster}", "-o", "json"))


def suspended(cli):
    return {c: work(cli, c)["spec"]["suspendDispatching"] for c in ("member1", "member2", "member3")}


def test_suspend_all_then_resume(cli, propagated):
    out = cli.ok("suspend", "pp", "nginx")
    assert "suspended on all clusters" in out
    text = (propagated / "app" / "pp.yaml").read_text()
    assert "# rollout policy: keep this comment" in text and "# inline comment" in text
    assert "dispatching: true" in text
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert suspended(cli) == {"member1": True, "member2": True, "member3": True}
    rb = json.loads(cli.ok("get", "rb", "nginx-deployment", "-o", "json"))
    assert rb["spec"]["suspension"] == {"dispatching": True}
    cli.ok("resume", "pp", "nginx")
    assert "suspension" not in (propagated / "app" / "pp.yaml").read_text()
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert suspended(cli) == {"member1": False, "member2": False, "member3": False}


def test_suspend_some_clusters_and_resume_one(cli, propagated):
    cli.ok("suspend", "pp", "nginx", "--clusters", "member2,member3")
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert suspended(cli) == {"member1": False, "member2": True, "member3": True}
    cli.ok("resume", "pp", "nginx", "--clusters", "member3")
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert suspended(cli) == {"member1": False, "member2": True, "member3": False}


def test_works_keep_the_newest_manifest_while_suspended(cli, propagated):
    cli.ok("suspend", "pp", "nginx")
    write(propagated / "app" / "deploy.yaml", DEPLOY.replace("nginx:1.25", "nginx:1.26"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    manifest = work(cli, "member1")["spec"]["workload"]["manifests"][0]
    assert manifest["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"


def test_design_document_spellings_accepted(cli, propagated):
    write(propagated / "app" / "pp.yaml", PP + "  suspension:\n    suspendDispatchingOnClusters:\n      clusterNames: [member1]\n")
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert suspended(cli) == {"member1": True, "member2": False, "member3": False}


def test_both_fields_at_once_rejected(cli, propagated):
    write(propagated / "app" / "pp.yaml", PP + "  suspension:\n    dispatching: true\n    dispatchingOnClusters:\n      clusterNames: [member1]\n")
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 2
    assert "app/pp.yaml" in err and "spec.suspension" in err
    assert "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames" in err


def test_deleting_template_is_not_blocked_offline(cli, propagated):
    cli.ok("suspend", "pp", "nginx")
    cli.ok("reconcile", "--offline", "--now", NOW)
    cli.ok("delete", "deploy", "nginx")
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert cli.ok("get", "work", "-A", "-o", "name") == ""


@pytest.mark.parametrize("current, clusters, suspend, expected", [
    pytest.param(None, None, True, {"dispatching": True}, id="suspend all"),
    pytest.param(None, ["b"], True, {"dispatchingOnClusters": {"clusterNames": ["b"]}}, id="suspend one"),
    pytest.param({"dispatchingOnClusters": {"clusterNames": ["b"]}}, ["a"], True,
                 {"dispatchingOnClusters": {"clusterNames": ["a", "b"]}}, id="suspend adds to the list"),
    pytest.param({"dispatching": True}, ["a"], True, {"dispatching": True}, id="already all"),
    pytest.param({"dispatching": True}, None, False, None, id="resume all"),
    pytest.param({"dispatching": True}, ["a"], False, {"dispatchingOnClusters": {"clusterNames": ["b", "c"]}},
                 id="resume one of all"),
    pytest.param({"dispatchingOnClusters": {"clusterNames": ["a"]}}, ["a"], False, None, id="resume last"),
])
def test_desired_suspension(current, clusters, suspend, expected):
    assert desired_suspension(current, clusters, suspend, ["a", "b", "c"]) == expected
