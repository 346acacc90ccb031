"""Policy selection, ordering and the applied-overrides lists (semantics §2.2, §9.3)."""
import pytest

from karmactl.api.selectors import policy_priority, selector_priority
from karmactl.overrides import OverrideError, apply_overrides


def cluster(name, labels=None, **spec):
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


MEMBER1, MEMBER2 = cluster("member1", {"env": "prod"}, region="us"), cluster("member2", {"env": "dev"}, region="eu")


def nginx(namespace="default", labels=None):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "nginx", "namespace": namespace, "labels": labels or {"app": "nginx"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "nginx"}},
                     "template": {"metadata": {"labels": {"app": "nginx"}},
                                  "spec": {"containers": [{"image": "nginx", "name": "nginx"}]}}}}


def policy(name, rules=None, selectors=None, namespace="default", cluster_scoped=False, **spec_extra):
    spec = {}
    if selectors is not None:
        spec["resourceSelectors"] = selectors
    if rules is not None:
        spec["overrideRules"] = rules
    spec.update(spec_extra)
    md = {"name": name}
    if not cluster_scoped:
        md["namespace"] = namespace
    return {"apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "ClusterOverridePolicy" if cluster_scoped else "OverridePolicy", "metadata": md, "spec": spec}


def cop(name, rules=None, selectors=None, **kw):
    return policy(name, rules, selectors, cluster_scoped=True, **kw)


def replicas_rule(value, target=None):
    rule = {"overriders": {"plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": value}]}}
    if target is not None:
        rule["targetCluster"] = target
    return rule


DEPLOY_SELECTOR = {"apiVersion": "apps/v1", "kind": "Deployment"}


# --- Karmada's own samples -------------------------------------------------------------------

def test_sample_image_registry_per_cluster():
    # The imageOverrider example of the Karmada docs: a registry per cluster.
    op = policy("example", [
        {"targetCluster": {"clusterNames": ["member1"]},
         "overriders": {"imageOverrider": [{"component": "Registry", "operator": "replace",
                                            "value": "fictional.registry.us"}]}},
        {"targetCluster": {"clusterNames": ["member2"]},
         "overriders": {"imageOverrider": [{"component": "Registry", "operator": "replace",
                                            "value": "fictional.registry.eu"}]}},
    ], [dict(DEPLOY_SELECTOR, name="nginx")])
    images = {c["metadata"]["name"]: apply_overrides(nginx(), c, [op], []).manifest
              ["spec"]["template"]["spec"]["containers"][0]["image"] for c in (MEMBER1, MEMBER2)}
    assert images == {"member1": "fictional.registry.us/nginx", "member2": "fictional.registry.eu/nginx"}


def test_sample_plaintext_replicas():
    op = policy("nginx-replicas", [replicas_rule(5, {"clusterNames": ["member1"]})], [DEPLOY_SELECTOR])
    r1 = apply_overrides(nginx(), MEMBER1, [op], [])
    r2 = apply_overrides(nginx(), MEMBER2, [op], [])
    assert r1.manifest["spec"]["replicas"] == 5
    assert r2.manifest["spec"]["replicas"] == 2
    assert r1.applied_overrides == [{"policyName": "nginx-replicas", "overriders": {
        "plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": 5}]}}]
    assert r2.applied_overrides == []


def test_sample_nginx_op_labels_and_annotations():
    # samples/nginx/overridepolicy.yaml
    op = policy("nginx-op", [
        {"targetCluster": {"clusterNames": ["member2"]}, "overriders": {"labelsOverrider": [
            {"operator": "add", "value": {"env": "skoala-dev"}},
            {"operator": "add", "value": {"env-stat": "skoala-stage"}},
            {"operator": "remove", "value": {"for": "for"}},
            {"operator": "replace", "value": {"bar": "test"}}]}},
        {"targetCluster": {"clusterNames": ["member1"]}, "overriders": {"annotationsOverrider": [
            {"operator": "add", "value": {"env": "skoala-stage"}},
            {"operator": "remove", "value": {"bom": "bom"}},
            {"operator": "replace", "value": {"emma": "sophia"}}]}},
    ], [dict(DEPLOY_SELECTOR, name="nginx")])
    tmpl = nginx(labels={"app": "nginx", "for": "for", "bar": "x"})
    tmpl["metadata"]["annotations"] = {"bom": "bom", "emma": "olivia"}
    m2 = apply_overrides(tmpl, MEMBER2, [op], []).manifest
    assert m2["metadata"]["labels"] == {"app": "nginx", "bar": "test", "env": "skoala-dev", "env-stat": "skoala-stage"}
    assert m2["metadata"]["annotations"] == {"bom": "bom", "emma": "olivia"}
    m1 = apply_overrides(tmpl, MEMBER1, [op], []).manifest
    assert m1["metadata"]["annotations"] == {"emma": "sophia", "env": "skoala-stage"}
    assert m1["metadata"]["labels"] == tmpl["metadata"]["labels"]


