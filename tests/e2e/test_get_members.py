"""``get --operation-scope members|all [-C ...]`` as karmadactl prints it (semantics §11.3)."""
from __future__ import annotations

import yaml

from .conftest import MANIFESTS, binding_ready, reconcile_until


def _table(text):
    return [line.split() for line in text.splitlines()]


def test_get_members_and_all(state, cli, members, member_layer):
    m1 = members.start("member1")
    members.start("member2")
    cli.ok("apply", "-f", str(MANIFESTS / "nginx"))
    reconcile_until(cli, lambda: binding_ready(state, "default", "nginx-deployment"))
    # a member object karmactl did not create: ADOPTION N
    m1.store.create(m1.catalogue.lookup("apps", "v1", "deployments"), "default",
                    {"apiVersion": "apps/v1", "kind": "Deployment",
                     "metadata": {"name": "local", "namespace": "default"},
                     "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                              "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}}}})

    rows = _table(cli.ok("get", "deploy", "-s", "members"))
    assert rows[0] == ["NAME", "CLUSTER", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "ADOPTION"]
    assert [(r[0], r[1], r[-1]) for r in rows[1:]] == [("local", "member1", "N"), ("nginx", "member1", "Y"),
                                                       ("nginx", "member2", "Y")]
    assert [r[2] for r in rows[2:]] == ["1/1", "2/2"]
    rows = _table(cli.ok("get", "deploy", "nginx", "--operation-scope", "all"))
    assert [(r[0], r[1], r[2], r[-1]) for r in rows[1:]] == [("nginx", "Karmada", "3/3", "-"),
                                                             ("nginx", "member1", "1/1", "Y"),
                                                             ("nginx", "member2", "2/2", "Y")]
    rows = _table(cli.ok("get", "deploy", "-s", "members", "-C", "member2", "-A", "-l", "app=nginx"))
    assert rows[0][:3] == ["NAMESPACE", "NAME", "CLUSTER"] and [r[:3] for r in rows[1:]] == [["default", "nginx", "member2"]]
    # -o yaml prints the member objects themselves
    listed = yaml.safe_load(cli.ok("get", "deploy", "-s", "members", "-C", "member2", "-o", "yaml"))
    assert [i["metadata"]["labels"]["karmada.io/managed"] for i in listed["items"]] == ["true"]
    assert listed["items"][0]["kind"] == "Deployment"
    # asked by name: absent in a member is no error
    rows = _table(cli.ok("get", "deploy", "local", "-s", "members"))
    assert [r[:2] for r in rows[1:]] == [["local", "member1"]]


def test_get_members_errors(state, cli, members):
    code, out, err = cli("get", "deploy", "-s", "members")
    assert "No member Clusters found in Karmada control plane" in err

    members.start("member1")
    m2 = members.start("member2")
    code, out, err = cli("get", "deploy", "-s", "members", "-C", "member1,member7")
    assert code == 2 and "error: clusters don't exist: member7" in err
    code, out, err = cli("get", "deploy", "-C", "member1")
    assert code == 2 and "--clusters is only allowed with --operation-scope members or all" in err

    m2.stop()
    code, out, err = cli("get", "nodes", "-s", "members")
    assert f"basic connection test to cluster(member2) failed, please check authorization or network: " \
           f'Get "{m2.url}/api": ' in err
    assert [r[:2] for r in _table(out)[1:]] == [[f"member1-node-{i}", "member1"] for i in (1, 2, 3)]
    assert code == 3

    # a kind the member does not serve
    code, out, err = cli("get", "pp", "-s", "members", "-C", "member1")
    assert 'cluster(member1): the server doesn\'t have a resource type "propagationpolicies"' in err


