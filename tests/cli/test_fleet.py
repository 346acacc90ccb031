"""``karmactl fleet`` through the CLI on real YAML on disk: the terminal table, ``-o json``, the
selectors, ``--workload``'s tree, ``--html``'s escaping and determinism (the page in a real browser:
tests/browser/test_fleet_page.py)."""
from __future__ import annotations

import json
import re

import pytest

from tests.conftest import CLI, write
from tests.fleet_scenario import LAST, at, clusters, hostile_fleet, karmactl, small_fleet_once


@pytest.fixture(scope="module")
def fleet_state(tmp_path_factory):
    """The small fleet of tests/fleet_scenario.py (read only: every test here only reads it)."""
    return small_fleet_once(tmp_path_factory)


@pytest.fixture
def fcli(fleet_state, capsys) -> CLI:
    return CLI(fleet_state, capsys)


def _row(out: str, workload: str) -> str:
    return next(line for line in out.splitlines() if re.search(rf"\b{re.escape(workload)}\b", line))


def test_table_shows_ready_over_desired_and_health_per_cluster_with_readiness_and_taints(fcli):
    out = fcli.ok("fleet", "-n", "shop")
    lines = out.splitlines()
    header = "\n".join(lines[:lines.index(next(x for x in lines if x.startswith("─")))])
    for word in ("member1", "member2", "member3", "NotReady", "cluster.karmada.io/not-ready:NoExecute",
                 "cluster.karmada.io/not-ready:NoSchedule", "WORKLOAD", "REPLICAS"):
        assert word in header
    assert header.count("Ready") - header.count("NotReady") == 2  # member1 and member3
    # web: 6 replicas, moved off member2 by the failover; cart: 1 of 3 ready, Unhealthy
    assert re.search(r"Deployment/web\s+6\s+3/3 Healthy\s+-\s+3/3 Healthy$", _row(out, "Deployment/web"))
    assert re.search(r"Deployment/api\s+2\s+2/2 Healthy\s+-\s+-$", _row(out, "Deployment/api"))
    assert re.search(r"Deployment/cart\s+3\s+-\s+-\s+1/3 Unhealthy$", _row(out, "Deployment/cart"))
    assert re.search(r"ConfigMap/settings\s+-\s+Healthy\s+-\s+Healthy$", _row(out, "ConfigMap/settings"))
    assert "\x1b[" not in out  # no colours when stdout is not a terminal


def test_json_numbers_equal_the_bindings_get_prints(fcli):
    doc = json.loads(fcli.ok("fleet", "-n", "shop", "-o", "json"))
    bindings = {b["metadata"]["name"]: b for b in json.loads(fcli.ok("get", "rb", "-n", "shop", "-o", "json"))["items"]}
    assert {w["binding"]["name"] for w in doc["workloads"]} == set(bindings)
    for w in doc["workloads"]:
        b = bindings[w["binding"]["name"]]
        zero = 0 if b["spec"].get("replicas") is not None else None  # Kubernetes omits zero counts
        desired = {c["name"]: c.get("replicas", zero) for c in b["spec"]["clusters"]}
        items = {i["clusterName"]: i for i in b["status"]["aggregatedStatus"]}
        assert {p["cluster"] for p in w["placements"]} == set(desired) | set(items)
        for p in w["placements"]:
            status = items[p["cluster"]].get("status")
            assert p["health"] == items[p["cluster"]]["health"]
            assert p["desired"] == desired.get(p["cluster"])
            assert p["ready"] == (None if status is None else status.get("readyReplicas", zero))
        assert w["replicas"] == b["spec"].get("replicas")
    assert doc["now"] is None and doc["namespace"] == "shop"
    assert [(c["name"], c["ready"], [t["effect"] for t in c["taints"]]) for c in doc["clusters"]] == [
        ("member1", "True", []), ("member2", "False", ["NoSchedule", "NoExecute"]), ("member3", "True", [])]


