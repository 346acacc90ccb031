"""Whole ``compute`` walkthroughs offline, as the design documents tell them, on real files.

Cluster health is changed with ``karmactl cluster condition set``; member status of Works (what the
execution layer and work status controller would write online) is set by editing the computed Work
files, and the binding status controller aggregates it. ``--now`` moves the clock forward; after
every run ``plan`` must report nothing left to do (the run reached its fixpoint).
"""
from __future__ import annotations

import json

import pytest

from tests.conftest import cluster_yaml, write
from tests.core.test_offline_run import NGINX, STATIC_PP
from tests.failover.helpers import T0, at

NR = "cluster.karmada.io/not-ready"
WORK = "nginx-687f7fb96f"


class Walk:
    """The CLI on one state directory plus direct access to computed files."""

    def __init__(self, cli, state, tmp_path):
        self.cli, self.state, self.inputs = cli, state, tmp_path / "in"

    def setup(self, policy: str, clusters=(1, 2, 3), extra: str = ""):
        write(self.inputs / "clusters.yaml", "---".join(cluster_yaml(f"member{i}") for i in clusters))
        write(self.inputs / "nginx.yaml", NGINX)
        write(self.inputs / "pp.yaml", policy)
        if extra:
            write(self.inputs / "extra.yaml", extra)
        self.cli.ok("apply", "-f", str(self.inputs))

    def reconcile(self, now: str) -> str:
        """One offline run at ``now``; asserts it converged (plan finds nothing); returns stderr."""
        code, _out, err = self.cli("reconcile", "--offline", "--now", now)
        assert code == 0, err
        assert self.cli("plan", "--now", now)[0] == 0, "a second run at the same time would change files"
        return err

    def condition(self, cluster: str, cond: str, now: str) -> None:
        self.cli.ok("cluster", "condition", "set", cluster, cond, "--now", now)

    def rb(self) -> dict:
        return json.loads(self.cli.ok("get", "rb", "nginx-deployment", "-o", "json"))

    def targets(self) -> dict:
        return {c["name"]: c.get("replicas", 0) for c in self.rb()["spec"].get("clusters") or []}

    def tasks(self) -> list:
        return self.rb()["spec"].get("gracefulEvictionTasks") or []

    def work_path(self, cluster: str):
        return self.state / "computed" / "works" / f"karmada-es-{cluster}" / f"{WORK}.json"

    def work(self, cluster: str) -> dict | None:
        p = self.work_path(cluster)
        return json.loads(p.read_text()) if p.exists() else None

    def work_replicas(self, cluster: str) -> int:
        return self.work(cluster)["spec"]["workload"]["manifests"][0]["spec"]["replicas"]

    def member_status(self, cluster: str, health: str) -> None:
        """What the member layer records for an applied Work: Applied=True and the manifest's health."""
        work = self.work(cluster)
        work["status"] = {
            "conditions": [{"type": "Applied", "status": "True", "reason": "AppliedSuccessful",
                            "message": "Manifest has been successfully applied", "lastTransitionTime": T0}],
            "manifestStatuses": [{"identifier": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                                                 "namespace": "default", "name": "nginx", "resource": ""},
                                  "status": {"replicas": 1}, "health": health}]}
        self.work_path(cluster).write_text(json.dumps(work, indent=2))

    def edit_rb(self, change) -> None:
        p = self.state / "computed" / "resourcebindings" / "default" / "nginx-deployment.json"
        rb = json.loads(p.read_text())
        change(rb)
        p.write_text(json.dumps(rb, indent=2))

    def taints(self, cluster: str) -> list:
        c = json.loads(self.cli.ok("get", "cluster", cluster, "-o", "json"))
        return sorted((t["key"], t["effect"]) for t in c["spec"].get("taints") or [])


@pytest.fixture
def walk(cli, state, tmp_path):
    return Walk(cli, state, tmp_path)


TOLERATE_120 = STATIC_PP.replace("  placement:\n", """  placement:
    clusterTolerations:
    - key: cluster.karmada.io/not-ready
      operator: Exists
      effect: NoExecute
      tolerationSeconds: 120
""")


