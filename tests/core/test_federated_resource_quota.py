"""FederatedResourceQuota through the CLI, offline: static assignments become ResourceQuota Works, the
webhook's rules refuse bad quotas, and under ``FederatedQuotaEnforcement`` the scheduler leaves a
Deployment beyond ``overall`` unscheduled with Karmada's reason and message."""
from __future__ import annotations

import json

import yaml

from tests.conftest import NOW, cluster_yaml, write

QUOTA = """
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: team-quota, namespace: default}
spec:
  overall: {cpu: "2", memory: 2Gi}
  staticAssignments:
  - clusterName: member1
    hard: {cpu: "1", memory: 1Gi}
  - clusterName: member2
    hard: {cpu: 1000m, memory: 1024Mi}
"""
WORK_NAME = "team-quota-57df7bd9d4"  # names.GenerateWorkName("ResourceQuota", "team-quota", "default")
GATE_ON = """
apiVersion: v1
kind: ConfigMap
metadata: {name: karmactl-config, namespace: karmada-system}
data: {federatedQuotaEnforcement: "true"}
"""
POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
"""
MESSAGE = ('admission webhook "resourcebinding.karmada.io" denied the request: FederatedResourceQuota(default/team-quota) '
           'exceeded for resource cpu: requested sum 2500m, limit 2.')


def deployment(name: str, replicas: int, cpu: str) -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: default}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: {cpu}, memory: 128Mi}}}}}}]}}
"""


def _clusters(state, names=("member1", "member2", "member3")):
    write(state / "clusters.yaml", "\n---\n".join(cluster_yaml(n) for n in names))


def _quota_works(state) -> dict:
    return {p.parent.name: json.loads(p.read_text())
            for p in sorted((state / "computed" / "works").glob(f"*/{WORK_NAME}.json"))}


def _binding(state, name: str) -> dict:
    return json.loads((state / "computed" / "resourcebindings" / "default" / f"{name}-deployment.json").read_text())


def _scheduled(binding: dict) -> dict:
    return next(c for c in binding["status"]["conditions"] if c["type"] == "Scheduled")


