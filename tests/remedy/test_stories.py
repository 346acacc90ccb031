"""End to end, through the CLI on real files: the design document's user stories
(``docs/proposals/remedy-cluster-status-based-policy.md``) and manual reporting."""
from __future__ import annotations

import json

import pytest

from karmactl.api.objects import add_seconds

from tests.conftest import NOW, cluster_yaml, write
from tests.remedy.helpers import install_dns, set_dns_ready

DNS = "ServiceDomainNameResolutionReady"

WEB = """
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Service, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
---
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: web, namespace: default}
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"""

UPGRADE_REMEDY = """
apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: upgrade-member1}
spec:
  clusterAffinity:
    clusterNames: [member1]
  actions: [TrafficControl]
"""

DNS_REMEDY = """
apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: dns-failure}
spec:
  decisionMatches:
  - clusterConditionMatch:
      conditionType: ServiceDomainNameResolutionReady
      operator: Equal
      conditionStatus: "False"
  clusterAffinity:
    clusterNames: [member1, member2]
  actions: [TrafficControl]
"""


def at(seconds: float) -> str:
    return add_seconds(NOW, seconds)


def get_json(cli, *args):
    return json.loads(cli.ok("get", *args, "-o", "json"))


def remedy_actions(cli, name):
    return (get_json(cli, "cluster", name).get("status") or {}).get("remedyActions")


def mci_status(cli):
    return get_json(cli, "mci", "web").get("status") or {}


def dns_condition(cli, name):
    conds = (get_json(cli, "cluster", name).get("status") or {}).get("conditions") or []
    return next((c for c in conds if c["type"] == DNS), None)


def offline_state(state):
    write(state / "clusters.yaml", cluster_yaml("member1") + "---\n" + cluster_yaml("member2"))
    write(state / "web.yaml", WEB)


# --------------------------------------------------------------------------- Story 1: upgrade


def test_story1_immediate_remedy_blocks_traffic_until_deleted(state, cli):
    offline_state(state)
    write(state / "remedy.yaml", UPGRADE_REMEDY)
    cli.ok("--now", NOW, "reconcile", "--offline")
    assert remedy_actions(cli, "member1") == ["TrafficControl"]
    assert remedy_actions(cli, "member2") is None
    status = mci_status(cli)
    assert status["serviceLocations"] == [{"name": "web", "clusters": ["member1", "member2"]}]
    assert status["trafficBlockClusters"] == ["member1"]

    wide = cli.ok("get", "cluster", "-o", "wide").splitlines()
    assert "REMEDY-ACTIONS" in wide[0]
    assert wide[1].split()[0] == "member1" and wide[1].split()[-1] == "TrafficControl"
    assert wide[2].split()[-1] == "<none>"
    table = cli.ok("get", "mci").splitlines()
    assert table[0].split()[:2] == ["NAME", "TRAFFIC-BLOCKED"] and table[1].split()[:2] == ["web", "member1"]
    described = cli.ok("describe", "cluster", "member1")
    assert "Remedy Actions:\n  TrafficControl  from Remedy upgrade-member1\n" in described

    assert 'remedy.remedy.karmada.io "upgrade-member1" deleted' in cli.ok("delete", "remedy", "upgrade-member1")
    cli.ok("--now", at(60), "reconcile", "--offline")
    assert remedy_actions(cli, "member1") is None
    status = mci_status(cli)
    assert "trafficBlockClusters" not in status
    assert status["serviceLocations"] == [{"name": "web", "clusters": ["member1", "member2"]}]
    assert "Remedy Actions" not in cli.ok("describe", "cluster", "member1")
    assert cli.ok("get", "mci").splitlines()[1].split()[:2] == ["web", "<none>"]


def test_story1_a_second_run_changes_nothing(state, cli):
    offline_state(state)
    write(state / "remedy.yaml", UPGRADE_REMEDY)
    cli.ok("--now", NOW, "reconcile", "--offline")
    code, _out, err = cli("--now", at(10), "reconcile", "--offline")
    assert code == 0 and "reconciled: 0 file(s) changed" in err


def test_person_written_load_balancer_status_is_kept(state, cli):
    offline_state(state)
    write(state / "remedy.yaml", UPGRADE_REMEDY)
    write(state / "web.yaml", WEB + "status:\n  loadBalancer:\n    ingress: [{ip: 192.0.2.10}]\n")
    cli.ok("--now", NOW, "reconcile", "--offline")
    status = mci_status(cli)
    assert status["loadBalancer"] == {"ingress": [{"ip": "192.0.2.10"}]}
    assert status["trafficBlockClusters"] == ["member1"]


# --------------------------------------------------------------------------- Story 3: manual reporting


