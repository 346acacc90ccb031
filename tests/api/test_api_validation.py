"""validate_object: valid samples pass; one case per rule fails with its path and message."""
import pytest

from api_samples import ALL, sample
from karmactl.api.defaults import default_object
from karmactl.api.kinds import KindRegistry
from karmactl.api.validation import FieldError, validate_object

REG = KindRegistry.default()


@pytest.mark.parametrize("kind", sorted(ALL))
def test_valid_sample_passes(kind):
    assert validate_object(sample(kind), REG) == []


@pytest.mark.parametrize("kind", sorted(ALL))
def test_defaulted_sample_passes(kind):
    assert validate_object(default_object(sample(kind)), REG) == []


def _set(path, value):
    """A mutation setting a dotted path (list indexes as integers) to value (None deletes)."""
    def mutate(obj):
        parts = path.split(".")
        cur = obj
        for p in parts[:-1]:
            p = int(p) if p.isdigit() else p
            if isinstance(cur, dict) and p not in cur:
                cur[p] = {}
            cur = cur[p]
        last = int(parts[-1]) if parts[-1].isdigit() else parts[-1]
        if value is None:
            del cur[last]
        else:
            cur[last] = value
    return mutate


def _all(*mutations):
    def mutate(obj):
        for m in mutations:
            m(obj)
    return mutate


