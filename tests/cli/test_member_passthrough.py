"""``logs``, ``exec``, ``attach`` and ``top`` reach into members as karmadactl does: ``-C/--cluster``, or the
clusters a template's binding placed it on (lines prefixed per member), through the real kubectl with the
member's kubeconfig (credentials never printed)."""
from __future__ import annotations

import shutil

import pytest

TOKEN_MARK = "emulator-member"  # the emulator kubeconfigs' tokens: emulator-<name>

needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")


@needs_kubectl
def test_logs_of_a_template_on_every_placed_cluster_and_with_cluster_flag(cli, fleet, tmp_path):
    code, out, err = cli("logs", "deploy/nginx")
    assert code == 0, err
    assert sorted(out.splitlines()) == ["[member1] hello from member1", "[member1] second line",
                                        "[member2] hello from member2", "[member2] second line"]
    out = cli.ok("logs", "nginx-member2", "-C", "member2", "--tail", "1")
    assert out == "second line\n"  # one member: kubectl's own lines, no prefix
    out = cli.ok("logs", "-l", "app=nginx", "-C", "member1", "--prefix")
    assert out.splitlines() == ["[pod/nginx-member1/nginx] hello from member1", "[pod/nginx-member1/nginx] second line"]
    # errors as karmadactl's
    code, _out, err = cli("logs", "nginx-member1")
    assert code == 2 and "must specify a cluster" in err
    code, _out, err = cli("logs", "nginx-member1", "-C", "member7")
    assert code == 2 and "error: clusters don't exist: member7" in err
    code, _out, err = cli("logs", "nginx-member1", "-l", "app=nginx", "-C", "member1")
    assert code == 2 and "only a selector (-l) or a POD name is allowed" in err
    code, _out, err = cli("logs", "deploy/absent")
    assert code == 1 and 'deployments.apps "absent" not found' in err
    code, _out, err = cli("logs", "nginx-member1", "-C", "member1", "-c", "sidecar")
    assert code == 1 and "container sidecar is not valid for pod nginx-member1" in err
    code, _out, err = cli("logs", "nginx-member1", "-C", "member1", "--kubeconfig=/etc/other")
    assert code == 2
    # a member that is down fails that member; the other's lines still come
    fleet["member2"].stop()
    code, out, err = cli("logs", "deploy/nginx")
    assert code == 3 and "[member1] hello from member1" in out and "[member2] " in err
    assert TOKEN_MARK not in out + err
    # kubectl is refused what a run is refused: an exec credential plugin without --allow-exec-plugins
    import yaml

    path = tmp_path / "kc" / "member1.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "touch"}}
    path.write_text(yaml.safe_dump(cfg))
    code, out, err = cli("logs", "nginx-member1", "-C", "member1")
    assert code == 3 and "exec credential plugin (touch)" in err and "--allow-exec-plugins" in err


def _pod_requests(srv, sub: str) -> list[str]:
    return sorted({r["query"] for r in srv.request_log if r["path"].endswith(f"/pods/nginx-{srv.name}/{sub}")})


@needs_kubectl
def test_exec_attach_top_describe_reach_the_member_with_its_kubeconfig(cli, fleet):
    m1, m2 = fleet["member1"], fleet["member2"]
    m1.clear_request_log()
    m2.clear_request_log()
    # -s members --cluster as karmadactl, and -C: kubectl asks that member (an emulated member runs no
    # containers, so it answers 400 and kubectl's exit code comes back)
    code, out, err = cli("exec", "nginx-member1", "-s", "members", "--cluster", "member1", "--", "ls", "-l")
    assert code == 1 and "an emulated member runs no containers: pods/exec is not served" in err
    assert _pod_requests(m1, "exec") == ["command=ls&command=-l&container=nginx&stderr=true&stdout=true"]
    assert _pod_requests(m2, "exec") == []
    code, out, err = cli("attach", "nginx-member2", "-C", "member2", "-c", "nginx")
    assert code == 1 and "pods/attach is not served" in err
    assert _pod_requests(m2, "attach") == ["container=nginx&stderr=true&stdout=true"]
    assert TOKEN_MARK not in out + err
    # a template without -C: every placed member, prefixed; -i/-t need one member
    code, out, err = cli("exec", "deploy/nginx", "--", "date")
    assert code == 3 and {line.split()[0] for line in err.splitlines()} == {"[member1]", "[member2]"}
    code, out, err = cli("exec", "deploy/nginx", "-it", "--", "sh")
    assert code == 2 and "-i/-t need one member, and deploy/nginx runs on member1, member2: choose one with -C" in err
    code, out, err = cli("exec", "nginx-member1", "-s", "karmada", "--", "ls")
    assert code == 2 and "runs no Pods" in err
    code, out, err = cli("exec", "nginx-member1", "-C", "member1")
    assert code == 2 and "you must specify at least one command" in err
    _top_node_and_pod_from_the_members_metrics_api(cli, fleet)
    _describe_members_scope_as_karmadactl(cli, fleet)