def test_story3_manual_report_gives_the_same_result_offline(state, cli):
    offline_state(state)
    write(state / "remedy.yaml", DNS_REMEDY)
    cli.ok("--now", NOW, "reconcile", "--offline")
    assert remedy_actions(cli, "member1") is None and "trafficBlockClusters" not in mci_status(cli)

    cli.ok("--now", at(5), "cluster", "condition", "set", "member1", f"{DNS}=False",
           "--reason", "CoreDNSDown", "--message", "nslookup kubernetes.default failed")
    cli.ok("--now", at(6), "reconcile", "--offline")
    assert remedy_actions(cli, "member1") == ["TrafficControl"]
    assert remedy_actions(cli, "member2") is None
    assert mci_status(cli)["trafficBlockClusters"] == ["member1"]
    assert "from Remedy dns-failure" in cli.ok("describe", "cluster", "member1")

    cli.ok("--now", at(20), "cluster", "condition", "set", "member1", f"{DNS}=True")
    cli.ok("--now", at(21), "reconcile", "--offline")
    assert remedy_actions(cli, "member1") is None and "trafficBlockClusters" not in mci_status(cli)

    cli.ok("--now", at(30), "cluster", "condition", "set", "member1", f"{DNS}=False")
    cli.ok("--now", at(31), "reconcile", "--offline")
    assert mci_status(cli)["trafficBlockClusters"] == ["member1"]
    cli.ok("--now", at(40), "cluster", "condition", "unset", "member1", DNS)
    cli.ok("--now", at(41), "reconcile", "--offline")
    assert remedy_actions(cli, "member1") is None and "trafficBlockClusters" not in mci_status(cli)


def test_not_equal_remedy_on_a_written_condition(state, cli):
    offline_state(state)
    write(state / "remedy.yaml", DNS_REMEDY.replace("operator: Equal", "operator: NotEqual")
          .replace('conditionStatus: "False"', 'conditionStatus: "True"'))
    cli.ok("--now", NOW, "reconcile", "--offline")
    assert remedy_actions(cli, "member2") is None  # no condition: never matches
    cli.ok("--now", at(1), "cluster", "condition", "set", "member2", f"{DNS}=Unknown")
    cli.ok("--now", at(2), "reconcile", "--offline")
    assert remedy_actions(cli, "member2") == ["TrafficControl"]


def test_invalid_remedy_is_rejected_with_the_field(state, cli):
    offline_state(state)
    write(state / "remedy.yaml", DNS_REMEDY.replace("operator: Equal", "operator: In"))
    code, _out, err = cli("--now", NOW, "reconcile", "--offline")
    assert code != 0
    assert "spec.decisionMatches[0].clusterConditionMatch.operator" in err and '"Equal", "NotEqual"' in err


# --------------------------------------------------------------------------- Story 2: automatic, emulated members


@pytest.fixture
def members(tmp_path, monkeypatch):
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))  # the operator's kubeconfig directory
    from karmactl.emulator import MemberServer

    servers = {n: MemberServer(name=n, port=0, data_dir=str(tmp_path / n)).start() for n in ("member1", "member2")}
    yield servers
    for srv in servers.values():
        srv.close()


def online_state(state, tmp_path, members, remedy=DNS_REMEDY, settings=""):
    docs = []
    for name, srv in members.items():
        kubeconfig = srv.write_kubeconfig(str(tmp_path / f"{name}.kubeconfig"))
        docs.append(f"""
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: {name}
  annotations:
    karmactl.io/kubeconfig: {kubeconfig}
    karmactl.io/context: {name}
spec:
  syncMode: Push
  apiEndpoint: {srv.url}
""")
    write(state / "clusters.yaml", "---".join(docs))
    write(state / "web.yaml", WEB)
    write(state / "remedy.yaml", remedy)
    if settings:
        write(state / "settings.yaml", settings)


def dns_api(srv, tmp_path):
    from kubernetes import config

    path = srv.write_kubeconfig(str(tmp_path / f"{srv.name}.dns.kubeconfig"))
    api = config.new_client_from_config(config_file=path, context=srv.name)
    api.configuration.retries = 0
    return api


def run_online(state, now: str):
    """One online run; through the CLI when the member layer is installed, else ``reconcile.run``."""
    from karmactl.reconcile import RunOptions, run
    from karmactl.store.state import StateStore

    try:
        from karmactl.members.layer import MemberLayer
    except ModuleNotFoundError:
        members = None
    else:
        members = MemberLayer(state)
    return run(StateStore(state), RunOptions(now=now, offline=False), members)


