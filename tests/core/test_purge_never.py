"""``failover.cluster.purgeMode: Never`` (proposal configurable-cluster-failover.md): a taint
eviction keeps the evicted cluster's copy (``suppressDeletion: true``) however healthy the
substitutes are and however long it lasts."""
from __future__ import annotations

from tests.core.test_offline_run import STATIC_PP
from tests.failover.helpers import T0, at
from tests.failover.test_walkthrough_offline import Walk

NEVER = STATIC_PP.replace("  placement:\n", "  failover:\n    cluster:\n      purgeMode: Never\n  placement:\n")


def test_cluster_failover_purge_never_keeps_the_evicted_copy(cli, state, tmp_path):
    walk = Walk(cli, state, tmp_path)
    assert "purgeMode: Never" in NEVER
    walk.setup(NEVER)
    walk.reconcile(T0)
    walk.member_status("member1", "Healthy")
    walk.member_status("member2", "Healthy")
    walk.condition("member1", "Ready=False", at(60))
    err = walk.reconcile(at(60))
    assert "evicted default/nginx-deployment from member1: TaintUntolerated (purgeMode Never)" in err
    assert walk.targets() == {"member2": 3}
    (task,) = walk.tasks()
    assert task["purgeMode"] == "Never" and task["suppressDeletion"] is True
    # substitutes healthy, and far past the graceful eviction timeout: the old copy stays
    walk.member_status("member2", "Healthy")
    walk.reconcile(at(180))
    walk.reconcile(at(3600))
    assert len(walk.tasks()) == 1
    assert "deletionTimestamp" not in walk.work("member1")["metadata"]
    assert walk.work_replicas("member1") == 1
    described = walk.cli.ok("describe", "rb", "nginx-deployment")
    assert "until a user sets suppressDeletion: false" in described
