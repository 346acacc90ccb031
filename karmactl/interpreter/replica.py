"""Replicas and per-replica requirements of workloads, replica revision and the Job completions split.

Follows ``pkg/resourceinterpreter/default/native/replica.go``, ``revisereplica.go``,
``pkg/util/helper/binding.go`` (``GenerateReplicaRequirements``, ``SpreadReplicasByTargetClusters``),
``pkg/util/resource.go`` (``AddPodTemplateRequest``, ``ResourceList``),
``pkg/util/helper/webstermethod.go`` and ``pkg/controllers/binding/common.go`` (Job completions).
"""
from __future__ import annotations

import re
from fractions import Fraction

from karmactl.api.objects import deepcopy
from karmactl.api.quantity import QuantityError, int_value, milli_value

from ._common import (DEPLOYMENT, JOB, POD, REPLICASET, STATEFULSET, InterpreterError, describe,
                      get_dict, get_int, get_list, get_opt_int, get_path, gvk)

# Where each workload keeps its pod spec.
_POD_SPEC_PATH = {
    DEPLOYMENT: ("spec", "template", "spec"),
    REPLICASET: ("spec", "template", "spec"),
    STATEFULSET: ("spec", "template", "spec"),
    JOB: ("spec", "template", "spec"),
    POD: ("spec",),
}

# The field ReviseReplica writes (``revisereplica.go``).
_REVISE_FIELD = {
    DEPLOYMENT: "replicas",
    REPLICASET: "replicas",
    STATEFULSET: "replicas",
    JOB: "parallelism",
}


def has_replica_hook(api_version: str, kind: str) -> bool:
    """Whether the native interpreter has ``InterpretReplica`` for this GVK (a workload kind)."""
    return (api_version, kind) in _POD_SPEC_PATH


def interpret_replica(obj: dict, *, resource_quota_estimate: bool = False) -> tuple[int, dict | None]:
    """Desired replicas and per-replica requirements of a template (semantics §2.7).

    Follows ``pkg/resourceinterpreter/default/native/replica.go`` and ``helper.GenerateReplicaRequirements``.

    Args:
        obj: the resource template.
        resource_quota_estimate: feature gate ``ResourceQuotaEstimate`` (default off): when on,
            ``priorityClassName`` of the pod spec is copied into the requirements.

    Returns:
        ``(replicas, replicaRequirements)``. ``replicaRequirements`` is
        ``{"nodeClaim": {hardNodeAffinity, nodeSelector, tolerations}, "resourceRequest": {name: quantity}}``
        with empty parts left out, or None when both parts are empty. Kinds without the native hook
        (anything but apps/v1 Deployment, ReplicaSet, StatefulSet, batch/v1 Job, v1 Pod) give
        ``(0, None)``.

    Raises:
        InterpreterError: a field has the wrong type or a quantity cannot be parsed.
    """
    key = gvk(obj)
    path = _POD_SPEC_PATH.get(key)
    if path is None:
        return 0, None
    try:
        if key == POD:
            replicas = 1
        elif key == JOB:
            # parallelism nil -> 0; completions nil -> parallelism; never more than completions
            # because a fixed-completion Job never runs more pods than it still needs.
            replicas = get_int(obj, "spec", "parallelism")
            completions = get_opt_int(obj, "spec", "completions")
            if completions is not None and replicas > completions:
                replicas = completions
        else:
            replicas = get_int(obj, "spec", "replicas")
        pod_spec = get_dict(obj, *path) or {}
        requirements = _replica_requirements(pod_spec, resource_quota_estimate)
    except InterpreterError as err:
        raise InterpreterError(f"{describe(obj)}: {err}") from None
    return replicas, requirements


def _replica_requirements(pod_spec: dict, resource_quota_estimate: bool) -> dict | None:
    node_claim = _node_claim(pod_spec)
    resource_request = pod_resource_request(pod_spec)
    if node_claim is None and resource_request is None:
        return None
    out: dict = {}
    if node_claim is not None:
        out["nodeClaim"] = node_claim
    if resource_request is not None:
        out["resourceRequest"] = resource_request
    if resource_quota_estimate and pod_spec.get("priorityClassName"):
        out["priorityClassName"] = pod_spec["priorityClassName"]
    return out


