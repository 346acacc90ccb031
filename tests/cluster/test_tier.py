"""The tier itself: both shared clusters are joined and their nodes are what karmactl reports."""
from __future__ import annotations

import json


def test_joined_clusters_report_ready_with_their_real_nodes(cli, cluster_joined):
    cli.ok("reconcile")
    out = cli.ok("get", "clusters", "-o", "json")
    items = {c["metadata"]["name"]: c for c in json.loads(out)["items"]}
    assert set(items) == {"member1", "member2"}
    for name, cluster in cluster_joined.items():
        nodes = json.loads(cluster.kubectl("get", "nodes", "-o", "json").stdout)["items"]
        assert sorted(n["metadata"]["name"] for n in nodes) == [f"{name}-node-1", f"{name}-node-2"]
        ready = {c["type"]: c["status"] for c in items[name]["status"]["conditions"]}
        assert ready["Ready"] == "True"
