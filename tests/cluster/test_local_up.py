"""``karmactl local-up --kube-cluster LAUNCHER``: whole real clusters as local members, from the
kube-cluster tool's launcher contract (start.sh / stop.sh), with the nodes' size and zones set."""
from __future__ import annotations

import json
import subprocess
import time

from karmactl.emulator.local import pid_alive

from kube_cluster import TOOL


def test_local_up_starts_whole_clusters_with_shaped_nodes_demo_uses_them_and_local_down_stops_them(cli, state):
    out = cli.ok("local-up", "--members", "2", "--kube-cluster", str(TOOL), "--nodes", "1", "--node-cpu", "4",
                 "--node-memory", "16Gi", "--zones", "zone-x,zone-y")
    pids = []
    try:
        rows = [line.split("\t") for line in out.strip().splitlines() if "\t" in line]
        assert [row[0] for row in rows] == ["member1", "member2"]
        for name, zone in (("member1", "zone-x"), ("member2", "zone-y")):
            kubeconfig = state / ".karmactl" / "members" / name / "kubeconfig"
            nodes = json.loads(subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "get", "nodes", "-o", "json"],
                                              capture_output=True, text=True, check=True, timeout=60).stdout)["items"]
            assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes] == [zone]
            assert nodes[0]["status"]["allocatable"]["cpu"] == "4"
            info = json.loads((state / ".karmactl" / "members" / name / "server.json").read_text())
            assert info["kind"] == "kube-cluster"
            pids.append(info["pid"])
        cli.ok("reconcile")
        clusters = {c["metadata"]["name"]: c for c in json.loads(cli.ok("get", "clusters", "-o", "json"))["items"]}
        for name in ("member1", "member2"):
            summary = clusters[name]["status"]["resourceSummary"]
            assert summary["allocatable"]["cpu"] == "4" and summary["allocatable"]["memory"] == "16Gi"
            # one node of 4 CPU and 16Gi: Karmada's default grade 2 (cpu [2, 4) is below; cpu 4 is grade 3,
            # memory 16Gi grade 2; the lower wins)
            assert {m["grade"]: m["count"] for m in summary["allocatableModelings"] if m["count"]} == {2: 1}
        again = cli.ok("local-up", "--members", "2", "--kube-cluster", str(TOOL), "--nodes", "1")
        assert [line.split("\t") for line in again.strip().splitlines() if "\t" in line] == rows  # reused
        # the tour on them: the sample is made available by the members' own deployment controllers
        out = cli.ok("demo", "--members", "2", "--kube-cluster", str(TOOL), "--timeout", "150s")
        assert "member2" in out
        dep = json.loads(subprocess.run(["kubectl", "--kubeconfig", str(state / ".karmactl" / "members" / "member2" /
                                                                        "kubeconfig"),
                                         "get", "deploy", "nginx", "-n", "default", "-o", "json"],
                                        capture_output=True, text=True, check=True, timeout=60).stdout)
        assert dep["status"]["availableReplicas"] == 2
        assert [int(json.loads((state / ".karmactl" / "members" / n / "server.json").read_text())["pid"])
                for n in ("member1", "member2")] == pids  # demo reused the running clusters
    finally:
        stopped = cli.ok("local-down")
    assert stopped.split() == ["member1", "stopped", "member2", "stopped"]
    end = time.monotonic() + 15  # stop.sh has signalled them; they are reaped as they exit
    while any(pid_alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.2)
    assert not [p for p in pids if pid_alive(p)], "a kube-apiserver still runs after local-down"


def test_kube_cluster_flags_are_checked_before_anything_starts(cli, state, tmp_path):
    code, _, err = cli("local-up", "--zones", "a,b")
    assert code == 2 and "need --kube-cluster" in err
    code, _, err = cli("local-up", "--kube-cluster", str(tmp_path))
    assert code == 2 and "no executable start.sh" in err
    code, _, err = cli("local-up", "--members", "2", "--kube-cluster", str(TOOL), "--zones", "a")
    assert code == 2 and "one per member" in err
    code, _, err = cli("local-up", "--kube-cluster", str(TOOL), "--node-memory", "lots")
    assert code == 2 and "--node-memory" in err
    assert not (state / ".karmactl" / "members" / "member1" / "server.json").exists()

