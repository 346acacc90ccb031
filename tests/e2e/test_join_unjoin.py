"""``join`` / ``unjoin`` against in-process emulated members (karmadactl's messages and exit codes)."""
from __future__ import annotations

import pytest
import yaml

from .conftest import MANIFESTS, binding_ready, reconcile_until


def _cluster_file(state, name):
    return state / "clusters" / f"{name}.yaml"


def _works(state, cluster):
    d = state / "computed" / "works" / f"karmada-es-{cluster}"
    return sorted(p.name for p in d.glob("*.json")) if d.is_dir() else []


def test_join_writes_cluster_without_credentials(state, cli, members, tmp_path):
    srv = members.start("member1", join=False)
    kubeconfig = members.kubeconfig("member1")
    code, out, err = cli("join", "member1", "--kubeconfig", kubeconfig, "--provider", "aws",
                         "--region", "us-east-1", "--zones", "us-east-1a,us-east-1b")
    assert code == 0, err
    assert out == "cluster(member1) is joined successfully\n"
    cluster = yaml.safe_load(_cluster_file(state, "member1").read_text())
    assert cluster["apiVersion"] == "cluster.karmada.io/v1alpha1" and cluster["kind"] == "Cluster"
    assert cluster["spec"]["syncMode"] == "Push"
    assert cluster["spec"]["apiEndpoint"] == srv.url
    assert cluster["spec"]["provider"] == "aws" and cluster["spec"]["region"] == "us-east-1"
    assert cluster["spec"]["zones"] == ["us-east-1a", "us-east-1b"]
    # the kubeconfig lives outside the state directory: an absolute path; never a token
    assert cluster["metadata"]["annotations"] == {"karmactl.io/kubeconfig": str(tmp_path / "kubeconfigs" / "member1.yaml"),
                                                  "karmactl.io/context": "member1"}
    text = _cluster_file(state, "member1").read_text()
    assert "token" not in text and "emulator-member1" not in text
    assert "status" not in cluster and "kubernetesVersion" not in text
    # the next reconcile's probe records the version (as the status overlay, not in the user file)
    reconcile_until(cli, lambda: True)
    assert yaml.safe_load(cli.ok("get", "cluster", "member1", "-o", "yaml"))["status"]["kubernetesVersion"] == "v1.31.0"
    assert "kubernetesVersion" not in _cluster_file(state, "member1").read_text()
    wide = cli.ok("get", "clusters", "-o", "wide").splitlines()
    assert wide[1].split()[:4] == ["member1", "v1.31.0", "Push", "True"]


@pytest.mark.parametrize("args, code, message", [
    (["join", "Member_1", "--kubeconfig", "{kc}"], 2, "invalid cluster name(Member_1): "),
    (["join", "member9", "--kubeconfig", "{tmp}/missing"], 2, "failed to get joining cluster config. error: kubeconfig"),
    (["join", "member9", "--kubeconfig", "{kc}", "--context", "nope"], 2, 'context "nope" does not exist'),
    (["join", "member1", "--kubeconfig", "{kc}"], 2, "cluster(member1) already exist"),
    (["join", "member9", "--kubeconfig", "{kc}"], 2, "the cluster ID "),
], ids=["bad-name", "no-kubeconfig", "no-context", "already-joined", "same-cluster-other-name"])
def test_join_errors(state, cli, members, tmp_path, args, code, message):
    members.start("member1")
    before = sorted(p.relative_to(state) for p in state.rglob("*.yaml"))
    argv = [a.format(kc=members.kubeconfig("member1"), tmp=tmp_path) for a in args]
    got, out, err = cli(*argv)
    assert got == code, err
    assert message in err and err.startswith("error: ")
    assert sorted(p.relative_to(state) for p in state.rglob("*.yaml")) == before


