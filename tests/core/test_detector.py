"""Detector rules (semantics §2), table-driven, pure."""
from __future__ import annotations

import pytest

from karmactl.api.defaults import default_object
from karmactl.controllers import detector
from karmactl.controllers.helper.template import DetectorConfig, is_template
from karmactl.api.templates import refresh_overlay, template_view
from karmactl.interpreter import interpret_replica

NOW = "2026-01-01T00:00:00Z"


def deploy(name="nginx", ns="default", labels=None, replicas=2):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def pp(name, selectors, ns="default", priority=None):
    obj = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
           "metadata": {"name": name, "namespace": ns}, "spec": {"resourceSelectors": selectors, "placement": {}}}
    if priority is not None:
        obj["spec"]["priority"] = priority
    return default_object(obj)


def cpp(name, selectors, priority=None):
    obj = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
           "metadata": {"name": name}, "spec": {"resourceSelectors": selectors, "placement": {}}}
    if priority is not None:
        obj["spec"]["priority"] = priority
    return default_object(obj)


BY_NAME = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}]
BY_LABEL = [{"apiVersion": "apps/v1", "kind": "Deployment", "labelSelector": {"matchLabels": {"app": "web"}}}]
ALL = [{"apiVersion": "apps/v1", "kind": "Deployment"}]


def run(templates, pps=(), cpps=(), bindings=None, overlays=None):
    templates = {("apps", t["kind"], t["metadata"]["namespace"], t["metadata"]["name"]): t for t in templates}
    overlays = dict(overlays or {})
    for k, t in templates.items():
        overlays[k] = refresh_overlay(k, t, overlays.get(k), None, NOW)
    views = {k: template_view(t, overlays[k]) for k, t in templates.items()}
    claims = {k: {"labels": overlays[k]["metadata"].get("labels") or {},
                  "annotations": overlays[k]["metadata"].get("annotations") or {}} for k in templates}
    return detector.reconcile(templates, views, claims, list(pps), list(cpps), bindings or {}, set(), NOW,
                              interpret_replica)


def chosen(result):
    [claim] = result.claims.values()
    ann = claim.get("annotations") or {}
    return ann.get("propagationpolicy.karmada.io/name") or ann.get("clusterpropagationpolicy.karmada.io/name")


@pytest.mark.parametrize("pps, cpps, expected", [
    pytest.param([pp("b", ALL), pp("a", ALL)], [], "a", id="tie on priorities: smaller name wins"),
    pytest.param([pp("all", ALL), pp("named", BY_NAME)], [], "named", id="name selector beats match-all"),
    pytest.param([pp("all", ALL), pp("label", BY_LABEL)], [], "label", id="label selector beats match-all"),
    pytest.param([pp("named", BY_NAME), pp("all", ALL, priority=5)], [], "all", id="explicit priority beats implicit"),
    pytest.param([pp("all", ALL)], [cpp("c", BY_NAME, priority=100)], "all", id="PropagationPolicy beats any ClusterPropagationPolicy"),
    pytest.param([], [cpp("z", BY_NAME), cpp("y", ALL)], "z", id="cluster policies by implicit priority"),
    pytest.param([pp("other-ns", BY_NAME, ns="prod")], [], None, id="policy of another namespace does not select"),
    pytest.param([pp("x", [{"apiVersion": "apps/v1beta1", "kind": "Deployment"}])], [], None, id="apiVersion must match exactly"),
])
def test_policy_choice(pps, cpps, expected):
    result = run([deploy(labels={"app": "web"})], pps, cpps)
    assert chosen(result) == expected


def test_binding_shape_and_replicas():
    result = run([deploy(replicas=4)], [pp("p", BY_NAME)])
    [(key, rb)] = result.bindings.items()
    assert key == ("work.karmada.io", "ResourceBinding", "default", "nginx-deployment")
    assert rb["spec"]["replicas"] == 4
    assert rb["spec"]["resource"]["kind"] == "Deployment"
    assert rb["metadata"]["ownerReferences"][0]["controller"] is True
    assert rb["metadata"]["labels"]["propagationpolicy.karmada.io/permanent-id"]


def test_claim_is_sticky_when_a_better_policy_appears():
    first = run([deploy()], [pp("all", ALL)])
    key = next(iter(first.claims))
    overlay = refresh_overlay(key, deploy(), None, first.claims[key], NOW)
    second = run([deploy()], [pp("all", ALL), pp("named", BY_NAME, priority=9)], bindings=first.bindings,
                 overlays={key: overlay})
    assert chosen(second) == "all"


def test_policy_removed_releases_template_and_binding():
    first = run([deploy()], [pp("all", ALL)])
    second = run([deploy()], [], bindings=first.bindings)
    assert list(second.bindings.values()) == [None]


@pytest.mark.parametrize("template", [
    pytest.param(deploy(ns="kube-system"), id="kube-* namespace skipped"),
    pytest.param(deploy(ns="karmada-es-member1"), id="execution namespace skipped"),
    pytest.param(deploy(labels={"resourcetemplate.karmada.io/claimed-by": "mcs"}), id="claimed-by label skipped"),
])
def test_not_templates(template):
    key = ("apps", "Deployment", template["metadata"]["namespace"], template["metadata"]["name"])
    assert not is_template(key, template, DetectorConfig())


def test_template_change_refreshes_binding_but_keeps_scheduler_fields():
    first = run([deploy(replicas=2)], [pp("p", BY_NAME)])
    [(bkey, rb)] = first.bindings.items()
    rb = dict(rb, spec=dict(rb["spec"], clusters=[{"name": "m1", "replicas": 2}]))
    second = run([deploy(replicas=5)], [pp("p", BY_NAME)], bindings={bkey: rb})
    new = second.bindings[bkey]
    assert new["spec"]["replicas"] == 5
    assert new["spec"]["clusters"] == [{"name": "m1", "replicas": 2}]
    assert new["metadata"]["generation"] == rb["metadata"]["generation"] + 1


def test_suspension_copied_and_scheduling_flag_kept():
    policy = pp("p", BY_NAME)
    policy["spec"]["suspension"] = {"dispatchingOnClusters": {"clusterNames": ["m2"]}}
    first = run([deploy()], [policy])
    [(bkey, rb)] = first.bindings.items()
    assert rb["spec"]["suspension"] == {"dispatchingOnClusters": {"clusterNames": ["m2"]}}
    rb["spec"]["suspension"]["scheduling"] = True
    policy["spec"].pop("suspension")
    second = run([deploy()], [policy], bindings={bkey: rb})
    assert second.bindings[bkey]["spec"]["suspension"] == {"scheduling": True}


def test_generation_bumps_on_spec_change_only():
    key = ("apps", "Deployment", "default", "nginx")
    o1 = refresh_overlay(key, deploy(), None, None, NOW)
    assert o1["metadata"]["generation"] == 1
    relabelled = deploy(labels={"x": "y"})
    assert refresh_overlay(key, relabelled, o1, None, NOW)["metadata"]["generation"] == 1
    assert refresh_overlay(key, deploy(replicas=9), o1, None, NOW)["metadata"]["generation"] == 2
    assert refresh_overlay(key, deploy(), o1, None, NOW) is o1
