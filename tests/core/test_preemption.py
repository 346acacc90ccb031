"""Policy preemption (``pkg/detector/preemption.go``) behind the feature gate
``PropagationPolicyPreemption``: the rules as a table, and the claim moving in offline runs."""
from __future__ import annotations

import json

import pytest

from karmactl.api.defaults import default_object
from karmactl.controllers.detector import preempting_policy
from tests.conftest import NOW, write
from tests.core.test_offline_run import NGINX as NGINX_YAML

NGINX = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx", "namespace": "default"}}
BY_NAME = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}]
ALL = [{"apiVersion": "apps/v1", "kind": "Deployment"}]


def policy(kind, name, priority=0, preemption="Never", selectors=BY_NAME):
    md = {"name": name, **({"namespace": "default"} if kind == "PropagationPolicy" else {})}
    return default_object({"apiVersion": "policy.karmada.io/v1alpha1", "kind": kind, "metadata": md,
                           "spec": {"resourceSelectors": selectors, "priority": priority, "preemption": preemption}})


def pp(name, priority=0, preemption="Never", selectors=BY_NAME):
    return policy("PropagationPolicy", name, priority, preemption, selectors)


def cpp(name, priority=0, preemption="Never", selectors=BY_NAME):
    return policy("ClusterPropagationPolicy", name, priority, preemption, selectors)


@pytest.mark.parametrize("claimed, pps, cpps, expected", [
    pytest.param(pp("low", 1), [pp("high", 5, "Always")], [], "high", id="PP Always of higher priority takes from a PP"),
    pytest.param(pp("low", 1), [pp("high", 5)], [], None, id="preemption Never: the claim stays"),
    pytest.param(pp("low", 5), [pp("same", 5, "Always")], [], None, id="equal priority does not preempt"),
    pytest.param(cpp("c", 9), [pp("p", 0, "Always")], [], "p", id="a PP Always takes from any CPP"),
    pytest.param(cpp("c", 1), [], [cpp("d", 2, "Always")], "d", id="CPP Always of higher priority takes from a CPP"),
    pytest.param(pp("p", 0), [], [cpp("d", 9, "Always")], None, id="a CPP never takes from a PP"),
    pytest.param(pp("low", 1), [pp("all", 5, "Always", ALL)], [], None,
                 id="a selector that does not name the template does not preempt"),
    pytest.param(pp("low", 1), [pp("b", 5, "Always"), pp("a", 7, "Always"), pp("c", 7, "Always")], [], "a",
                 id="highest priority, then smaller name"),
])
def test_preempting_policy(claimed, pps, cpps, expected):
    taker = preempting_policy(claimed, NGINX, pps + ([claimed] if claimed["kind"] == "PropagationPolicy" else []),
                              cpps + ([claimed] if claimed["kind"] != "PropagationPolicy" else []))
    assert (taker["metadata"]["name"] if taker else None) == expected


def binding_policy(state) -> str:
    rb = json.loads((state / "computed" / "resourcebindings" / "default" / "nginx-deployment.json").read_text())
    return rb["metadata"]["annotations"]["propagationpolicy.karmada.io/name"]


def write_policy(state, name, priority, clusters, preemption="Never"):
    write(state / f"{name}.yaml", f"""
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: {name}, namespace: default}}
        spec:
          priority: {priority}
          preemption: {preemption}
          resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: nginx}}]
          placement: {{clusterAffinity: {{clusterNames: [{clusters}]}}}}
        """)


@pytest.mark.parametrize("gate", [False, True], ids=["gate off: ignored with a warning", "gate on: the claim moves"])
def test_a_preempting_policy_takes_the_template_from_a_lower_priority_one(cli, state, gate):
    from tests.conftest import cluster_yaml
    write(state / "clusters.yaml", cluster_yaml("member1") + "---" + cluster_yaml("member2"))
    write(state / "nginx.yaml", NGINX_YAML)
    write(state / "settings.yaml", f"""
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: karmactl-config, namespace: karmada-system}}
        data: {{propagationPolicyPreemption: "{str(gate).lower()}"}}
        """)
    write_policy(state, "low", 1, "member1")
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert binding_policy(state) == "low"
    write_policy(state, "high", 5, "member2", preemption="Always")
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0, err
    assert cli("plan", "--now", NOW)[0] == 0, "a second run at the same time would change files"
    works = sorted(p.parent.name for p in (state / "computed" / "works").glob("*/nginx-*.json"))
    if not gate:
        assert binding_policy(state) == "low" and works == ["karmada-es-member1"]
        assert "PropagationPolicy default/high sets preemption: Always, but the feature gate " \
               "PropagationPolicyPreemption is off" in err
        return
    assert binding_policy(state) == "high"
    assert "PropagationPolicy default/high: PreemptPolicySucceed: preempted PropagationPolicy default/low " \
           "for Deployment default/nginx" in err
    assert "PropagationPolicy default/low: PreemptPolicySucceed: Deployment default/nginx preempted by " \
           "PropagationPolicy default/high" in err
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert "PreemptPolicySucceed" not in err and binding_policy(state) == "high"
    assert "member2" in json.dumps(json.loads(
        (state / "computed" / "resourcebindings" / "default" / "nginx-deployment.json").read_text())["spec"]["clusters"])