def _metrics_api(srv) -> None:
    """Serve ``metrics.k8s.io/v1beta1`` (NodeMetrics, PodMetrics) on an emulated member, as metrics-server
    would, through CRDs of that group; usage recorded for its first Node and its nginx Pod."""
    crd_rt = srv.catalogue.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    for kind, plural, scope in (("NodeMetrics", "nodes", "Cluster"), ("PodMetrics", "pods", "Namespaced")):
        srv.store.create(crd_rt, None, {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.metrics.k8s.io"},
            "spec": {"group": "metrics.k8s.io", "scope": scope,
                     "names": {"kind": kind, "plural": plural, "listKind": kind + "List"},
                     "versions": [{"name": "v1beta1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                                                  "x-kubernetes-preserve-unknown-fields": True}}}]}})
    srv.store.create(srv.catalogue.lookup("metrics.k8s.io", "v1beta1", "nodes"), None, {
        "apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "metadata": {"name": f"{srv.name}-node-1"},
        "timestamp": "2026-01-01T00:00:00Z", "window": "30s", "usage": {"cpu": "2", "memory": "8Gi"}})
    srv.store.create(srv.catalogue.lookup("metrics.k8s.io", "v1beta1", "pods"), "default", {
        "apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
        "metadata": {"name": f"nginx-{srv.name}", "namespace": "default"}, "timestamp": "2026-01-01T00:00:00Z",
        "window": "30s", "containers": [{"name": "nginx", "usage": {"cpu": "250m", "memory": "64Mi"}}]})


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def _top_node_and_pod_from_the_members_metrics_api(cli, fleet):
    _metrics_api(fleet["member1"])
    code, out, err = cli("top", "node")
    # member1-node-1: 2 of 8 CPUs, 8Gi of 32Gi (the emulator's Nodes); member2 has no metrics API
    assert _rows(out) == [["NAME", "CLUSTER", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%"],
                          ["member1-node-1", "member1", "2000m", "25%", "8192Mi", "25%"]]
    assert code == 3 and err.strip() == "error: cluster(member2): metrics API not available"
    out = cli.ok("top", "pod", "-C", "member1")
    assert _rows(out) == [["NAME", "CLUSTER", "CPU(cores)", "MEMORY(bytes)"], ["nginx-member1", "member1", "250m", "64Mi"]]
    out = cli.ok("top", "pod", "-C", "member1", "--containers", "--sum")
    assert _rows(out) == [["POD", "NAME", "CLUSTER", "CPU(cores)", "MEMORY(bytes)"],
                          ["nginx-member1", "nginx", "member1", "250m", "64Mi"], ["________", "________"], ["250m", "64Mi"]]
    code, out, err = cli("top", "pod", "-C", "member1", "-n", "other")
    assert code == 0 and out == "" and "No resources found in other namespace." in err
    code, _out, err = cli("top", "node", "--clusters", "member9")
    assert code == 2 and "clusters don't exist: member9" in err


def _describe_members_scope_as_karmadactl(cli, fleet):
    out = cli.ok("describe", "deploy", "nginx", "-s", "members", "--cluster", "member2")
    lines = out.splitlines()
    assert lines[:2] == ["Name:         nginx", "Namespace:    default"]
    # member2's own copy: the OverridePolicy's label for member2 and the Work that put it there
    assert "env=skoala-dev" in out and "work.karmada.io/namespace: karmada-es-member2" in out
    code, _out, err = cli("describe", "deploy", "nginx", "-s", "members")
    assert code == 2 and "must specify a member cluster" in err
    code, _out, err = cli("describe", "deploy", "absent", "-s", "members", "-C", "member1")
    assert code == 1 and 'deployments.apps "absent" not found' in err
    code, _out, err = cli("describe", "deploy", "nginx", "-s", "members", "-C", "member9")
    assert code == 2 and "clusters don't exist: member9" in err
    fleet["member1"].stop()
    code, _out, err = cli("describe", "deploy/nginx", "-s", "members", "-C", "member1")
    assert code == 3 and "basic connection test to cluster(member1) failed" in err
