"""The openAPIV3Schema checks of Karmada's CRDs, as a small declarative schema per kind.

Each schema mirrors one CRD under ``charts/karmada/_crds/bases/**`` (and, for Cluster, which is
served by the aggregated API server, ``api/openapi-spec/swagger.json``): property names, ``required``,
types, enums, ``minimum``, ``minItems``, ``minLength``/``maxLength`` and ``pattern``. Fields only
the design documents propose (``docs/proposals``) are added where karmactl implements them
(DESIGN §3.2). Objects are strict: a property the schema does not know is reported as
``unknown field "<path>"`` (kubectl's strict field validation), except where the CRD says
``x-kubernetes-preserve-unknown-fields`` (:class:`Any`).

A YAML ``null`` counts as absent, as the API server prunes nulls of non-nullable fields.
"""
from __future__ import annotations

import math

import re2

from karmactl.api.objects import time_error
from karmactl.api.validation_fields import (
    FieldError, child, index, invalid, key, not_supported, required, too_long, unknown_field, wrong_type,
)


class Schema:
    """A node of the schema tree; :meth:`check` appends the errors of ``value`` at ``path``."""

    def check(self, value, path: str, errs: list[FieldError]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class Any(Schema):
    """``x-kubernetes-preserve-unknown-fields``: free-form payload, never inspected."""

    def check(self, value, path, errs):
        return


class Str(Schema):
    def __init__(self, enum=None, min_len=None, max_len=None, pattern=None):
        self.enum = tuple(enum) if enum else None
        self.min_len, self.max_len = min_len, max_len
        self.pattern = re2.compile(pattern) if pattern else None  # RE2: linear in the value

    def check(self, value, path, errs):
        if not isinstance(value, str):
            errs.append(wrong_type(path, value, "string"))
            return
        if self.enum and value not in self.enum:
            errs.append(not_supported(path, value, self.enum))
        if self.min_len is not None and len(value) < self.min_len:
            errs.append(invalid(path, value, f"should be at least {self.min_len} chars long"))
        if self.max_len is not None and len(value) > self.max_len:
            errs.append(too_long(path, self.max_len))
        if self.pattern is not None and not self.pattern.search(value):
            errs.append(invalid(path, value, f"should match '{self.pattern.pattern}'"))


class Time(Schema):
    """A ``metav1.Time`` karmactl computes with: an RFC 3339 string within the accepted range
    (:func:`karmactl.api.objects.time_error`: ``0001-01-01T00:00:00Z`` and ``9999-12-31T23:59:59Z``
    are refused, as a run could not add durations to them)."""

    def check(self, value, path, errs):
        if not isinstance(value, str):
            errs.append(wrong_type(path, value, "string"))
            return
        problem = time_error(value)
        if problem is not None:
            errs.append(invalid(path, value, problem))


INT32_MAX = 2 ** 31 - 1


class Int(Schema):
    """An integer; ``maximum`` e.g. :data:`INT32_MAX` for Karmada's ``format: int32`` replica counts."""

    def __init__(self, minimum=None, maximum=None):
        self.minimum = minimum
        self.maximum = maximum

    def check(self, value, path, errs):
        # YAML booleans are ints in Python; the API server does not accept them as integers.
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                errs.append(wrong_type(path, value, "integer"))
                return
        if self.minimum is not None and value < self.minimum:
            errs.append(invalid(path, value, f"should be greater than or equal to {self.minimum}"))
        if self.maximum is not None and value > self.maximum:
            errs.append(invalid(path, value, f"should be less than or equal to {self.maximum}"))


class Bool(Schema):
    def check(self, value, path, errs):
        if not isinstance(value, bool):
            errs.append(wrong_type(path, value, "boolean"))


class IntOrStr(Schema):
    """``x-kubernetes-int-or-string`` (quantities, ports), with an optional pattern for strings."""

    def __init__(self, pattern=None):
        self.pattern = re2.compile(pattern) if pattern else None  # RE2: linear in the value

    def check(self, value, path, errs):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            errs.append(wrong_type(path, value, "integer or string"))
        elif isinstance(value, float) and not math.isfinite(value):
            errs.append(invalid(path, value, "must be a finite number"))
        elif isinstance(value, str) and self.pattern is not None and not self.pattern.search(value):
            errs.append(invalid(path, value, f"should match '{self.pattern.pattern}'"))


class Arr(Schema):
    def __init__(self, items: Schema, min_items=None):
        self.items, self.min_items = items, min_items

    def check(self, value, path, errs):
        if not isinstance(value, list):
            errs.append(wrong_type(path, value, "array"))
            return
        if self.min_items is not None and len(value) < self.min_items:
            errs.append(invalid(path, value, f"should have at least {self.min_items} items"))
        for i, item in enumerate(value):
            if item is None:
                errs.append(wrong_type(index(path, i), item, "non-null"))
                continue
            self.items.check(item, index(path, i), errs)


class Map(Schema):
    """An object with free keys (``additionalProperties``) whose values follow one schema."""

    def __init__(self, values: Schema):
        self.values = values

    def check(self, value, path, errs):
        if not isinstance(value, dict):
            errs.append(wrong_type(path, value, "object"))
            return
        for k, v in value.items():
            if v is None:
                continue
            self.values.check(v, key(path, k), errs)


class Obj(Schema):
    """An object with known properties; unknown ones are errors unless ``open``."""

    def __init__(self, props: dict[str, Schema], required_: tuple[str, ...] = (), open_: bool = False):
        self.props, self.required, self.open = props, tuple(required_), open_

    def extend(self, props: dict[str, Schema] | None = None, required_: tuple[str, ...] = ()) -> "Obj":
        return Obj({**self.props, **(props or {})}, self.required + tuple(required_), self.open)

    def check(self, value, path, errs):
        if not isinstance(value, dict):
            errs.append(wrong_type(path, value, "object"))
            return
        for name in self.required:
            if value.get(name) is None:
                errs.append(required(child(path, name)))
        for name, v in value.items():
            sub = self.props.get(name)
            if sub is None:
                if not self.open:
                    errs.append(unknown_field(child(path, str(name))))
                continue
            if v is None:
                continue
            sub.check(v, child(path, name), errs)


# --- shared pieces ----------------------------------------------------------------------------

STRINGS = Arr(Str())
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
QUANTITY = IntOrStr(QUANTITY_PATTERN)
REQUIREMENT = Obj({"key": Str(), "operator": Str(), "values": STRINGS}, ("key", "operator"))
LABEL_SELECTOR = Obj({"matchLabels": Map(Str()), "matchExpressions": Arr(REQUIREMENT)})
FIELD_SELECTOR = Obj({"matchExpressions": Arr(REQUIREMENT)})
CLUSTER_AFFINITY_PROPS = {
    "labelSelector": LABEL_SELECTOR,
    "fieldSelector": FIELD_SELECTOR,
    "clusterNames": STRINGS,
    "exclude": STRINGS,
}
CLUSTER_AFFINITY = Obj(CLUSTER_AFFINITY_PROPS)
TOLERATION = Obj({"key": Str(), "operator": Str(), "value": Str(), "effect": Str(), "tolerationSeconds": Int()})
RESOURCE_SELECTOR = Obj({"apiVersion": Str(), "kind": Str(), "namespace": Str(), "name": Str(),
                         "labelSelector": LABEL_SELECTOR}, ("apiVersion", "kind"))

PURGE_MODES_APPLICATION = ("Directly", "Gracefully", "Never")
# Never for cluster failover: proposal configurable-cluster-failover.md (Karmada's CRD has only the two)
PURGE_MODES_CLUSTER = ("Directly", "Gracefully", "Never")
STATE_PRESERVATION = Obj({"rules": Arr(Obj({"aliasLabelName": Str(), "jsonPath": Str()},
                                           ("aliasLabelName", "jsonPath")))}, ("rules",))
FAILOVER = Obj({
    "application": Obj({
        # Proposal application-failover.md: preConditions and blockPredecessorSeconds.
        "preConditions": Obj({"delaySeconds": Int(), "healthyState": Str(enum=("Healthy",))}),
        "decisionConditions": Obj({"tolerationSeconds": Int()}),
        "purgeMode": Str(enum=PURGE_MODES_APPLICATION),
        "gracePeriodSeconds": Int(),
        "blockPredecessorSeconds": Int(),
        "statePreservation": STATE_PRESERVATION,
    }, ("decisionConditions",)),
    "cluster": Obj({
        "purgeMode": Str(enum=PURGE_MODES_CLUSTER),
        # Proposal configurable-cluster-failover.md.
        "gracePeriodSeconds": Int(),
        "statePreservation": STATE_PRESERVATION,
    }),
})
SUSPENSION = Obj({"dispatching": Bool(), "dispatchingOnClusters": Obj({"clusterNames": STRINGS})})

AFFINITY_NAME = Str(min_len=1, max_len=32)
PLACEMENT = Obj({
    "clusterAffinity": CLUSTER_AFFINITY,
    "clusterAffinities": Arr(Obj({
        **CLUSTER_AFFINITY_PROPS,
        "affinityName": AFFINITY_NAME,
        "overflowAffinities": Arr(Obj({**CLUSTER_AFFINITY_PROPS, "affinityName": AFFINITY_NAME},
                                      ("affinityName",))),
    }, ("affinityName",))),
    "clusterTolerations": Arr(TOLERATION),
    "spreadConstraints": Arr(Obj({
        "spreadByField": Str(enum=("cluster", "region", "zone", "provider")),
        "spreadByLabel": Str(),
        "maxGroups": Int(),
        "minGroups": Int(),
    })),
    "replicaScheduling": Obj({
        "replicaSchedulingType": Str(enum=("Duplicated", "Divided")),
        "replicaDivisionPreference": Str(enum=("Aggregated", "Weighted")),
        "weightPreference": Obj({
            "staticWeightList": Arr(Obj({"targetCluster": CLUSTER_AFFINITY, "weight": Int(minimum=1)},
                                        ("targetCluster", "weight"))),
            "dynamicWeight": Str(enum=("AvailableReplicas",)),
        }),
    }),
    "workloadAffinity": Obj({
        "affinity": Obj({"groupByLabelKey": Str()}, ("groupByLabelKey",)),
        "antiAffinity": Obj({"groupByLabelKey": Str()}, ("groupByLabelKey",)),
    }),
})

# --- PropagationPolicy / ClusterPropagationPolicy ---------------------------------------------

PROPAGATION_SPEC = Obj({
    "resourceSelectors": Arr(RESOURCE_SELECTOR, min_items=1),
    "association": Bool(),
    "propagateDeps": Bool(),
    "placement": PLACEMENT,
    "priority": Int(),
    "preemption": Str(enum=("Always", "Never")),
    "dependentOverrides": STRINGS,
    "schedulerName": Str(),
    "failover": FAILOVER,
    "conflictResolution": Str(enum=("Abort", "Overwrite")),
    "activationPreference": Str(enum=("Lazy",)),
    "suspension": SUSPENSION,
    "preserveResourcesOnDeletion": Bool(),
    "schedulePriority": Obj({"priorityClassSource": Str(enum=("KubePriorityClass",)),
                             "priorityClassName": Str()}, ("priorityClassName", "priorityClassSource")),
}, ("resourceSelectors",))

# --- OverridePolicy / ClusterOverridePolicy ---------------------------------------------------

OVERRIDE_OPS = ("add", "remove", "replace")
_PATCH_OP = Obj({"subPath": Str(), "operator": Str(enum=OVERRIDE_OPS), "value": Any()}, ("subPath", "operator"))
OVERRIDERS = Obj({
    "plaintext": Arr(Obj({"path": Str(), "operator": Str(enum=OVERRIDE_OPS), "value": Any()},
                         ("path", "operator"))),
    "imageOverrider": Arr(Obj({
        "predicate": Obj({"path": Str()}, ("path",)),
        "component": Str(enum=("Registry", "Repository", "Tag")),
        "operator": Str(enum=OVERRIDE_OPS),
        "value": Str(),
    }, ("component", "operator"))),
    "commandOverrider": Arr(Obj({"containerName": Str(), "operator": Str(enum=("add", "remove")),
                                 "value": STRINGS}, ("containerName", "operator"))),
    "argsOverrider": Arr(Obj({"containerName": Str(), "operator": Str(enum=("add", "remove")),
                              "value": STRINGS}, ("containerName", "operator"))),
    "labelsOverrider": Arr(Obj({"operator": Str(enum=OVERRIDE_OPS), "value": Map(Str())}, ("operator", "value"))),
    "annotationsOverrider": Arr(Obj({"operator": Str(enum=OVERRIDE_OPS), "value": Map(Str())},
                                    ("operator", "value"))),
    "fieldOverrider": Arr(Obj({"fieldPath": Str(), "json": Arr(_PATCH_OP), "yaml": Arr(_PATCH_OP)},
                              ("fieldPath",))),
})
OVERRIDE_SPEC = Obj({
    "resourceSelectors": Arr(RESOURCE_SELECTOR),
    "overrideRules": Arr(Obj({"targetCluster": CLUSTER_AFFINITY, "overriders": OVERRIDERS}, ("overriders",))),
    "targetCluster": CLUSTER_AFFINITY,
    "overriders": OVERRIDERS,
})

# --- ResourceBinding / ClusterResourceBinding (v1alpha2; v1alpha1 is read the same way) -----

_TARGET_CLUSTER = Obj({
    "name": Str(),
    "replicas": Int(maximum=INT32_MAX),
    "components": Arr(Obj({"name": Str(), "replicas": Int(maximum=INT32_MAX)}, ("name", "replicas"))),
}, ("name",))
_NODE_SELECTOR_REQ = Obj({"key": Str(), "operator": Str(), "values": STRINGS}, ("key", "operator"))
_REPLICA_REQUIREMENTS = Obj({
    "nodeClaim": Obj({
        "hardNodeAffinity": Obj({"nodeSelectorTerms": Arr(Obj({
            "matchExpressions": Arr(_NODE_SELECTOR_REQ), "matchFields": Arr(_NODE_SELECTOR_REQ)}))},
            ("nodeSelectorTerms",)),
        "nodeSelector": Map(Str()),
        "tolerations": Arr(TOLERATION),
    }),
    "resourceRequest": Map(QUANTITY),
    "namespace": Str(),
    "priorityClassName": Str(),
})
EVICTION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
BINDING_SPEC = Obj({
    "resource": Obj({"apiVersion": Str(), "kind": Str(), "namespace": Str(), "name": Str(), "uid": Str(),
                     "resourceVersion": Str()}, ("apiVersion", "kind", "name")),
    "propagateDeps": Bool(),
    "replicaRequirements": _REPLICA_REQUIREMENTS,
    "replicas": Int(maximum=INT32_MAX),
    "components": Arr(Obj({"name": Str(max_len=32), "replicas": Int(maximum=INT32_MAX),
                           "replicaRequirements": _REPLICA_REQUIREMENTS}, ("name", "replicas"))),
    "clusters": Arr(_TARGET_CLUSTER),
    "placement": PLACEMENT,
    "gracefulEvictionTasks": Arr(Obj({
        "fromCluster": Str(),
        "purgeMode": Str(enum=PURGE_MODES_APPLICATION),
        "replicas": Int(maximum=INT32_MAX),
        "reason": Str(min_len=1, max_len=32, pattern=EVICTION_REASON_PATTERN),
        "message": Str(max_len=1024),
        "producer": Str(),
        "gracePeriodSeconds": Int(),
        "suppressDeletion": Bool(),
        "preservedLabelState": Map(Str()),
        "creationTimestamp": Time(),
        "clustersBeforeFailover": STRINGS,
    }, ("fromCluster", "reason", "producer"))),
    "requiredBy": Arr(Obj({"namespace": Str(), "name": Str(), "clusters": Arr(_TARGET_CLUSTER)}, ("name",))),
    "schedulerName": Str(),
    "failover": FAILOVER,
    "conflictResolution": Str(enum=("Abort", "Overwrite")),
    "rescheduleTriggeredAt": Time(),
    "suspension": SUSPENSION.extend({"scheduling": Bool()}),
    "preserveResourcesOnDeletion": Bool(),
    "schedulePriority": Obj({"priority": Int()}),
    "workloadAffinityGroups": Obj({"affinityGroup": Str(), "antiAffinityGroup": Str()}),
    # Proposal application-failover.md: clusters recently evicted, blocked for blockPredecessorSeconds.
    "activeEvictionHistory": Arr(Obj({"clusterName": Str(), "creationTimestamp": Time()}, ("clusterName",))),
}, ("resource",))

# --- Work -------------------------------------------------------------------------------------

WORK_SPEC = Obj({
    "workload": Obj({"manifests": Arr(Any())}),
    "suspendDispatching": Bool(),
    "preserveResourcesOnDeletion": Bool(),
})

# --- Remedy -----------------------------------------------------------------------------------

REMEDY_SPEC = Obj({
    "clusterAffinity": Obj({"clusterNames": STRINGS}),
    "decisionMatches": Arr(Obj({"clusterConditionMatch": Obj({
        "conditionType": Str(),
        "operator": Str(enum=("Equal", "NotEqual")),
        "conditionStatus": Str(),
    }, ("conditionType", "operator", "conditionStatus"))})),
    "actions": Arr(Str(enum=("TrafficControl",))),
})

# --- ClusterTaintPolicy -----------------------------------------------------------------------

_MATCH_CONDITION = Obj({"conditionType": Str(), "operator": Str(enum=("In", "NotIn")), "statusValues": STRINGS},
                       ("conditionType", "operator", "statusValues"))
CLUSTER_TAINT_POLICY_SPEC = Obj({
    "targetClusters": CLUSTER_AFFINITY,
    "addOnConditions": Arr(_MATCH_CONDITION),
    "removeOnConditions": Arr(_MATCH_CONDITION),
    "taints": Arr(Obj({"key": Str(), "effect": Str(), "value": Str()}, ("key", "effect")), min_items=1),
}, ("taints",))

# --- MultiClusterIngress (spec = networking.k8s.io/v1 IngressSpec) --------------------------

_BACKEND = Obj({
    "service": Obj({"name": Str(), "port": Obj({"name": Str(), "number": Int()})}, ("name",)),
    "resource": Obj({"apiGroup": Str(), "kind": Str(), "name": Str()}, ("kind", "name")),
})
INGRESS_SPEC = Obj({
    "ingressClassName": Str(),
    "defaultBackend": _BACKEND,
    "tls": Arr(Obj({"hosts": STRINGS, "secretName": Str()})),
    "rules": Arr(Obj({
        "host": Str(),
        "http": Obj({"paths": Arr(Obj({"path": Str(), "pathType": Str(), "backend": _BACKEND},
                                      ("pathType", "backend")))}, ("paths",)),
    })),
})

# --- Cluster (aggregated API server, swagger definitions) -------------------------------------

_SECRET_REF = Obj({"namespace": Str(), "name": Str()})
CLUSTER_SPEC = Obj({
    "id": Str(),
    "syncMode": Str(),  # required and enum are checked by the Cluster rules with their own messages
    "apiEndpoint": Str(),
    "secretRef": _SECRET_REF,
    "impersonatorSecretRef": _SECRET_REF,
    "insecureSkipTLSVerification": Bool(),
    "proxyURL": Str(),
    "proxyHeader": Map(Str()),
    "provider": Str(),
    "region": Str(),
    "zone": Str(),
    "zones": STRINGS,
    "taints": Arr(Obj({"key": Str(), "value": Str(), "effect": Str(), "timeAdded": Time()})),
    "resourceModels": Arr(Obj({
        "grade": Int(minimum=0),
        "ranges": Arr(Obj({"name": Str(), "min": QUANTITY, "max": QUANTITY}, ("name", "min", "max"))),
    }, ("grade", "ranges"))),
})

# ClusterStatus (cluster/v1alpha1/types.go): people write it in a Cluster's file as a member's
# report for offline runs, so every field karmactl reads is checked like spec (types, enums,
# ranges, times, quantities); metav1.Condition's own CRD rules for type/status/reason/message.
CONDITION_TYPE_PATTERN = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                          r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
CONDITION = Obj({
    "type": Str(min_len=1, max_len=316, pattern=CONDITION_TYPE_PATTERN),
    "status": Str(enum=("True", "False", "Unknown")),
    "observedGeneration": Int(minimum=0),
    "lastTransitionTime": Time(),
    "reason": Str(max_len=1024, pattern=r"^([A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?)?$"),
    "message": Str(max_len=32768),
}, ("type",))
_RESOURCE_QUANTITIES = Map(QUANTITY)
CLUSTER_STATUS = Obj({
    "kubernetesVersion": Str(),
    "apiEnablements": Arr(Obj({
        "groupVersion": Str(min_len=1),
        "resources": Arr(Obj({"name": Str(min_len=1), "kind": Str(min_len=1)}, ("name", "kind"))),
    }, ("groupVersion",))),
    "conditions": Arr(CONDITION),
    "nodeSummary": Obj({"totalNum": Int(minimum=0, maximum=INT32_MAX), "readyNum": Int(minimum=0, maximum=INT32_MAX)}),
    "resourceSummary": Obj({
        "allocatable": _RESOURCE_QUANTITIES,
        "allocating": _RESOURCE_QUANTITIES,
        "allocated": _RESOURCE_QUANTITIES,
        "allocatableModelings": Arr(Obj({"grade": Int(minimum=0, maximum=INT32_MAX),
                                         "count": Int(minimum=0, maximum=INT32_MAX)}, ("grade", "count"))),
    }),
    "remedyActions": STRINGS,
})

# --- ResourceInterpreterCustomization -----------------------------------------------------------

_LUA = Obj({"luaScript": Str()}, ("luaScript",))
CUSTOMIZATION_SPEC = Obj({
    "target": Obj({"apiVersion": Str(), "kind": Str()}, ("apiVersion", "kind")),
    "customizations": Obj({name: _LUA for name in (
        "retention", "replicaResource", "replicaRevision", "statusReflection", "statusAggregation",
        "healthInterpretation", "dependencyInterpretation", "componentResource")}),
}, ("customizations", "target"))

# --- WorkloadRebalancer (apps.karmada.io) -----------------------------------------------------

WORKLOAD_REBALANCER_SPEC = Obj({
    "workloads": Arr(Obj({"apiVersion": Str(), "kind": Str(), "name": Str(), "namespace": Str()},
                         ("apiVersion", "kind", "name")), min_items=1),
    "ttlSecondsAfterFinished": Int(minimum=0),
}, ("workloads",))

# --- MultiClusterService (networking.karmada.io, service_types.go) ------------------------------

_CLUSTER_SELECTOR = Obj({"name": Str()}, ("name",))
MULTICLUSTER_SERVICE_SPEC = Obj({
    "types": STRINGS,
    "ports": Arr(Obj({"name": Str(), "port": Int()}, ("port",))),
    "range": Obj({"clusterNames": STRINGS}),
    "serviceProvisionClusters": STRINGS,
    "serviceConsumptionClusters": STRINGS,
    "providerClusters": Arr(_CLUSTER_SELECTOR),
    "consumerClusters": Arr(_CLUSTER_SELECTOR),
}, ("types",))

# --- FederatedResourceQuota (policy.karmada.io) ------------------------------------------------

RESOURCE_LIST = Map(QUANTITY)
FEDERATED_RESOURCE_QUOTA_SPEC = Obj({
    "overall": RESOURCE_LIST,
    "staticAssignments": Arr(Obj({"clusterName": Str(), "hard": RESOURCE_LIST}, ("clusterName", "hard"))),
}, ("overall",))

# kind -> (spec schema, spec required)
SPEC_SCHEMAS: dict[tuple[str, str], tuple[Obj, bool]] = {
    ("cluster.karmada.io", "Cluster"): (CLUSTER_SPEC, True),
    ("policy.karmada.io", "PropagationPolicy"): (PROPAGATION_SPEC, True),
    ("policy.karmada.io", "ClusterPropagationPolicy"): (PROPAGATION_SPEC, True),
    ("policy.karmada.io", "OverridePolicy"): (OVERRIDE_SPEC, True),
    ("policy.karmada.io", "ClusterOverridePolicy"): (OVERRIDE_SPEC, True),
    ("policy.karmada.io", "ClusterTaintPolicy"): (CLUSTER_TAINT_POLICY_SPEC, True),
    ("work.karmada.io", "ResourceBinding"): (BINDING_SPEC, True),
    ("work.karmada.io", "ClusterResourceBinding"): (BINDING_SPEC, True),
    ("work.karmada.io", "Work"): (WORK_SPEC, True),
    ("remedy.karmada.io", "Remedy"): (REMEDY_SPEC, True),
    ("networking.karmada.io", "MultiClusterIngress"): (INGRESS_SPEC, False),
    ("networking.karmada.io", "MultiClusterService"): (MULTICLUSTER_SERVICE_SPEC, True),
    ("config.karmada.io", "ResourceInterpreterCustomization"): (CUSTOMIZATION_SPEC, True),
    ("apps.karmada.io", "WorkloadRebalancer"): (WORKLOAD_REBALANCER_SPEC, True),
    ("policy.karmada.io", "FederatedResourceQuota"): (FEDERATED_RESOURCE_QUOTA_SPEC, True),
}
