"""propagateDeps online: a Deployment's six dependencies reach the emulated members it is scheduled
to, leave a member it is no longer scheduled to, and go with it (checked with the real kubectl)."""
from __future__ import annotations

import base64

from tests.core.test_dependencies_distributor import app

from .conftest import kubectl, reconcile

DEPENDENCIES = {"configmap/app-config", "configmap/env-config", "secret/db-secret", "secret/regcred",
                "serviceaccount/app-sa", "persistentvolumeclaim/app-data"}


def on_member(members, tmp_path, name: str) -> set:
    """The dependency kinds/names on a member, as the real kubectl lists them."""
    out = kubectl(members.kubeconfig(name), tmp_path / "kubectl-cache", "get",
                  "configmaps,secrets,serviceaccounts,persistentvolumeclaims", "-n", "default", "-o", "name")
    return {line.strip() for line in out.splitlines() if line.strip()} & DEPENDENCIES


def test_dependencies_follow_the_deployment_across_members(cli, state, members, tmp_path):
    app(state, clusters="[member1, member2]")
    reconcile(cli, 0)
    assert on_member(members, tmp_path, "member1") == DEPENDENCIES
    assert on_member(members, tmp_path, "member2") == DEPENDENCIES
    assert on_member(members, tmp_path, "member3") == set()
    got = kubectl(members.kubeconfig("member2"), tmp_path / "kubectl-cache", "get", "secret", "db-secret",
                  "-n", "default", "-o", "jsonpath={.data.pw}")
    assert base64.b64decode(got) == b"s3cret"

    # member2 is dropped from the placement: the dependencies leave it with the Deployment
    app(state, clusters="[member1, member3]")
    reconcile(cli, 10)
    assert members.deploy("member2", "app") is None and members.deploy("member3", "app") is not None
    assert on_member(members, tmp_path, "member2") == set()
    assert on_member(members, tmp_path, "member3") == DEPENDENCIES
    assert on_member(members, tmp_path, "member1") == DEPENDENCIES

    # the Deployment is deleted: its attached bindings and every member copy go
    cli.ok("delete", "deploy", "app", "-n", "default")
    reconcile(cli, 20)
    assert cli("get", "rb", "app-config-configmap", "-n", "default")[0] == 1
    for name in ("member1", "member2", "member3"):
        assert on_member(members, tmp_path, name) == set()
