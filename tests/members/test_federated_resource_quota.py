"""FederatedResourceQuota online: the static assignments land as ResourceQuotas on the emulated members,
and what the members report in the ResourceQuotas' status comes back aggregated into the quota."""
from __future__ import annotations

import json

import yaml

from tests.conftest import write

from .conftest import computed, condition, kubectl, reconcile

QUOTA = """
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: team-quota, namespace: default}
spec:
  overall: {cpu: "4", memory: 4Gi}
  staticAssignments:
  - clusterName: member1
    hard: {cpu: "1", memory: 1Gi}
  - clusterName: member2
    hard: {cpu: 1500m, memory: 2Gi}
"""


def _member_quota(members, name: str) -> dict | None:
    return members[name].get_object("v1", "ResourceQuota", "default", "team-quota")


def test_static_assignments_land_on_members_and_their_usage_aggregates(cli, state, members, tmp_path):
    write(state / "quota.yaml", QUOTA)
    reconcile(cli)
    assert _member_quota(members, "member1")["spec"] == {"hard": {"cpu": "1", "memory": "1Gi"}}
    assert _member_quota(members, "member2")["spec"] == {"hard": {"cpu": "1500m", "memory": "2Gi"}}
    assert _member_quota(members, "member3") is None
    work = computed(state, "works", "karmada-es-member1", "team-quota-57df7bd9d4.json")
    assert condition(work, "Applied")["status"] == "True"

    # the members' quota controllers would report usage: write it as one would, through kubectl
    cache = tmp_path / "kubectl-cache"
    for name, used in (("member1", {"cpu": "500m", "memory": "512Mi"}), ("member2", {"cpu": "1", "memory": "1Gi"})):
        hard = _member_quota(members, name)["spec"]["hard"]
        kubectl(members.kubeconfig(name), cache, "patch", "resourcequota", "team-quota", "-n", "default",
                "--subresource=status", "--type=merge", "-p", json.dumps({"status": {"hard": hard, "used": used}}))
    reconcile(cli, 5)
    quota = yaml.safe_load(cli.ok("get", "federatedresourcequota", "team-quota", "-n", "default", "-o", "yaml"))
    assert quota["status"] == {
        "overall": {"cpu": "4", "memory": "4Gi"},
        "overallUsed": {"cpu": "1500m", "memory": "1536Mi"},
        "aggregatedStatus": [
            {"clusterName": "member1", "hard": {"cpu": "1", "memory": "1Gi"}, "used": {"cpu": "500m", "memory": "512Mi"}},
            {"clusterName": "member2", "hard": {"cpu": "1500m", "memory": "2Gi"}, "used": {"cpu": "1", "memory": "1Gi"}},
        ]}
    described = cli.ok("describe", "federatedresourcequota", "team-quota", "-n", "default")
    assert "Collect status of FederatedResourceQuota(default/team-quota) succeed." in described

    # an assignment taken away removes that member's ResourceQuota
    write(state / "quota.yaml", QUOTA.split("  - clusterName: member2")[0])
    reconcile(cli, 10)
    reconcile(cli, 11)
    assert _member_quota(members, "member2") is None
    assert _member_quota(members, "member1") is not None
