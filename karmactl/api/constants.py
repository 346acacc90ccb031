"""Well-known Karmada names: labels, annotations, finalizers, condition types, reasons and messages.

Every string here is spelled exactly as Karmada spells it (``pkg/apis/*/well_known_constants.go``,
``pkg/util/constants.go``) because tables, tests and other tools depend on the exact text.
"""

# --- API groups / versions -------------------------------------------------------------------
CLUSTER_API = "cluster.karmada.io/v1alpha1"
POLICY_API = "policy.karmada.io/v1alpha1"
WORK_API_V1 = "work.karmada.io/v1alpha1"
WORK_API_V2 = "work.karmada.io/v1alpha2"
REMEDY_API = "remedy.karmada.io/v1alpha1"
NETWORKING_API = "networking.karmada.io/v1alpha1"

# --- policy claim metadata (pkg/apis/policy/v1alpha1/well_known_constants.go) -----------------
PP_PERMANENT_ID_LABEL = "propagationpolicy.karmada.io/permanent-id"
PP_NAMESPACE_ANNOTATION = "propagationpolicy.karmada.io/namespace"
PP_NAME_ANNOTATION = "propagationpolicy.karmada.io/name"
CPP_PERMANENT_ID_LABEL = "clusterpropagationpolicy.karmada.io/permanent-id"
CPP_NAME_ANNOTATION = "clusterpropagationpolicy.karmada.io/name"
OP_PERMANENT_ID_LABEL = "overridepolicy.karmada.io/permanent-id"

# --- bindings and works (well_known_constants.go of the work.karmada.io v1alpha2 API) ----------------------
RB_PERMANENT_ID_LABEL = "resourcebinding.karmada.io/permanent-id"
CRB_PERMANENT_ID_LABEL = "clusterresourcebinding.karmada.io/permanent-id"
WORK_PERMANENT_ID_LABEL = "work.karmada.io/permanent-id"
RB_NAMESPACE_ANNOTATION = "resourcebinding.karmada.io/namespace"
RB_NAME_ANNOTATION = "resourcebinding.karmada.io/name"
CRB_NAME_ANNOTATION = "clusterresourcebinding.karmada.io/name"
WORK_NAME_ANNOTATION = "work.karmada.io/name"
WORK_NAMESPACE_ANNOTATION = "work.karmada.io/namespace"
CONFLICT_RESOLUTION_ANNOTATION = "work.karmada.io/conflict-resolution"
APPLIED_PLACEMENT_ANNOTATION = "policy.karmada.io/applied-placement"
APPLIED_OVERRIDES_ANNOTATION = "policy.karmada.io/applied-overrides"
APPLIED_CLUSTER_OVERRIDES_ANNOTATION = "policy.karmada.io/applied-cluster-overrides"
MANAGED_LABEL = "karmada.io/managed"
TEMPLATE_UID_ANNOTATION = "resourcetemplate.karmada.io/uid"
TEMPLATE_GENERATION_ANNOTATION = "resourcetemplate.karmada.io/generation"
MANAGED_LABELS_ANNOTATION = "resourcetemplate.karmada.io/managed-labels"
MANAGED_ANNOTATIONS_ANNOTATION = "resourcetemplate.karmada.io/managed-annotations"
# karmactl's records on a Work of what it observed and applied on the member (Karmada keeps both in
# controller memory): when the member first reported the status now in ``manifestStatuses``, and
# the member copy's version (``gen:<generation>`` or ``rv:<resourceVersion>``) after karmactl's
# last write, as ``objectwatcher``'s version record.
OBSERVED_AT_ANNOTATION = "karmactl.io/observed-at"
APPLIED_VERSION_ANNOTATION = "karmactl.io/applied-version"
WORK_RECORD_ANNOTATIONS = (OBSERVED_AT_ANNOTATION, APPLIED_VERSION_ANNOTATION)
CLAIMED_BY_LABEL = "resourcetemplate.karmada.io/claimed-by"
RETAIN_REPLICAS_LABEL = "resourcetemplate.karmada.io/retain-replicas"
DELETION_PROTECTED_LABEL = "resourcetemplate.karmada.io/deletion-protected"