# --- selection -------------------------------------------------------------------------------

SELECTOR_CASES = [
    ("name", dict(DEPLOY_SELECTOR, name="nginx"), 3),
    ("name-mismatch", dict(DEPLOY_SELECTOR, name="other"), 0),
    ("name-wins-over-labels", dict(DEPLOY_SELECTOR, name="nginx", labelSelector={"matchLabels": {"x": "y"}}), 3),
    ("labels", dict(DEPLOY_SELECTOR, labelSelector={"matchLabels": {"app": "nginx"}}), 2),
    ("labels-mismatch", dict(DEPLOY_SELECTOR, labelSelector={"matchLabels": {"app": "web"}}), 0),
    ("empty-label-selector-matches", dict(DEPLOY_SELECTOR, labelSelector={}), 2),
    ("invalid-label-selector", dict(DEPLOY_SELECTOR, labelSelector={"matchExpressions": [
        {"key": "app", "operator": "In", "values": []}]}), 0),
    ("match-all", dict(DEPLOY_SELECTOR), 1),
    ("namespace-match", dict(DEPLOY_SELECTOR, namespace="default"), 1),
    ("namespace-mismatch", dict(DEPLOY_SELECTOR, namespace="other"), 0),
    ("api-version-exact", {"apiVersion": "apps/v1beta1", "kind": "Deployment"}, 0),
    ("kind-mismatch", {"apiVersion": "apps/v1", "kind": "StatefulSet"}, 0),
]


@pytest.mark.parametrize("selector,expected", [c[1:] for c in SELECTOR_CASES], ids=[c[0] for c in SELECTOR_CASES])
def test_selector_priority(selector, expected):
    assert selector_priority(selector, nginx()) == expected


def test_policy_priority_is_best_selector_and_empty_is_match_all():
    assert policy_priority(policy("p", selectors=[]), nginx(), empty_matches_all=True) == 1
    assert policy_priority(policy("p", selectors=[]), nginx()) == 0  # a PropagationPolicy without selectors
    assert policy_priority(policy("p", selectors=[DEPLOY_SELECTOR, dict(DEPLOY_SELECTOR, name="nginx")]), nginx()) == 3


def test_non_matching_policy_skipped():
    op = policy("p", [replicas_rule(9)], [{"apiVersion": "v1", "kind": "Service"}])
    result = apply_overrides(nginx(), MEMBER1, [op], [])
    assert result.manifest["spec"]["replicas"] == 2 and result.applied_overrides == []


def test_op_only_from_template_namespace():
    other = policy("p", [replicas_rule(9)], namespace="other")
    same = policy("q", [replicas_rule(4)], namespace="default")
    result = apply_overrides(nginx(), MEMBER1, [other, same], [])
    assert result.manifest["spec"]["replicas"] == 4
    assert [i["policyName"] for i in result.applied_overrides] == ["q"]


def test_cluster_scoped_template_ignores_ops():
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {}}}
    op = policy("p", [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"a": "op"}}]}}], namespace="")
    c = cop("c", [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"b": "cop"}}]}}])
    result = apply_overrides(ns, MEMBER1, [op], [c])
    assert result.manifest["metadata"]["labels"] == {"b": "cop"}
    assert result.applied_overrides == [] and [i["policyName"] for i in result.applied_cluster_overrides] == ["c"]


TARGET_CASES = [
    ("no-target-all-clusters", None, True),
    ("cluster-names", {"clusterNames": ["member1"]}, True),
    ("cluster-names-other", {"clusterNames": ["member2"]}, False),
    ("label-selector", {"labelSelector": {"matchLabels": {"env": "prod"}}}, True),
    ("exclude", {"exclude": ["member1"]}, False),
    ("field-selector-region", {"fieldSelector": {"matchExpressions": [
        {"key": "region", "operator": "In", "values": ["us"]}]}}, True),
]


@pytest.mark.parametrize("target,applies", [c[1:] for c in TARGET_CASES], ids=[c[0] for c in TARGET_CASES])
def test_target_cluster(target, applies):
    op = policy("p", [replicas_rule(9, target)])
    assert (apply_overrides(nginx(), MEMBER1, [op], []).manifest["spec"]["replicas"] == 9) is applies


# --- ordering --------------------------------------------------------------------------------

def test_op_applied_after_cop():
    c = cop("zz-cop", [replicas_rule(3)], [dict(DEPLOY_SELECTOR, name="nginx")])
    o = policy("aa-op", [replicas_rule(7)], [DEPLOY_SELECTOR])
    result = apply_overrides(nginx(), MEMBER1, [o], [c])
    assert result.manifest["spec"]["replicas"] == 7  # OP wins although less specific and earlier by name
    assert [i["policyName"] for i in result.applied_cluster_overrides] == ["zz-cop"]
    assert [i["policyName"] for i in result.applied_overrides] == ["aa-op"]