def test_story2_dns_failure_blocks_after_threshold_and_recovers(state, cli, tmp_path, members):
    online_state(state, tmp_path, members)
    for srv in members.values():
        install_dns(dns_api(srv, tmp_path))
        set_dns_ready(srv, True)

    run_online(state, at(0))
    assert dns_condition(cli, "member1")["status"] == "True"
    assert dns_condition(cli, "member1")["reason"] == "ServiceDomainNameResolutionReady"
    assert dns_condition(cli, "member2")["status"] == "True"
    assert remedy_actions(cli, "member1") is None

    set_dns_ready(members["member1"], False)
    run_online(state, at(10))  # failure observed: the threshold (30 s) starts
    assert dns_condition(cli, "member1")["status"] == "True"
    assert remedy_actions(cli, "member1") is None
    run_online(state, at(35))
    assert dns_condition(cli, "member1")["status"] == "True"
    run_online(state, at(40))  # 30 s of failures
    cond = dns_condition(cli, "member1")
    assert (cond["status"], cond["reason"], cond["lastTransitionTime"]) == \
        ("False", "ServiceDomainNameResolutionFailed", at(40))
    assert "kube-system/coredns has no ready replicas" in cond["message"]
    assert remedy_actions(cli, "member1") == ["TrafficControl"]
    assert remedy_actions(cli, "member2") is None
    status = mci_status(cli)
    assert status["serviceLocations"] == [{"name": "web", "clusters": ["member1", "member2"]}]
    assert status["trafficBlockClusters"] == ["member1"]

    set_dns_ready(members["member1"], True)
    run_online(state, at(50))
    assert dns_condition(cli, "member1")["status"] == "False"
    assert mci_status(cli)["trafficBlockClusters"] == ["member1"]
    run_online(state, at(80))  # 30 s of successes
    assert dns_condition(cli, "member1")["status"] == "True"
    assert remedy_actions(cli, "member1") is None
    assert "trafficBlockClusters" not in mci_status(cli)


def test_story2_through_the_cli(state, cli, tmp_path, members):
    pytest.importorskip("karmactl.members.layer")
    online_state(state, tmp_path, members, settings="""
apiVersion: v1
kind: ConfigMap
metadata: {name: karmactl-config, namespace: karmada-system}
data:
  detectFailureThreshold: "20s"
""")
    api = dns_api(members["member1"], tmp_path)
    install_dns(api)
    set_dns_ready(members["member1"], False)  # member2 has no DNS workload: unknown, nothing written
    cli.ok("--now", at(0), "reconcile")
    assert dns_condition(cli, "member1")["status"] == "False"  # first observation sets it directly
    assert dns_condition(cli, "member2") is None
    assert remedy_actions(cli, "member1") == ["TrafficControl"]
    assert mci_status(cli)["trafficBlockClusters"] == ["member1"]
    set_dns_ready(members["member1"], True)
    cli.ok("--now", at(10), "reconcile")
    assert mci_status(cli)["trafficBlockClusters"] == ["member1"]
    cli.ok("--now", at(40), "reconcile")
    assert dns_condition(cli, "member1")["status"] == "True"
    assert "trafficBlockClusters" not in mci_status(cli)


def test_command_probe_instead_of_dns(state, cli, tmp_path, members, monkeypatch):
    import sys

    monkeypatch.setenv("KARMACTL_ALLOW_DETECTION_COMMAND", "1")  # the operator allows the ConfigMap's command

    flag = tmp_path / "member1.broken"
    check = f"import os, sys; sys.exit(1 if os.path.exists(r'{tmp_path}/' + sys.argv[1] + '.broken') else 0)"
    online_state(state, tmp_path, members, settings=f"""
apiVersion: v1
kind: ConfigMap
metadata: {{name: karmactl-config, namespace: karmada-system}}
data:
  conditionDetectionCommand: {json.dumps(f'{sys.executable} -c "{check}" {{cluster}}')}
  detectFailureThreshold: "0"
  detectSuccessThreshold: "0"
""")
    flag.write_text("")
    run_online(state, at(0))
    cond = dns_condition(cli, "member1")
    assert cond["status"] == "False" and cond["message"].startswith(
        f'service domain name resolution is unready (command "{sys.executable}": exit status 1')
    assert dns_condition(cli, "member2")["status"] == "True"
    assert mci_status(cli)["trafficBlockClusters"] == ["member1"]
    flag.unlink()
    run_online(state, at(1))
    assert dns_condition(cli, "member1")["status"] == "True"
    assert "trafficBlockClusters" not in mci_status(cli)


def test_detection_off_keeps_a_manual_report_online(state, cli, tmp_path, members):
    online_state(state, tmp_path, members, settings="""
apiVersion: v1
kind: ConfigMap
metadata: {name: karmactl-config, namespace: karmada-system}
data:
  conditionDetection: "false"
""")
    for srv in members.values():
        install_dns(dns_api(srv, tmp_path))
        set_dns_ready(srv, True)
    cli.ok("--now", at(0), "cluster", "condition", "set", "member1", f"{DNS}=False")
    run_online(state, at(1))
    assert dns_condition(cli, "member1")["status"] == "False"
    assert mci_status(cli)["trafficBlockClusters"] == ["member1"]
