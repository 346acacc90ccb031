"""``karmactl export --to-karmada``: what a user moving to Karmada gets (files, joins, flags, report),
and ``--check`` against Karmada's CRDs on a real kube-apiserver."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml

from tests import kube_apiserver as real
from tests.conftest import write
from tests.failover.test_e2e_walkthroughs import APP, spread_policy
from tests.remedy.test_stories import DNS_REMEDY, UPGRADE_REMEDY, WEB

REPO = Path(__file__).resolve().parents[2]
LOSSY_APP = ("spec.failover.application.blockPredecessorSeconds", "spec.failover.application.preConditions")



@pytest.fixture(autouse=True)
def _kubeconfig_dir(tmp_path, monkeypatch):
    """The fleet's kubeconfigs are under tmp_path/kubeconfigs: the operator's kubeconfig directory."""
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))

def samples(state: Path) -> None:
    """Karmada's nginx and guestbook samples, the failover walkthrough's policy (application failover
    with blockPredecessorSeconds) and the remedy story's Service, MultiClusterIngress and Remedies."""
    for sample in ("nginx", "guestbook"):
        shutil.copytree(REPO / "manifests" / sample, state / sample)
    spread_policy(state, APP + "      preConditions: {delaySeconds: 10}\n")
    write(state / "remedy.yaml", WEB + "---" + UPGRADE_REMEDY + "---" + DNS_REMEDY)


def member_clusters(state: Path) -> None:
    write(state.parent / "kubeconfigs" / "fleet.yaml", "apiVersion: v1\nkind: Config\n")
    write(state / "clusters.yaml", """
        apiVersion: cluster.karmada.io/v1alpha1
        kind: Cluster
        metadata:
          name: member1
          labels: {env: prod}
          annotations: {karmactl.io/kubeconfig: ../kubeconfigs/fleet.yaml, karmactl.io/context: kind-member1}
        spec:
          syncMode: Push
          apiEndpoint: https://member1.example:6443
          region: eu-west
          zones: [eu-west-1a]
          taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
        ---
        apiVersion: cluster.karmada.io/v1alpha1
        kind: Cluster
        metadata:
          name: member2
          annotations: {karmactl.io/kubeconfig: ../kubeconfigs/fleet.yaml, karmactl.io/context: kind-member2}
        spec:
          syncMode: Push
          apiEndpoint: https://member2.example:6443
        """)


