"""Stopped and hanging members: the run finishes, others are served, thresholds hold Ready, exit 3."""
from __future__ import annotations

import time

from tests.conftest import write

from .conftest import computed, condition, files, nginx, policy, reconcile, work


def _ready(state, name):
    return condition(computed(state, "status", "clusters.cluster.karmada.io", f"{name}.json"), "Ready")


def test_stopped_and_hanging_members_fail_the_run_but_not_the_others(cli, state, members):
    nginx(state)
    write(state / "policies" / "nginx.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: nginx, namespace: default}
        spec:
          resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]
          placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
        """)
    reconcile(cli, 0)
    assert members.deploy("member3") is not None
    before = set(files(state))

    members["member2"].stop()
    members["member3"].set_hang(True)
    nginx(state, replicas=6)  # member1 still gets the change
    t = time.monotonic()
    code, _out, err = cli("reconcile", "--now", "2026-01-01T00:00:10Z")
    elapsed = time.monotonic() - t
    assert code == 3, err
    assert elapsed < 8, f"the run took {elapsed:.1f}s"
    assert "member member2: cluster is not reachable: connection refused" in err
    assert "member member3: cluster is not reachable: request timed out after 1s" in err
    assert "2 member cluster(s) failed: member2, member3" in err
    assert members.deploy("member1")["spec"]["replicas"] == 6
    assert set(files(state)) >= before  # nothing lost
    # within the failure threshold (30s) Ready stays True
    assert _ready(state, "member2")["status"] == "True"
    assert _ready(state, "member3")["status"] == "True"
    assert condition(work(state, "member1"), "Applied")["status"] == "True"

    # past the threshold: Ready False, ClusterNotReachable, since the first failed observation
    code, _out, err = cli("reconcile", "--now", "2026-01-01T00:00:41Z")
    assert code == 3, err
    for name in ("member2", "member3"):
        ready = _ready(state, name)
        assert (ready["status"], ready["reason"], ready["message"]) == ("False", "ClusterNotReachable",
                                                                        "cluster is not reachable")
        assert ready["lastTransitionTime"] == "2026-01-01T00:00:41Z"
    assert _ready(state, "member1")["status"] == "True"
    # status of the unreachable member's Work is left as it was (no apply attempted)
    assert condition(work(state, "member2"), "Applied")["status"] == "True"


def test_removed_work_waits_for_its_member(cli, state, members):
    nginx(state)
    policy(state)
    reconcile(cli, 0)
    assert members.deploy("member1") is not None
    members["member1"].stop()
    cli.ok("delete", "deploy", "nginx", "-n", "default")

    # member1 down: its Work stays terminating, member2's copy goes at once
    reconcile(cli, 10, expect=3)
    assert work(state, "member1")["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:10Z"
    assert work(state, "member2") is None and members.deploy("member2") is None
    reconcile(cli, 45, expect=3)  # Ready turns False
    assert _ready(state, "member1")["status"] == "False"
    assert work(state, "member1") is not None

    # back, but Ready only after the success threshold: still waiting (a warning, not a failure)
    members["member1"].start()
    err = reconcile(cli, 50)
    assert "cluster(member1) not ready" in err
    assert work(state, "member1") is not None and members.deploy("member1") is not None
    reconcile(cli, 81)
    assert _ready(state, "member1")["status"] == "True"
    assert members.deploy("member1") is None
    assert work(state, "member1") is None


def test_unhealthy_member_and_missing_kubeconfig(cli, state, members, monkeypatch):
    nginx(state)
    policy(state)
    reconcile(cli, 0)
    members["member2"].set_health("unready")
    (members.kubeconfig("member3")).unlink()
    code, _out, err = cli("reconcile", "--now", "2026-01-01T00:00:31Z")
    assert code == 3
    assert "member member2: cluster is reachable but health endpoint responded without ok (HTTP 503)" in err
    assert "member member3: failed to create a ClusterClient: kubeconfig" in err
    code, _out, err = cli("reconcile", "--now", "2026-01-01T00:01:02Z")
    r2, r3 = _ready(state, "member2"), _ready(state, "member3")
    assert (r2["status"], r2["reason"]) == ("False", "ClusterNotReady")
    assert (r3["status"], r3["reason"]) == ("False", "StatusCollectionFailed")
    assert r3["message"].startswith("failed to create a ClusterClient: kubeconfig ")
