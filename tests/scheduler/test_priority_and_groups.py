"""schedulePriority and workloadAffinity through the CLI, offline (issue 27, items 1 and 5).

Karmada v1.19: the detector resolves a policy's ``schedulePriority`` (``KubePriorityClass``) into
the ResourceBinding's ``spec.schedulePriority.priority`` and fails to apply the policy when the
PriorityClass is missing (``pkg/detector/detector.go``); the scheduler's queue takes bindings by
priority, so quota goes to the higher priority first; under the gate ``WorkloadAffinity`` the
bindings carry ``workloadAffinityGroups`` and the scheduler's filters keep groups together or apart.
"""
from __future__ import annotations

import json

from tests.conftest import NOW, cluster_yaml, write
from tests.core.test_federated_resource_quota import GATE_ON, QUOTA, deployment

PRIORITY_CLASS = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: critical}
value: 1000000
"""


def _binding(state, name: str, kind: str = "deployment") -> dict:
    return json.loads((state / "computed" / "resourcebindings" / "default" / f"{name}-{kind}.json").read_text())


def _policy(name: str, selected: list[str], placement: str, extra: str = "") -> str:
    sels = ", ".join(f"{{apiVersion: apps/v1, kind: Deployment, name: {n}}}" for n in selected)
    return f"""
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: {name}, namespace: default}}
spec:
  resourceSelectors: [{sels}]
  placement: {placement}
{extra}"""


DIVIDED = "{clusterAffinity: {clusterNames: [member1, member2]}, replicaScheduling: {replicaSchedulingType: Divided}}"


def test_the_binding_holds_the_resolved_priority_and_a_missing_class_fails_the_policy(cli, state):
    write(state / "clusters.yaml", cluster_yaml("member1") + "---" + cluster_yaml("member2"))
    write(state / "apps.yaml", deployment("web", 2, "100m"))
    write(state / "policy.yaml", _policy("web", ["web"], DIVIDED,
                                         "  schedulePriority: {priorityClassSource: KubePriorityClass, "
                                         "priorityClassName: critical}\n"))
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0
    assert 'Apply policy(default/web) failed: priorityclasses.scheduling.k8s.io "critical" not found' in err
    assert not (state / "computed" / "resourcebindings" / "default" / "web-deployment.json").exists()
    described = cli.ok("describe", "deploy", "web", "-n", "default")
    assert "ApplyPolicyFailed" in described and 'priorityclasses.scheduling.k8s.io "critical" not found' in described

    write(state / "pc.yaml", PRIORITY_CLASS)
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and "ApplyPolicyFailed" not in err
    assert _binding(state, "web")["spec"]["schedulePriority"] == {"priority": 1000000}


def test_quota_goes_to_the_higher_priority_binding_first(cli, state):
    """Without priority the binding of the smaller name is admitted first (big < small); with
    PriorityClass critical on small's policy, small is admitted and big is refused."""
    write(state / "clusters.yaml", "\n---\n".join(cluster_yaml(n) for n in ("member1", "member2")))
    write(state / "quota.yaml", QUOTA + "---" + GATE_ON + "---" + PRIORITY_CLASS)
    write(state / "apps.yaml", deployment("big", 3, "500m") + "---" + deployment("small", 2, "500m"))
    write(state / "policy.yaml", _policy("big", ["big"], DIVIDED) + "---" + _policy(
        "small", ["small"], DIVIDED,
        "  schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: critical}\n"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    small, big = _binding(state, "small"), _binding(state, "big")
    assert sum(c["replicas"] for c in small["spec"]["clusters"]) == 2
    assert big["spec"].get("clusters") is None
    cond = next(c for c in big["status"]["conditions"] if c["type"] == "Scheduled")
    assert cond["reason"] == "QuotaExceeded"


def test_priority_based_scheduling_off_leaves_the_priority_out_with_a_warning(cli, state):
    write(state / "clusters.yaml", cluster_yaml("member1") + "---" + cluster_yaml("member2"))
    write(state / "apps.yaml", deployment("web", 2, "100m"))
    write(state / "settings.yaml", GATE_ON.replace("federatedQuotaEnforcement", "priorityBasedScheduling")
          .replace('"true"', '"false"'))
    write(state / "policy.yaml", _policy("web", ["web"], DIVIDED,
                                         "  schedulePriority: {priorityClassSource: KubePriorityClass, "
                                         "priorityClassName: critical}\n"))
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and "feature gate PriorityBasedScheduling is off" in err
    assert "schedulePriority" not in _binding(state, "web")["spec"]


ONE_CLUSTER = ("{clusterAffinity: {clusterNames: [member1, member2]}, replicaScheduling: {replicaSchedulingType: "
               "Duplicated}, spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}], "
               "workloadAffinity: {antiAffinity: {groupByLabelKey: app.group}}}")
AFFINITY_GATE = """
apiVersion: v1
kind: ConfigMap
metadata: {name: karmactl-config, namespace: karmada-system}
data: {workloadAffinity: "true"}
"""


def _grouped(name: str) -> str:
    return deployment(name, 1, "100m").replace("metadata: {", "metadata: {labels: {app.group: ha}, ", 1)


def test_two_workloads_of_one_anti_affinity_group_land_on_different_clusters(cli, state):
    write(state / "clusters.yaml", cluster_yaml("member1") + "---" + cluster_yaml("member2"))
    write(state / "settings.yaml", AFFINITY_GATE)
    write(state / "apps.yaml", _grouped("primary") + "---" + _grouped("replica"))
    write(state / "policy.yaml", _policy("ha", ["primary", "replica"], ONE_CLUSTER))
    cli.ok("reconcile", "--offline", "--now", NOW)
    primary, replica = _binding(state, "primary"), _binding(state, "replica")
    assert primary["spec"]["workloadAffinityGroups"] == {"antiAffinityGroup": "app.group=ha"}
    targets = [[c["name"] for c in b["spec"]["clusters"]] for b in (primary, replica)]
    assert sorted(t[0] for t in targets) == ["member1", "member2"], targets

    # a third member of the group finds no cluster left, and says why
    write(state / "apps.yaml", _grouped("primary") + "---" + _grouped("replica") + "---" + _grouped("third"))
    write(state / "policy.yaml", _policy("ha", ["primary", "replica", "third"], ONE_CLUSTER))
    cli("reconcile", "--offline", "--now", NOW)
    cond = next(c for c in _binding(state, "third")["status"]["conditions"] if c["type"] == "Scheduled")
    assert cond["reason"] == "NoClusterFit"
    assert "2 cluster already has workload with the same anti-affinity group" in cond["message"]


def test_affinity_groups_follow_the_first_placed_workload(cli, state):
    write(state / "clusters.yaml", cluster_yaml("member1") + "---" + cluster_yaml("member2"))
    write(state / "settings.yaml", AFFINITY_GATE)
    write(state / "apps.yaml", _grouped("api") + "---" + _grouped("cache"))
    placement = ONE_CLUSTER.replace("antiAffinity", "affinity")
    write(state / "policy.yaml", _policy("together", ["api", "cache"], placement))
    cli.ok("reconcile", "--offline", "--now", NOW)
    api, cache = _binding(state, "api"), _binding(state, "cache")
    assert api["spec"]["workloadAffinityGroups"] == {"affinityGroup": "app.group=ha"}
    assert api["spec"]["clusters"] == cache["spec"]["clusters"]


def test_without_the_gate_workload_affinity_is_named_in_a_warning(cli, state):
    write(state / "clusters.yaml", cluster_yaml("member1") + "---" + cluster_yaml("member2"))
    write(state / "apps.yaml", _grouped("primary"))
    write(state / "policy.yaml", _policy("ha", ["primary"], ONE_CLUSTER))
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and "feature gate WorkloadAffinity is off" in err
    assert "workloadAffinityGroups" not in _binding(state, "primary")["spec"]
