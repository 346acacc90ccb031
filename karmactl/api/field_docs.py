"""Descriptions of the fields of Karmada's kinds, for ``karmactl explain`` (written for karmactl, from
what each field does in Karmada and in a karmactl run; the schemas themselves are
:mod:`karmactl.api.validation_schema`).

Keys are dotted field paths. :func:`describe` looks a field up from the most specific key to the
least: ``<Kind>.<whole path>``, then the path's trailing parts (``placement.clusterAffinity``, then
``clusterAffinity``...), so a structure Karmada reuses (a cluster affinity, a label selector, a
failover behaviour) is described once wherever it appears. Cluster-scoped twins share their namespaced
kind's text (:data:`ALIASES`).
"""
from __future__ import annotations

ALIASES = {"ClusterPropagationPolicy": "PropagationPolicy", "ClusterOverridePolicy": "OverridePolicy",
           "ClusterResourceBinding": "ResourceBinding"}

_AFFINITY = ("Which member clusters qualify: every condition given must hold (label selector, field selector, "
             "names), and a cluster named in exclude never qualifies. Empty: every cluster.")

DOCS: dict[str, str] = {
    # ---- PropagationPolicy / ClusterPropagationPolicy
    "PropagationPolicy": "Selects resource templates and says where and how they are propagated to member clusters: "
                         "each template it claims gets a ResourceBinding, scheduled by its placement, and one Work per "
                         "chosen cluster. A ClusterPropagationPolicy does the same for templates of any namespace and "
                         "for cluster-scoped ones; a PropagationPolicy only selects templates of its own namespace.",
    "PropagationPolicy.spec": "What the policy selects and how the selected templates are placed, divided and failed over.",
    "PropagationPolicy.spec.resourceSelectors": "The templates this policy claims. A template matching several policies "
                                                "goes to the one with the highest priority, then the most specific "
                                                "selector (name over label selector over kind), then the alphabetically "
                                                "first policy name.",
    "resourceSelectors.apiVersion": "API version of the selected templates, e.g. apps/v1.",
    "resourceSelectors.kind": "Kind of the selected templates, e.g. Deployment.",
    "resourceSelectors.namespace": "Namespace of the selected templates (a PropagationPolicy only selects its own).",
    "resourceSelectors.name": "Name of the selected template; when set, the label selector is not consulted.",
    "resourceSelectors.labelSelector": "Templates whose labels match. Ignored when name is set.",
    "association": "Deprecated in Karmada in favour of propagateDeps; accepted and not used.",
    "propagateDeps": "Also propagate what the selected workloads reference (ConfigMaps, Secrets, ServiceAccounts, "
                     "PersistentVolumeClaims): each dependency gets an attached ResourceBinding that follows the "
                     "workload's clusters.",
    "placement": "Where the templates go: the candidate clusters, the taints they tolerate, how they spread, and how "
                 "replicas are divided among the chosen clusters.",
    "placement.clusterAffinity": _AFFINITY + " Cannot be combined with clusterAffinities.",
    "placement.clusterAffinities": "Ordered groups of candidate clusters: the scheduler uses the first group that can "
                                   "hold the workload and moves to the next when it cannot (or when every cluster of "
                                   "the current group fails). Cannot be combined with clusterAffinity.",
    "clusterAffinities.affinityName": "The group's name, unique within the list; the binding records the group in use.",
    "overflowAffinities": "Clusters that take the replicas the group cannot hold, before the next group is tried.",
    "clusterAffinity": _AFFINITY,
    "targetCluster": _AFFINITY,
    "clusterNames": "Cluster names, exactly as the Cluster objects are named.",
    "exclude": "Cluster names that never qualify, whatever else matches.",
    "fieldSelector": "Conditions on a Cluster's fields: provider, region and zone (spec.provider, spec.region, "
                     "spec.zones).",
    "fieldSelector.matchExpressions": "Each expression names provider, region or zone with In or NotIn and values.",
    "labelSelector": "A Kubernetes label selector: matchLabels and matchExpressions must all hold.",
    "matchLabels": "Labels that must be present with exactly these values.",
    "matchExpressions": "Label conditions; each must hold.",
    "matchExpressions.key": "The label (or field) the condition is about.",
    "matchExpressions.operator": "In, NotIn, Exists or DoesNotExist (field selectors: In or NotIn).",
    "matchExpressions.values": "Values for In and NotIn; empty for Exists and DoesNotExist.",
    "placement.clusterTolerations": "Cluster taints these templates tolerate. A NoSchedule taint keeps new placements "
                                    "off a cluster; a NoExecute taint also evicts what runs there unless tolerated "
                                    "(for tolerationSeconds, when given).",
    "clusterTolerations.key": "The taint key tolerated; empty with operator Exists tolerates every taint.",
    "clusterTolerations.operator": "Equal (key and value must match) or Exists (any value). Default Equal.",
    "clusterTolerations.value": "The taint value tolerated with operator Equal.",
    "clusterTolerations.effect": "NoSchedule or NoExecute; empty tolerates both.",
    "clusterTolerations.tolerationSeconds": "For NoExecute: how long the workload stays after the taint appears "
                                            "before it is evicted. Unset: forever.",
    "placement.spreadConstraints": "How chosen clusters spread over clusters, regions, zones or providers: at least "
                                   "minGroups and at most maxGroups groups.",
    "spreadConstraints.spreadByField": "cluster, region, zone or provider. Cannot be combined with spreadByLabel.",
    "spreadConstraints.spreadByLabel": "A cluster label whose values form the groups.",
    "spreadConstraints.maxGroups": "The most groups chosen.",
    "spreadConstraints.minGroups": "The fewest groups chosen; fewer qualifying groups fails scheduling.",
    "placement.replicaScheduling": "How a workload's replicas are assigned to the chosen clusters.",
    "replicaScheduling.replicaSchedulingType": "Duplicated: every chosen cluster runs all replicas. Divided: the "
                                               "replicas are split among the chosen clusters. Default Divided.",
    "replicaScheduling.replicaDivisionPreference": "For Divided: Aggregated (as few clusters as the replicas fit in, "
                                                   "by available capacity) or Weighted (by weightPreference).",
    "replicaScheduling.weightPreference": "For Weighted division: static weights per cluster, or dynamic weights.",
    "weightPreference.staticWeightList": "Clusters and their weights; replicas are split in proportion to them.",
    "staticWeightList.weight": "The clusters' share, relative to the other entries' weights (at least 1).",
    "weightPreference.dynamicWeight": "AvailableReplicas: weights from how many replicas each cluster can still "
                                      "hold (its free capacity). Cannot be combined with staticWeightList.",
    "placement.workloadAffinity": "Place workloads of a group together (affinity) or apart (antiAffinity), the "
                                  "group given by a label key of the templates.",
    "groupByLabelKey": "The template label whose value names the group.",
    "priority": "Which policy wins when several select one template: the higher number wins. Default 0.",
    "preemption": "Always: this policy takes templates already claimed by a lower-priority policy. Never (default): "
                  "it only claims unclaimed templates.",
    "dependentOverrides": "OverridePolicies that must exist before the templates are propagated.",
    "schedulerName": "The scheduler that schedules the bindings. karmactl runs one scheduler: default-scheduler.",
    "failover": "What happens to the templates' replicas when a cluster or the application fails.",
    "failover.application": "Application failover: when the workload stays unhealthy on a cluster past "
                            "decisionConditions.tolerationSeconds, it is evicted from that cluster and rescheduled.",
    "application.preConditions": "When application failover starts judging a workload's health.",
    "preConditions.delaySeconds": "Seconds after the workload is first scheduled before its health is judged.",
    "preConditions.healthyState": "The health a member copy must have reached (Healthy) before failover applies.",
    "application.decisionConditions": "When an unhealthy workload is evicted from its cluster.",
    "decisionConditions.tolerationSeconds": "How long the workload may stay unhealthy on a cluster before eviction.",
    "purgeMode": "How the evicted copy goes: Immediately (removed at once), Gracefully (kept until the replacement "
                 "is healthy or gracePeriodSeconds pass), Never (kept until someone removes it).",
    "gracePeriodSeconds": "With Gracefully: the longest the evicted copy stays while its replacement comes up.",
    "blockPredecessorSeconds": "How long the cluster a workload was evicted from is not chosen again.",
    "statePreservation": "Values read from the evicted copy (JSONPath rules) and handed to the replacement as labels.",
    "statePreservation.rules": "One rule per value to carry over.",
    "rules.aliasLabelName": "The label the value is written to on the replacement.",
    "rules.jsonPath": "Where the value is read in the evicted copy's status (JSONPath, without the braces).",
    "failover.cluster": "Cluster failover: how replicas leave a cluster that fails (NoExecute taint).",
    "conflictResolution": "When a member cluster already has an object of the same name not made by Karmada: Abort "
                          "(default: leave it, report the conflict) or Overwrite (take it over).",
    "activationPreference": "Lazy: a change to the policy only affects templates when they change next. Empty: at once.",
    "suspension": "Pause propagation of the selected templates.",
    "suspension.dispatching": "true: no Work is created or updated for any cluster.",
    "suspension.dispatchingOnClusters": "Pause dispatching to these clusters only.",
    "preserveResourcesOnDeletion": "true: deleting the template (or the policy) leaves the member copies in place.",
    "schedulePriority": "The priority of the bindings in the scheduling queue.",
    "schedulePriority.priorityClassSource": "Where the priority comes from: KubePriorityClass.",
    "schedulePriority.priorityClassName": "The PriorityClass whose value is used.",
    # ---- OverridePolicy / ClusterOverridePolicy
    "OverridePolicy": "Changes made to a template's member copies per target cluster (images, commands, labels, "
                      "any field), applied when the Works are rendered. A ClusterOverridePolicy applies to templates "
                      "of every namespace and to cluster-scoped ones.",
    "OverridePolicy.spec": "Which templates are changed, and how on which clusters.",
    "OverridePolicy.spec.resourceSelectors": "The templates overridden. Empty: every template the policy may select.",
    "overrideRules": "Rules applied in order: each names target clusters and the overriders to apply there.",
    "overrideRules.targetCluster": "The clusters this rule applies to. Empty: every cluster.",
    "overriders": "The changes of one rule, applied in this order: plaintext, imageOverrider, commandOverrider, "
                  "argsOverrider, labelsOverrider, annotationsOverrider, fieldOverrider.",
    "plaintext": "JSON-patch-like changes: an operator (add, remove, replace) at a path, with a value.",
    "plaintext.path": "The field changed, as a JSON pointer (/spec/replicas).",
    "value": "The value added or put in place.",
    "imageOverrider": "Changes to container images: the registry, repository or tag part.",
    "imageOverrider.predicate": "Which image field to change (path of the image); empty: every container's image.",
    "imageOverrider.component": "Registry, Repository or Tag.",
    "commandOverrider": "Changes to a container's command: add or remove entries.",
    "argsOverrider": "Changes to a container's args: add or remove entries.",
    "containerName": "The container the change applies to.",
    "labelsOverrider": "Labels added, removed or replaced on the member copy.",
    "annotationsOverrider": "Annotations added, removed or replaced on the member copy.",
    "fieldOverrider": "Changes inside a field holding JSON or YAML text (a ConfigMap value, for example).",
    "fieldOverrider.fieldPath": "The field holding the text (a JSON pointer).",
    "fieldOverrider.json": "Changes to that text read as JSON: subPath, operator, value.",
    "fieldOverrider.yaml": "Changes to that text read as YAML: subPath, operator, value.",
    "subPath": "Where inside the text (a JSON pointer).",
    "OverridePolicy.spec.targetCluster": "Deprecated in Karmada in favour of overrideRules.",
    "OverridePolicy.spec.overriders": "Deprecated in Karmada in favour of overrideRules.",
    # ---- Cluster
    "Cluster": "A member cluster. karmactl reaches it with the kubeconfig and context its annotations name "
               "(karmactl.io/kubeconfig, karmactl.io/context; set by karmactl join) and records its health and "
               "capacity in status.",
    "Cluster.spec": "How the member is reached and what it is.",
    "Cluster.spec.id": "A unique identity of the member (karmactl join records the kube-system namespace UID).",
    "syncMode": "Push: the control plane applies the Works (karmactl does). Pull: an agent in the member would; "
                "karmactl refuses to act for one.",
    "apiEndpoint": "The member's API server URL (informative in karmactl: the kubeconfig says how to reach it).",
    "secretRef": "Karmada's Secret holding the member's credentials. karmactl uses the kubeconfig annotation instead.",
    "impersonatorSecretRef": "Karmada's Secret for impersonation. Not used by karmactl.",
    "insecureSkipTLSVerification": "Skip the member's certificate check (Karmada). karmactl follows the kubeconfig.",
    "proxyURL": "A proxy in front of the member (Karmada). karmactl follows the kubeconfig.",
    "proxyHeader": "Headers sent to that proxy (Karmada).",
    "provider": "The cloud provider; placement field selectors match it.",
    "region": "The region; placement field selectors and spread constraints use it.",
    "zone": "Deprecated in Karmada in favour of zones.",
    "zones": "The zones the member spans; field selectors and spread constraints use them.",
    "taints": "Taints on the member: NoSchedule keeps new placements off; NoExecute also evicts what does not "
              "tolerate it. karmactl taint and cordon edit them; conditions may add them (ClusterTaintPolicy).",
    "taints.key": "The taint's key.",
    "taints.value": "The taint's value.",
    "taints.effect": "NoSchedule or NoExecute.",
    "taints.timeAdded": "When a NoExecute taint was added (tolerationSeconds count from it).",
    "resourceModels": "Resource grades that describe the member's nodes, used to estimate how many replicas fit.",
    "resourceModels.grade": "The grade's number, ascending with the ranges.",
    "resourceModels.ranges": "The resource ranges a node of this grade falls in.",
    # ---- bindings and Works (computed)
    "ResourceBinding": "Computed by karmactl reconcile (never written by hand): one template bound to its policy, the "
                       "clusters the scheduler chose and the status the members report.",
    "ResourceBinding.spec": "The template, its replicas and requirements, the placement copied from the policy, and "
                            "the scheduling result.",
    "ResourceBinding.spec.resource": "The template this binding stands for.",
    "ResourceBinding.spec.clusters": "The scheduler's result: each chosen cluster and, for a divided workload, its "
                                     "replicas.",
    "ResourceBinding.spec.replicas": "The template's replicas, as the resource interpreter reads them.",
    "Work": "Computed by karmactl reconcile: the manifests one member cluster should hold for one binding, in the "
            "cluster's execution namespace karmada-es-<cluster>.",
    "Work.spec": "What is applied to the member.",
    "Work.spec.workload": "The manifests, overrides applied.",
    "Work.spec.workload.manifests": "The objects applied to the member as they are.",
    "Work.spec.suspendDispatching": "true: the Work is not applied to the member (propagation suspended).",
    # ---- the remaining gaps of the kinds above
    "overflowAffinities.affinityName": "The overflow group's name.",
    "workloadAffinity.affinity": "Workloads sharing the group label's value go to the same clusters.",
    "workloadAffinity.antiAffinity": "Workloads sharing the group label's value go to different clusters.",
    "predicate.path": "The path of the image field inside the manifest (e.g. /spec/template/spec/containers/0/image).",
    "secretRef.namespace": "The Secret's namespace.",
    "secretRef.name": "The Secret's name.",
    "impersonatorSecretRef.namespace": "The Secret's namespace.",
    "impersonatorSecretRef.name": "The Secret's name.",
    "ranges.name": "The resource (cpu, memory...).",
    "ranges.min": "The range's lower bound (inclusive).",
    "ranges.max": "The range's upper bound (exclusive).",
    "MultiClusterIngress": "An Ingress for the whole fleet: its spec is a networking.k8s.io/v1 IngressSpec; a Remedy "
                           "can stop routing its traffic to a cluster (status.trafficBlockClusters).",
    "MultiClusterIngress.spec": "The Ingress: rules, backends and TLS, as a Kubernetes Ingress's spec.",
    # ---- ResourceBinding / ClusterResourceBinding internals (computed)
    "resource.apiVersion": "The template's API version.",
    "resource.kind": "The template's kind.",
    "resource.namespace": "The template's namespace (empty for a cluster-scoped template).",
    "resource.name": "The template's name.",
    "resource.uid": "The template's uid when the binding was computed.",
    "resource.resourceVersion": "The template's version when the binding was computed.",
    "replicaRequirements": "What one replica needs, read from the template by the resource interpreter: the "
                           "scheduler's estimators use it to see how many replicas a cluster can hold.",
    "nodeClaim": "The node constraints of a replica (node selector, required node affinity, tolerations).",
    "hardNodeAffinity": "The replica's required node affinity.",
    "nodeSelectorTerms": "Node selector terms; a node must match one.",
    "matchFields": "Conditions on node fields.",
    "matchFields.key": "The node field.",
    "matchFields.values": "The values it may have.",
    "nodeSelector": "Node labels a replica's node must have.",
    "tolerations": "Node taints a replica tolerates.",
    "tolerations.key": "The taint key tolerated.",
    "tolerations.effect": "The taint effect tolerated.",
    "tolerations.tolerationSeconds": "How long a NoExecute taint is tolerated.",
    "resourceRequest": "The resources one replica requests (cpu, memory...).",
    "replicaRequirements.namespace": "The namespace the replicas run in (for quota checks).",
    "priorityClassName": "The replicas' PriorityClass.",
    "components": "The components of a multi-component workload, each with its replicas and requirements.",
    "components.name": "The component's name.",
    "components.replicas": "The component's replicas.",
    "clusters.name": "A chosen cluster.",
    "clusters.replicas": "The replicas assigned to it (divided scheduling); 0 or unset when duplicated.",
    "clusters.components": "The replicas of each component assigned to that cluster.",
    "gracefulEvictionTasks": "Clusters being left gracefully: the old copy stays until the replacement is healthy or "
                             "the grace period passes (graceful eviction controller).",
    "gracefulEvictionTasks.fromCluster": "The cluster being left.",
    "gracefulEvictionTasks.replicas": "The replicas it had.",
    "gracefulEvictionTasks.reason": "Why it is left (TaintUntolerated, ApplicationFailure...).",
    "gracefulEvictionTasks.message": "A human-readable account of the eviction.",
    "gracefulEvictionTasks.producer": "The controller that asked for the eviction.",
    "gracefulEvictionTasks.suppressDeletion": "true: keep the old copy until someone decides (purgeMode Never).",
    "gracefulEvictionTasks.preservedLabelState": "The state preserved from the old copy, given to the replacement.",
    "gracefulEvictionTasks.creationTimestamp": "When the task began (grace periods count from it).",
    "gracefulEvictionTasks.clustersBeforeFailover": "The clusters the workload ran on before the failover.",
    "requiredBy": "For a dependency's attached binding: the workload bindings that need it, with their clusters.",
    "requiredBy.namespace": "The requiring binding's namespace.",
    "requiredBy.name": "The requiring binding's name.",
    "requiredBy.clusters": "The requiring binding's clusters (the dependency follows them).",
    "rescheduleTriggeredAt": "When a WorkloadRebalancer asked for this binding to be scheduled afresh.",
    "suspension.scheduling": "true: the scheduler leaves this binding as it is.",
    "workloadAffinityGroups": "The workload affinity groups this binding belongs to, for the scheduler.",
    "workloadAffinityGroups.affinityGroup": "The group whose members go to the same clusters.",
    "workloadAffinityGroups.antiAffinityGroup": "The group whose members go to different clusters.",
    "activeEvictionHistory": "Clusters the workload was recently evicted from (not chosen again for a while).",
    "activeEvictionHistory.clusterName": "The cluster.",
    "activeEvictionHistory.creationTimestamp": "When the eviction happened.",
    # ---- ResourceInterpreterCustomization
    "ResourceInterpreterCustomization": "Lua scripts that teach the resource interpreter about a kind: how to read "
                                        "its replicas, reflect and aggregate its status, judge its health, find its "
                                        "dependencies, keep member-side changes. karmactl runs them in a sandbox.",
    "target": "The kind the scripts are for.",
    "target.apiVersion": "Its API version.",
    "target.kind": "Its kind.",
    "customizations": "One script per operation; an operation without one keeps the built-in behaviour.",
    "retention": "Which member-side changes survive when the Work is applied again (Retain).",
    "replicaResource": "How many replicas the object asks for and what each needs (GetReplicas).",
    "replicaRevision": "How the object is changed to run a given number of replicas (ReviseReplica).",
    "statusReflection": "Which part of the member copy's status is reported back (ReflectStatus).",
    "statusAggregation": "How the members' reported statuses are combined into the template's (AggregateStatus).",
    "healthInterpretation": "Whether a member copy is healthy (InterpretHealth).",
    "dependencyInterpretation": "Which other objects the object depends on (GetDependencies).",
    "componentResource": "The components of a multi-component workload and what each needs (GetComponents).",
    "luaScript": "The Lua function, e.g. function GetReplicas(obj) ... end.",
    # ---- WorkloadRebalancer
    "WorkloadRebalancer": "A one-time request to schedule workloads afresh (karmactl rebalance writes one): the next "
                          "run reschedules each listed workload's binding as if it were new, then records the result.",
    "workloads": "The workloads to reschedule.",
    "workloads.apiVersion": "The workload's API version.",
    "workloads.kind": "The workload's kind.",
    "workloads.name": "The workload's name.",
    "workloads.namespace": "The workload's namespace (empty for a cluster-scoped one).",
    "ttlSecondsAfterFinished": "Seconds after the rebalance finished when the WorkloadRebalancer is deleted (from its "
                               "file, by the next run). Unset: kept.",
    # ---- ClusterTaintPolicy
    "ClusterTaintPolicy": "Taints added to (or removed from) clusters by their status conditions, so that failover "
                          "follows a cluster's health.",
    "targetClusters": "The clusters the policy watches. Empty: every cluster.",
    "addOnConditions": "When all these conditions hold, the policy's taints are added.",
    "removeOnConditions": "When all these conditions hold, the policy's taints are removed.",
    "conditionType": "A condition type of the Cluster's status (Ready...).",
    "statusValues": "The condition statuses that count (True, False, Unknown).",
    "ClusterTaintPolicy.spec.taints": "The taints added and removed.",
    # ---- Remedy
    "Remedy": "Actions taken on clusters whose conditions match, such as blocking traffic of MultiClusterIngresses.",
    "decisionMatches": "Conditions that trigger the actions; any one matching is enough.",
    "clusterConditionMatch": "A cluster condition that triggers the actions.",
    "clusterConditionMatch.conditionType": "The condition type.",
    "clusterConditionMatch.conditionStatus": "The status that triggers.",
    "operator": "add, remove or replace (as each overrider documents); for conditions, Equal or NotEqual.",
    "actions": "The actions: TrafficControl stops routing MultiClusterIngress traffic to the cluster.",
    "Remedy.spec.clusterAffinity": "The clusters the Remedy applies to. Empty: every cluster.",
    # ---- FederatedResourceQuota
    "FederatedResourceQuota": "A quota over the whole fleet for one namespace, divided among clusters as "
                              "ResourceQuotas; scheduling refuses what would exceed it.",
    "overall": "The fleet-wide limits (cpu, memory, pods...).",
    "staticAssignments": "Fixed shares of the quota for named clusters, each applied there as a ResourceQuota.",
    "staticAssignments.clusterName": "The cluster the share is for.",
    "staticAssignments.hard": "The share's limits.",
    # ---- MultiClusterService
    "MultiClusterService": "Exposes a Service across clusters: which clusters provide its endpoints and which consume "
                           "them.",
    "types": "CrossCluster: endpoints of provider clusters are dispatched to consumer clusters.",
    "ports": "The Service ports exposed.",
    "ports.name": "The port's name.",
    "ports.port": "The port number.",
    "range": "Deprecated in Karmada: the clusters involved (use providerClusters and consumerClusters).",
    "serviceProvisionClusters": "Deprecated in Karmada in favour of providerClusters.",
    "serviceConsumptionClusters": "Deprecated in Karmada in favour of consumerClusters.",
    "providerClusters": "The clusters whose endpoints serve the Service. Empty: every cluster.",
    "consumerClusters": "The clusters that receive those endpoints. Empty: every cluster.",
    "providerClusters.name": "A cluster name.",
    "consumerClusters.name": "A cluster name.",
}


def describe(kind: str, path: list[str]) -> str:
    """The description of field ``path`` (``["spec", "placement"]``; ``[]`` for the kind itself) of
    Karmada ``kind``: the most specific entry of :data:`DOCS` (module docstring), ``""`` when none."""
    kind = ALIASES.get(kind, kind)
    if not path:
        return DOCS.get(kind, "")
    exact = DOCS.get(".".join([kind, *path]))
    if exact:
        return exact
    for start in range(len(path)):
        found = DOCS.get(".".join(path[start:]))
        if found:
            return found
    return ""
