"""``reconcile --wait`` gives up early, naming the binding and why, when it cannot be scheduled
(issue 27, item 7): before, it waited its whole timeout and said only "not scheduled"."""
from __future__ import annotations

from tests.members.conftest import members, nginx, policy  # noqa: F401  (the fixture)


def test_wait_names_a_binding_that_cannot_be_scheduled_and_why(cli, state, members):  # noqa: F811
    nginx(state)
    policy(state, clusters=("member9",))
    code, _out, err = cli("reconcile", "--wait", "--timeout", "120s")
    assert code == 4
    assert "gave up before 120s: binding default/nginx-deployment cannot be scheduled: NoClusterFit" in err, err
    assert "clusterNames names no Cluster: member9" in err

    policy(state, extra="  schedulerName: volcano")  # left for another scheduler
    code, _out, err = cli("reconcile", "--wait", "--timeout", "120s")
    assert code == 4
    assert 'binding default/nginx-deployment cannot be scheduled: its spec.schedulerName is "volcano"' in err, err