def test_join_unreachable_member_writes_nothing(state, cli, members):
    srv = members.start("member1", join=False)
    srv.stop()
    code, out, err = cli("join", "member1", "--kubeconfig", members.kubeconfig("member1"))
    assert code == 3
    assert "failed to connect to the joining cluster" in err and "connection refused" in err
    assert not _cluster_file(state, "member1").exists()


def test_join_dry_run_prints_the_cluster(state, cli, members):
    members.start("member1", join=False)
    out = cli.ok("join", "member1", "--kubeconfig", members.kubeconfig("member1"), "--dry-run")
    assert yaml.safe_load(out)["metadata"]["name"] == "member1"
    assert not _cluster_file(state, "member1").exists()


def test_join_unjoin_round_trip(state, cli, members, member_layer):
    m1, m2 = members.start("member1"), members.start("member2")
    cli.ok("apply", "-f", str(MANIFESTS / "nginx"))
    reconcile_until(cli, lambda: binding_ready(state, "default", "nginx-deployment"))
    assert m2.get_object("apps/v1", "Deployment", "default", "nginx")["spec"]["replicas"] == 2
    assert _works(state, "member2")

    code, out, err = cli("unjoin", "member2")
    assert code == 0, err
    assert out == "cluster(member2) is unjoined successfully\n"
    assert m2.get_object("apps/v1", "Deployment", "default", "nginx") is None  # the member copy is deleted
    assert not _works(state, "member2")
    assert not _cluster_file(state, "member2").exists()
    assert not (state / "computed" / "status" / "clusters.cluster.karmada.io" / "member2.json").exists()
    # the replicas moved to member1 in the same run
    assert m1.get_object("apps/v1", "Deployment", "default", "nginx")["spec"]["replicas"] == 3
    reconcile_until(cli, lambda: binding_ready(state, "default", "nginx-deployment"))
    assert cli("unjoin", "member2")[2].strip() == "error: no cluster object member2 found in karmada control Plane"
    assert cli("unjoin", "member2")[0] == 1

    # and back: join again. Karmada does not rebalance a divided workload when a cluster joins
    # (that is WorkloadRebalancer's job), so member1 keeps the 3 replicas; member2 is Ready again.
    cli.ok("join", "member2", "--kubeconfig", members.kubeconfig("member2"))
    reconcile_until(cli, lambda: binding_ready(state, "default", "nginx-deployment"))
    assert [r.split()[:4] for r in cli.ok("get", "clusters").splitlines()[1:]] == [
        ["member1", "v1.31.0", "Push", "True"], ["member2", "v1.31.0", "Push", "True"]]
    assert m1.get_object("apps/v1", "Deployment", "default", "nginx")["spec"]["replicas"] == 3


def test_unjoin_unreachable_member_needs_force(state, cli, members, member_layer):
    members.start("member1")
    m2 = members.start("member2")
    cli.ok("apply", "-f", str(MANIFESTS / "nginx"))
    reconcile_until(cli, lambda: binding_ready(state, "default", "nginx-deployment"))
    m2.stop()

    code, out, err = cli("unjoin", "member2", "--wait", "1s")
    assert code == 3, err
    assert "cluster(member2) was not unjoined within 1s" in err and "--force" in err
    assert _cluster_file(state, "member2").exists() and _works(state, "member2")  # nothing written

    code, out, err = cli("unjoin", "member2", "--wait", "1s", "--force")
    assert code == 0, err
    assert "forced deletion of cluster(member2)" in err
    assert not _cluster_file(state, "member2").exists() and not _works(state, "member2")
    m2.start()  # the copy was left behind, as karmadactl's --force does
    assert m2.get_object("apps/v1", "Deployment", "default", "nginx") is not None


def test_unjoin_dry_run_writes_nothing(state, cli, members):
    members.start("member1")
    code, out, err = cli("unjoin", "member1", "--dry-run")
    assert code == 0, err
    assert "delete  cluster member1 (clusters/member1.yaml)" in out
    assert _cluster_file(state, "member1").exists()
    assert cli("unjoin", "member1", "--wait", "0s")[0] == 2
