"""The embedded default: ``local-up`` background members, ``demo``, ``local-down``."""
from __future__ import annotations

import json
import os
import socket

import yaml

from karmactl.emulator.local import members_root, pid_alive

from .conftest import MANIFESTS, binding_ready


def _pids(state):
    return {d.name: json.loads((d / "server.json").read_text())["pid"]
            for d in sorted(members_root(state).iterdir()) if (d / "server.json").exists()}


def test_demo_propagates_nginx_then_local_down_stops_members(local_state, cli, kubectl, member_layer, monkeypatch):
    monkeypatch.chdir(local_state.parent)  # the demo finds ./manifests/nginx or the repository's
    code, out, err = cli("demo")
    assert code == 0, err

    # what local-up left: members under .karmactl (git-ignored), each joined with a relative kubeconfig
    assert (local_state / ".karmactl" / ".gitignore").read_text() == "*\n"
    for name in ("member1", "member2", "member3"):
        d = members_root(local_state) / name
        assert (d / "kubeconfig").is_file() and (d / "emulator.log").is_file()
        cluster = yaml.safe_load((local_state / "clusters" / f"{name}.yaml").read_text())
        assert cluster["spec"]["syncMode"] == "Push"
        assert cluster["spec"]["apiEndpoint"] == json.loads((d / "server.json").read_text())["url"]
        assert cluster["metadata"]["annotations"] == {"karmactl.io/kubeconfig": f".karmactl/members/{name}/kubeconfig",
                                                      "karmactl.io/context": name}
        assert "status" not in cluster

    # the tour's output: clusters, bindings, Works, member copies and the kubectl hint
    kubeconfig = members_root(local_state) / "member2" / "kubeconfig"
    assert f"kubectl --kubeconfig {kubeconfig} get deploy nginx -n default" in out
    assert "$ karmactl get deploy -s members" in out
    member_table = out.split("$ karmactl get deploy -s members")[1].splitlines()
    assert member_table[1].split() == ["NAME", "CLUSTER", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "ADOPTION"]
    assert [r.split()[:3] + r.split()[-1:] for r in member_table[2:4]] == [["nginx", "member1", "1/1", "Y"],
                                                                           ["nginx", "member2", "2/2", "Y"]]
    assert "karmada-es-member2" in out and "nginx-deployment" in out

    # the real kubectl sees the member copy; the template shows the aggregated status
    assert kubectl(str(kubeconfig), "get", "deploy", "nginx", "-n", "default", "-o", "jsonpath={.spec.replicas}") == "2"
    template = yaml.safe_load(cli.ok("get", "deploy", "nginx", "-n", "default", "-o", "yaml"))
    assert template["status"]["readyReplicas"] == 3
    assert binding_ready(local_state, "default", "nginx-deployment")
    rb = yaml.safe_load(cli.ok("get", "rb", "nginx-deployment", "-o", "yaml"))
    assert {i["clusterName"]: i["health"] for i in rb["status"]["aggregatedStatus"]} == {"member1": "Healthy",
                                                                                         "member2": "Healthy"}

    # local-up again reuses the running members (same pids and ports) and joins nothing twice
    before = _pids(local_state)
    code, out, err = cli("local-up")
    assert code == 0, err
    assert _pids(local_state) == before and "already running" in err
    assert "joined" not in out

    # local-down stops every process and keeps the data
    code, out, err = cli("local-down")
    assert code == 0, err
    assert out.split() == ["member1", "stopped", "member2", "stopped", "member3", "stopped"]
    assert not any(pid_alive(p) for p in before.values())
    assert "nginx" in (members_root(local_state) / "member2" / "objects.json").read_text()
    assert not (members_root(local_state) / "member2" / "server.json").exists()


def test_local_up_restarts_with_kept_data_and_purge(local_state, cli, kubectl):
    code, out, err = cli("local-up", "--members", "2")
    assert code == 0, err
    assert [line.split("\t")[0] for line in out.splitlines() if "\t" in line] == ["member1", "member2"]
    kubeconfig = str(members_root(local_state) / "member1" / "kubeconfig")
    kubectl(kubeconfig, "apply", "-f", str(MANIFESTS / "nginx" / "deployment.yaml"), "-n", "default")
    port1, port2 = (json.loads((members_root(local_state) / n / "server.json").read_text())["port"]
                    for n in ("member1", "member2"))
    assert cli("local-down")[0] == 0

    # a new local-up restarts on the same port with the member's objects kept; a member whose old
    # port is taken gets another one, and its Cluster's apiEndpoint follows
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port2))
        s.listen()
        code, out, err = cli("local-up", "--members", "2")
    assert code == 0, err
    assert json.loads((members_root(local_state) / "member1" / "server.json").read_text())["port"] == port1
    url2 = json.loads((members_root(local_state) / "member2" / "server.json").read_text())["url"]
    assert url2 != f"http://127.0.0.1:{port2}" and f"cluster(member2): apiEndpoint updated to {url2}" in err
    assert yaml.safe_load((local_state / "clusters" / "member2.yaml").read_text())["spec"]["apiEndpoint"] == url2
    assert kubectl(kubeconfig, "get", "deploy", "nginx", "-n", "default", "-o", "name").strip() == "deployment.apps/nginx"
    pids = _pids(local_state)

    code, out, err = cli("local-down", "--purge")
    assert code == 0, err
    assert not any(pid_alive(p) for p in pids.values())
    assert not members_root(local_state).exists()
    # the Cluster files stay (unjoin --force removes them)
    assert (local_state / "clusters" / "member1.yaml").is_file()
    assert cli("local-down")[2].strip() == "no local member was running"


def test_local_up_port_base_taken(local_state, cli):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        taken = s.getsockname()[1]
        code, out, err = cli("local-up", "--members", "1", "--port-base", str(taken))
    assert code == 2
    assert f"port {taken} for member1 is already in use" in err
    assert not members_root(local_state).exists() or not _pids(local_state)
    assert not os.path.exists(local_state / "clusters")
