"""Cluster failover when a real member's API server stops answering.

``stop.sh`` deletes a member's data and ``start.sh`` always starts empty, so a restart on the same
etcd data is not possible with the shared tool. The outage here is the realistic one it allows: the
kube-apiserver process is stopped (SIGSTOP) and continued (SIGCONT), like a hung or partitioned
server: connections are accepted by the kernel and then time out. The clock is pinned with
``--now`` so the 30 s failure/success thresholds pass without waiting.
"""
from __future__ import annotations

import json

from .conftest import MANIFESTS, converge, replicas, report_available, sample, settings



def _at(seconds: int) -> tuple[str, str]:
    minutes, secs = divmod(seconds, 60)
    return ("--now", f"2026-06-01T00:{minutes:02d}:{secs:02d}Z")


def _cluster(cli, name) -> dict:
    return json.loads(cli.ok("get", "cluster", name, "-o", "json"))


def _ready(cli, name) -> str:
    return {c["type"]: c["status"] for c in _cluster(cli, name)["status"]["conditions"]}["Ready"]


def _binding(cli, ns) -> dict:
    return json.loads(cli.ok("get", "rb", "nginx-deployment", "-n", ns, "-o", "json"))


def test_unreachable_member_is_tainted_its_replicas_move_and_the_stale_copy_goes(cli, joined, ns, tmp_path):
    m1, m2 = joined["member1"], joined["member2"]
    src = sample(MANIFESTS / "nginx", ns, tmp_path / "in")
    settings(src / "settings.yaml", memberRequestTimeout="3s")
    cli.ok("apply", "-f", str(src))
    converge(cli, *_at(0))
    assert (replicas(m1, ns, "nginx"), replicas(m2, ns, "nginx")) == (1, 2)

    m2.pause()
    try:
        code, _, err = cli(*_at(10), "reconcile")
        assert code == 3 and "member member2: cluster is not reachable" in err, err
        assert _ready(cli, "member2") == "True"  # the failure threshold (30 s) has not passed

        code, _, err = cli(*_at(40), "reconcile")
        assert code == 3, err
        assert _ready(cli, "member2") == "False"
        taints = {(t["key"], t["effect"]) for t in _cluster(cli, "member2")["spec"]["taints"]}
        assert ("cluster.karmada.io/not-ready", "NoExecute") in taints
        rb = _binding(cli, ns)
        assert rb["spec"]["clusters"] == [{"name": "member1", "replicas": 3}]
        assert [(t["fromCluster"], t["reason"]) for t in rb["spec"]["gracefulEvictionTasks"]] == \
            [("member2", "TaintUntolerated")]
        assert replicas(m1, ns, "nginx") == 3

        # member1's 3 replicas come up; the graceful eviction then ends.
        report_available(m1, ns, "nginx")
        code, _, err = cli(*_at(50), "reconcile")
        assert code == 3, err
        assert "gracefulEvictionTasks" not in _binding(cli, ns)["spec"]
    finally:
        m2.unpause()

    # Back, but not Ready before the success threshold: the stale copy waits.
    converge(cli, *_at(60))
    assert _ready(cli, "member2") == "False"
    assert replicas(m2, ns, "nginx") == 2
    converge(cli, *_at(100))
    assert _ready(cli, "member2") == "True"
    assert not _cluster(cli, "member2")["spec"].get("taints")
    assert replicas(m2, ns, "nginx") is None
    assert replicas(m1, ns, "nginx") == 3