# (id, kind, mutation, expected path, expected message substring)
CASES = [
    # --- generic -------------------------------------------------------------------------------
    ("missing-apiVersion", "Deployment", _set("apiVersion", None), "apiVersion", "Required value"),
    ("missing-kind", "Deployment", _set("kind", None), "kind", "Required value"),
    ("missing-name", "Deployment", _set("metadata.name", None), "metadata.name", "name or generateName is required"),
    ("name-not-subdomain", "Deployment", _set("metadata.name", "Nginx_1"), "metadata.name",
     "a lowercase RFC 1123 subdomain"),
    ("cluster-name-too-long", "Cluster", _set("metadata.name", "a" * 49), "metadata.name",
     "must be no more than 48 characters"),
    ("cluster-name-not-label", "Cluster", _set("metadata.name", "member.one"), "metadata.name",
     "a lowercase RFC 1123 label"),
    ("namespace-on-cluster-scoped", "ClusterPropagationPolicy", _set("metadata.namespace", "default"),
     "metadata.namespace", "Forbidden: not allowed on this type"),
    ("bad-namespace", "Deployment", _set("metadata.namespace", "Bad_NS"), "metadata.namespace",
     "a lowercase RFC 1123 label"),
    ("bad-label-key", "Deployment", _set("metadata.labels", {"a/b/c": "x"}), "metadata.labels",
     "a qualified name must consist of"),
    ("bad-label-value", "Deployment", _set("metadata.labels", {"app": "-x"}), "metadata.labels",
     "a valid label must be an empty string"),
    ("label-value-not-string", "Deployment", _set("metadata.labels", {"version": 1}), "metadata.labels[version]",
     "must be of type string"),
    ("bad-annotation-key", "Deployment", _set("metadata.annotations", {"-bad": "x"}), "metadata.annotations",
     "name part must consist of"),
    ("unsupported-version", "PropagationPolicy", _set("apiVersion", "policy.karmada.io/v1beta1"), "apiVersion",
     'Unsupported value: "policy.karmada.io/v1beta1": supported values: "policy.karmada.io/v1alpha1"'),
    ("unknown-top-level", "Remedy", _set("extra", 1), "extra", 'unknown field "extra"'),
    ("missing-spec", "Remedy", _set("spec", None), "spec", "Required value"),
    # --- PropagationPolicy schema -------------------------------------------------------------
    ("unknown-spec-field", "PropagationPolicy", _set("spec.foo", 1), "spec.foo", 'unknown field "spec.foo"'),
    ("unknown-nested-field", "PropagationPolicy", _set("spec.placement.clusterAffinity.names", ["a"]),
     "spec.placement.clusterAffinity.names", 'unknown field "spec.placement.clusterAffinity.names"'),
    ("selectors-min-items", "PropagationPolicy", _set("spec.resourceSelectors", []), "spec.resourceSelectors",
     "should have at least 1 items"),
    ("selector-kind-required", "PropagationPolicy", _set("spec.resourceSelectors.0.kind", None),
     "spec.resourceSelectors[0].kind", "Required value"),
    ("division-preference-enum", "PropagationPolicy",
     _set("spec.placement.replicaScheduling.replicaDivisionPreference", "Foo"),
     "spec.placement.replicaScheduling.replicaDivisionPreference",
     'Unsupported value: "Foo": supported values: "Aggregated", "Weighted"'),
    ("scheduling-type-enum", "PropagationPolicy", _set("spec.placement.replicaScheduling.replicaSchedulingType", "Split"),
     "spec.placement.replicaScheduling.replicaSchedulingType", 'supported values: "Duplicated", "Divided"'),
    ("static-weight-minimum", "PropagationPolicy",
     _set("spec.placement.replicaScheduling.weightPreference.staticWeightList.0.weight", 0),
     "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight",
     "should be greater than or equal to 1"),
    ("static-weight-target-required", "PropagationPolicy",
     _set("spec.placement.replicaScheduling.weightPreference.staticWeightList.0.targetCluster", None),
     "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster", "Required value"),
    ("dynamic-weight-enum", "PropagationPolicy",
     _set("spec.placement.replicaScheduling.weightPreference.dynamicWeight", "Capacity"),
     "spec.placement.replicaScheduling.weightPreference.dynamicWeight", '"AvailableReplicas"'),
    ("priority-type", "PropagationPolicy", _set("spec.priority", "high"), "spec.priority",
     'Invalid value: "string": must be of type integer'),
    ("propagateDeps-type", "PropagationPolicy", _set("spec.propagateDeps", "yes"), "spec.propagateDeps",
     "must be of type boolean"),
    ("preemption-enum", "PropagationPolicy", _set("spec.preemption", "Sometimes"), "spec.preemption",
     'supported values: "Always", "Never"'),
    ("conflictResolution-enum", "PropagationPolicy", _set("spec.conflictResolution", "Merge"),
     "spec.conflictResolution", 'supported values: "Abort", "Overwrite"'),
    ("activationPreference-enum", "PropagationPolicy", _set("spec.activationPreference", "Eager"),
     "spec.activationPreference", 'supported values: "Lazy"'),
    ("spreadByField-enum", "PropagationPolicy", _set("spec.placement.spreadConstraints", [{"spreadByField": "rack"}]),
     "spec.placement.spreadConstraints[0].spreadByField", "Unsupported value"),
    ("affinityName-too-long", "PropagationPolicy",
     _all(_set("spec.placement.clusterAffinity", None),
          _set("spec.placement.clusterAffinities", [{"affinityName": "a" * 33, "clusterNames": ["m1"]}])),
     "spec.placement.clusterAffinities[0].affinityName", "Too long: may not be more than 32 bytes"),
    ("schedulePriority-source-enum", "PropagationPolicy",
     _set("spec.schedulePriority", {"priorityClassSource": "PodPriorityClass", "priorityClassName": "x"}),
     "spec.schedulePriority.priorityClassSource", '"KubePriorityClass"'),
    ("cluster-purgeMode-enum", "PropagationPolicy", _set("spec.failover", {"cluster": {"purgeMode": "Later"}}),
     "spec.failover.cluster.purgeMode", 'Unsupported value: "Later": supported values: "Directly", "Gracefully", "Never"'),
    ("application-purgeMode-enum", "PropagationPolicy",
     _all(_set("spec.propagateDeps", True),
          _set("spec.failover", {"application": {"decisionConditions": {}, "purgeMode": "Later"}})),
     "spec.failover.application.purgeMode", '"Directly", "Gracefully", "Never"'),
    ("decisionConditions-required", "PropagationPolicy",
     _all(_set("spec.propagateDeps", True), _set("spec.failover", {"application": {}})),
     "spec.failover.application.decisionConditions", "Required value"),
    ("healthyState-enum", "PropagationPolicy",
     _all(_set("spec.propagateDeps", True), _set("spec.failover", {"application": {
         "decisionConditions": {}, "preConditions": {"healthyState": "Unhealthy"}}})),
     "spec.failover.application.preConditions.healthyState", 'supported values: "Healthy"'),
    ("suspension-dispatching-type", "PropagationPolicy", _set("spec.suspension", {"dispatching": "yes"}),
     "spec.suspension.dispatching", "must be of type boolean"),
    # --- PropagationPolicy webhook ------------------------------------------------------------
    ("affinity-and-affinities", "PropagationPolicy",
     _set("spec.placement.clusterAffinities", [{"affinityName": "g1", "clusterNames": ["member1"]}]),
     "spec.placement", "clusterAffinities cannot co-exist with clusterAffinity"),
    ("affinity-term-duplicate", "PropagationPolicy",
     _all(_set("spec.placement.clusterAffinity", None),
          _set("spec.placement.clusterAffinities", [{"affinityName": "g1"}, {"affinityName": "g1"}])),
     "spec.placement.clusterAffinities", "each affinity term in a policy must have a unique name"),
    ("affinity-term-name-invalid", "PropagationPolicy",
     _all(_set("spec.placement.clusterAffinity", None),
          _set("spec.placement.clusterAffinities", [{"affinityName": "-g1"}])),
     "spec.placement.clusterAffinities[0]", "name part must consist of"),
    ("overflow-needs-dynamic-or-aggregated", "PropagationPolicy",
     _all(_set("spec.placement.clusterAffinity", None),
          _set("spec.placement.clusterAffinities", [{"affinityName": "g1", "clusterNames": ["member1"],
                                                     "overflowAffinities": [{"affinityName": "o1"}]}])),
     "spec.placement.clusterAffinities[0].overflowAffinities",
     "overflowAffinities can only be used together with dynamic weight or aggregated scheduling"),
    ("overflow-needs-inline-affinity", "PropagationPolicy",
     _all(_set("spec.placement.clusterAffinity", None),
          _set("spec.placement.replicaScheduling", {"replicaSchedulingType": "Divided",
                                                    "replicaDivisionPreference": "Aggregated"}),
          _set("spec.placement.clusterAffinities", [{"affinityName": "g1",
                                                     "overflowAffinities": [{"affinityName": "o1"}]}])),
     "spec.placement.clusterAffinities[0].overflowAffinities",
     "overflowAffinities can only be used together with the inline ClusterAffinity"),
    ("overflow-name-duplicates-primary", "PropagationPolicy",
     _all(_set("spec.placement.clusterAffinity", None),
          _set("spec.placement.replicaScheduling", {"replicaSchedulingType": "Divided",
                                                    "replicaDivisionPreference": "Aggregated"}),
          _set("spec.placement.clusterAffinities", [{"affinityName": "g1", "clusterNames": ["member1"],
                                                     "overflowAffinities": [{"affinityName": "g1"}]}])),
     "spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName",
     "overflow affinity name must be unique and must not duplicate the primary group's affinityName"),
    ("field-selector-key", "PropagationPolicy",
     _set("spec.placement.clusterAffinity.fieldSelector", {"matchExpressions": [
         {"key": "country", "operator": "In", "values": ["x"]}]}),
     "spec.placement.clusterAffinity.fieldSelector", 'unsupported key "country", must be provider, region, or zone'),
    ("field-selector-operator", "PropagationPolicy",
     _set("spec.placement.clusterAffinity.fieldSelector", {"matchExpressions": [
         {"key": "region", "operator": "Exists"}]}),
     "spec.placement.clusterAffinity.fieldSelector", 'unsupported operator "Exists", must be In or NotIn'),
    ("field-selector-in-static-weight", "PropagationPolicy",
     _set("spec.placement.replicaScheduling.weightPreference.staticWeightList.0.targetCluster.fieldSelector",
          {"matchExpressions": [{"key": "name", "operator": "In", "values": ["x"]}]}),
     "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster.fieldSelector",
     'unsupported key "name"'),
    ("label-selector-operator", "PropagationPolicy",
     _set("spec.placement.clusterAffinity.labelSelector", {"matchExpressions": [{"key": "a", "operator": "in"}]}),
     "spec.placement.clusterAffinity.labelSelector.matchExpressions[0].operator", 'Unsupported value: "in"'),
    ("spread-field-and-label", "PropagationPolicy",
     _set("spec.placement.spreadConstraints", [{"spreadByField": "cluster", "spreadByLabel": "x", "maxGroups": 2}]),
     "spec.placement.spreadConstraints[0]", "spreadByLabel should not co-exist with spreadByField"),
    ("spread-min-negative", "PropagationPolicy",
     _set("spec.placement.spreadConstraints", [{"spreadByField": "cluster", "minGroups": -1}]),
     "spec.placement.spreadConstraints[0]", "minGroups lower than 0 is not allowed"),
    ("spread-max-negative", "PropagationPolicy",
     _set("spec.placement.spreadConstraints", [{"spreadByField": "cluster", "maxGroups": -1}]),
     "spec.placement.spreadConstraints[0]", "maxGroups lower than 0 is not allowed"),
    ("spread-max-below-min", "PropagationPolicy",
     _set("spec.placement.spreadConstraints", [{"spreadByField": "cluster", "minGroups": 3, "maxGroups": 2}]),
     "spec.placement.spreadConstraints[0]", "maxGroups lower than minGroups is not allowed"),
    ("spread-duplicate-field", "PropagationPolicy",
     _set("spec.placement.spreadConstraints", [{"spreadByField": "cluster"}, {"spreadByField": "cluster"}]),
     "spec.placement.spreadConstraints", "multiple cluster spread constraints are not allowed"),
    ("spread-needs-cluster", "PropagationPolicy",
     _set("spec.placement.spreadConstraints", [{"spreadByField": "region", "maxGroups": 2}]),
     "spec.placement.spreadConstraints",
     "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled"),
    ("toleration-operator-Gt", "PropagationPolicy",
     _set("spec.placement.clusterTolerations", [{"key": "a", "operator": "Gt", "value": "1"}]),
     "spec.placement.clusterTolerations[0].operator",
     'Unsupported value: "Gt": supported values: "", "Exists", "Equal"'),
    ("workload-affinity-same-key", "PropagationPolicy",
     _set("spec.placement.workloadAffinity", {"affinity": {"groupByLabelKey": "app"},
                                              "antiAffinity": {"groupByLabelKey": "app"}}),
     "spec.placement.workloadAffinity", "affinity and antiAffinity must not use the same groupByLabelKey"),
    ("workload-affinity-key-invalid", "PropagationPolicy",
     _set("spec.placement.workloadAffinity", {"affinity": {"groupByLabelKey": "a b"}}),
     "spec.placement.workloadAffinity.affinity.groupByLabelKey", "name part must consist of"),
    ("app-failover-needs-propagateDeps", "PropagationPolicy",
     _set("spec.failover", {"application": {"decisionConditions": {}}}),
     "spec.propagateDeps", "application failover is set, propagateDeps must be true"),
    ("toleration-seconds-negative", "PropagationPolicy",
     _all(_set("spec.propagateDeps", True),
          _set("spec.failover", {"application": {"decisionConditions": {"tolerationSeconds": -1}}})),
     "spec.failover.application.decisionConditions.tolerationSeconds", "must be greater than or equal to 0"),
    ("grace-period-with-directly", "PropagationPolicy",
     _all(_set("spec.propagateDeps", True), _set("spec.failover", {"application": {
         "decisionConditions": {}, "purgeMode": "Directly", "gracePeriodSeconds": 30}})),
     "spec.failover.application.gracePeriodSeconds", "only takes effect when purgeMode is gracefully"),
    ("grace-period-zero", "PropagationPolicy",
     _all(_set("spec.propagateDeps", True), _set("spec.failover", {"application": {
         "decisionConditions": {}, "gracePeriodSeconds": 0}})),
     "spec.failover.application.gracePeriodSeconds", "must be greater than 0"),
    ("block-predecessor-negative", "PropagationPolicy",
     _all(_set("spec.propagateDeps", True), _set("spec.failover", {"application": {
         "decisionConditions": {}, "blockPredecessorSeconds": -5}})),
     "spec.failover.application.blockPredecessorSeconds", "must be greater than or equal to 0"),
    ("delay-seconds-negative", "PropagationPolicy",
     _all(_set("spec.propagateDeps", True), _set("spec.failover", {"application": {
         "decisionConditions": {}, "preConditions": {"delaySeconds": -1}}})),
     "spec.failover.application.preConditions.delaySeconds", "must be greater than or equal to 0"),
    ("state-preservation-alias-invalid", "PropagationPolicy",
     _all(_set("spec.propagateDeps", True), _set("spec.failover", {"application": {
         "decisionConditions": {}, "statePreservation": {"rules": [{"aliasLabelName": "a b", "jsonPath": "{.x}"}]}}})),
     "spec.failover.application.statePreservation.rules[0].aliasLabelName", "name part must consist of"),
    ("cluster-grace-with-directly", "PropagationPolicy",
     _set("spec.failover", {"cluster": {"purgeMode": "Directly", "gracePeriodSeconds": 100}}),
     "spec.failover.cluster.gracePeriodSeconds", "only takes effect when purgeMode is gracefully"),
    ("cluster-grace-zero", "PropagationPolicy",
     _set("spec.failover", {"cluster": {"gracePeriodSeconds": 0}}),
     "spec.failover.cluster.gracePeriodSeconds", "must be greater than 0"),
    ("selector-other-namespace", "PropagationPolicy", _set("spec.resourceSelectors.0.namespace", "other"),
     "spec.resourceSelectors[0].namespace",
     "namespace of resource selector must be the same as the namespace of the policy"),
    ("preemption-needs-names", "PropagationPolicy",
     _all(_set("spec.preemption", "Always"), _set("spec.resourceSelectors.0.name", None)),
     "spec.resourceSelectors[0].name", "name cannot be empty if preemption is Always"),
    ("suspension-co-exist", "PropagationPolicy",
     _set("spec.suspension", {"dispatching": True, "dispatchingOnClusters": {"clusterNames": ["member1"]}}),
     "spec.suspension", "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames"),
    ("suspension-co-exist-alias-spelling", "PropagationPolicy",
     _set("spec.suspension", {"suspendDispatching": True,
                              "suspendDispatchingOnClusters": {"clusterNames": ["member1"]}}),
     "spec.suspension", "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames"),
    ("suspension-co-exist-spec-level-spelling", "PropagationPolicy",
     _all(_set("spec.suspendDispatching", True),
          _set("spec.suspendDispatchingOnClusters", {"clusterNames": ["member1"]})),
     "spec.suspension", "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames"),
    ("both-spellings", "PropagationPolicy",
     _set("spec.suspension", {"dispatching": True, "suspendDispatching": True}),
     "spec.suspension.dispatching", '"spec.suspension.dispatching" and "spec.suspension.suspendDispatching"'),
    ("cpp-field-selector", "ClusterPropagationPolicy",
     _set("spec.placement.clusterAffinity.fieldSelector", {"matchExpressions": [{"key": "x", "operator": "In"}]}),
     "spec.placement.clusterAffinity.fieldSelector", 'unsupported key "x"'),
    # --- OverridePolicy -------------------------------------------------------------------------
    ("op-unknown-overrider", "OverridePolicy", _set("spec.overrideRules.0.overriders.envOverrider", []),
     "spec.overrideRules[0].overriders.envOverrider", "unknown field"),
    ("op-overriders-required", "OverridePolicy", _set("spec.overrideRules.0.overriders", None),
     "spec.overrideRules[0].overriders", "Required value"),
    ("op-image-component-enum", "OverridePolicy", _set("spec.overrideRules.0.overriders.imageOverrider.0.component", "Digest"),
     "spec.overrideRules[0].overriders.imageOverrider[0].component",
     'supported values: "Registry", "Repository", "Tag"'),
    ("op-image-operator-required", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.imageOverrider.0.operator", None),
     "spec.overrideRules[0].overriders.imageOverrider[0].operator", "Required value"),
    ("op-image-predicate-pointer", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.imageOverrider.0.predicate", {"path": "spec.template"}),
     "spec.overrideRules[0].overriders.imageOverrider[0].predicate.path",
     'JSON pointer must be empty or start with a "/"'),
    ("op-command-operator-enum", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.commandOverrider", [{"containerName": "c", "operator": "replace"}]),
     "spec.overrideRules[0].overriders.commandOverrider[0].operator", 'supported values: "add", "remove"'),
    ("op-plaintext-path-required", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.plaintext", [{"operator": "add", "value": 1}]),
     "spec.overrideRules[0].overriders.plaintext[0].path", "Required value"),
    ("op-labels-invalid", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.labelsOverrider", [{"operator": "add", "value": {"k": "bad value"}}]),
     "spec.overrideRules[0].overriders.labelsOverrider[0].value", "a valid label must be"),
    ("op-annotations-invalid", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.annotationsOverrider", [{"operator": "add", "value": {"a/b/c": "x"}}]),
     "spec.overrideRules[0].overriders.annotationsOverrider[0].value", "a qualified name must consist of"),
    ("op-field-both-json-yaml", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.fieldOverrider", [{
         "fieldPath": "/data/cfg", "json": [{"subPath": "/a", "operator": "remove"}],
         "yaml": [{"subPath": "/a", "operator": "remove"}]}]),
     "spec.overrideRules[0].overriders.fieldOverrider[0]", "FieldOverrider has both YAML and JSON set. Only one is allowed"),
    ("op-field-neither-json-yaml", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.fieldOverrider", [{"fieldPath": "/data/cfg"}]),
     "spec.overrideRules[0].overriders.fieldOverrider[0]", "FieldOverrider must have either JSON or YAML set"),
    ("op-field-path-pointer", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.fieldOverrider", [{
         "fieldPath": "data.cfg", "yaml": [{"subPath": "/a", "operator": "remove"}]}]),
     "spec.overrideRules[0].overriders.fieldOverrider[0].fieldPath", "JSON pointer must be empty"),
    ("op-field-subpath-pointer", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.fieldOverrider", [{
         "fieldPath": "/data/cfg", "yaml": [{"subPath": "a", "operator": "remove"}]}]),
     "spec.overrideRules[0].overriders.fieldOverrider[0].yaml[0].subPath", "JSON pointer must be empty"),
    ("op-field-add-needs-value", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.fieldOverrider", [{
         "fieldPath": "/data/cfg", "json": [{"subPath": "/a", "operator": "add"}]}]),
     "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value",
     "value is required for add or replace operation"),
    ("op-field-remove-no-value", "OverridePolicy",
     _set("spec.overrideRules.0.overriders.fieldOverrider", [{
         "fieldPath": "/data/cfg", "json": [{"subPath": "/a", "operator": "remove", "value": 1}]}]),
     "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value", "value is not allowed for remove operation"),
    ("op-rules-and-targetCluster", "OverridePolicy", _set("spec.targetCluster", {"clusterNames": ["member1"]}),
     "spec.targetCluster", "overrideRules and targetCluster can't co-exist"),
    ("op-rules-and-overriders", "OverridePolicy",
     _set("spec.overriders", {"plaintext": [{"path": "/a", "operator": "remove"}]}),
     "spec.overriders", "overrideRules and overriders can't co-exist"),
    ("op-target-field-selector", "OverridePolicy",
     _set("spec.overrideRules.0.targetCluster.fieldSelector", {"matchExpressions": [
         {"key": "zone", "operator": "Gt", "values": ["1"]}]}),
     "spec.overrideRules[0].targetCluster.fieldSelector", 'unsupported operator "Gt"'),
    ("op-selector-other-namespace", "OverridePolicy", _set("spec.resourceSelectors.0.namespace", "kube-system"),
     "spec.resourceSelectors[0].namespace", "namespace of resource selector must be the same"),
    ("cop-plaintext-operator-enum", "ClusterOverridePolicy",
     _set("spec.overrideRules.0.overriders.plaintext", [{"path": "/a", "operator": "move"}]),
     "spec.overrideRules[0].overriders.plaintext[0].operator", 'supported values: "add", "remove", "replace"'),
    # --- Cluster --------------------------------------------------------------------------------
    ("cluster-syncMode-required", "Cluster", _set("spec.syncMode", None), "spec.syncMode", "Required value"),
    ("cluster-syncMode-enum", "Cluster", _set("spec.syncMode", "Poll"), "spec.syncMode",
     'Unsupported value: "Poll": supported values: "Pull", "Push"'),
    ("cluster-endpoint-no-host", "Cluster", _set("spec.apiEndpoint", "member1:6443"), "spec.apiEndpoint",
     "host must be provided"),
    ("cluster-endpoint-user-info", "Cluster", _set("spec.apiEndpoint", "https://u:p@host:6443"), "spec.apiEndpoint",
     "user information is not permitted in the URL"),
    ("cluster-endpoint-query", "Cluster", _set("spec.apiEndpoint", "https://host:6443?x=1"), "spec.apiEndpoint",
     "query parameters are not permitted in the URL"),
    ("cluster-endpoint-fragment", "Cluster", _set("spec.apiEndpoint", "https://host:6443#x"), "spec.apiEndpoint",
     "fragments are not permitted in the URL"),
    ("cluster-secretRef-name", "Cluster", _set("spec.secretRef.name", None), "spec.secretRef.name", "Required value"),
    ("cluster-proxy-scheme", "Cluster", _set("spec.proxyURL", "ftp://proxy"), "spec.proxyURL",
     'unsupported scheme "ftp", must be http, https, or socks5'),
    ("cluster-region-label-value", "Cluster", _set("spec.region", "us east"), "spec.region", "a valid label must be"),
    ("cluster-zone-and-zones", "Cluster", _set("spec.zone", "z1"), "spec.zone", "Zone and Zones cannot co-exist"),
    ("cluster-zones-label-value", "Cluster", _set("spec.zones", ["ok", "not ok"]), "spec.zones[1]",
     "a valid label must be"),
    ("cluster-taint-effect-enum", "Cluster", _set("spec.taints.0.effect", "PreferNoSchedule"), "spec.taints[0].effect",
     'Unsupported value: "PreferNoSchedule": supported values: "NoSchedule", "NoExecute"'),
    ("cluster-taint-effect-required", "Cluster", _set("spec.taints.0.effect", None), "spec.taints[0].effect",
     "Required value"),
    ("cluster-taint-key-invalid", "Cluster", _set("spec.taints.0.key", "bad key"), "spec.taints[0].key",
     "name part must consist of"),
    ("cluster-taint-duplicate", "Cluster",
     _set("spec.taints", [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule", "value": "x"}]),
     "spec.taints[1]", "taints must be unique by key and effect pair"),
    ("cluster-unknown-field", "Cluster", _set("spec.kubeconfig", "/x"), "spec.kubeconfig", "unknown field"),
    ("cluster-models-duplicate-grade", "Cluster", _set("spec.resourceModels", [
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]},
        {"grade": 0, "ranges": [{"name": "cpu", "min": "1", "max": "2"}]}]),
     "spec.resourceModels", "The grade of each models should not be the same"),
    ("cluster-models-gap", "Cluster", _set("spec.resourceModels", [
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "2", "max": "4"}]}]),
     "spec.resourceModels", "Model intervals for resources must be contiguous and non-overlapping"),
    ("cluster-models-resource-names", "Cluster", _set("spec.resourceModels", [
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]},
        {"grade": 1, "ranges": [{"name": "memory", "min": "1", "max": "4"}]}]),
     "spec.resourceModels", "The resource types of each models should be the same"),
    ("cluster-models-max-not-above-min", "Cluster", _set("spec.resourceModels", [
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "1", "max": "1"}]},
        {"grade": 2, "ranges": [{"name": "cpu", "min": "1", "max": "8"}]}]),
     "spec.resourceModels", "The max value of each resource must be greater than the min value"),
    ("cluster-models-bad-quantity", "Cluster", _set("spec.resourceModels", [
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "lots", "max": "2"}]}]),
     "spec.resourceModels[1].ranges[0].min", "should match"),
    # --- bindings -------------------------------------------------------------------------------
    ("rb-resource-required", "ResourceBinding", _set("spec.resource", None), "spec.resource", "Required value"),
    ("rb-resource-name-required", "ResourceBinding", _set("spec.resource.name", None), "spec.resource.name",
     "Required value"),
    ("rb-cluster-name-required", "ResourceBinding", _set("spec.clusters.0.name", None), "spec.clusters[0].name",
     "Required value"),
    ("rb-eviction-reason-pattern", "ResourceBinding", _set("spec.gracefulEvictionTasks.0.reason", "taint untolerated"),
     "spec.gracefulEvictionTasks[0].reason", "should match"),
    ("rb-eviction-reason-length", "ResourceBinding", _set("spec.gracefulEvictionTasks.0.reason", "A" * 33),
     "spec.gracefulEvictionTasks[0].reason", "Too long: may not be more than 32 bytes"),
    ("rb-eviction-message-length", "ResourceBinding", _set("spec.gracefulEvictionTasks.0.message", "m" * 1025),
     "spec.gracefulEvictionTasks[0].message", "Too long: may not be more than 1024 bytes"),
    ("rb-eviction-producer-required", "ResourceBinding", _set("spec.gracefulEvictionTasks.0.producer", None),
     "spec.gracefulEvictionTasks[0].producer", "Required value"),
    ("rb-eviction-purgeMode-enum", "ResourceBinding", _set("spec.gracefulEvictionTasks.0.purgeMode", "Soon"),
     "spec.gracefulEvictionTasks[0].purgeMode", "Unsupported value"),
    ("rb-dependencies-annotation", "ResourceBinding",
     _set("metadata.annotations", {"resourcebinding.karmada.io/dependencies": "[{broken"}),
     "metadata.annotations[resourcebinding.karmada.io/dependencies]", "annotation value must be a valid JSON"),
    ("rb-component-name-length", "ResourceBinding", _set("spec.components", [{"name": "c" * 33, "replicas": 1}]),
     "spec.components[0].name", "Too long"),
    ("rb-resource-request-quantity", "ResourceBinding",
     _set("spec.replicaRequirements", {"resourceRequest": {"cpu": "one"}}),
     "spec.replicaRequirements.resourceRequest[cpu]", "should match"),
    ("crb-suspension-co-exist", "ClusterResourceBinding",
     _set("spec.suspension", {"dispatching": True, "dispatchingOnClusters": {"clusterNames": ["m1"]}}),
     "spec.suspension", "suspension dispatching cannot co-exist"),
    # --- Work -----------------------------------------------------------------------------------
    ("work-suspendDispatching-type", "Work", _set("spec.suspendDispatching", "true"), "spec.suspendDispatching",
     "must be of type boolean"),
    ("work-preserve-type", "Work", _set("spec.preserveResourcesOnDeletion", 1), "spec.preserveResourcesOnDeletion",
     "must be of type boolean"),
    ("work-manifests-type", "Work", _set("spec.workload.manifests", {"a": 1}), "spec.workload.manifests",
     "must be of type array"),
    ("work-manifest-not-object", "Work", _set("spec.workload.manifests", ["text"]), "spec.workload.manifests[0]",
     "must be of type object"),
    # --- Remedy ---------------------------------------------------------------------------------
    ("remedy-operator-enum", "Remedy", _set("spec.decisionMatches.0.clusterConditionMatch.operator", "In"),
     "spec.decisionMatches[0].clusterConditionMatch.operator", 'supported values: "Equal", "NotEqual"'),
    ("remedy-conditionType-required", "Remedy", _set("spec.decisionMatches.0.clusterConditionMatch.conditionType", None),
     "spec.decisionMatches[0].clusterConditionMatch.conditionType", "Required value"),
    ("remedy-conditionStatus-required", "Remedy",
     _set("spec.decisionMatches.0.clusterConditionMatch.conditionStatus", None),
     "spec.decisionMatches[0].clusterConditionMatch.conditionStatus", "Required value"),
    ("remedy-action-enum", "Remedy", _set("spec.actions", ["Reboot"]), "spec.actions[0]",
     'Unsupported value: "Reboot": supported values: "TrafficControl"'),
    ("remedy-affinity-only-names", "Remedy", _set("spec.clusterAffinity.labelSelector", {}),
     "spec.clusterAffinity.labelSelector", "unknown field"),
    # --- MultiClusterIngress --------------------------------------------------------------------
    ("mci-no-rules-or-backend", "MultiClusterIngress", _set("spec.rules", None), "spec",
     "either `defaultBackend` or `rules` must be specified"),
    ("mci-service-name-required", "MultiClusterIngress", _set("spec.rules.0.http.paths.0.backend.service.name", None),
     "spec.rules[0].http.paths[0].backend.service.name", "Required value"),
    ("mci-port-required", "MultiClusterIngress", _set("spec.rules.0.http.paths.0.backend.service.port", None),
     "spec.rules[0].http.paths[0].backend", "port name or number is required"),
    ("mci-port-name-and-number", "MultiClusterIngress",
     _set("spec.rules.0.http.paths.0.backend.service.port", {"name": "http", "number": 80}),
     "spec.rules[0].http.paths[0].backend", "cannot set both port name & port number"),
    ("mci-port-range", "MultiClusterIngress", _set("spec.rules.0.http.paths.0.backend.service.port.number", 70000),
     "spec.rules[0].http.paths[0].backend.service.port.number", "must be between 1 and 65535"),
    ("mci-backend-empty", "MultiClusterIngress", _set("spec.rules.0.http.paths.0.backend", {}),
     "spec.rules[0].http.paths[0].backend", "resource or service backend is required"),
    ("mci-pathType-required", "MultiClusterIngress", _set("spec.rules.0.http.paths.0.pathType", None),
     "spec.rules[0].http.paths[0].pathType", "Required value"),
    ("mci-pathType-enum", "MultiClusterIngress", _set("spec.rules.0.http.paths.0.pathType", "Regex"),
     "spec.rules[0].http.paths[0].pathType", "Unsupported value"),
    ("mci-path-absolute", "MultiClusterIngress", _set("spec.rules.0.http.paths.0.path", "web"),
     "spec.rules[0].http.paths[0].path", "must be an absolute path"),
    ("mci-host-ip", "MultiClusterIngress", _set("spec.rules.0.host", "10.0.0.1"), "spec.rules[0].host",
     "must be a DNS name, not an IP address"),
    ("mci-unknown-field", "MultiClusterIngress", _set("spec.backend", {}), "spec.backend", "unknown field"),
    # --- ClusterTaintPolicy ---------------------------------------------------------------------
    ("ctp-taints-min-items", "ClusterTaintPolicy", _set("spec.taints", []), "spec.taints",
     "should have at least 1 items"),
    ("ctp-taint-effect-required", "ClusterTaintPolicy", _set("spec.taints.0.effect", None), "spec.taints[0].effect",
     "Required value"),
    ("ctp-taint-duplicate", "ClusterTaintPolicy",
     _set("spec.taints", [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule"}]),
     "spec.taints[0]", "Duplicate taint with the same key(k) and effect(NoSchedule) is not allowed"),
    ("ctp-condition-operator-enum", "ClusterTaintPolicy", _set("spec.addOnConditions.0.operator", "Equal"),
     "spec.addOnConditions[0].operator", 'supported values: "In", "NotIn"'),
    ("ctp-statusValues-required", "ClusterTaintPolicy", _set("spec.removeOnConditions.0.statusValues", None),
     "spec.removeOnConditions[0].statusValues", "Required value"),
]


@pytest.mark.parametrize("kind,mutate,path,message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_fails(kind, mutate, path, message):
    obj = sample(kind)
    mutate(obj)
    errs = validate_object(obj, REG)
    assert any(e.path == path and message in e.message for e in errs), "\n".join(map(str, errs))


def test_case_ids_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


def test_no_execute_taint_policy_allowed():
    """karmactl runs cluster failover by default, so NoExecute ClusterTaintPolicies are accepted."""
    obj = sample("ClusterTaintPolicy")
    assert any(t["effect"] == "NoExecute" for t in obj["spec"]["taints"])
    assert validate_object(obj, REG) == []


def test_free_form_payloads_not_inspected():
    op = sample("OverridePolicy")
    op["spec"]["overrideRules"][0]["overriders"]["plaintext"] = [
        {"path": "/spec/x", "operator": "add", "value": {"anything": {"nested": [1, {"k": None}]}}}]
    work = sample("Work")
    work["spec"]["workload"]["manifests"][0]["unknownTopLevel"] = 1
    pp = sample("PropagationPolicy")
    pp["status"] = {"whatever": True}
    for obj in (op, work, pp):
        assert validate_object(obj, REG) == []


def test_unknown_kind_gets_generic_checks_only():
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "x"},
           "spec": {"anything": 1}}
    assert validate_object(obj, REG) == []
    obj["metadata"]["name"] = "Not_Valid"
    assert [e.path for e in validate_object(obj, REG)] == ["metadata.name"]


def test_wrong_types_do_not_crash():
    for kind in ALL:
        for junk in ([], "x", 3, {"a": [None]}):
            obj = sample(kind)
            obj["spec"] = junk
            validate_object(obj, REG)
            obj = sample(kind)
            for k in list(obj.get("spec", {})):
                obj["spec"][k] = junk
            validate_object(obj, REG)
    assert validate_object("not a dict", REG)[0].path == ""


def test_field_error_str():
    assert str(FieldError("spec.x", "Required value")) == "spec.x: Required value"


def test_errors_unique_and_stable():
    obj = sample("PropagationPolicy")
    obj["spec"]["foo"] = 1
    obj["spec"]["placement"]["clusterAffinities"] = [{"affinityName": "a"}, {"affinityName": "a"},
                                                     {"affinityName": "a"}]
    first, second = validate_object(obj, REG), validate_object(obj, REG)
    assert first == second
    assert len(first) == len(set(first))