def test_json_timeline_tells_the_failover_in_order(fcli):
    doc = json.loads(fcli.ok("--now", LAST, "fleet", "-n", "shop", "-o", "json"))
    assert doc["now"] == LAST
    moments = [(t["reason"], t["object"]["kind"], t["object"]["name"], t["note"]) for t in doc["timeline"]]

    def first(reason, name, note=""):
        return next(i for i, m in enumerate(moments) if m[0] == reason and m[2] == name and note in m[3])
    not_ready = first("ClusterNotReady", "member2")
    tainted = first("TaintClusterSucceed", "member2", "NoExecute")
    evicted = first("EvictWorkloadFromClusterSucceed", "web-deployment", "TaintUntolerated")
    moved = first("ScheduleBindingSucceed", "web-deployment", "{member1:3, member3:3}")
    dropped = moments.index(("EvictWorkloadFromClusterSucceed", "ResourceBinding", "web-deployment",
                             "Evict from cluster member2 succeed."))  # the graceful eviction's end
    assert first("ScheduleBindingSucceed", "web-deployment", "member2:2") < not_ready < tainted < evicted < moved
    assert moved < dropped
    assert doc["timeline"][not_ready]["time"] == at(5)
    assert doc["timeline"][tainted]["time"].startswith(at(6)[:-1])
    # Events on the templates repeat the bindings' and are left out
    assert not any(t["object"]["kind"] == "Deployment" for t in doc["timeline"])


def test_selectors_namespace_and_labels(fcli):
    both = json.loads(fcli.ok("fleet", "-n", "shop", "-l", "tier=back", "-o", "json"))
    assert [w["name"] for w in both["workloads"]] == ["api", "cart"]
    out = fcli.ok("fleet", "-n", "shop", "-l", "tier in (front),app")
    assert "Deployment/web" in out and "Deployment/api" not in out
    everything = fcli.ok("fleet", "-A")
    assert "NAMESPACE" in everything and re.search(r"shop\s+Deployment/web", everything)
    code, out, err = fcli("fleet")
    assert (code, out.strip(), err.strip()) == (0, "", "No resources found in default namespace.")
    code, _out, err = fcli("fleet", "-l", "a in b")
    assert code == 2 and "selector" in err


def test_workload_tree_shows_policy_template_binding_works_and_member_objects(fcli):
    out = fcli.ok("fleet", "-n", "shop", "--workload", "deploy/shop/web")
    tree = out[out.index("propagation of"):]
    order = ["PropagationPolicy shop/web", "Deployment shop/web", "ResourceBinding shop/web-deployment",
             "Work karmada-es-member1/", "Work karmada-es-member2/", "Work karmada-es-member3/"]
    assert [tree.index(x) for x in order] == sorted(tree.index(x) for x in order)
    assert re.search(r"Work karmada-es-member2/\S+\s+on member2\s+Applied=True\s+terminating", tree)
    assert f"Healthy, observed {at(11)}" in tree
    doc = json.loads(fcli.ok("fleet", "-n", "shop", "-o", "json", "--workload", "deployment/web"))
    assert len(doc["trees"]) == 1 and [w["cluster"] for w in doc["trees"][0]["works"]] == [
        "member1", "member2", "member3"]
    assert doc["trees"][0]["policy"] == {"kind": "PropagationPolicy", "namespace": "shop", "name": "web", "found": True}
    assert len(doc["workloads"]) == 4  # the table still shows the whole selection


def test_refusals(fcli):
    code, _out, err = fcli("fleet", "-n", "shop", "--workload", "deploy/shop/missing")
    assert code == 1 and 'deployments.apps "missing" in namespace "shop" has no ResourceBinding' in err
    code, _out, err = fcli("fleet", "--workload", "deploy")
    assert code == 2 and "KIND/NAMESPACE/NAME" in err
    code, _out, err = fcli("fleet", "--workload", "nosuchkind/a/b")
    assert code == 2 and 'resource type "nosuchkind"' in err
    code, _out, err = fcli("fleet", "-o", "wide")
    assert code == 2 and "json or yaml" in err


