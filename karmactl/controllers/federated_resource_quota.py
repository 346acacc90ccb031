"""FederatedResourceQuota (``policy.karmada.io/v1alpha1``): ResourceQuotas on members, status, enforcement.

Follows ``pkg/controllers/federatedresourcequota/`` and, for enforcement, the ResourceBinding
validating webhook ``pkg/webhook/resourcebinding/validating.go`` with ``pkg/scheduler/helper.go``
(``getConditionByError``) and ``pkg/util/helper/binding.go`` (``CalculateResourceUsage``):

sync (``federated_resource_quota_sync_controller.go``, step ``federated-resource-quota-sync``)
    for each ``spec.staticAssignments[]`` whose cluster exists, a Work in ``karmada-es-<cluster>``
    named ``names.GenerateWorkName("ResourceQuota", name, namespace)``, labelled
    ``federatedresourcequota.karmada.io/{namespace,name}``, carrying a ResourceQuota of the FRQ's
    name and namespace with ``spec.hard`` = the assignment's ``hard``. Works of clusters no longer
    assigned, and all Works of a deleted FRQ, are deleted.
status (``federated_resource_quota_status_controller.go``, step ``federated-resource-quota-status``)
    ``status.aggregatedStatus``: one ``{clusterName, hard, used}`` per Work whose ``Applied`` is
    True and whose member ResourceQuota reported a status, sorted by cluster. With the feature gate
    ``FederatedQuotaEnforcement`` off, ``status.overall`` = ``spec.overall`` and
    ``status.overallUsed`` = the sum of the members' ``used``.
enforcement (gate ``FederatedQuotaEnforcement``, setting ``federatedQuotaEnforcement``)
    ``federated_resource_quota_enforcement_controller.go``: ``status.overall`` = ``spec.overall``,
    ``status.overallUsed`` = the ResourceBindings' usage in the namespace (replicas scheduled x
    ``replicaRequirements.resourceRequest``, or components), limited to the resources of
    ``overall``. The webhook denies a scheduler's update of a binding whose usage change would take
    a quota's used past ``overall``: :class:`QuotaAdmission`, called by the scheduler step, keeps
    the binding's placement as it was and sets ``Scheduled`` False, reason ``QuotaExceeded``, with
    the API server's message ``admission webhook "resourcebinding.karmada.io" denied the request:
    FederatedResourceQuota(<ns>/<name>) exceeded for resource <r>: requested sum <q>, limit <l>.``

Quantities are printed as Kubernetes prints them (``karmactl.api.quantity.canonical_quantity``).
Bindings are placed in the order of their keys (namespace, name), so of two that do not both fit
the first by name is admitted; Karmada admits whichever the scheduler's queue hands over first.
Deviations: where several resources exceed at once the first by name is reported (Karmada walks a Go
map); a member ResourceQuota without ``status`` (karmactl's emulator and a bare kube-apiserver run no
quota controller) contributes no ``aggregatedStatus`` item, where Karmada would fail to decode it;
the webhook also checks the detector's updates of a scheduled binding's resource requests, which
karmactl does not (the change is checked when the scheduler next moves the binding's replicas).

Pure: snapshots and the clock in, replaced objects out.
"""
from __future__ import annotations

from fractions import Fraction

from karmactl.api import constants as C
from karmactl.api.objects import bump_generation, deepcopy, get_condition, permanent_id, set_condition
from karmactl.api.quantity import (BINARY_SI, DECIMAL_SI, QuantityError, canonical_quantity, canonical_string,
                                   parse_quantity, quantity_format)
from karmactl.api.names import cluster_of_execution_namespace, execution_namespace, work_name
from karmactl.api.templates import new_overlay
from karmactl.controllers.helper.work import delete_work, work_records

