"""FederatedResourceQuota on real kube-apiservers: the static assignments land as ResourceQuotas, the
members' quota status (written through the status subresource, as their quota controllers would)
comes back aggregated, and under FederatedQuotaEnforcement a Deployment beyond ``overall`` stays
unscheduled with Karmada's message."""
from __future__ import annotations

import json

import yaml

from .conftest import converge, get_json, settings, write_yaml


def _quota(ns: str) -> dict:
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "FederatedResourceQuota",
            "metadata": {"name": "team", "namespace": ns},
            "spec": {"overall": {"cpu": "2", "memory": "2Gi"},
                     "staticAssignments": [{"clusterName": "member1", "hard": {"cpu": "1", "memory": "1Gi"}},
                                           {"clusterName": "member2", "hard": {"cpu": "1", "memory": "1Gi"}}]}}


def _app(ns: str, name: str, replicas: int) -> list[dict]:
    labels = {"app": name}
    return [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
             "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                      "template": {"metadata": {"labels": labels},
                                   "spec": {"containers": [{"name": "c", "image": "nginx",
                                                            "resources": {"requests": {"cpu": "500m"}}}]}}}},
            {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
             "metadata": {"name": name, "namespace": ns},
             "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
                      "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
                                    "replicaScheduling": {"replicaSchedulingType": "Divided",
                                                          "replicaDivisionPreference": "Weighted"}}}}]


def test_quota_lands_on_real_members_aggregates_and_refuses_placements_beyond_overall(cli, joined, ns, tmp_path):
    write_yaml(tmp_path / "in" / "ns.yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    write_yaml(tmp_path / "in" / "quota.yaml", _quota(ns))
    write_yaml(tmp_path / "in" / "apps.yaml", *_app(ns, "first", 2), *_app(ns, "second", 3))
    settings(tmp_path / "in" / "settings.yaml", federatedQuotaEnforcement="true")
    cli.ok("apply", "-f", str(tmp_path / "in"))
    converge(cli)

    for member in joined.values():
        rq = get_json(member, "resourcequota", "team", "-n", ns)
        assert rq["spec"]["hard"] == {"cpu": "1", "memory": "1Gi"}
        assert rq["metadata"]["labels"]["karmada.io/managed"] == "true"
    # bindings are placed in key order: first (1 CPU) fits in 2, second (1.5 more) does not
    assert get_json(joined["member1"], "deploy", "first", "-n", ns) is not None
    assert all(get_json(m, "deploy", "second", "-n", ns) is None for m in joined.values())
    rb = yaml.safe_load(cli.ok("get", "rb", "second-deployment", "-n", ns, "-o", "yaml"))
    cond = next(c for c in rb["status"]["conditions"] if c["type"] == "Scheduled")
    assert (cond["reason"], cond["message"]) == (
        "QuotaExceeded", f'admission webhook "resourcebinding.karmada.io" denied the request: '
                         f"FederatedResourceQuota({ns}/team) exceeded for resource cpu: requested sum 2500m, limit 2.")

    # the members' quota controllers would report usage
    for name, cpu in (("member1", "500m"), ("member2", "250m")):
        joined[name].kubectl("patch", "resourcequota", "team", "-n", ns, "--subresource=status", "--type=merge", "-p",
                             json.dumps({"status": {"hard": {"cpu": "1", "memory": "1Gi"}, "used": {"cpu": cpu}}}))
    converge(cli)
    status = yaml.safe_load(cli.ok("get", "federatedresourcequota", "team", "-n", ns, "-o", "yaml"))["status"]
    assert status["aggregatedStatus"] == [
        {"clusterName": "member1", "hard": {"cpu": "1", "memory": "1Gi"}, "used": {"cpu": "500m"}},
        {"clusterName": "member2", "hard": {"cpu": "1", "memory": "1Gi"}, "used": {"cpu": "250m"}}]
    assert status["overallUsed"] == {"cpu": "1"}  # enforcement: from the bindings (2 x 500m), not the members

    cli.ok("delete", "federatedresourcequota", "team", "-n", ns)
    converge(cli)
    assert all(get_json(m, "resourcequota", "team", "-n", ns) is None for m in joined.values())