def test_html_is_deterministic_and_self_contained(fcli, tmp_path):
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    fcli.ok("--now", LAST, "fleet", "-n", "shop", "--html", str(a))
    code, out, err = fcli("--now", LAST, "fleet", "-n", "shop", "--html", str(b))
    assert code == 0 and out == "" and "wrote" in err and "4 workload(s) on 3 cluster(s)" in err
    page = a.read_text()
    assert page == b.read_text()
    assert LAST in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    without_now = tmp_path / "c.html"
    fcli.ok("fleet", "-n", "shop", "--html", str(without_now))
    assert "as of" not in without_now.read_text()


def test_html_escapes_what_the_state_directory_says(cli, state, tmp_path):
    hostile_fleet(state, tmp_path)
    page_path = tmp_path / "page.html"
    cli.ok("fleet", "--html", str(page_path))
    page = page_path.read_text()
    assert page.count("<script") == 1 and "<img" not in page and "onerror=\"" not in page
    assert page.count("&lt;script&gt;window.__pwned=1&lt;/script&gt;") >= 2  # Ready message, member status
    assert "&quot;&gt;" in page


def test_cluster_scoped_templates_show_with_all_namespaces(cli, state, tmp_path):
    clusters(state, ("member1",))
    write(state / "ns.yaml", """
        apiVersion: v1
        kind: Namespace
        metadata: {name: team}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: ClusterPropagationPolicy
        metadata: {name: team}
        spec:
          resourceSelectors: [{apiVersion: v1, kind: Namespace, name: team}]
          placement: {clusterAffinity: {clusterNames: [member1]}}
        """)
    karmactl(state, "reconcile", "--offline", "--now", at(0))
    doc = json.loads(cli.ok("fleet", "-A", "-o", "json"))
    [w] = doc["workloads"]
    assert (w["kind"], w["namespace"], w["name"], w["binding"]["kind"], w["policy"]["kind"]) == (
        "Namespace", "", "team", "ClusterResourceBinding", "ClusterPropagationPolicy")
    assert [(p["cluster"], p["desired"], p["health"]) for p in w["placements"]] == [("member1", None, "Unknown")]
    assert "Namespace/team" in cli.ok("fleet", "-A", "--workload", "ns/team")
    assert json.loads(cli.ok("fleet", "-o", "json"))["workloads"] == []


def test_a_cluster_under_graceful_eviction_shows_as_evicting(cli, state):
    from tests.conftest import app_failover_policy, cluster_yaml

    for name in ("member1", "member2"):
        write(state / "clusters" / f"{name}.yaml", cluster_yaml(name))
    write(state / "app.yaml", """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: nginx, namespace: default, labels: {app: nginx}}
        spec:
          replicas: 2
          selector: {matchLabels: {app: nginx}}
          template:
            metadata: {labels: {app: nginx}}
            spec: {containers: [{name: nginx, image: "nginx:1.25"}]}
        """)
    write(state / "policy.yaml", app_failover_policy(60))
    cli.ok("reconcile", "--offline", "--now", at(0))
    cli.ok("--now", at(1), "observe", "deploy/nginx", "--cluster", "member1", "--health", "Unhealthy")
    cli.ok("--now", at(1), "observe", "deploy/nginx", "--cluster", "member2", "--health", "Healthy")
    cli.ok("reconcile", "--offline", "--now", at(1.5))
    cli.ok("reconcile", "--offline", "--now", at(2.5))  # past tolerationSeconds: a graceful eviction task
    doc = json.loads(cli.ok("fleet", "-o", "json"))
    [w] = doc["workloads"]
    assert [(p["cluster"], p["scheduled"], p["evicting"], p["health"]) for p in w["placements"]] == [
        ("member1", False, True, "Unhealthy"), ("member2", True, False, "Healthy")]
    assert re.search(r"Deployment/nginx\s+2\s+Unhealthy evicting\s+\?/2 Healthy$", cli.ok("fleet"))
