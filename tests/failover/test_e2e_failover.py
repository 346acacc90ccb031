"""Failover end to end against emulated members (the online run): a stopped member, an Unhealthy copy."""
from __future__ import annotations

import json
import time

from tests.members.conftest import Members, at, computed, members, nginx, policy, reconcile, settle, work  # noqa: F401

RB = ("resourcebindings", "default", "nginx-deployment.json")


def _rb(state) -> dict:
    return computed(state, *RB)


def _targets(state) -> dict:
    return {c["name"]: c.get("replicas", 0) for c in _rb(state)["spec"].get("clusters") or []}


def _replicas(members, name):
    d = members.deploy(name)
    return None if d is None else d["spec"]["replicas"]


def test_stopped_member_fails_over_and_old_copy_goes_when_it_returns(cli, state, members):
    nginx(state)
    policy(state)
    settle(cli, members, 0, until=lambda: work(state, "member2") is not None)
    assert (_replicas(members, "member1"), _replicas(members, "member2")) == (1, 2)

    members["member1"].stop()
    reconcile(cli, 10, expect=3)            # within the failure threshold: nothing moves
    assert _targets(state) == {"member1": 1, "member2": 2}
    err = reconcile(cli, 41, expect=3)      # Ready False -> tainted -> evicted
    assert "evicted default/nginx-deployment from member1: TaintUntolerated (purgeMode Gracefully)" in err
    assert _targets(state) == {"member2": 3}
    assert _replicas(members, "member2") == 3
    assert "deletionTimestamp" not in work(state, "member1")["metadata"]  # kept while the task lives

    # member2's 3 replicas get ready (fake controller): the task goes, member1's Work is terminating
    for _ in range(50):  # (exit 3: member1 is still down)
        reconcile(cli, 50, expect=3)
        if not _rb(state)["spec"].get("gracefulEvictionTasks"):
            break
        time.sleep(0.06)
    assert not _rb(state)["spec"].get("gracefulEvictionTasks")
    assert work(state, "member1")["metadata"]["deletionTimestamp"]

    # member1 back: Ready after the success threshold, then its old copy is deleted; nothing moves back
    members["member1"].start()
    reconcile(cli, 60)
    reconcile(cli, 91)
    assert members.deploy("member1") is None and work(state, "member1") is None
    assert _targets(state) == {"member2": 3}
    cluster = computed(state, "status", "clusters.cluster.karmada.io", "member1.json")
    assert not (cluster.get("spec") or {}).get("taints")


APP_FAILOVER = """
  propagateDeps: true
  failover:
    application:
      decisionConditions:
        tolerationSeconds: 30
      blockPredecessorSeconds: 120
"""

def test_unhealthy_copy_fails_over_to_another_cluster(cli, state, members):
    nginx(state)
    policy(state, extra=APP_FAILOVER, clusters=("member1", "member2", "member3"))
    settle(cli, members, 0, until=lambda: work(state, "member2") is not None)
    assert _targets(state) == {"member1": 1, "member2": 2}
    settle(cli, members, 5, until=lambda: {i["clusterName"]: i["health"] for i in
                                           _rb(state)["status"].get("aggregatedStatus") or []}.get("member1") == "Healthy")

    srv = members["member1"]
    srv.set_fake_controller(False)
    d = srv.get_object("apps/v1", "Deployment", "default", "nginx")
    srv.set_status("apps/v1", "Deployment", "default", "nginx",
                   {"observedGeneration": d["metadata"].get("generation", 1), "replicas": 1, "updatedReplicas": 1,
                    "availableReplicas": 0, "readyReplicas": 0})
    reconcile(cli, 10)
    reconcile(cli, 20)  # the binding sees Unhealthy: the window starts
    record = json.loads(_rb(state)["metadata"]["annotations"]["karmactl.io/application-failover"])
    assert "unhealthySince" in record["member1"]
    start = record["member1"]["unhealthySince"]
    from karmactl.api.objects import seconds_between
    err = reconcile(cli, seconds_between(at(0), start) + 30)
    assert "evicted default/nginx-deployment from member1: ApplicationFailure (purgeMode Gracefully)" in err
    assert _targets(state) == {"member2": 3}
    assert _rb(state)["spec"]["activeEvictionHistory"][0]["clusterName"] == "member1"
    assert _replicas(members, "member2") == 3
    assert members.deploy("member3") is None  # Divided static weights: member3 has no weight