# --- finalizers ------------------------------------------------------------------------------
EXECUTION_CONTROLLER_FINALIZER = "karmada.io/execution-controller"
BINDING_CONTROLLER_FINALIZER = "karmada.io/binding-controller"
CRB_CONTROLLER_FINALIZER = "karmada.io/cluster-resource-binding-controller"
CLUSTER_CONTROLLER_FINALIZER = "karmada.io/cluster-controller"

# --- execution space -------------------------------------------------------------------------
EXECUTION_SPACE_PREFIX = "karmada-es-"
RESERVED_NAMESPACES = ("karmada-system", "karmada-cluster")
DEFAULT_SKIPPED_NAMESPACE_PATTERNS = (r"kube-.*",)

# --- taints ----------------------------------------------------------------------------------
TAINT_NOT_READY = "cluster.karmada.io/not-ready"
TAINT_UNREACHABLE = "cluster.karmada.io/unreachable"
TAINT_UNSCHEDULABLE = "cluster.karmada.io/unschedulable"
EFFECT_NO_SCHEDULE = "NoSchedule"
EFFECT_NO_EXECUTE = "NoExecute"

# --- conditions ------------------------------------------------------------------------------
COND_READY = "Ready"
COND_COMPLETE_API_ENABLEMENTS = "CompleteAPIEnablements"
COND_SCHEDULED = "Scheduled"
COND_FULLY_APPLIED = "FullyApplied"
COND_APPLIED = "Applied"
COND_DISPATCHING = "Dispatching"
COND_SERVICE_DNS_READY = "ServiceDomainNameResolutionReady"

REASON_SCHEDULE_SUCCESS = "Success"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_NO_CLUSTER_FIT = "NoClusterFit"
REASON_UNSCHEDULABLE = "Unschedulable"
MSG_SCHEDULE_SUCCESS = "Binding has been scheduled successfully."

REASON_APPLIED_SUCCESSFUL = "AppliedSuccessful"
REASON_APPLIED_FAILED = "AppliedFailed"
MSG_APPLIED_SUCCESSFUL = "Manifest has been successfully applied"

REASON_FULLY_APPLIED_SUCCESS = "FullyAppliedSuccess"
REASON_FULLY_APPLIED_FAILED = "FullyAppliedFailed"
MSG_FULLY_APPLIED_SUCCESS = "All works have been successfully applied"
MSG_FULLY_APPLIED_FAILED = "Failed to apply all works, see status.aggregatedStatus for details"

REASON_SUSPEND_DISPATCHING = "SuspendDispatching"
MSG_SUSPEND_DISPATCHING = "Work dispatching is in a suspended state."
REASON_DISPATCHING = "Dispatching"
MSG_DISPATCHING = "Work is being dispatched to member clusters."

REASON_CLUSTER_READY = "ClusterReady"
MSG_CLUSTER_READY = "cluster is healthy and ready to accept workloads"
REASON_CLUSTER_NOT_READY = "ClusterNotReady"
MSG_CLUSTER_NOT_READY = "cluster is reachable but health endpoint responded without ok"
REASON_CLUSTER_NOT_REACHABLE = "ClusterNotReachable"
MSG_CLUSTER_NOT_REACHABLE = "cluster is not reachable"
REASON_STATUS_COLLECTION_FAILED = "StatusCollectionFailed"

# --- health ----------------------------------------------------------------------------------
HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"
UNKNOWN = "Unknown"

# --- scheduler -------------------------------------------------------------------------------
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# --- eviction --------------------------------------------------------------------------------
EVICTION_REASON_TAINT_UNTOLERATED = "TaintUntolerated"
EVICTION_PRODUCER_TAINT_MANAGER = "TaintManager"
EVICTION_REASON_APPLICATION_FAILURE = "ApplicationFailure"
EVICTION_PRODUCER_RB_APP_FAILOVER = "resource-binding-application-failover-controller"
EVICTION_PRODUCER_CRB_APP_FAILOVER = "cluster-resource-binding-application-failover-controller"

# --- remedy ----------------------------------------------------------------------------------
ACTION_TRAFFIC_CONTROL = "TrafficControl"
