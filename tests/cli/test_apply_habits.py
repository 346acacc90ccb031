"""kubectl's and karmadactl's remaining ``apply`` habits: ``-k DIR`` (kustomize through the real kubectl),
``-f`` of a directory holding a kustomization, ``--all-clusters`` / ``-C`` generating the policy as
karmadactl names and shapes it."""
from __future__ import annotations

import shutil

import pytest
import yaml

from conftest import cluster_yaml, write

KUSTOMIZED = {
    "kustomization.yaml": """\
        namePrefix: shop-
        commonLabels: {team: shop}
        resources: [deploy.yaml]
        """,
    "deploy.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          replicas: 1
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: web:1}]}
        """,
}


@pytest.fixture
def kdir(tmp_path):
    for name, text in KUSTOMIZED.items():
        write(tmp_path / "app" / name, text)
    return tmp_path / "app"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_apply_k_builds_with_kubectl_kustomize(cli, state, kdir):
    assert cli.ok("apply", "-k", str(kdir)) == "deployment.apps/shop-web created\n"
    stored = yaml.safe_load((state / "deployments" / "default" / "shop-web.yaml").read_text())
    assert stored["metadata"]["labels"] == {"team": "shop"}
    code, _out, err = cli("apply", "-k", str(kdir / "absent"))
    assert code == 2 and "must build at directory" in err
    code, _out, err = cli("apply")
    assert code == 2 and "must specify one of -f and -k" in err


def test_apply_k_without_kubectl_is_refused_clearly(cli, kdir, monkeypatch):
    monkeypatch.setenv("PATH", "")
    code, _out, err = cli("apply", "-k", str(kdir))
    assert code == 6 and "kubectl is not on PATH" in err


def test_apply_f_of_a_kustomization_directory_skips_the_kustomization(cli, state, kdir):
    code, out, err = cli("apply", "-f", str(kdir))
    assert code == 0 and out == "deployment.apps/web created\n"
    assert f"note: {kdir / 'kustomization.yaml'} skipped: a kustomization is built, not applied (apply -k {kdir})" in err


def test_apply_all_clusters_and_cluster_generate_policies_as_karmadactl(cli, state, kdir):
    write(state / "m1.yaml", cluster_yaml("member1"))
    write(state / "m2.yaml", cluster_yaml("member2"))
    write(kdir / "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n")
    out = cli.ok("apply", "-f", str(kdir / "deploy.yaml"), "-f", str(kdir / "ns.yaml"), "--all-clusters")
    # karmadactl's names: GeneratePolicyName(namespace, name, "apps/v1, Kind=Deployment")
    assert out.splitlines() == ["deployment.apps/web created", "propagationpolicy.policy.karmada.io/web-6d7f8d5f5b created",
                                "namespace/shop created", "clusterpropagationpolicy.policy.karmada.io/shop-58df47dc68 created"]
    pp = yaml.safe_load((state / "propagationpolicies" / "default" / "web-6d7f8d5f5b.yaml").read_text())
    assert pp["spec"] == {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                                 "namespace": "default"}], "placement": {"clusterAffinity": {}}}
    cli.ok("reconcile", "--offline")
    rb = yaml.safe_load(cli.ok("get", "rb", "web-deployment", "-o", "yaml"))
    assert sorted(t["name"] for t in rb["spec"]["clusters"]) == ["member1", "member2"]
    out = cli.ok("apply", "-f", str(kdir / "deploy.yaml"), "-C", "member2")
    assert out.splitlines() == ["deployment.apps/web unchanged", "propagationpolicy.policy.karmada.io/web-6d7f8d5f5b configured"]
    pp = yaml.safe_load((state / "propagationpolicies" / "default" / "web-6d7f8d5f5b.yaml").read_text())
    assert pp["spec"]["placement"] == {"clusterAffinity": {"clusterNames": ["member2"]}}
    code, _out, err = cli("apply", "-f", str(kdir / "deploy.yaml"), "-C", "member2,member9")
    assert code == 2 and "cluster member9 does not exist" in err
    code, _out, err = cli("apply", "-f", str(kdir / "deploy.yaml"), "-C", "member2", "--all-clusters")
    assert code == 2 and "--all-clusters and --cluster cannot be used together" in err
