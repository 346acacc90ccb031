"""Namespace sync: every user Namespace goes to every member cluster, unless a policy places it."""
from __future__ import annotations

import json

from tests.conftest import NOW, cluster_yaml, write

CPP = """
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: team-ns}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Namespace, name: team}
  placement:
    clusterAffinity: {clusterNames: [member1]}
"""


def _works(state, name_prefix: str) -> dict:
    out = {}
    for p in sorted((state / "computed" / "works").rglob(f"{name_prefix}-*.json")):
        out[p.parent.name] = json.loads(p.read_text())
    return out


def _setup(state):
    write(state / "clusters.yaml", "\n---\n".join(cluster_yaml(f"member{i}") for i in (1, 2, 3)))
    write(state / "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team, labels: {owner: a}}\n"
          "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: quiet\n  labels: {namespace.karmada.io/skip-auto-propagation: 'true'}\n")


def test_every_namespace_goes_to_every_cluster(cli, state):
    _setup(state)
    cli.ok("reconcile", "--offline", "--now", NOW)
    works = _works(state, "team")
    assert sorted(works) == ["karmada-es-member1", "karmada-es-member2", "karmada-es-member3"]
    manifest = works["karmada-es-member2"]["spec"]["workload"]["manifests"][0]
    assert manifest["kind"] == "Namespace" and manifest["metadata"]["labels"]["owner"] == "a"
    assert _works(state, "quiet") == {}  # skip-auto-propagation


def test_a_policy_that_selects_a_namespace_takes_its_cluster(cli, state):
    _setup(state)
    cli.ok("reconcile", "--offline", "--now", NOW)
    write(state / "cpp.yaml", CPP)
    code, out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0, err
    works = _works(state, "team")
    assert sorted(works) == ["karmada-es-member1", "karmada-es-member2", "karmada-es-member3"]
    ann = works["karmada-es-member1"]["metadata"]["annotations"]
    assert ann["clusterresourcebinding.karmada.io/name"] == "team-namespace"  # the binding's Work
    assert "namespace.karmada.io/name" in works["karmada-es-member2"]["metadata"]["labels"]  # namespace sync
    # settled: the next run changes nothing
    code, out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and "0 file(s) changed" in out + err


COP = """
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: ns-labels}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Namespace, name: team}
  overrideRules:
  - targetCluster: {clusterNames: [member2]}
    overriders:
      labelsOverrider: [{operator: add, value: {tier: gold}}]
"""


def test_cluster_override_policies_apply_to_auto_propagated_namespaces(cli, state):
    _setup(state)
    write(state / "cop.yaml", COP)
    cli.ok("reconcile", "--offline", "--now", NOW)
    works = _works(state, "team")
    labels = {c: w["spec"]["workload"]["manifests"][0]["metadata"]["labels"] for c, w in works.items()}
    assert labels["karmada-es-member2"] == {"karmada.io/managed": "true", "owner": "a", "tier": "gold"}
    assert labels["karmada-es-member1"] == labels["karmada-es-member3"] == {"karmada.io/managed": "true", "owner": "a"}
    applied = json.loads(works["karmada-es-member2"]["metadata"]["annotations"]["policy.karmada.io/applied-cluster-overrides"])
    assert applied == [{"policyName": "ns-labels", "overriders": {"labelsOverrider": [{"operator": "add", "value": {"tier": "gold"}}]}}]
    assert "annotations" not in works["karmada-es-member1"]["metadata"]


def test_a_failing_cluster_override_leaves_that_clusters_namespace_work_as_it_was(cli, state):
    _setup(state)
    cli.ok("reconcile", "--offline", "--now", NOW)
    before = _works(state, "team")
    write(state / "cop.yaml", COP.replace("labelsOverrider: [{operator: add, value: {tier: gold}}]",
                                          "plaintext: [{path: /spec/missing/deep, operator: replace, value: 1}]"))
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0, err
    assert "sync namespace(team) to cluster(member2) failed due to:" in err
    assert _works(state, "team") == before