def test_each_static_assignment_becomes_a_resource_quota_work_in_its_execution_namespace(cli, state, tmp_path):
    _clusters(state)
    write(tmp_path / "quota.yaml", QUOTA)
    cli.ok("apply", "-f", str(tmp_path / "quota.yaml"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    works = _quota_works(state)
    assert sorted(works) == ["karmada-es-member1", "karmada-es-member2"]  # member3 has no assignment
    w = works["karmada-es-member2"]
    assert w["metadata"]["labels"]["federatedresourcequota.karmada.io/namespace"] == "default"
    assert w["metadata"]["labels"]["federatedresourcequota.karmada.io/name"] == "team-quota"
    manifest = w["spec"]["workload"]["manifests"][0]
    assert (manifest["apiVersion"], manifest["kind"]) == ("v1", "ResourceQuota")
    assert (manifest["metadata"]["namespace"], manifest["metadata"]["name"]) == ("default", "team-quota")
    assert manifest["spec"] == {"hard": {"cpu": "1", "memory": "1Gi"}}  # as the API server prints 1000m, 1024Mi
    assert manifest["metadata"]["labels"]["karmada.io/managed"] == "true"

    quota = yaml.safe_load(cli.ok("get", "federatedresourcequota", "team-quota", "-n", "default", "-o", "yaml"))
    assert quota["status"] == {"overall": {"cpu": "2", "memory": "2Gi"}}  # nothing applied, nothing used
    table = cli.ok("get", "federatedresourcequotas", "-n", "default")
    assert table.splitlines() == ["NAME         OVERALL                      OVERALL_USED",
                                  'team-quota   {"cpu":"2","memory":"2Gi"}   <none>']
    events = cli.ok("describe", "federatedresourcequota", "team-quota", "-n", "default")
    assert "SyncWorkSucceed" in events and "Sync works for FederatedResourceQuota(default/team-quota) succeed." in events

    # settled; then an assignment dropped takes its Work away, and the quota's deletion the rest
    code, out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and "0 file(s) changed" in out + err
    write(tmp_path / "quota.yaml", QUOTA.split("  - clusterName: member2")[0])
    cli.ok("apply", "-f", str(tmp_path / "quota.yaml"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert sorted(_quota_works(state)) == ["karmada-es-member1"]
    cli.ok("delete", "federatedresourcequota", "team-quota", "-n", "default")
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert _quota_works(state) == {}


def test_an_assignment_to_a_cluster_that_does_not_exist_waits_for_it(cli, state):
    _clusters(state, ("member1",))
    write(state / "quota.yaml", QUOTA)
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert sorted(_quota_works(state)) == ["karmada-es-member1"]
    _clusters(state, ("member1", "member2"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert sorted(_quota_works(state)) == ["karmada-es-member1", "karmada-es-member2"]


def test_the_webhook_rules_refuse_a_quota_naming_file_object_and_field(cli, state, tmp_path):
    bad = """
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: q, namespace: default}
spec:
  overall: {cpu: "1", nvidia: "1", memory: -1Gi}
  staticAssignments:
  - clusterName: member1
    hard: {cpu: "2", pods: "3"}
"""
    write(tmp_path / "bad.yaml", bad)
    code, _out, err = cli("apply", "-f", str(tmp_path / "bad.yaml"))
    assert code == 2
    assert "bad.yaml" in err and "FederatedResourceQuota default/q" in err
    assert 'spec.overall[nvidia]: Invalid value: "nvidia": must be a standard resource type or fully qualified' in err
    assert 'spec.overall[memory]: Invalid value: "-1Gi": must be greater than or equal to 0' in err
    assert 'spec.overall[cpu]: Invalid value: "1": overall is less than assignments' in err
    assert 'spec.staticAssignments[0].hard[pods]: Invalid value: "pods": assignment resourceName is not exist in overall' in err
    write(tmp_path / "bad.yaml", "apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\n"
                                 "metadata: {name: q, namespace: default}\nspec: {}\n")
    code, _out, err = cli("apply", "-f", str(tmp_path / "bad.yaml"))
    assert code == 2 and "spec.overall: Required value" in err


def test_with_enforcement_a_deployment_beyond_overall_is_not_scheduled(cli, state):
    _clusters(state)
    write(state / "quota.yaml", QUOTA + "---" + GATE_ON + "---" + POLICY)
    write(state / "apps.yaml", deployment("big", 3, "500m") + "---" + deployment("small", 2, "500m"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    big, small = _binding(state, "big"), _binding(state, "small")
    assert sum(c["replicas"] for c in big["spec"]["clusters"]) == 3  # 1500m of 2: admitted first
    assert small["spec"].get("clusters") is None  # 1500m + 1000m > 2: the placement was refused
    cond = _scheduled(small)
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "QuotaExceeded", MESSAGE)
    assert not list((state / "computed" / "works").glob("*/small-*.json"))
    described = cli.ok("describe", "deploy", "small", "-n", "default")
    assert "ScheduleBindingFailed" in described and MESSAGE in described

    quota = yaml.safe_load(cli.ok("get", "federatedresourcequota", "team-quota", "-n", "default", "-o", "yaml"))
    assert quota["status"]["overallUsed"] == {"cpu": "1500m", "memory": "384Mi"}  # from the bindings
    assert "CollectOverallStatusSucceed" in cli.ok("describe", "federatedresourcequota", "team-quota", "-n", "default")
    code, out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and "0 file(s) changed" in out + err  # the refusal is stable

    # scaling big down frees quota: small is placed on the next run
    write(state / "apps.yaml", deployment("big", 1, "500m") + "---" + deployment("small", 2, "500m"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    small = _binding(state, "small")
    assert sum(c["replicas"] for c in small["spec"]["clusters"]) == 2
    assert _scheduled(small)["reason"] == "Success"
    quota = yaml.safe_load(cli.ok("get", "federatedresourcequota", "team-quota", "-n", "default", "-o", "yaml"))
    assert quota["status"]["overallUsed"] == {"cpu": "1500m", "memory": "384Mi"}


def test_without_the_gate_the_scheduler_ignores_overall(cli, state):
    _clusters(state)
    write(state / "quota.yaml", QUOTA + "---" + POLICY)
    write(state / "apps.yaml", deployment("big", 3, "500m") + "---" + deployment("small", 2, "500m"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert _scheduled(_binding(state, "small"))["reason"] == "Success"
    quota = yaml.safe_load(cli.ok("get", "federatedresourcequota", "team-quota", "-n", "default", "-o", "yaml"))
    assert "overallUsed" not in quota["status"]  # summed from the members' ResourceQuotas: none observed offline


def test_export_hands_the_quota_over_with_the_feature_gate(cli, state, tmp_path, monkeypatch):
    from tests.export.test_export import documents, find, member_clusters

    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))  # member_clusters' kubeconfig is beside the state

    member_clusters(state)
    write(state / "quota.yaml", QUOTA + "---" + GATE_ON)
    out = tmp_path / "handoff"
    code, _out, err = cli("export", "--to-karmada", str(out))
    assert code == 0, err
    quota = find(documents(out), "FederatedResourceQuota", "team-quota")
    assert quota["spec"]["staticAssignments"][1] == {"clusterName": "member2", "hard": {"cpu": "1000m", "memory": "1024Mi"}}
    assert "FederatedResourceQuota" in [d["kind"] for d in yaml.safe_load_all((out / "20-policies.yaml").read_text())]
    flags = (out / "karmada-controller-manager.flags").read_text().split()
    assert "--feature-gates=Failover=true,FederatedQuotaEnforcement=true" in flags
    assert "karmada-webhook with --feature-gates=FederatedQuotaEnforcement=true" in (out / "REPORT.md").read_text()


def test_usage_of_a_binding_with_components_counts_each_component_per_scheduled_cluster():
    from karmactl.controllers.federated_resource_quota import resource_usage

    binding = {"spec": {"clusters": [{"name": "member1"}, {"name": "member2"}],
                        "components": [{"name": "jobmanager", "replicas": 1,
                                        "replicaRequirements": {"resourceRequest": {"cpu": "1", "memory": "1Gi"}}},
                                       {"name": "taskmanager", "replicas": 2,
                                        "replicaRequirements": {"resourceRequest": {"cpu": "500m"}}}]}}
    usage = {name: str(amount) for name, (amount, _fmt) in resource_usage(binding).items()}
    assert usage == {"cpu": "4", "memory": str(2 * 2**30)}  # (1 + 2 x 0.5) CPU and 1Gi, on each of 2 clusters
    assert resource_usage({"spec": dict(binding["spec"], clusters=[])}) == {}
