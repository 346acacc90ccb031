"""Lifecycle fidelity: status files go with their object, every object has a creationTimestamp,
join records a portable kubeconfig path (issue 14, part 6)."""
from __future__ import annotations

import json

from karmactl.emulator import MemberServer
from tests.conftest import NOW, cluster_yaml, write
from tests.statedir.samples import NGINX

LATER = "2026-01-01T02:00:00Z"


def _age(table: str, name: str) -> str:
    header, *rows = table.splitlines()
    col = header.split().index("AGE")
    return next(r.split()[col] for r in rows if r.split()[0] == name)


def test_every_applied_object_shows_its_age(cli, state, tmp_path):
    write(tmp_path / "nginx.yaml", NGINX)
    cli.ok("--now", NOW, "apply", "-f", str(tmp_path / "nginx.yaml"))
    assert _age(cli.ok("--now", LATER, "get", "pp"), "nginx-propagation") == "120m"
    assert _age(cli.ok("--now", LATER, "get", "deploy"), "nginx") == "120m"
    # a run keeps the time of creation (the detector adds uid and generation beside it)
    write(state / "member1.yaml", cluster_yaml("member1"))
    cli.ok("reconcile", "--offline", "--now", "2026-01-01T01:00:00Z")
    assert _age(cli.ok("--now", LATER, "get", "deploy"), "nginx") == "120m"
    # and the files people wrote stay free of it
    assert "creationTimestamp" not in "".join(p.read_text() for p in state.rglob("*.yaml"))


def test_delete_removes_the_status_file_and_a_recreated_object_starts_afresh(cli, state, tmp_path):
    write(tmp_path / "nginx.yaml", NGINX)
    write(state / "member1.yaml", cluster_yaml("member1"))
    cli.ok("--now", NOW, "apply", "-f", str(tmp_path / "nginx.yaml"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    status_file = state / "computed" / "status" / "deployments.apps" / "default" / "nginx.json"
    assert json.loads(status_file.read_text())["metadata"]["creationTimestamp"] == NOW
    assert 'deployment.apps "nginx" deleted' in cli.ok("delete", "deploy", "nginx")
    assert not status_file.exists()
    cli.ok("--now", "2026-01-01T01:30:00Z", "apply", "-f", str(tmp_path / "nginx.yaml"))
    assert _age(cli.ok("--now", LATER, "get", "deploy"), "nginx") == "30m"


def test_join_records_a_portable_kubeconfig_path(cli, state, tmp_path):
    srv = MemberServer(name="member1", port=0, data_dir=str(tmp_path / "m1")).start()
    srv2 = MemberServer(name="member2", port=0, data_dir=str(tmp_path / "m2")).start()
    try:
        inside = srv.write_kubeconfig(str(state / ".karmactl" / "kubeconfigs" / "member1.yaml"), context="member1")
        code, _out, err = cli("join", "member1", "--kubeconfig", inside)
        assert code == 0 and "warning" not in err, err
        recorded = (state / "clusters" / "member1.yaml").read_text()
        assert "karmactl.io/kubeconfig: .karmactl/kubeconfigs/member1.yaml" in recorded
        outside = srv2.write_kubeconfig(str(tmp_path / "elsewhere" / "member2.yaml"), context="member2")
        code, _out, err = cli("join", "member2", "--kubeconfig", outside)
        assert code == 2 and "outside the kubeconfig directory" in err, err  # runs would refuse it
        code, _out, err = cli("--kubeconfig-dir", str(tmp_path / "elsewhere"), "join", "member2", "--kubeconfig", outside)
        assert code == 0, err
        assert f"absolute kubeconfig path {outside}" in err and "enters git" in err
    finally:
        srv.close()
        srv2.close()


def test_unjoin_of_a_pull_cluster_names_a_command_that_exists(cli, state):
    write(state / "member1.yaml", cluster_yaml("member1").replace("syncMode: Push", "syncMode: Pull"))
    code, _out, err = cli("unjoin", "member1")
    assert code == 2
    assert "karmactl delete cluster member1" in err and "`unregister`" not in err
    # and that command does it
    assert 'cluster.cluster.karmada.io "member1" deleted' in cli.ok("delete", "cluster", "member1")


def test_namespaces_that_objects_use_appear_in_get_ns(cli, state, tmp_path):
    write(state / "member1.yaml", cluster_yaml("member1"))
    write(tmp_path / "web.yaml", NGINX.replace("  name: nginx\n", "  name: nginx\n  namespace: web\n", 1)
          .replace("name: nginx-propagation\n", "name: nginx-propagation\n  namespace: web\n"))
    write(tmp_path / "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n")
    cli.ok("--now", NOW, "apply", "-f", str(tmp_path))
    cli.ok("reconcile", "--offline", "--now", NOW)
    rows = {line.split()[0]: line.split()[1:] for line in cli.ok("--now", LATER, "get", "ns").splitlines()[1:]}
    assert set(rows) == {"default", "web", "team-a", "karmada-es-member1"}
    assert rows["team-a"][-1] == "120m"  # written: its own AGE
    assert rows["web"][-1] == "<unknown>"
    assert "web" in cli.ok("get", "ns", "web", "-o", "name")