FRQ_GROUP, FRQ_KIND = "policy.karmada.io", "FederatedResourceQuota"
NAMESPACE_LABEL = "federatedresourcequota.karmada.io/namespace"
NAME_LABEL = "federatedresourcequota.karmada.io/name"
SYNC_CONTROLLER = "federated-resource-quota-sync-controller"
STATUS_CONTROLLER = "federated-resource-quota-status-controller"
ENFORCEMENT_CONTROLLER = "federated-resource-quota-enforcement-controller"
REASON_QUOTA_EXCEEDED = "QuotaExceeded"  # workv1alpha2.BindingReasonQuotaExceeded
WEBHOOK_NAME = "resourcebinding.karmada.io"  # artifacts/deploy/webhook-configuration.yaml


# --------------------------------------------------------------------------------------------------
# quantities (resource.Quantity keeps the format of the first operand through Mul and Add)

Amounts = dict  # resource name -> (Fraction, format)


def _add(total: Amounts, name: str, amount: Fraction, fmt: str) -> None:
    if name in total:
        total[name] = (total[name][0] + amount, total[name][1])
    else:
        total[name] = (amount, fmt)


def _printed(amounts: Amounts) -> dict:
    return {name: canonical_quantity(a, fmt) for name, (a, fmt) in sorted(amounts.items())}


def _canonical_list(rl) -> dict:
    out = {}
    for name, value in sorted((rl or {}).items()):
        try:
            out[name] = canonical_string(value)
        except QuantityError:
            out[name] = value
    return out


def _amounts(rl) -> Amounts:
    return {name: (parse_quantity(v), quantity_format(v)) for name, v in (rl or {}).items()}


def resource_usage(binding: dict) -> Amounts:
    """``helper.CalculateResourceUsage``: what a ResourceBinding takes from a quota.

    With ``spec.components``: each component's ``replicas`` x its ``replicaRequirements.resourceRequest``,
    summed, times the number of scheduled clusters. Otherwise the scheduled replicas (sum of
    ``spec.clusters[].replicas``) x ``spec.replicaRequirements.resourceRequest``. Zero quantities are left out.

    Returns:
        ``{resource: (amount, format)}``; ``{}`` for unscheduled bindings and bindings without requests.

    Raises:
        QuantityError: a request that is not a quantity (validation refuses those on load).
    """
    spec = binding.get("spec") or {}
    clusters = spec.get("clusters") or []
    usage: Amounts = {}
    components = spec.get("components") or []
    if components:
        if not clusters:
            return {}
        per_set: Amounts = {}
        for comp in components:
            requests = ((comp or {}).get("replicaRequirements") or {}).get("resourceRequest") or {}
            for name, (amount, fmt) in _amounts(requests).items():
                _add(per_set, name, amount * int(comp.get("replicas") or 0), fmt)
        for name, (amount, fmt) in per_set.items():
            if amount:
                usage[name] = (amount * len(clusters), fmt)
        return usage
    requests = (spec.get("replicaRequirements") or {}).get("resourceRequest") or {}
    replicas = sum(int(c.get("replicas") or 0) for c in clusters)
    if not requests or replicas == 0:
        return {}
    for name, (amount, fmt) in _amounts(requests).items():
        if amount:
            usage[name] = (amount * replicas, fmt)
    return usage


def cached_usage(binding: dict, cache: dict | None) -> Amounts:
    """:func:`resource_usage`, remembered in ``cache`` (``{id(binding): (binding, usage)}``, kept for
    one computation: bindings are replaced, never modified, so identity says it is the same)."""
    if cache is None:
        return resource_usage(binding)
    hit = cache.get(id(binding))
    if hit is None or hit[0] is not binding:
        hit = (binding, resource_usage(binding))
        cache[id(binding)] = hit
    return hit[1]


def namespace_usage(bindings: dict, namespace: str, overall: dict, cache: dict | None = None) -> Amounts:
    """``calculateUsedWithResourceBinding``: the usage of every ResourceBinding of ``namespace``,
    summed, limited to the resources named in ``overall``. ``cache``: see :func:`cached_usage`."""
    total: Amounts = {}
    for key in sorted(bindings):
        if key[1] == "ResourceBinding" and key[2] == namespace:
            for name, (amount, fmt) in cached_usage(bindings[key], cache).items():
                _add(total, name, amount, fmt)
    return {name: total[name] for name in overall if name in total}


