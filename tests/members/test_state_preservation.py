"""statePreservation online: the replacement cluster's copy carries the label read from the evicted
cluster's status (gate StatefulFailoverInjection on), checked with the real kubectl."""
from __future__ import annotations

import json

from tests.failover.test_state_preservation import LABEL, setup

from .conftest import computed, kubectl, reconcile
from .test_control_loop import DEPLOY, wait_members


def test_application_failover_injects_the_preserved_state_into_the_replacement(cli, state, members, tmp_path):
    setup(state, clusters=False, toleration=5)  # the members fixture wrote the Clusters
    reconcile(cli, 0)
    rb = computed(state, "resourcebindings", "default", "nginx-deployment.json")
    [chosen] = [c["name"] for c in rb["spec"]["clusters"]]
    other = "member2" if chosen == "member1" else "member1"
    wait_members(members, (chosen,))
    # the job on the chosen cluster fails: nothing available, 2 of 3 replicas updated
    members[chosen].set_fake_controller(False)
    copy = members.deploy(chosen)
    members[chosen].set_status(*DEPLOY, "default", "nginx",
                               dict(copy["status"], availableReplicas=0, readyReplicas=0, updatedReplicas=2))
    reconcile(cli, 10)   # past the toleration (the window started when the member began reporting it)
    rb = computed(state, "resourcebindings", "default", "nginx-deployment.json")
    [task] = rb["spec"]["gracefulEvictionTasks"]
    assert (task["fromCluster"], task["purgeMode"]) == (chosen, "Directly")
    assert task["preservedLabelState"] == {LABEL: "2"}
    assert [c["name"] for c in rb["spec"]["clusters"]] == [other]
    assert members.deploy(chosen) is None  # purgeMode Directly: the old copy went first
    labels = json.loads(kubectl(members.kubeconfig(other), tmp_path / "kubectl-cache", "get", "deploy", "nginx",
                                "-n", "default", "-o", "jsonpath={.metadata.labels}"))
    assert labels[LABEL] == "2"
    wait_members(members, (other,))
    # the replacement is healthy: the task is dropped, and with it the injection (as upstream, whose
    # binding controller reads the label state from the last eviction task when it renders)
    reconcile(cli, 20)
    assert not computed(state, "resourcebindings", "default", "nginx-deployment.json")["spec"].get("gracefulEvictionTasks")
    assert LABEL not in members.deploy(other)["metadata"]["labels"]