def test_design_walkthrough_static_weights(walk):
    """nginx 3 replicas, static 1:2 over member1+member2; member1 NotReady -> tainted -> evicted ->
    member2 gets 3; member1's Work kept while the task lives, then terminating; Ready again -> no move back."""
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    assert walk.targets() == {"member1": 1, "member2": 2}
    walk.member_status("member1", "Healthy")
    walk.member_status("member2", "Healthy")
    walk.reconcile(at(10))
    assert walk.tasks() == []

    walk.condition("member1", "Ready=False", at(60))
    err = walk.reconcile(at(60))
    assert "evicted default/nginx-deployment from member1: TaintUntolerated (purgeMode Gracefully)" in err
    assert walk.taints("member1") == [(NR, "NoExecute"), (NR, "NoSchedule")]
    assert walk.targets() == {"member2": 3}
    (task,) = walk.tasks()
    assert task == {"fromCluster": "member1", "purgeMode": "Gracefully", "replicas": 1, "reason": "TaintUntolerated",
                    "producer": "TaintManager", "clustersBeforeFailover": ["member1", "member2"],
                    "creationTimestamp": at(60)}
    assert walk.work_replicas("member2") == 3
    old = walk.work("member1")
    assert walk.work_replicas("member1") == 1 and "deletionTimestamp" not in old["metadata"]

    # the new replicas are not ready yet: the task and the old copy stay
    walk.member_status("member2", "Unhealthy")
    walk.reconcile(at(120))
    assert len(walk.tasks()) == 1 and "deletionTimestamp" not in walk.work("member1")["metadata"]

    # member2 healthy with 3 replicas: the task is dropped, the old Work goes (terminating: member1 is down)
    walk.member_status("member2", "Healthy")
    err = walk.reconcile(at(180))
    assert "eviction task of default/nginx-deployment for member1 dropped: substitute clusters are healthy" in err
    assert walk.tasks() == []
    assert walk.work("member1")["metadata"]["deletionTimestamp"] == at(180)

    # member1 comes back: taints go, nothing moves back
    walk.condition("member1", "Ready=True", at(300))
    walk.reconcile(at(300))
    assert walk.taints("member1") == []
    assert walk.targets() == {"member2": 3}
    assert walk.work("member1")["metadata"]["deletionTimestamp"] == at(180)


def test_task_times_out_when_substitutes_never_get_healthy(walk):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    walk.member_status("member1", "Healthy")
    walk.condition("member1", "Ready=False", at(60))
    walk.reconcile(at(60))
    walk.reconcile(at(660))
    assert len(walk.tasks()) == 1  # 600 s default, strictly after
    err = walk.reconcile(at(661))
    assert "dropped: timed out after 600s" in err
    assert walk.tasks() == [] and walk.work("member1")["metadata"]["deletionTimestamp"] == at(661)


def test_toleration_120s(walk):
    walk.setup(TOLERATE_120)
    walk.reconcile(T0)
    walk.condition("member1", "Ready=False", at(60))
    walk.reconcile(at(60))
    # NoSchedule does not move existing replicas; NoExecute is tolerated for 120 s from timeAdded
    assert walk.targets() == {"member1": 1, "member2": 2}
    walk.reconcile(at(179))
    assert walk.targets() == {"member1": 1, "member2": 2}
    err = walk.reconcile(at(180))
    assert "evicted default/nginx-deployment from member1" in err
    assert walk.targets() == {"member2": 3}


def test_ready_again_within_toleration_keeps_everything(walk):
    walk.setup(TOLERATE_120)
    walk.reconcile(T0)
    walk.condition("member1", "Ready=False", at(60))
    walk.reconcile(at(60))
    assert walk.taints("member1") == [(NR, "NoExecute"), (NR, "NoSchedule")]
    walk.condition("member1", "Ready=True", at(100))
    walk.reconcile(at(100))
    walk.reconcile(at(1000))
    assert walk.taints("member1") == [] and walk.targets() == {"member1": 1, "member2": 2}


DUPLICATED_SPREAD_PP = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  placement:
    clusterAffinity:
      clusterNames: [member1, member2, member3]
    spreadConstraints:
    - spreadByField: cluster
      maxGroups: 2
      minGroups: 2
    replicaScheduling:
      replicaSchedulingType: Duplicated