def _node_claim(pod_spec: dict) -> dict | None:
    # GenerateNodeClaimByPodSpec: the claim exists when nodeSelector is non-nil (even `{}`), a
    # hard node affinity is set, or tolerations is non-empty; empty parts are omitted (omitempty).
    node_selector = pod_spec.get("nodeSelector")
    tolerations = get_list(pod_spec, "tolerations")
    hard = get_path(pod_spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    if node_selector is None and hard is None and not tolerations:
        return None
    claim: dict = {}
    if hard is not None:
        claim["hardNodeAffinity"] = deepcopy(hard)
    if node_selector:
        claim["nodeSelector"] = deepcopy(node_selector)
    if tolerations:
        claim["tolerations"] = deepcopy(tolerations)
    return claim


# --- resource requests -----------------------------------------------------------------------

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def _is_qualified_name(value: str) -> bool:
    prefix, slash, name = value.rpartition("/")
    if slash:
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def _is_scalar_resource(name: str) -> bool:
    """``lifted.IsScalarResourceName``: extended, hugepages, *kubernetes.io/ and attachable volumes."""
    prefixed_native = "kubernetes.io/" in name
    native = "/" not in name or prefixed_native
    extended = (not native and not name.startswith("requests.")
                and _is_qualified_name("requests." + name))
    return (extended or name.startswith("hugepages-") or prefixed_native
            or name.startswith("attachable-volumes-"))


def _amount(resource: str, quantity) -> int:
    """A quantity in Karmada's internal unit: milli-CPU for cpu, whole units (rounded up) otherwise."""
    try:
        return milli_value(quantity) if resource == "cpu" else int_value(quantity)
    except QuantityError as err:
        raise InterpreterError(f"resource {resource}: {err}") from None


def _effective_requests(container: dict) -> dict:
    # Kubernetes defaulting: a limit without a request doubles as the request.
    resources = container.get("resources") or {}
    requests = dict(resources.get("requests") or {})
    for key, value in (resources.get("limits") or {}).items():
        requests.setdefault(key, value)
    return requests


def _tracked(name: str) -> bool:
    return name in ("cpu", "memory", "ephemeral-storage", "pods") or _is_scalar_resource(name)


def pod_resource_request(pod_spec: dict) -> dict | None:
    """The per-replica resource request of a pod spec as a ResourceList, or None when empty.

    Per resource: max(sum over containers, max over initContainers) + overhead; a limit stands in for
    a missing request. Only cpu, memory, ephemeral-storage, pods and scalar resources (extended,
    hugepages-*, *kubernetes.io/*, attachable-volumes-*) are counted, as ``util.Resource`` does.
    Zero totals are dropped. Formatting follows ``Resource.ResourceList``: cpu as a DecimalSI
    milli-quantity (``100m``, ``1``, ``1500m``, ``2k``), memory, ephemeral-storage and hugepages
    as BinarySI (``128Mi``; values below 1024 or not a multiple of 1024 print as plain/decimal
    numbers, as ``resource.Quantity`` does), pods and other scalars as DecimalSI.

    Raises:
        InterpreterError: a container or quantity has the wrong shape.
    """
    totals: dict[str, int] = {}
    for container in get_list(pod_spec, "containers"):
        for name, quantity in _effective_requests(container or {}).items():
            if _tracked(name):
                totals[name] = totals.get(name, 0) + _amount(name, quantity)
    for container in get_list(pod_spec, "initContainers"):
        for name, quantity in _effective_requests(container or {}).items():
            if _tracked(name):
                value = _amount(name, quantity)
                if value > totals.get(name, 0):
                    totals[name] = value
    for name, quantity in (get_dict(pod_spec, "overhead") or {}).items():
        if _tracked(name):
            totals[name] = totals.get(name, 0) + _amount(name, quantity)
    out = {}
    for name in sorted(totals):
        value = totals[name]
        if value <= 0:
            continue
        if name == "cpu":
            out[name] = format_decimal_si(value, -3)
        elif name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
            out[name] = format_binary_si(value)
        else:
            out[name] = format_decimal_si(value, 0)
    return out or None


_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = {0: "", 10: "Ki", 20: "Mi", 30: "Gi", 40: "Ti", 50: "Pi", 60: "Ei"}


def format_decimal_si(value: int, scale: int) -> str:
    """Canonical DecimalSI text of ``value * 10**scale`` (``resource.Quantity.String``)."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, exponent = abs(value), scale
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    # make the exponent a multiple of 3 by growing the mantissa
    rest = exponent % 3
    if rest:
        mantissa *= 10 ** rest
        exponent -= rest
    suffix = _DECIMAL_SUFFIX.get(exponent)
    if suffix is None:
        return f"{sign}{mantissa}e{exponent}"
    return f"{sign}{mantissa}{suffix}"


def format_binary_si(value: int) -> str:
    """Canonical BinarySI text of an integer amount (``resource.Quantity.String``)."""
    if -1024 < value < 1024:
        return format_decimal_si(value, 0)
    sign = "-" if value < 0 else ""
    mantissa, exponent = abs(value), 0
    while mantissa >= 1024 and mantissa % 1024 == 0 and exponent < 60:
        mantissa //= 1024
        exponent += 10
    return f"{sign}{mantissa}{_BINARY_SUFFIX[exponent]}"


# --- replica revision ------------------------------------------------------------------------

def has_revise_replica(obj: dict) -> bool:
    """Whether the kind has a native ``ReviseReplica`` hook (Deployment, ReplicaSet, StatefulSet, Job)."""
    return gvk(obj) in _REVISE_FIELD


def revise_replica(obj: dict, replicas: int) -> dict:
    """A copy of ``obj`` with its replica field set to ``replicas`` (semantics §9.2 step 1).

    Follows ``pkg/resourceinterpreter/default/native/revisereplica.go``.

    Deployment/ReplicaSet/StatefulSet write ``spec.replicas``, Job ``spec.parallelism`` — only when
    that field already exists in the object (``helper.ApplyReplica``). Other kinds are returned
    unchanged (as a copy).

    Raises:
        InterpreterError: the existing field is not an integer.
    """
    out = deepcopy(obj)
    field = _REVISE_FIELD.get(gvk(obj))
    if field is None:
        return out
    spec = out.get("spec")
    if isinstance(spec, dict) and spec.get(field) is not None:
        get_int(out, "spec", field)  # type check, as NestedInt64 does
        spec[field] = int(replicas)
    return out


# --- Job completions -------------------------------------------------------------------------

def _fnv1a_32(text: str) -> int:
    h = 0x811C9DC5
    for byte in text.encode():
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def _webster(seats: int, votes: dict[str, int], tie_uid: str) -> dict[str, int]:
    """Webster/Sainte-Laguë apportionment from zero seats (``AllocateWebsterSeats`` + ``tieBreakerByUID``).

    The next seat goes to the highest ``votes / (2*seats + 1)`` (compared exactly, as fractions);
    ties go to fewer seats, then to the smaller name — or the larger name when the 32-bit FNV-1a
    hash of ``tie_uid`` is odd. Kept private on purpose: the interpreter must not import the scheduler.
    """
    descending = bool(tie_uid) and _fnv1a_32(tie_uid) & 1 == 1
    result = {name: 0 for name in votes}
    if not votes:
        return result
    names = sorted(votes, reverse=descending)
    for _ in range(seats):
        best = None
        for name in names:  # iteration order realises the name tie-break
            if best is None:
                best = name
                continue
            q_best = Fraction(votes[best], 2 * result[best] + 1)
            q_name = Fraction(votes[name], 2 * result[name] + 1)
            if q_name > q_best or (q_name == q_best and result[name] < result[best]):
                best = name
        result[best] += 1
    return result


def split_job_completions(template: dict, targets: list[dict], tie_uid: str = "") -> dict[str, int]:
    """Split a Job's ``spec.completions`` over the target clusters (semantics §9.2 step 2).

    Follows ``pkg/controllers/binding/common.go`` and ``pkg/util/helper/webstermethod.go``.

    Webster apportionment with each target's ``replicas`` as its weight
    (``divideReplicasByJobCompletions`` -> ``SpreadReplicasByTargetClusters``). The caller decides
    whether the split applies (Job, binding replicas > 0, Divided placement) and writes each share
    into that cluster's ``spec.completions``.

    Args:
        template: the Job template.
        targets: ``[{"name": cluster, "replicas": n}]``.
        tie_uid: the template UID used for tie-breaks.

    Returns:
        ``{cluster: completions}`` for every target (zero shares included); ``{}`` when the template
        has no ``spec.completions`` or all weights are 0 (Karmada then leaves completions alone).

    Raises:
        InterpreterError: ``spec.completions`` is not an integer.
    """
    if get_path(template, "spec", "completions") is None:
        return {}
    completions = get_int(template, "spec", "completions")
    votes: dict[str, int] = {}
    for target in targets:
        votes[target["name"]] = int(target.get("replicas") or 0)
    if sum(votes.values()) == 0:
        return {}
    return _webster(max(completions, 0), votes, tie_uid)