@pytest.mark.parametrize("policies,winner", [
    ([("b", None), ("a", None)], "b"),
    ([("a", [DEPLOY_SELECTOR]), ("b", None)], "b"),
    ([("z", [dict(DEPLOY_SELECTOR, labelSelector={"matchLabels": {"app": "nginx"}})]), ("a", [DEPLOY_SELECTOR])], "z"),
    ([("a", [dict(DEPLOY_SELECTOR, name="nginx")]),
      ("z", [dict(DEPLOY_SELECTOR, labelSelector={"matchLabels": {"app": "nginx"}})])], "a"),
], ids=["same-priority-later-name-wins", "match-all-by-name", "labels-beat-match-all",
        "name-beats-labels"])
def test_priority_then_name_order(policies, winner):
    ops = [policy(name, [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"who": name}}]}}], sel)
           for name, sel in policies]
    assert apply_overrides(nginx(), MEMBER1, ops, []).manifest["metadata"]["labels"]["who"] == winner
    cops = [cop(p["metadata"]["name"], p["spec"].get("overrideRules"), p["spec"].get("resourceSelectors"))
            for p in ops]
    assert apply_overrides(nginx(), MEMBER1, [], cops).manifest["metadata"]["labels"]["who"] == winner


def test_rules_in_list_order_and_recorded_per_rule():
    op = policy("p", [replicas_rule(3), replicas_rule(6, {"clusterNames": ["member2"]}), replicas_rule(8)])
    result = apply_overrides(nginx(), MEMBER1, [op], [])
    assert result.manifest["spec"]["replicas"] == 8
    assert [i["overriders"]["plaintext"][0]["value"] for i in result.applied_overrides] == [3, 8]


def test_applied_list_sorted_by_policy_name():
    ops = [policy("b", [replicas_rule(1)], [dict(DEPLOY_SELECTOR, name="nginx")]),
           policy("a", [replicas_rule(2)])]
    result = apply_overrides(nginx(), MEMBER1, ops, [])
    assert result.manifest["spec"]["replicas"] == 1  # applied a then b (priority), listed a, b
    assert [i["policyName"] for i in result.applied_overrides] == ["a", "b"]


def test_applied_overriders_recorded_in_go_field_order_without_empties():
    op = policy("p", [{"overriders": {
        "plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": 1}],
        "labelsOverrider": [{"operator": "add", "value": {"a": "b"}}],
        "imageOverrider": [], "commandOverrider": None}}])
    item = apply_overrides(nginx(), MEMBER1, [op], []).applied_overrides[0]
    assert list(item["overriders"]) == ["plaintext", "labelsOverrider"]


def test_deprecated_pair_is_one_rule():
    op = policy("old", targetCluster={"clusterNames": ["member1"]},
                overriders={"plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": 4}]})
    assert apply_overrides(nginx(), MEMBER1, [op], []).manifest["spec"]["replicas"] == 4
    assert apply_overrides(nginx(), MEMBER2, [op], []).manifest["spec"]["replicas"] == 2
    no_target = policy("old2", overriders={"plaintext": [{"path": "/spec/replicas", "operator": "replace",
                                                          "value": 6}]})
    assert apply_overrides(nginx(), MEMBER2, [no_target], []).manifest["spec"]["replicas"] == 6


def test_no_policies():
    tmpl = nginx()
    result = apply_overrides(tmpl, MEMBER1, [], [])
    assert result.manifest == tmpl and result.manifest is not tmpl
    assert result.applied_overrides == [] and result.applied_cluster_overrides == []


# --- errors ----------------------------------------------------------------------------------

def test_error_names_policy_and_rule():
    op = policy("broken", [replicas_rule(1),
                           {"overriders": {"plaintext": [{"path": "/spec/nope", "operator": "replace", "value": 1}]}}])
    with pytest.raises(OverrideError, match=r"OverridePolicy\(default/broken\) overrideRules\[1\].*member1"):
        apply_overrides(nginx(), MEMBER1, [op], [])


def test_cop_error_names_cop():
    c = cop("bad-image", [{"overriders": {"imageOverrider": [{"component": "Tag", "operator": "replace",
                                                              "value": "v"}]}}])
    tmpl = nginx()
    tmpl["spec"]["template"]["spec"]["containers"][0]["image"] = "Not Valid"
    with pytest.raises(OverrideError, match=r"ClusterOverridePolicy\(bad-image\) overrideRules\[0\]"):
        apply_overrides(tmpl, MEMBER1, [], [c])


def test_input_not_modified():
    tmpl = nginx()
    apply_overrides(tmpl, MEMBER1, [policy("p", [replicas_rule(9)])], [])
    assert tmpl == nginx()