"""


def test_unreachable_is_not_tolerated_by_a_not_ready_toleration(walk):
    walk.setup(TOLERATE_120)
    walk.reconcile(T0)
    walk.condition("member1", "Ready=Unknown", at(60))
    err = walk.reconcile(at(60))
    assert walk.taints("member1") == [("cluster.karmada.io/unreachable", "NoExecute"),
                                      ("cluster.karmada.io/unreachable", "NoSchedule")]
    assert "evicted default/nginx-deployment from member1" in err


def test_duplicated_spread_two_clusters_moves_member1_copy_to_member3(walk):
    walk.setup(DUPLICATED_SPREAD_PP)
    walk.reconcile(T0)
    assert walk.targets() == {"member1": 3, "member2": 3}
    walk.condition("member1", "Ready=False", at(60))
    walk.reconcile(at(60))
    assert walk.targets() == {"member2": 3, "member3": 3}
    assert walk.work_replicas("member3") == 3
    # task times out, member1 recovers: the copy stays on member3
    walk.reconcile(at(700))
    assert walk.tasks() == []
    walk.condition("member1", "Ready=True", at(800))
    walk.reconcile(at(800))
    assert walk.targets() == {"member2": 3, "member3": 3}


DIRECTLY_PP = STATIC_PP.replace("  placement:\n", "  failover:\n    cluster:\n      purgeMode: Directly\n  placement:\n")


def test_purge_mode_directly_removes_the_old_copy_first(walk):
    walk.setup(DIRECTLY_PP)
    walk.reconcile(T0)
    walk.member_status("member1", "Healthy")
    walk.member_status("member2", "Healthy")
    walk.condition("member1", "Ready=False", at(60))
    err = walk.reconcile(at(60))
    assert "evicted default/nginx-deployment from member1: TaintUntolerated (purgeMode Directly)" in err
    assert walk.targets() == {"member2": 3}
    assert walk.tasks()[0]["purgeMode"] == "Directly"
    # the old Work is deleted at once (terminating: member1 is down); as in Karmada, no Work of the
    # binding is rendered while it exists, so member2 keeps 2 replicas for now
    assert walk.work("member1")["metadata"]["deletionTimestamp"] == at(60)
    assert walk.work_replicas("member2") == 2
    # the execution layer deletes the member copy and drops the Work once member1 is reachable
    walk.work_path("member1").unlink()
    walk.reconcile(at(90))
    assert walk.work_replicas("member2") == 3


def test_purge_mode_directly_with_a_never_applied_work(walk):
    walk.setup(DIRECTLY_PP)
    walk.reconcile(T0)
    walk.condition("member1", "Ready=False", at(60))
    walk.reconcile(at(60))
    assert walk.work("member1") is None and walk.work_replicas("member2") == 3


GRACE_100_PP = STATIC_PP.replace(
    "  placement:\n", "  failover:\n    cluster:\n      purgeMode: Gracefully\n      gracePeriodSeconds: 100\n  placement:\n")


def test_cluster_failover_grace_period_seconds(walk):
    walk.setup(GRACE_100_PP)
    walk.reconcile(T0)
    walk.member_status("member1", "Healthy")
    walk.condition("member1", "Ready=False", at(60))
    walk.reconcile(at(60))
    assert walk.tasks()[0]["gracePeriodSeconds"] == 100
    walk.reconcile(at(160))
    assert len(walk.tasks()) == 1
    assert "timed out after 100s" in walk.reconcile(at(161))


def test_cluster_failover_off_by_setting(walk):
    config = """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: karmactl-config
      namespace: karmada-system
    data:
      clusterFailover: "false"
    """
    walk.setup(STATIC_PP, extra=config)
    walk.reconcile(T0)
    walk.condition("member1", "Ready=False", at(60))
    err = walk.reconcile(at(60))
    assert "evicted" not in err
    assert walk.taints("member1") == [(NR, "NoSchedule")]
    walk.reconcile(at(6000))
    assert walk.targets() == {"member1": 1, "member2": 2}


DNS_POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: dns-broken
spec:
  addOnConditions:
  - conditionType: ServiceDomainNameResolutionReady
    operator: In
    statusValues: ["False"]
  removeOnConditions:
  - conditionType: ServiceDomainNameResolutionReady
    operator: In
    statusValues: ["True"]
  taints:
  - key: example.com/dns-broken
    effect: NoExecute
"""


def test_cluster_taint_policy_drives_eviction(walk):
    walk.setup(STATIC_PP, extra=DNS_POLICY)
    walk.reconcile(T0)
    walk.condition("member1", "ServiceDomainNameResolutionReady=False", at(60))
    err = walk.reconcile(at(60))
    assert walk.taints("member1") == [("example.com/dns-broken", "NoExecute")]
    assert "evicted default/nginx-deployment from member1" in err and walk.targets() == {"member2": 3}
    walk.condition("member1", "ServiceDomainNameResolutionReady=True", at(120))
    walk.reconcile(at(120))
    assert walk.taints("member1") == []


