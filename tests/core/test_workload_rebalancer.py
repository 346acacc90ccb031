"""WorkloadRebalancer (``pkg/controllers/workloadrebalancer/``): the status rules as a table, and a
Dynamic-weight Deployment moved back onto a recovered cluster by ``karmactl rebalance``, offline."""
from __future__ import annotations

import json

import pytest

from karmactl.controllers.workload_rebalancer import sync_workloads, trigger
from tests.conftest import cluster_yaml, write
from tests.core.test_offline_run import NGINX as NGINX_YAML, PP_HEAD
from tests.failover.helpers import T0, at

NGINX = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx", "namespace": "default"}
WEB = dict(NGINX, name="web")
RB_KEY = ("work.karmada.io", "ResourceBinding", "default", "nginx-deployment")


@pytest.mark.parametrize("spec, observed, expected", [
    pytest.param([NGINX], [], [{"workload": NGINX}], id="a new workload gets an entry without result"),
    pytest.param([NGINX], [{"workload": NGINX, "result": "Successful"}], [{"workload": NGINX, "result": "Successful"}],
                 id="a listed workload keeps its result"),
    pytest.param([], [{"workload": NGINX, "result": "Successful"}, {"workload": WEB, "result": "Failed"}],
                 [{"workload": NGINX, "result": "Successful"}], id="an unlisted workload stays only when Successful"),
    pytest.param([WEB, NGINX], [], [{"workload": NGINX}, {"workload": WEB}], id="sorted by apiVersion kind namespace name"),
])
def test_sync_workloads(spec, observed, expected):
    assert sync_workloads(spec, observed) == expected


def test_trigger_sets_reschedule_time_once_and_fails_missing_bindings():
    rb = {"metadata": {"name": "nginx-deployment"}, "spec": {"rescheduleTriggeredAt": at(-60)}}
    observed, updates = trigger([{"workload": NGINX}, {"workload": WEB}], {RB_KEY: rb}, T0)
    assert observed == [{"workload": NGINX, "result": "Successful"},
                        {"workload": WEB, "result": "Failed", "reason": "ReferencedBindingNotFound"}]
    assert updates[RB_KEY]["spec"]["rescheduleTriggeredAt"] == T0
    _observed, updates = trigger([{"workload": NGINX}], {RB_KEY: updates[RB_KEY]}, T0)
    assert updates == {}  # already triggered at that time: the binding is left alone


def member(name: str) -> str:
    """A Ready Cluster with room for 100 Pods (what Dynamic weights are computed from)."""
    return cluster_yaml(name).rstrip() + """
      resourceSummary:
        allocatable: {pods: "100", cpu: "100", memory: 100Gi}
    """
DYNAMIC = NGINX_YAML.replace("replicas: 3", "replicas: 4") + "---" + PP_HEAD + """\
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
"""


def targets(cli) -> dict:
    rb = json.loads(cli.ok("get", "rb", "nginx-deployment", "-o", "json"))
    return {c["name"]: c["replicas"] for c in rb["spec"].get("clusters") or []}


def reconcile(cli, now):
    code, _out, err = cli("reconcile", "--offline", "--now", now)
    assert code == 0, err
    assert cli("plan", "--now", now)[0] == 0, "a second run at the same time would change files"
    return err


def test_rebalance_moves_a_dynamic_weight_deployment_back_onto_a_recovered_cluster(cli, state):
    write(state / "clusters.yaml", member("member1") + "\n---" + member("member2"))
    write(state / "nginx.yaml", DYNAMIC)
    reconcile(cli, T0)
    assert targets(cli) == {"member1": 2, "member2": 2}
    cli.ok("cluster", "condition", "set", "member2", "Ready=False", "--now", at(60))
    assert "evicted default/nginx-deployment from member2" in reconcile(cli, at(60))
    assert targets(cli) == {"member1": 4}
    cli.ok("cluster", "condition", "set", "member2", "Ready=True", "--now", at(700))
    reconcile(cli, at(700))  # the eviction task has timed out, member2 is Ready and untainted
    assert targets(cli) == {"member1": 4}  # nothing moves back by itself

    out = cli.ok("rebalance", "deploy/nginx", "--ttl", "60", "--now", at(710))
    assert "workloadrebalancer.apps.karmada.io/rebalance-20260101t001150z created" in out
    err = reconcile(cli, at(710))
    assert "workloadrebalancer rebalance-20260101t001150z: rescheduling ResourceBinding default/nginx-deployment afresh" in err
    assert targets(cli) == {"member1": 2, "member2": 2}
    rebalancer = json.loads(cli.ok("get", "workloadrebalancer", "rebalance-20260101t001150z", "-o", "json"))
    assert rebalancer["status"] == {"observedWorkloads": [{"workload": NGINX, "result": "Successful"}],
                                    "observedGeneration": 1, "finishTime": at(710)}
    rb = json.loads(cli.ok("get", "rb", "nginx-deployment", "-o", "json"))
    assert rb["spec"]["rescheduleTriggeredAt"] == at(710) == rebalancer["metadata"]["creationTimestamp"]

    reconcile(cli, at(769))
    assert cli("get", "workloadrebalancer", "rebalance-20260101t001150z")[0] == 0
    code, _out, err = cli("reconcile", "--offline", "--dry-run", "--now", at(770))
    assert "workloadrebalancer rebalance-20260101t001150z would be deleted: ttlSecondsAfterFinished passed" in err
    assert cli("get", "workloadrebalancer", "rebalance-20260101t001150z")[0] == 0
    assert "workloadrebalancer rebalance-20260101t001150z deleted: ttlSecondsAfterFinished passed" in reconcile(cli, at(770))
    assert cli("get", "workloadrebalancer", "rebalance-20260101t001150z")[0] == 1
    assert not list((state / "computed").rglob("*rebalance*")) and not list(state.rglob("*rebalance*.yaml"))
    assert targets(cli) == {"member1": 2, "member2": 2}


def test_a_rebalancer_of_a_workload_without_binding_fails_it(cli, state):
    write(state / "nginx.yaml", DYNAMIC.split("---")[0])
    cli.ok("rebalance", "deploy/nginx", "--name", "again", "--now", T0)
    reconcile(cli, T0)
    status = json.loads(cli.ok("get", "workloadrebalancer", "again", "-o", "json"))["status"]
    assert status["observedWorkloads"] == [{"workload": NGINX, "result": "Failed", "reason": "ReferencedBindingNotFound"}]
    code, _out, err = cli("rebalance", "deploy/nginx", "--name", "again")
    assert code == 2 and 'workloadrebalancer "again" exists already' in err
    code, _out, err = cli("rebalance", "deploy/missing")
    assert code == 1 and "not found" in err

