"""Dispatch suspension against real (emulated) members: the design document's stories."""
from __future__ import annotations

import urllib.request

import pytest

from tests.conftest import write
from tests.members.conftest import Members, at, condition, work

DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: default
  labels: {{app: nginx}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: nginx}}}}
  template:
    metadata: {{labels: {{app: nginx}}}}
    spec:
      containers:
      - {{name: nginx, image: "{image}"}}
"""

PP = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
  namespace: default
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinity:
      clusterNames: [member1, member2, member3]
    replicaScheduling:
      replicaSchedulingType: Duplicated
"""

ALL = ("member1", "member2", "member3")


@pytest.fixture
def members(tmp_path, state, monkeypatch):
    monkeypatch.setenv("KARMACTL_MEMBER_TIMEOUT", "2")
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))  # Members keeps kubeconfigs in tmp_path
    m = Members(tmp_path, state)
    for name in ALL:
        m.start(name)
    yield m
    m.close()


def image_on(members, cluster):
    obj = members.deploy(cluster)
    return None if obj is None else obj["spec"]["template"]["spec"]["containers"][0]["image"]


def set_image(state, image):
    write(state / "apps" / "nginx.yaml", DEPLOY.format(image=image))


def run(cli, seconds=0):
    code, _out, err = cli("reconcile", "--now", at(seconds))
    assert code == 0, err
    return err


@pytest.fixture
def propagated(cli, state, members):
    set_image(state, "nginx:1.25")
    write(state / "policies" / "nginx.yaml", PP)
    run(cli)
    assert [image_on(members, c) for c in ALL] == ["nginx:1.25"] * 3
    return state


def test_suspend_all_keeps_members_on_the_old_image(cli, propagated, members):
    cli.ok("suspend", "pp", "nginx")
    set_image(propagated, "nginx:1.26")
    members.clear_logs()
    err = run(cli, 10)
    assert [image_on(members, c) for c in ALL] == ["nginx:1.25"] * 3
    assert all(not w for w in members.writes().values()), members.writes()
    for c in ALL:
        w = work(propagated, c)
        assert w["spec"]["suspendDispatching"] is True
        cond = condition(w, "Dispatching")
        assert (cond["status"], cond["reason"], cond["message"]) == (
            "False", "SuspendDispatching", "Work dispatching is in a suspended state.")
        assert w["spec"]["workload"]["manifests"][0]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert err.count("dispatching suspended") == 3
    cli.ok("resume", "pp", "nginx")
    run(cli, 20)
    assert [image_on(members, c) for c in ALL] == ["nginx:1.26"] * 3
    assert condition(work(propagated, "member1"), "Dispatching")["status"] == "True"


def test_cluster_by_cluster_rollout_and_rollback(cli, propagated, members):
    cli.ok("suspend", "pp", "nginx", "--clusters", "member2,member3")
    set_image(propagated, "nginx:bad")
    run(cli, 10)
    assert [image_on(members, c) for c in ALL] == ["nginx:bad", "nginx:1.25", "nginx:1.25"]
    cli.ok("resume", "pp", "nginx", "--clusters", "member3")
    run(cli, 20)
    assert [image_on(members, c) for c in ALL] == ["nginx:bad", "nginx:1.25", "nginx:bad"]
    # member1 went wrong: roll the template back while member2 is still suspended
    members["member2"].clear_request_log()
    set_image(propagated, "nginx:1.25")
    run(cli, 30)
    assert [image_on(members, c) for c in ALL] == ["nginx:1.25"] * 3
    assert members.writes()["member2"] == []  # still suspended: nothing sent to member2
    cli.ok("resume", "pp", "nginx")
    run(cli, 40)
    # member2 only ever held nginx:1.25: it never saw the bad image
    assert [image_on(members, c) for c in ALL] == ["nginx:1.25"] * 3


def test_deleting_while_suspended_removes_from_all_members(cli, propagated, members):
    cli.ok("suspend", "pp", "nginx")
    run(cli, 10)
    cli.ok("delete", "deploy", "nginx")
    run(cli, 20)
    assert [members.deploy(c) for c in ALL] == [None, None, None]
    assert cli.ok("get", "work", "-A", "-o", "name") == ""


def test_member_copy_deleted_by_someone_is_not_recreated_while_suspended(cli, propagated, members):
    cli.ok("suspend", "pp", "nginx", "--clusters", "member1")
    run(cli, 10)
    request = urllib.request.Request(members["member1"].url + "/apis/apps/v1/namespaces/default/deployments/nginx",
                                     method="DELETE")
    urllib.request.urlopen(request, timeout=5).read()  # someone deletes the member copy by hand
    assert members.deploy("member1") is None
    run(cli, 20)
    assert members.deploy("member1") is None
    cli.ok("resume", "pp", "nginx")
    run(cli, 30)
    assert image_on(members, "member1") == "nginx:1.25"