def test_user_taint_via_cli_evicts_and_untaint_restores_schedulability(walk):
    walk.setup(STATIC_PP)
    walk.reconcile(T0)
    walk.cli.ok("taint", "clusters", "member1", "maintenance=true:NoExecute", "--now", at(60))
    err = walk.reconcile(at(60))
    assert "evicted default/nginx-deployment from member1" in err
    assert walk.targets() == {"member2": 3}
    assert "cluster/member1 untainted" in walk.cli.ok("taint", "clusters", "member1", "maintenance-")
    walk.reconcile(at(120))
    assert walk.targets() == {"member2": 3}  # Divided workloads stay where they are


APP_FAILOVER_PP = STATIC_PP.replace("  placement:\n", """  propagateDeps: true
  failover:
    application:
      decisionConditions:
        tolerationSeconds: 60
      blockPredecessorSeconds: 300
  placement:
""")


def test_application_failover_toleration_and_block_predecessor(walk):
    walk.setup(APP_FAILOVER_PP.replace("clusterNames: [member1, member2]", "clusterNames: [member1, member2, member3]"))
    walk.reconcile(T0)
    assert walk.targets() == {"member1": 1, "member2": 2}
    walk.member_status("member1", "Healthy")
    walk.member_status("member2", "Healthy")
    walk.reconcile(at(10))
    walk.member_status("member1", "Unhealthy")
    walk.reconcile(at(20))  # first seen unhealthy
    assert json.loads(walk.rb()["metadata"]["annotations"]["karmactl.io/application-failover"])["member1"][
        "unhealthySince"] == at(20)
    walk.reconcile(at(79))
    assert walk.targets() == {"member1": 1, "member2": 2}
    err = walk.reconcile(at(80))
    assert "evicted default/nginx-deployment from member1: ApplicationFailure (purgeMode Gracefully)" in err
    assert walk.targets() == {"member2": 3}
    (task,) = walk.tasks()
    assert (task["producer"], task["gracePeriodSeconds"]) == ("resource-binding-application-failover-controller", 600)
    assert walk.rb()["spec"]["activeEvictionHistory"] == [{"clusterName": "member1", "creationTimestamp": at(80)}]
    describe = walk.cli.ok("describe", "rb", "nginx-deployment", "--now", at(100))
    assert "member1: evicted 2026-01-01T00:01:20Z, blocked until 2026-01-01T00:06:20Z" in describe
    # the task goes (grace period), the history still blocks member1 until 300 s after the eviction
    walk.reconcile(at(700))
    assert walk.tasks() == [] and "activeEvictionHistory" not in walk.rb()["spec"]


NEVER_DUP_PP = DUPLICATED_SPREAD_PP.replace("  placement:\n", """  propagateDeps: true
  failover:
    application:
      decisionConditions:
        tolerationSeconds: 0
      purgeMode: Never
      blockPredecessorSeconds: 0
  placement:
""")


def test_application_failover_never_and_block_forever(walk):
    walk.setup(NEVER_DUP_PP)
    walk.reconcile(T0)
    assert walk.targets() == {"member1": 3, "member2": 3}
    walk.member_status("member1", "Unhealthy")
    err = walk.reconcile(at(10))  # tolerationSeconds 0: the next pass evicts
    assert "from member1: ApplicationFailure (purgeMode Never)" in err
    assert walk.targets() == {"member2": 3, "member3": 3}
    (task,) = walk.tasks()
    assert task["suppressDeletion"] is True and "gracePeriodSeconds" not in task
    walk.reconcile(at(10**6))
    assert len(walk.tasks()) == 1 and "deletionTimestamp" not in walk.work("member1")["metadata"]
    # a user confirms the deletion
    walk.edit_rb(lambda rb: rb["spec"]["gracefulEvictionTasks"][0].update(suppressDeletion=False))
    err = walk.reconcile(at(10**6 + 1))
    assert "deletion confirmed" in err
    assert walk.tasks() == [] and walk.work("member1")["metadata"]["deletionTimestamp"] == at(10**6 + 1)
    # blockPredecessorSeconds 0: member1 never comes back, even when member3 goes away
    assert walk.rb()["spec"]["activeEvictionHistory"][0]["clusterName"] == "member1"
    describe = walk.cli.ok("describe", "rb", "nginx-deployment")
    assert "member1  cluster(s) is in the active eviction history" in describe
