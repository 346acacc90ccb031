"""An operator's day against whole real clusters: ``scale``, ``set image`` and ``rollout status`` drive
real Deployments, ReplicaSets and Pods on both members; ``top node`` answers as karmadactl does where
the members have no metrics API (the tier runs no metrics-server)."""
from __future__ import annotations

import json

from conftest import write


def _workload(ns: str) -> str:
    return f"""\
        apiVersion: v1
        kind: Namespace
        metadata: {{name: {ns}}}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: web, namespace: {ns}}}
        spec:
          replicas: 2   # two per member
          selector: {{matchLabels: {{app: web}}}}
          template:
            metadata: {{labels: {{app: web}}}}
            spec:
              containers:
              - name: web
                image: "registry.local/web:1"
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: web, namespace: {ns}}}
        spec:
          resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: web}}]
          placement:
            clusterAffinity: {{clusterNames: [member1, member2]}}
            replicaScheduling: {{replicaSchedulingType: Duplicated}}
        """


def _replica_sets(cluster, ns: str) -> dict[str, tuple]:
    """image -> (spec replicas, ready replicas) of the member's ReplicaSets of web."""
    items = json.loads(cluster.kubectl("get", "rs", "-n", ns, "-l", "app=web", "-o", "json").stdout)["items"]
    return {rs["spec"]["template"]["spec"]["containers"][0]["image"]:
            (rs["spec"]["replicas"], (rs.get("status") or {}).get("readyReplicas", 0)) for rs in items}


def test_scale_set_image_and_rollout_status_on_real_members(cli, state, cluster_joined, cluster_ns):
    write(state / "web.yaml", _workload(cluster_ns))
    code, out, err = cli("rollout", "status", "deploy/web", "-n", cluster_ns, "--timeout", "180s")
    assert code == 0 and out.splitlines()[-1] == 'deployment "web" successfully rolled out', err
    for cluster in cluster_joined.values():
        assert _replica_sets(cluster, cluster_ns) == {"registry.local/web:1": (2, 2)}

    assert cli.ok("scale", "deploy/web", "-n", cluster_ns, "--replicas=3") == "deployment.apps/web scaled\n"
    assert cli.ok("set", "image", "deploy/web", "-n", cluster_ns, "web=registry.local/web:2") == \
        "deployment.apps/web image updated\n"
    assert 'image: "registry.local/web:2"' in (state / "web.yaml").read_text()  # its quoting kept
    code, out, err = cli("rollout", "status", "deploy/web", "-n", cluster_ns, "--timeout", "180s")
    assert code == 0 and out.splitlines()[-1] == 'deployment "web" successfully rolled out', err
    for cluster in cluster_joined.values():
        # the members' own deployment controllers rolled a new ReplicaSet out and scaled the old one away
        sets = _replica_sets(cluster, cluster_ns)
        assert sets["registry.local/web:2"] == (3, 3) and sets.get("registry.local/web:1", (0, 0))[0] == 0
        pods = json.loads(cluster.kubectl("get", "pods", "-n", cluster_ns, "-o", "json").stdout)["items"]
        running = [p for p in pods if p["status"].get("phase") == "Running"
                   and p["spec"]["containers"][0]["image"] == "registry.local/web:2"]
        assert len(running) >= 3
    template = json.loads(cli.ok("get", "deploy", "web", "-n", cluster_ns, "-o", "json"))
    assert template["status"]["readyReplicas"] == 6 and template["status"]["updatedReplicas"] == 6

    # logs and exec reach the real members through kubectl with each member's kubeconfig: whatever the
    # member answers (its hollow kubelets run no containers), karmactl relays exactly what kubectl says
    for verb in (["logs", "deploy/web"], ["exec", "deploy/web", "--", "true"]):
        direct = cluster_joined["member1"].kubectl(*verb[:2], "-n", cluster_ns, *verb[2:], check=False)
        code, out, err = cli(*verb[:2], "-n", cluster_ns, "-C", "member1", *verb[2:])
        assert (code, out) == (direct.returncode, direct.stdout), err
        assert err.strip() == direct.stderr.strip()
        code, out, err = cli(*verb[:2], "-n", cluster_ns, *verb[2:])  # both placed members, lines prefixed
        assert {line.split()[0] for line in (out + err).splitlines() if line} <= {"[member1]", "[member2]"}


def test_top_node_without_a_metrics_api(cli, cluster_joined):
    code, out, err = cli("top", "node")
    # as karmadactl: each member without metrics.k8s.io named (kubectl top says "Metrics API not available")
    assert code == 3 and out == ""
    assert err.splitlines() == ["error: cluster(member1): metrics API not available",
                                "error: cluster(member2): metrics API not available"]
    code, out, err = cli("top", "node", "--clusters", "member2")
    assert code == 3 and err.splitlines() == ["error: cluster(member2): metrics API not available"]