def documents(directory: Path) -> list[dict]:
    return [d for f in sorted(directory.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]


def find(docs, kind, name):
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def test_export_writes_karmadas_objects_without_karmactls_and_exits_1_for_proposal_fields(cli, state, tmp_path):
    samples(state)
    member_clusters(state)
    write(state / "settings.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: karmactl-config, namespace: karmada-system}
        data: {gracefulEvictionTimeout: 120s, clusterFailureThreshold: 45s, conditionDetectionTimeout: 5s}
        """)
    cli.ok("rebalance", "deploy/nginx", "--name", "once")
    out = tmp_path / "handoff"
    code, _out, err = cli("export", "--to-karmada", str(out))
    assert code == 1, err
    for path in LOSSY_APP:
        assert f"PropagationPolicy default/nginx (policies/nginx.yaml:1): {path}:" in err
    assert "data.conditionDetectionTimeout" in err
    report = (out / "REPORT.md").read_text()
    assert "`spec.failover.application.blockPredecessorSeconds`" in report and "not run (`--check`)" in report

    docs = documents(out)
    assert not any("karmactl.io/" in yaml.safe_dump(d) for d in docs)
    assert not any(d["kind"] in ("Cluster", "ConfigMap", "WorkloadRebalancer") for d in docs)
    assert "WorkloadRebalancer once (workloadrebalancers/once.yaml:1) not handed over" in report
    app = find(docs, "PropagationPolicy", "nginx")["spec"]["failover"]["application"]
    assert app == {"decisionConditions": {"tolerationSeconds": 30}, "purgeMode": "Directly"}
    assert [f.name for f in sorted(out.glob("*.yaml"))] == ["00-crds.yaml", "20-policies.yaml", "30-resources.yaml"]
    assert [d["kind"] for d in yaml.safe_load_all((out / "20-policies.yaml").read_text())][:2] == \
        ["OverridePolicy", "OverridePolicy"]

    flags = (out / "karmada-controller-manager.flags").read_text().split()
    assert flags == ["--feature-gates=Failover=true", "--enable-no-execute-taint-eviction=true",
                     "--no-execute-taint-eviction-purge-mode=Gracefully", "--cluster-failure-threshold=45s",
                     "--cluster-success-threshold=30s", "--cluster-status-update-frequency=10s",
                     "--graceful-eviction-timeout=120s",
                     "--skipped-propagating-namespaces=kube-.*"]

    assert cli("export", "--to-karmada", str(out), "--allow-lossy")[0] == 0


@pytest.mark.parametrize("data,flags,lossy", [
    ('{memberQPS: "40", memberBurst: "60"}', ["--cluster-api-qps=40", "--cluster-api-burst=60"], False),
    ('{memberQPS: "0", memberWorkers: "8"}', [], True),  # Karmada reads QPS 0 as its default, 40
])
def test_export_hands_member_rate_limits_to_karmadas_flags(cli, state, tmp_path, data, flags, lossy):
    member_clusters(state)
    write(state / "settings.yaml", f"""
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: karmactl-config, namespace: karmada-system}}
        data: {data}
        """)
    out = tmp_path / "handoff"
    code, _out, err = cli("export", "--to-karmada", str(out))
    got = [f for f in (out / "karmada-controller-manager.flags").read_text().split() if f.startswith("--cluster-api")]
    assert got == flags
    assert ("data.memberQPS" in err) == lossy and ("data.memberWorkers" in err) == lossy
    assert code == (1 if lossy else 0), err


def test_join_script_joins_every_cluster_with_its_kubeconfig_labels_and_taints(cli, state, tmp_path):
    member_clusters(state)
    out = tmp_path / "handoff"
    cli.ok("export", "--to-karmada", str(out))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    for tool in ("karmadactl", "kubectl"):  # record the calls: no control plane here
        fake = bin_dir / tool
        fake.write_text(f'#!/bin/sh\necho "{tool} $*" >> {calls}\n')
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "KARMADA_KUBECONFIG": "/etc/karmada/karmada.config"}
    missing = subprocess.run([str(out / "join.sh")], capture_output=True, text=True,
                             env={k: v for k, v in env.items() if k != "KARMADA_KUBECONFIG"})
    assert missing.returncode != 0 and "KARMADA_KUBECONFIG" in missing.stderr
    subprocess.run([str(out / "join.sh")], check=True, env=env)
    fleet = str((state.parent / "kubeconfigs" / "fleet.yaml").resolve())
    assert calls.read_text().splitlines() == [
        f"karmadactl join member1 --kubeconfig /etc/karmada/karmada.config --cluster-kubeconfig {fleet} "
        f"--cluster-context kind-member1 --cluster-region eu-west --cluster-zones eu-west-1a",
        "kubectl --kubeconfig /etc/karmada/karmada.config label --overwrite cluster member1 env=prod",
        'kubectl --kubeconfig /etc/karmada/karmada.config patch cluster member1 --type merge -p '
        '{"spec":{"taints":[{"effect":"NoSchedule","key":"dedicated","value":"gpu"}]}}',
        f"karmadactl join member2 --kubeconfig /etc/karmada/karmada.config --cluster-kubeconfig {fleet} "
        f"--cluster-context kind-member2",
    ]


def test_export_refuses_a_directory_holding_other_files(cli, state, tmp_path):
    out = tmp_path / "handoff"
    write(out / "notes.txt", "mine")
    code, _out, err = cli("export", "--to-karmada", str(out))
    assert code == 2 and "holds other files (notes.txt)" in err
    assert (out / "notes.txt").read_text() == "mine" and not (out / "REPORT.md").exists()


def test_check_needs_a_server_to_check_against(cli, state, tmp_path):
    code, _out, err = cli("export", "--to-karmada", str(tmp_path / "o"), "--check")
    assert code == 2 and "--check-kube-apiserver" in err and "--check-kubeconfig" in err


@pytest.fixture
def apiserver_binary():
    real.require_or_skip()
    return str(real.binary())


def test_check_on_a_kube_apiserver_karmactl_starts_accepts_the_samples_and_lists_proposal_fields(
        cli, state, tmp_path, apiserver_binary, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the check server's directory lands here
    samples(state)
    write(state / "guestbook" / "extra.yaml", """
        apiVersion: webapp.my.domain/v1
        kind: Guestbook
        metadata: {name: extra, namespace: default}
        spec: {size: 1, configMapName: extra, alias: Name, colour: blue}
        """)
    write(state / "mcs.yaml", """
        apiVersion: networking.karmada.io/v1alpha1
        kind: MultiClusterService
        metadata: {name: web, namespace: default}
        spec: {types: [CrossCluster], providerClusters: [{name: member1}], consumerClusters: [{name: member2}]}
        """)
    out = tmp_path / "handoff"
    code, _out, err = cli("export", "--to-karmada", str(out), "--check", "--check-kube-apiserver", apiserver_binary,
                          "--check-crds", str(real.KARMADA_CRDS))
    assert code == 1, err
    report = (out / "REPORT.md").read_text()
    check = report.split("## Check against Karmada's CRDs")[1]
    assert "REJECTED" not in check and "started for the check" in check
    for name, count in (("00-crds.yaml", 1), ("20-policies.yaml", 11), ("30-resources.yaml", 4)):
        assert f"- `{name}`: {count}/{count} accepted" in check, check
    for path in LOSSY_APP:
        assert f"`{path}`" in report
    # the translation leaves the proposal fields out; the server's schema prunes what the CRD lacks
    assert report.count("pruned by the API server") == 1
    assert "- Guestbook default/extra (30-resources.yaml): `spec.colour`: pruned by the API server" in report
    assert "error: 3 field(s) or setting(s) would be dropped" in err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("karmactl-check-")] == []
    leftovers = subprocess.run(["pgrep", "-f", f"{tmp_path}/karmactl-check-"], capture_output=True, text=True).stdout
    assert leftovers == "", "the check server was not stopped"


def test_check_on_an_existing_server_dry_runs_and_names_rejected_objects(cli, state, tmp_path):
    real.require_or_skip()
    server = real.start_member("karmada", tmp_path / "karmada")
    try:
        server.kubectl("apply", "--server-side", "-f", str(real.KARMADA_CRDS))
        server.kubectl("wait", "--for", "condition=established", "crd", "--all", "--timeout=120s")
        shutil.copytree(REPO / "manifests" / "nginx", state / "nginx")
        write(state / "apps.yaml", """
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: settings, namespace: apps}
            data: {mode: blue}
            """)
        out = tmp_path / "handoff"
        code, _out, err = cli("export", "--to-karmada", str(out), "--check", "--check-kubeconfig", str(server.kubeconfig))
        assert code == 1
        check = (out / "REPORT.md").read_text().split("## Check against Karmada's CRDs")[1]
        # nothing is created on an existing server, so the new namespace's objects cannot be accepted yet
        assert "- REJECTED ConfigMap apps/settings (`30-resources.yaml`)" in check and 'namespaces "apps" not found' in check
        assert "- `20-policies.yaml`: 2/2 accepted (dry run)" in check
        assert "error: the check server rejected 1 object(s)" in err
        assert server.kubectl("get", "ns", "apps", check=False).returncode != 0
        assert server.kubectl("get", "propagationpolicies", "-A", "-o", "name").stdout == ""
    finally:
        server.stop()


def test_cluster_failover_fields_karmada_lacks_are_left_out_and_listed(cli, state, tmp_path):
    write(state / "cpp.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: ClusterPropagationPolicy
        metadata: {name: keep}
        spec:
          resourceSelectors: [{apiVersion: v1, kind: Namespace, name: team}]
          failover:
            cluster: {purgeMode: Never}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: ClusterPropagationPolicy
        metadata: {name: slow}
        spec:
          resourceSelectors: [{apiVersion: v1, kind: Namespace, name: other}]
          failover:
            cluster: {purgeMode: Graciously, gracePeriodSeconds: 90}
        """)
    out = tmp_path / "handoff"
    code, _out, err = cli("export", "--to-karmada", str(out))
    assert code == 1
    assert "ClusterPropagationPolicy keep (cpp.yaml:1): spec.failover.cluster.purgeMode: Karmada's CRD allows only" in err
    assert "ClusterPropagationPolicy slow (cpp.yaml:9): spec.failover.cluster.gracePeriodSeconds:" in err
    docs = documents(out)
    assert "failover" not in find(docs, "ClusterPropagationPolicy", "keep")["spec"]
    assert find(docs, "ClusterPropagationPolicy", "slow")["spec"]["failover"] == {"cluster": {"purgeMode": "Gracefully"}}


def test_multiclusterservices_go_with_the_policies_and_turn_their_feature_gate_on(cli, state, tmp_path):
    member_clusters(state)
    write(state / "web.yaml", """
        apiVersion: v1
        kind: Service
        metadata: {name: web, namespace: default}
        spec: {selector: {app: web}, ports: [{port: 80}]}
        ---
        apiVersion: networking.karmada.io/v1alpha1
        kind: MultiClusterService
        metadata: {name: web, namespace: default}
        spec: {types: [CrossCluster], providerClusters: [{name: member1}], consumerClusters: [{name: member2}]}
        """)
    out = tmp_path / "handoff"
    cli.ok("export", "--to-karmada", str(out))
    (mcs,) = [d for d in yaml.safe_load_all((out / "20-policies.yaml").read_text()) if d]
    assert mcs["kind"] == "MultiClusterService" and "labels" not in mcs["metadata"]  # Karmada's webhook sets the id
    assert [d["kind"] for d in yaml.safe_load_all((out / "30-resources.yaml").read_text()) if d] == ["Service"]
    flags = (out / "karmada-controller-manager.flags").read_text().split()
    assert flags[0] == "--feature-gates=Failover=true,MultiClusterService=true"
