"""The failover walkthroughs of the issue, end to end against emulated members (online runs,
the clock pinned with --now): spread-constrained Duplicated moving to member3, purge modes, a
toleration, and application failover with blockPredecessorSeconds."""
from __future__ import annotations

from tests.conftest import write
from tests.members.conftest import at, computed, members, nginx, reconcile, settle, work  # noqa: F401

RB = ("resourcebindings", "default", "nginx-deployment.json")


def rb(state) -> dict:
    return computed(state, *RB)


def targets(state) -> dict:
    return {c["name"]: c.get("replicas", 0) for c in rb(state)["spec"].get("clusters") or []}


def spread_policy(state, extra: str = "") -> None:
    write(state / "policies" / "nginx.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata:
          name: nginx
          namespace: default
        spec:
          resourceSelectors:
          - {apiVersion: apps/v1, kind: Deployment, name: nginx}
          placement:
            clusterAffinity:
              clusterNames: [member1, member2, member3]
            spreadConstraints:
            - {spreadByField: cluster, maxGroups: 2, minGroups: 2}
            replicaScheduling:
              replicaSchedulingType: Duplicated
        """)
    if extra:
        path = state / "policies" / "nginx.yaml"
        path.write_text(path.read_text() + extra.lstrip("\n") + "\n")


def healthy(state, cluster) -> bool:
    return {i["clusterName"]: i.get("health") for i in rb(state).get("status", {}).get("aggregatedStatus") or []}.get(cluster) == "Healthy"


def start(cli, state, members, extra=""):
    nginx(state)
    spread_policy(state, extra)
    settle(cli, members, 0, until=lambda: healthy(state, "member1") and healthy(state, "member2"))
    assert set(targets(state)) == {"member1", "member2"}
    assert members.deploy("member3") is None


def test_duplicated_spread_of_two_moves_member1_copy_to_member3(cli, state, members):
    start(cli, state, members)
    members["member1"].stop()
    reconcile(cli, 10, expect=3)
    assert set(targets(state)) == {"member1", "member2"}  # within the failure threshold
    err = reconcile(cli, 41, expect=3)
    assert "evicted default/nginx-deployment from member1" in err
    assert targets(state) == {"member2": 3, "member3": 3}
    assert members.deploy("member3")["spec"]["replicas"] == 3


def test_purge_directly_drops_old_work_in_the_same_run(cli, state, members):
    start(cli, state, members, extra="""
  failover:
    cluster:
      purgeMode: Directly
""")
    members["member1"].stop()
    reconcile(cli, 10, expect=3)
    reconcile(cli, 41, expect=3)
    # the reschedule and the removal of the old Work happen in the same run (the Work waits,
    # marked for deletion, until member1 can be reached to delete its copy)
    assert set(targets(state)) == {"member2", "member3"}
    assert work(state, "member1")["metadata"].get("deletionTimestamp") == at(41)
    members["member1"].start()
    reconcile(cli, 50)
    reconcile(cli, 81)
    assert members.deploy("member1") is None and work(state, "member1") is None


def test_purge_gracefully_keeps_old_work_while_the_task_lives(cli, state, members):
    start(cli, state, members)
    members["member1"].stop()
    reconcile(cli, 10, expect=3)
    reconcile(cli, 41, expect=3)
    assert [t["fromCluster"] for t in rb(state)["spec"]["gracefulEvictionTasks"]] == ["member1"]
    assert "deletionTimestamp" not in work(state, "member1")["metadata"]


def test_toleration_of_120_seconds_delays_eviction(cli, state, members):
    nginx(state)
    spread_policy(state)
    path = state / "policies" / "nginx.yaml"
    path.write_text(path.read_text().replace("    spreadConstraints:", """    clusterTolerations:
    - {key: cluster.karmada.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 120}
    spreadConstraints:"""))
    settle(cli, members, 0, until=lambda: healthy(state, "member1") and healthy(state, "member2"))
    members["member1"].stop()
    reconcile(cli, 10, expect=3)
    reconcile(cli, 41, expect=3)  # tainted at 41 s, tolerated until 161 s
    taints = computed(state, "status", "clusters.cluster.karmada.io", "member1.json")["spec"]["taints"]
    assert {(t["key"], t["effect"]) for t in taints} >= {("cluster.karmada.io/not-ready", "NoExecute")}
    reconcile(cli, 160, expect=3)
    assert "member1" in targets(state)
    err = reconcile(cli, 162, expect=3)
    assert "evicted default/nginx-deployment from member1" in err
    assert set(targets(state)) == {"member2", "member3"}


APP = """
  propagateDeps: true
  failover:
    application:
      decisionConditions:
        tolerationSeconds: 30
      purgeMode: Directly
      blockPredecessorSeconds: 200
"""


def test_application_failover_moves_to_member3_and_blocks_member1_for_a_while(cli, state, members):
    start(cli, state, members, extra=APP)
    srv = members["member1"]
    srv.set_fake_controller(False)
    d = srv.get_object("apps/v1", "Deployment", "default", "nginx")
    srv.set_status("apps/v1", "Deployment", "default", "nginx",
                   {"observedGeneration": d["metadata"]["generation"], "replicas": 3, "updatedReplicas": 3,
                    "availableReplicas": 0, "readyReplicas": 0})
    reconcile(cli, 10)   # Unhealthy seen: the toleration window starts
    reconcile(cli, 20)
    err = reconcile(cli, 45)
    assert "evicted default/nginx-deployment from member1: ApplicationFailure" in err
    assert set(targets(state)) == {"member2", "member3"}
    assert members.deploy("member3") is not None
    assert rb(state)["spec"]["activeEvictionHistory"][0]["clusterName"] == "member1"
    # the substitutes become healthy: the eviction task goes, the history stays
    settle(cli, members, 50, until=lambda: not rb(state)["spec"].get("gracefulEvictionTasks"))
    assert [e["clusterName"] for e in rb(state)["spec"]["activeEvictionHistory"]] == ["member1"]
    assert members.deploy("member1") is None  # Directly: the old copy went with the eviction
    # member3 fails too: member1 is still blocked, so nothing can take member3's place
    members["member3"].stop()
    for t in (60, 91, 120):
        reconcile(cli, t, expect=3)
        assert "member1" not in targets(state)
    # past blockPredecessorSeconds the history expires and member1 may be chosen again
    reconcile(cli, 250, expect=3)
    assert "activeEvictionHistory" not in rb(state)["spec"]
    assert set(targets(state)) == {"member1", "member2"}