# --------------------------------------------------------------------------------------------------
# the webhook's arithmetic (pkg/util/resource.go: Resource.Add / ResourceList)


def _scalar(name: str) -> bool:
    """``lifted.IsScalarResourceName``: extended, huge pages, prefixed native or attachable volumes."""
    from karmactl.api.validation_rules import is_extended_resource_name

    return (is_extended_resource_name(name) or name.startswith("hugepages-") or "kubernetes.io/" in name
            or name.startswith("attachable-volumes-"))


def _resource_sum(*lists: dict) -> dict[str, tuple[int, str]]:
    """``util.NewResource(a).Add(b).ResourceList()``: CPU in milli-units, the rest in whole units
    (rounded up per operand), names ``Resource`` does not track dropped, results <= 0 dropped.
    Returns ``{name: (amount, format)}`` with ``amount`` in milli-units for CPU."""
    total: dict[str, int] = {}
    for rl in lists:
        for name, amount in rl.items():
            if name == "cpu":
                value = -((-amount * 1000) // 1)  # MilliValue rounds up
            elif name in ("memory", "pods", "ephemeral-storage") or _scalar(name):
                value = -((-amount) // 1)
            else:
                continue
            total[name] = total.get(name, 0) + int(value)
    out = {}
    for name, value in total.items():
        if value > 0:
            binary = name in ("memory", "ephemeral-storage") or name.startswith("hugepages-")
            out[name] = (value, BINARY_SI if binary else DECIMAL_SI)
    return out


def _format_sum(name: str, value: int, fmt: str) -> str:
    return canonical_quantity(Fraction(value, 1000) if name == "cpu" else Fraction(value), fmt)


class QuotaAdmission:
    """The ResourceBinding validating webhook's FederatedResourceQuota check, as the scheduler meets it.

    Built once per scheduler step from the snapshot being computed: each quota's used amounts start
    as the enforcement controller computes them (:func:`namespace_usage`) and move with every
    placement admitted (the webhook adds the delta to ``status.overallUsed``).

    Args:
        quotas: FederatedResourceQuota key -> object (user objects).
        bindings: binding key -> binding, before this step.
        cache: optional usage cache (:func:`cached_usage`).
    """

    def __init__(self, quotas: dict, bindings: dict, cache: dict | None = None):
        self.quotas = {k: q for k, q in sorted(quotas.items())}
        self.cache = cache
        self.used: dict = {}
        for key, quota in self.quotas.items():
            overall = (quota.get("spec") or {}).get("overall")
            if overall is not None:
                self.used[key] = {n: a for n, (a, _f) in namespace_usage(bindings, key[2], overall, cache).items()}

    def admit(self, old: dict, new: dict, now: str) -> dict:
        """The binding the scheduler ends up with: ``new`` when the webhook admits the update of
        ``old`` into ``new``, else ``old`` with ``Scheduled`` False, reason ``QuotaExceeded`` and the
        API server's denial message (the spec patch failed, the status patch went through).

        Only ``spec.clusters`` replica totals, requests and components matter
        (``isQuotaRelevantFieldChanged``); a usage change of zero is admitted.
        """
        if new is old or not _quota_relevant_change(old, new):
            return new
        namespace = (new.get("metadata") or {}).get("namespace") or ""
        quotas = [(k, q) for k, q in self.quotas.items() if k[2] == namespace and k in self.used]
        if not quotas:
            return new
        new_usage, old_usage = cached_usage(new, self.cache), cached_usage(old, self.cache)
        delta = {}
        for name in set(new_usage) | set(old_usage):
            d = new_usage.get(name, (Fraction(0), ""))[0] - old_usage.get(name, (Fraction(0), ""))[0]
            if d:
                delta[name] = d
        if not delta:
            return new
        updates = {}
        for key, quota in quotas:
            overall = (quota.get("spec") or {}).get("overall") or {}
            mine = {n: d for n, d in delta.items() if n in overall}
            if not any(mine.values()):
                continue
            potential = _resource_sum(self.used[key], mine)
            for name in sorted(potential):
                value, fmt = potential[name]
                if name not in overall:
                    continue
                requested = Fraction(value, 1000) if name == "cpu" else Fraction(value)
                if requested > parse_quantity(overall[name]):
                    message = (f"admission webhook \"{WEBHOOK_NAME}\" denied the request: "
                               f"FederatedResourceQuota({key[2]}/{key[3]}) exceeded for resource {name}: requested "
                               f"sum {_format_sum(name, value, fmt)}, limit {canonical_string(overall[name])}.")
                    return _denied(old, message, now)
            updates[key] = {n: (Fraction(v, 1000) if n == "cpu" else Fraction(v)) for n, (v, _f) in potential.items()}
        self.used.update(updates)
        return new


def _replica_total(spec: dict) -> int:
    return sum(int(c.get("replicas") or 0) for c in spec.get("clusters") or [])


def _quota_relevant_change(old: dict, new: dict) -> bool:
    """``isQuotaRelevantFieldChanged``: requests, the scheduled replica total, components (with the
    clusters when components are set)."""
    o, n = old.get("spec") or {}, new.get("spec") or {}
    if ((o.get("replicaRequirements") or {}).get("resourceRequest") or {}) != \
            ((n.get("replicaRequirements") or {}).get("resourceRequest") or {}):
        return True
    if _replica_total(o) != _replica_total(n):
        return True
    if (o.get("components") or n.get("components")) and \
            sorted(c.get("name") for c in o.get("clusters") or []) != sorted(c.get("name") for c in n.get("clusters") or []):
        return True
    return (o.get("components") or []) != (n.get("components") or [])


def _denied(old: dict, message: str, now: str) -> dict:
    out = dict(old)
    out["status"] = deepcopy(old.get("status") or {})
    set_condition(out, C.COND_SCHEDULED, "False", REASON_QUOTA_EXCEEDED, message, now)
    return old if out == old else out


# --------------------------------------------------------------------------------------------------
# sync controller


def quota_work_key(quota_key, cluster: str) -> tuple:
    """The key of the Work carrying a quota's ResourceQuota to ``cluster``."""
    _g, _k, namespace, name = quota_key
    return ("work.karmada.io", "Work", execution_namespace(cluster), work_name(namespace, name, "ResourceQuota"))


def is_quota_work(work: dict) -> bool:
    """Whether the sync controller made this Work (both FederatedResourceQuota labels)."""
    labels = (work.get("metadata") or {}).get("labels") or {}
    return NAMESPACE_LABEL in labels and NAME_LABEL in labels


def quota_work(quota_key, hard: dict, cluster: str, old: dict | None, now: str) -> dict:
    """The Work ``buildWorks`` + ``ctrlutil.CreateOrUpdateWork`` make for one assignment.

    Returns ``old`` itself when nothing changes.
    """
    _g, _k, namespace, name = quota_key
    wns, wname = execution_namespace(cluster), work_name(namespace, name, "ResourceQuota")
    old_meta = (old or {}).get("metadata") or {}
    work_id = (old_meta.get("labels") or {}).get(C.WORK_PERMANENT_ID_LABEL) or permanent_id("Work", wns, wname)
    labels = {C.MANAGED_LABEL: "true", C.WORK_PERMANENT_ID_LABEL: work_id}
    annotations = {C.TEMPLATE_UID_ANNOTATION: "", C.WORK_NAME_ANNOTATION: wname, C.WORK_NAMESPACE_ANNOTATION: wns}
    annotations[C.MANAGED_LABELS_ANNOTATION] = ",".join(sorted(labels))
    annotations[C.MANAGED_ANNOTATIONS_ANNOTATION] = ",".join(sorted(set(annotations) | {C.MANAGED_ANNOTATIONS_ANNOTATION}))
    manifest = {"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": name, "namespace": namespace, "labels": dict(sorted(labels.items())),
                             "annotations": dict(sorted(annotations.items()))},
                "spec": {"hard": _canonical_list(hard)}}
    metadata = {"name": wname, "namespace": wns,
                "labels": dict(sorted({NAMESPACE_LABEL: namespace, NAME_LABEL: name,
                                       C.WORK_PERMANENT_ID_LABEL: work_id}.items())),
                "finalizers": [C.EXECUTION_CONTROLLER_FINALIZER],
                "creationTimestamp": old_meta.get("creationTimestamp") or now,
                "generation": old_meta.get("generation") or 1}
    records = work_records(old)
    if records:
        metadata["annotations"] = dict(sorted(records.items()))
    work = {"apiVersion": C.WORK_API_V1, "kind": "Work", "metadata": metadata,
            "spec": {"workload": {"manifests": [manifest]}}}
    if old is not None and old.get("status") is not None:
        work["status"] = old["status"]
    bump_generation(old, work)
    return old if old is not None and work == old else work


def sync(quotas: dict, clusters: list[str], works: dict, now: str) -> dict:
    """The Works the sync controller wants: key -> Work (new or changed), terminating Work or None
    (removed). A Work already being deleted is left alone (``work ... is being deleted``)."""
    out: dict = {}
    wanted = set()
    known = set(clusters)
    for qkey, quota in sorted(quotas.items()):
        for assignment in (quota.get("spec") or {}).get("staticAssignments") or []:
            cluster = assignment.get("clusterName")
            wkey = quota_work_key(qkey, cluster)
            if wkey in wanted:
                continue  # extractClusterHardResourceList takes the first assignment of a cluster
            wanted.add(wkey)
            if cluster not in known:
                continue
            old = works.get(wkey)
            if old is not None and (old.get("metadata") or {}).get("deletionTimestamp"):
                continue
            new = quota_work(qkey, assignment.get("hard") or {}, cluster, old, now)
            if new is not old:
                out[wkey] = new
    for wkey, work in sorted(works.items()):
        if is_quota_work(work) and wkey not in wanted:
            new = delete_work(work, now)
            if new is not work:
                out[wkey] = new
    return out


def sync_step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``federated-resource-quota-sync``: ResourceQuota Works for every static
    assignment (``federated_resource_quota_sync_controller.go``)."""
    quotas = {k: out.user[k] for k in out.keys_of_kind(FRQ_GROUP, FRQ_KIND)}
    if not quotas and not _loaded(loaded, ctx)[0]:
        return False  # no quota and no quota Work to clean up (only this step makes them)
    clusters = [key[3] for key in out.keys_of_kind("cluster.karmada.io", "Cluster")]
    changed = False
    for wkey, work in sync(quotas, clusters, out.works, now).items():
        changed = out.set_work(wkey, work) or changed
    return changed


# --------------------------------------------------------------------------------------------------
# status and enforcement controllers


def aggregated_status(quota_key, works: dict) -> list[dict]:
    """``aggregatedStatusFormWorks``: ``{clusterName, hard?, used?}`` per applied Work of the quota
    whose member copy reported a status, sorted by cluster."""
    _g, _k, namespace, name = quota_key
    items = []
    for wkey, work in works.items():
        labels = (work.get("metadata") or {}).get("labels") or {}
        if labels.get(NAMESPACE_LABEL) != namespace or labels.get(NAME_LABEL) != name:
            continue
        applied = get_condition(work, C.COND_APPLIED)
        if applied is None or applied.get("status") != "True":
            continue
        statuses = (work.get("status") or {}).get("manifestStatuses") or []
        status = (statuses[0].get("status") if statuses else None) or None
        if not isinstance(status, dict):
            continue
        item = {"clusterName": cluster_of_execution_namespace(wkey[2])}
        for field in ("hard", "used"):
            if status.get(field):
                item[field] = _canonical_list(status[field])
        items.append(item)
    return sorted(items, key=lambda i: i["clusterName"])


def members_used(items: list[dict]) -> dict:
    """``calculateUsed``: the members' ``used`` summed per resource."""
    total: Amounts = {}
    for item in items:
        for name, value in (item.get("used") or {}).items():
            try:
                _add(total, name, parse_quantity(value), quantity_format(value))
            except QuantityError:
                continue
    return _printed(total)


def quota_status(quota_key, quota: dict, works: dict, bindings: dict, enforcement: bool,
                 cache: dict | None = None) -> dict:
    """``status`` of one FederatedResourceQuota: ``overall``, ``overallUsed`` (omitted when empty) and
    ``aggregatedStatus`` (omitted when empty); ``overallUsed`` from the bindings under the gate
    ``FederatedQuotaEnforcement``, else from the members. ``cache``: see :func:`cached_usage`."""
    items = aggregated_status(quota_key, works)
    overall = (quota.get("spec") or {}).get("overall") or {}
    if enforcement:
        used = _printed(namespace_usage(bindings, quota_key[2], overall, cache))
    else:
        used = members_used(items)
    status = {}
    if overall:
        status["overall"] = _canonical_list(overall)
    if used:
        status["overallUsed"] = used
    if items:
        status["aggregatedStatus"] = items
    return status


def status_step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``federated-resource-quota-status``: every FederatedResourceQuota's status
    (``federated_resource_quota_status_controller.go``, and
    ``federated_resource_quota_enforcement_controller.go`` under ``FederatedQuotaEnforcement``)."""
    enforcement = ctx.settings.federated_quota_enforcement
    keys = out.keys_of_kind(FRQ_GROUP, FRQ_KIND)
    changed = False
    quota_works = None
    for key in keys:
        if quota_works is None:
            quota_works = {k: w for k, w in out.works.items() if is_quota_work(w)}
        quota = out.user[key]
        new = new_overlay(key, quota)
        new["status"] = quota_status(key, quota, quota_works, out.bindings, enforcement, _usage_cache(ctx))
        old = out.overlays.get(key)
        changed = out.set_overlay(key, old if old == new else new) or changed
    live = set(keys)
    for key in _loaded(loaded, ctx)[1]:
        if key not in live:
            changed = out.set_overlay(key, None) or changed  # the status of a deleted quota
    return changed


def _usage_cache(ctx) -> dict:
    return ctx.memo.setdefault("federated-resource-quota-usage", {})


def _loaded(loaded, ctx) -> tuple[bool, list]:
    """(whether ``loaded`` has quota Works, the quota overlay keys of ``loaded``), computed once per
    computation (``ctx.memo``): a state directory without quotas costs no scan per pass."""
    memo = ctx.memo.get("federated-resource-quota")
    if memo is None or memo[0] is not loaded:
        memo = (loaded, (any(is_quota_work(w) for w in loaded.works.values()),
                         [k for k in loaded.overlays if k[:2] == (FRQ_GROUP, FRQ_KIND)]))
        ctx.memo["federated-resource-quota"] = memo
    return memo[1]


def scheduler_admission(out, ctx) -> QuotaAdmission | None:
    """The quota check the scheduler step applies, or None when the gate is off or no quota exists."""
    if not ctx.settings.federated_quota_enforcement:
        return None
    quotas = {k: out.user[k] for k in out.keys_of_kind(FRQ_GROUP, FRQ_KIND)}
    return QuotaAdmission(quotas, out.bindings, _usage_cache(ctx)) if quotas else None


__all__ = ["FRQ_GROUP", "FRQ_KIND", "NAMESPACE_LABEL", "NAME_LABEL", "QuotaAdmission", "REASON_QUOTA_EXCEEDED",
           "aggregated_status", "cached_usage", "is_quota_work", "namespace_usage", "quota_status", "quota_work", "quota_work_key",
           "resource_usage", "scheduler_admission", "status_step", "sync", "sync_step"]
