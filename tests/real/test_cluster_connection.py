"""A Cluster's connection fields and Pull mode against real kube-apiservers (TLS, bearer token), issue 27.

member1 is reached through an HTTP CONNECT proxy on localhost once the operator allows it
(``--allow-proxy``); the TLS session inside the tunnel is the member's own, verified with the CA of
its kubeconfig. member2 is set to Pull: nothing reaches it, its Work is written, and the real
``kubectl`` finds no copy there.
"""
from __future__ import annotations

import json

from tests.http_proxy import HttpProxy

from .conftest import get_json, replicas, write_yaml


def _deployment(ns: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": ns},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}


def test_proxy_url_and_pull_mode_on_real_members(cli, joined, ns, tmp_path):
    m1, m2 = joined["member1"], joined["member2"]
    write_yaml(tmp_path / "in" / "web.yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
               _deployment(ns), {
                   "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
                   "metadata": {"name": "web", "namespace": ns},
                   "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                            "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
                                          "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}}})
    cli.ok("apply", "-f", str(tmp_path / "in"))
    host = m1.server.split("://", 1)[1].rstrip("/")
    with HttpProxy() as proxy:
        cli.ok("patch", "cluster", "member1", "--type", "merge", "-p", json.dumps(
            {"spec": {"proxyURL": proxy.url, "proxyHeader": {"X-Fleet": "east"}}}))
        for _ in range(4):
            code, _out, err = cli("--allow-proxy", proxy.url, "reconcile")
            assert code == 0, err
            if replicas(m1, ns, "web") is not None:
                break
        assert replicas(m1, ns, "web") == 2
        assert proxy.requests and {(m, t) for m, t, _h in proxy.requests} == {("CONNECT", host)}
        assert all(h.get("X-Fleet") == "east" for _m, _t, h in proxy.requests)
        assert replicas(m2, ns, "web") == 2  # member2 is served directly

        # without the operator's consent the Cluster's proxy is not used, and nothing goes around it
        seen = len(proxy.requests)
        code, _out, err = cli("reconcile")
        assert code == 3, err
        assert f"spec.proxyURL {proxy.url} is not a proxy the operator configured" in err
        assert len(proxy.requests) == seen

        # member2 turns to Pull mode: karmactl stops contacting it; its agent would apply the change
        cli.ok("patch", "cluster", "member2", "--type", "merge", "-p", '{"spec": {"syncMode": "Pull"}}')
        cli.ok("patch", "deployment", "web", "-n", ns, "--type", "merge", "-p", '{"spec": {"replicas": 4}}')
        code, _out, err = cli("--allow-proxy", proxy.url, "reconcile")
        assert code == 0, err
        assert "cluster member2 is a Pull mode member cluster" in err
        assert replicas(m1, ns, "web") == 4
        assert replicas(m2, ns, "web") == 2  # untouched
        manifests = [m for w in json.loads(cli.ok("get", "work", "-n", "karmada-es-member2", "-o", "json"))["items"]
                     for m in w["spec"]["workload"]["manifests"] if m["kind"] == "Deployment"]
        assert [m["spec"]["replicas"] for m in manifests] == [4]  # written for its agent

    # the proxy is gone: member1 fails, nothing goes around it
    code, _out, err = cli("--allow-proxy", proxy.url, "reconcile")
    assert code == 3, err
    assert "member member1: cluster is not reachable" in err
    assert get_json(m1, "deploy", "web", "-n", ns)["spec"]["replicas"] == 4
