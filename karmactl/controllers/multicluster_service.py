"""MultiClusterService (``networking.karmada.io/v1alpha1``, type ``CrossCluster``): the Service on
provider and consumer clusters, the providers' EndpointSlices collected and dispatched to consumers.

Follows Karmada's ``pkg/controllers/multiclusterservice/`` (feature gate ``MultiClusterService``):

``mcs_controller.go`` -> :func:`step` (pipeline step ``multiclusterservice``, after the detector)
    For every MultiClusterService (MCS) ``<ns>/<name>``: providers are ``spec.providerClusters[*].name``
    (every Cluster when empty), consumers ``spec.consumerClusters[*].name`` (likewise).

    * a marker Work ``work_name(ns, name, "MultiClusterService")`` in ``karmada-es-<provider>`` for
      each provider that exists, is Ready and does not have EndpointSlices disabled; it holds the
      MCS, carries labels ``multiclusterservice.karmada.io/{permanent-id,namespace,name}`` and is
      never dispatched (``spec.suspendDispatching: true``); it tells the collection below where to
      look. Marker Works of clusters no longer providers (or of an MCS that is gone) are deleted
      with the EndpointSlice Works collected under them;
    * the Service ``<ns>/<name>`` is claimed for the MCS (labels
      ``resourcetemplate.karmada.io/claimed-by: MultiClusterService`` and the MCS permanent id,
      annotations ``multiclusterservice.karmada.io/{name,namespace}``; :func:`service_claims`, read
      by the detector, which then leaves the Service to this controller) and gets the
      ResourceBinding ``<name>-service`` (label ``binding.karmada.io/managed-by:
      MultiClusterService``, placement ``clusterAffinity.clusterNames`` = providers and consumers,
      ``conflictResolution: Overwrite``); the scheduler and binding controller then place the
      Service on those clusters like any binding;
    * condition ``ServiceApplied`` on the MCS: True ``ServiceAppliedSucceed`` "Service is propagated
      to target clusters.", or False ``ServiceAppliedFailed`` with ``services "<name>" not found``.

``endpointslice_collect_controller.go`` -> :func:`collect` (called by the member layer's observe,
``karmactl/members/endpointslices.py``)
    On a provider with a marker Work, every EndpointSlice of the MCS's namespace labelled
    ``kubernetes.io/service-name: <name>`` and not managed by Karmada
    (``endpointslice.kubernetes.io/managed-by`` not one of Karmada's values) becomes a Work
    ``work_name(ns, eps, "EndpointSlice")`` in ``karmada-es-<provider>`` (suspended, labels
    ``multiclusterservice.karmada.io/{namespace,name}`` and ``endpointslice.karmada.io/managed-by:
    MultiClusterService``); a collected Work whose EndpointSlice is gone is dropped. Offline runs
    keep what the last online run collected, or what ``karmactl observe mcs/NAME --endpointslices``
    recorded (``karmactl/cli/cmd/observe.py``).

``endpointslice_dispatch_controller.go`` -> :func:`dispatch_step` (step ``endpointslice-dispatch``,
before execution)
    Each collected Work is copied into ``karmada-es-<consumer>`` (same Work name) for every
    consumer other than its provider that exists, is Ready and serves EndpointSlices: the
    EndpointSlice renamed ``<provider>-<name>``, labels ``kubernetes.io/service-name: <name>`` and
    ``endpointslice.kubernetes.io/managed-by: endpointslice-dispatch-controller.karmada.io``,
    annotation ``endpointslice.karmada.io/provision-cluster: <provider>`` (on the Work too). The
    execution layer applies it, so the consumer's Service has the provider's endpoints. Dispatched
    Works of clusters no longer consumers, or whose collected Work is gone, are deleted (with their
    member copies). Condition ``EndpointSliceDispatched`` True ``EndpointSliceDispatchedSucceed``
    "EndpointSlice are dispatched successfully" while an MCS has a collected Work (removed when none
    is left, where Karmada leaves the last one it set).

Karmada's Events of these controllers are derived after the run (``karmactl/pipeline/events.py``:
SyncServiceSucceed/Failed, DispatchEndpointSliceSucceed); the warnings Karmada records as Events
(ClusterNotFound, a cluster not ready, APIIncompatible) are run warnings. Deviations: no
finalizers on the MCS (removing its file is its deletion, cleaned up in the same run); when the
MCS goes, its ResourceBinding is deleted unless a policy now claims the Service (as the detector
does for a policy that goes, DESIGN §3), where Karmada leaves the binding behind.
"""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.objects import bump_generation, deepcopy, get_condition, permanent_id, set_condition
from karmactl.api.names import binding_name, cluster_of_execution_namespace, execution_namespace, work_name
from karmactl.controllers.helper.binding import SCHEDULER_OWNED
from karmactl.controllers.helper.cluster import clusters_of, stamp_creation
from karmactl.controllers.helper.mcs import GROUP, KIND, NAME_LABEL, NAMESPACE_LABEL, PERMANENT_ID_LABEL, live_mcs, mcs_id
from karmactl.controllers.helper.template import template_hash
from karmactl.controllers.helper.work import delete_work, work_records

BINDING_MANAGED_BY_LABEL = "binding.karmada.io/managed-by"
EPS_WORK_MANAGED_BY_LABEL = "endpointslice.karmada.io/managed-by"
PROVISION_CLUSTER_ANNOTATION = "endpointslice.karmada.io/provision-cluster"
DISPATCH_CONTROLLER_VALUE = "endpointslice-dispatch-controller.karmada.io"
KARMADA_EPS_MANAGERS = (DISPATCH_CONTROLLER_VALUE, "endpointslice-controller.karmada.io")
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
EPS_MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
DISPATCH_FINALIZER = "karmada.io/mcs-endpointslice-dispatch-controller"
EPS_API, EPS_KIND = "discovery.k8s.io/v1", "EndpointSlice"
COND_SERVICE_APPLIED = "ServiceApplied"
COND_EPS_DISPATCHED = "EndpointSliceDispatched"
SERVICE_APPLIED = ("True", "ServiceAppliedSucceed", "Service is propagated to target clusters.")
EPS_DISPATCHED = ("True", "EndpointSliceDispatchedSucceed", "EndpointSlice are dispatched successfully")


# --------------------------------------------------------------------------- reading MCSs


def cluster_set(mcs: dict, field: str, all_clusters) -> set[str]:
    """``helper.GetProviderClusters`` / ``GetConsumerClusters``: the names of ``spec.<field>``
    (``providerClusters`` or ``consumerClusters``), or every Cluster name when it is empty."""
    names = {s.get("name") for s in (mcs.get("spec") or {}).get(field) or [] if isinstance(s, dict) and s.get("name")}
    return names or set(all_clusters)


def _cluster_problem(cluster: dict | None, name: str, role: str, what: str) -> str | None:
    """Why Karmada skips ``name`` as a provider/consumer (the text of its warning Event), or None."""
    from karmactl.scheduler.plugins.api_enablement import api_disabled

    if cluster is None:
        return f"ClusterNotFound: {role} cluster {name} is not found"
    ready = any(c.get("type") == C.COND_READY and c.get("status") == "True"
                for c in (cluster.get("status") or {}).get("conditions") or [])
    if not ready:
        return f"SyncServiceFailed: {role} cluster {name} is not ready, skip to propagate {what}"
    if api_disabled(cluster, EPS_API, EPS_KIND):
        return f"APIIncompatible: {role} cluster {name} does not support EndpointSlice"
    return None


# --------------------------------------------------------------------------- Works


def _manifest_of(work: dict) -> dict:
    manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
    return manifests[0] if manifests and isinstance(manifests[0], dict) else {}


def is_marker_work(work: dict) -> bool:
    """A Work holding a MultiClusterService (``util.IsWorkContains(..., multiClusterServiceGVK)``)."""
    m = _manifest_of(work)
    return m.get("kind") == KIND and str(m.get("apiVersion") or "").startswith(GROUP + "/")


def _is_eps_work(work: dict) -> bool:
    m = _manifest_of(work)
    return m.get("kind") == EPS_KIND and m.get("apiVersion") == EPS_API


def is_collected_work(work: dict) -> bool:
    """An EndpointSlice Work collected from a provider (MCS labels, no provision-cluster annotation)."""
    md = work.get("metadata") or {}
    return (_is_eps_work(work) and bool((md.get("labels") or {}).get(NAME_LABEL))
            and not (md.get("annotations") or {}).get(PROVISION_CLUSTER_ANNOTATION))


def is_dispatched_work(work: dict) -> bool:
    """An EndpointSlice Work dispatched to a consumer (provision-cluster annotation set)."""
    md = work.get("metadata") or {}
    return _is_eps_work(work) and bool((md.get("annotations") or {}).get(PROVISION_CLUSTER_ANNOTATION))


def _mcs_ref(work: dict) -> tuple[str, str]:
    labels = (work.get("metadata") or {}).get("labels") or {}
    return labels.get(NAMESPACE_LABEL) or "", labels.get(NAME_LABEL) or ""


def work_for(resource: dict, wname: str, wns: str, labels: dict, annotations: dict, finalizers: list,
             suspend: bool, old: dict | None, now: str) -> dict:
    """A Work holding ``resource`` as ``ctrlutil.CreateOrUpdateWork`` writes it
    (``pkg/controllers/ctrlutil/work.go``) plus the Work webhook's permanent id: the manifest gets
    ``karmada.io/managed``, the template-uid and Work name/namespace annotations, is pruned, and
    records its managed labels/annotations. Returns ``old`` itself when nothing changed."""
    from karmactl.interpreter.prune import prune_manifest

    manifest = deepcopy(resource)
    mm = manifest.setdefault("metadata", {})
    uid = mm.get("uid") or ""
    mlabels = mm.setdefault("labels", {})
    mann = mm.setdefault("annotations", {})
    mlabels[C.MANAGED_LABEL] = "true"
    mann[C.TEMPLATE_UID_ANNOTATION] = uid
    mann[C.WORK_NAME_ANNOTATION] = wname
    mann[C.WORK_NAMESPACE_ANNOTATION] = wns
    manifest = prune_manifest(manifest, in_place=True)
    old_meta = (old or {}).get("metadata") or {}
    work_id = (old_meta.get("labels") or {}).get(C.WORK_PERMANENT_ID_LABEL) or permanent_id("Work", wns, wname)
    mm = manifest["metadata"]
    mm["labels"][C.WORK_PERMANENT_ID_LABEL] = work_id
    mm["annotations"][C.MANAGED_LABELS_ANNOTATION] = ",".join(sorted(mm["labels"]))
    mm["annotations"][C.MANAGED_ANNOTATIONS_ANNOTATION] = ",".join(
        sorted(set(mm["annotations"]) | {C.MANAGED_ANNOTATIONS_ANNOTATION}))
    mm["labels"] = dict(sorted(mm["labels"].items()))
    mm["annotations"] = dict(sorted(mm["annotations"].items()))
    metadata = {"name": wname, "namespace": wns,
                "labels": dict(sorted({**labels, C.WORK_PERMANENT_ID_LABEL: work_id}.items())),
                "finalizers": list(finalizers),
                "creationTimestamp": old_meta.get("creationTimestamp") or now,
                "generation": old_meta.get("generation") or 1}
    merged_ann = {**annotations, **work_records(old)}
    if merged_ann:
        metadata["annotations"] = dict(sorted(merged_ann.items()))
    return _settled(old, {"apiVersion": C.WORK_API_V1, "kind": "Work", "metadata": metadata,
                          "spec": {"workload": {"manifests": [manifest]}, "suspendDispatching": suspend}})


def _settled(old: dict | None, new: dict) -> dict:
    """``new`` with ``old``'s status and generation (bumped on a spec change), or ``old`` itself
    when that makes them equal."""
    if old is not None and old.get("status") is not None:
        new["status"] = old["status"]
    bump_generation(old, new)
    return old if old is not None and new == old else new


def marker_work(mcs: dict, cluster: str, old: dict | None, now: str) -> dict:
    """The MCS's Work in ``karmada-es-<cluster>`` (``propagateMultiClusterService``): never dispatched."""
    md = mcs["metadata"]
    wns = execution_namespace(cluster)
    wname = work_name(md["namespace"], md["name"], KIND)
    resource = {k: v for k, v in mcs.items() if k != "status"}
    return work_for(resource, wname, wns, {PERMANENT_ID_LABEL: mcs_id(mcs), NAMESPACE_LABEL: md["namespace"],
                                           NAME_LABEL: md["name"]}, {}, [], True, old, now)


def service_binding(view: dict, template: dict, mcs: dict, clusters: list[str], old: dict | None, now: str) -> dict:
    """The Service's ResourceBinding (``buildResourceBinding`` merged into ``old`` as
    ``propagateService`` does: labels and annotations merged, placement, resource and
    conflictResolution replaced, scheduling results and status kept).

    Args:
        view: the Service as Karmada sees it (uid, generation, claim; ``templates.template_view``).
        template: the user-written Service (its content hash is the binding's resourceVersion).
        mcs: the MultiClusterService.
        clusters: providers and consumers (``placement.clusterAffinity.clusterNames``).
        old: the existing binding or None.
        now: the run's clock (creationTimestamp of a new binding).
    """

    vm = view["metadata"]
    ns, name = vm["namespace"], vm["name"]
    bname = binding_name(name, "Service")
    old_meta = (old or {}).get("metadata") or {}
    labels = dict(old_meta.get("labels") or {})
    for stale in (C.PP_PERMANENT_ID_LABEL, C.CPP_PERMANENT_ID_LABEL):
        labels.pop(stale, None)
    labels.update({BINDING_MANAGED_BY_LABEL: KIND, PERMANENT_ID_LABEL: mcs_id(mcs)})
    labels.setdefault(C.RB_PERMANENT_ID_LABEL, permanent_id("ResourceBinding", ns, bname))
    annotations = {k: v for k, v in (old_meta.get("annotations") or {}).items()
                   if k not in (C.PP_NAMESPACE_ANNOTATION, C.PP_NAME_ANNOTATION, C.CPP_NAME_ANNOTATION)}
    annotations.update({NAME_LABEL: mcs["metadata"]["name"], NAMESPACE_LABEL: mcs["metadata"]["namespace"]})
    metadata = {"name": bname, "namespace": ns,
                "labels": dict(sorted(labels.items())), "annotations": dict(sorted(annotations.items())),
                "ownerReferences": [{"apiVersion": view["apiVersion"], "kind": view["kind"], "name": name,
                                     "uid": vm.get("uid", "")}],
                "finalizers": [C.BINDING_CONTROLLER_FINALIZER],
                "creationTimestamp": old_meta.get("creationTimestamp") or now,
                "generation": old_meta.get("generation") or 1}
    old_spec = (old or {}).get("spec") or {}
    spec = {"resource": {"apiVersion": view["apiVersion"], "kind": view["kind"], "namespace": ns, "name": name,
                         "uid": vm.get("uid", ""), "resourceVersion": template_hash(template)},
            "placement": {"clusterAffinity": {"clusterNames": sorted(clusters)}},
            "conflictResolution": "Overwrite"}
    for fname in ("schedulerName", "suspension") + SCHEDULER_OWNED:
        if old_spec.get(fname) is not None:
            spec[fname] = old_spec[fname]
    return _settled(old, {"apiVersion": C.WORK_API_V2, "kind": "ResourceBinding", "metadata": metadata, "spec": spec})


def collected_work(cluster: str, eps: dict, old: dict | None, now: str) -> dict:
    """The Work of one EndpointSlice collected on provider ``cluster`` (``reportEndpointSlice``,
    ``getEndpointSliceWorkMeta``): suspended, labelled with the MCS (= the Service) it serves."""
    md = eps.get("metadata") or {}
    ns, name = md.get("namespace") or "", md.get("name") or ""
    labels = {NAMESPACE_LABEL: ns, NAME_LABEL: (md.get("labels") or {}).get(SERVICE_NAME_LABEL) or "",
              EPS_WORK_MANAGED_BY_LABEL: KIND}
    resource = dict(eps, apiVersion=EPS_API, kind=EPS_KIND)
    return work_for(resource, work_name(ns, name, EPS_KIND), execution_namespace(cluster), labels, {},
                    [DISPATCH_FINALIZER], True, old, now)


def dispatched_work(source: dict, mcs: dict, provider: str, consumer: str, old: dict | None, now: str) -> dict:
    """The collected Work ``source`` from ``provider`` as dispatched to ``consumer``
    (``ensureEndpointSliceWork``): the EndpointSlice renamed ``<provider>-<name>`` with Karmada's
    labels and provision-cluster annotation, applied by the execution controller."""
    manifest = _manifest_of(source)
    md = manifest.get("metadata") or {}
    eps = {k: v for k, v in manifest.items() if k not in ("metadata", "status")}
    eps["metadata"] = {"name": f"{provider}-{md.get('name')}", "namespace": md.get("namespace"),
                       "labels": {SERVICE_NAME_LABEL: mcs["metadata"]["name"],
                                  EPS_MANAGED_BY_LABEL: DISPATCH_CONTROLLER_VALUE},
                       "annotations": {PROVISION_CLUSTER_ANNOTATION: provider}}
    return work_for(eps, source["metadata"]["name"], execution_namespace(consumer),
                    {NAME_LABEL: mcs["metadata"]["name"], NAMESPACE_LABEL: mcs["metadata"]["namespace"]},
                    {PROVISION_CLUSTER_ANNOTATION: provider}, [C.EXECUTION_CONTROLLER_FINALIZER], False, old, now)


# --------------------------------------------------------------------------- collection (observe)


def collect(cluster: str, works: dict, slices: list[dict], now: str) -> dict:
    """The collected EndpointSlice Works of provider ``cluster`` after listing its EndpointSlices.

    Args:
        cluster: the member cluster.
        works: Work key -> Work of ``karmada-es-<cluster>``.
        slices: every ``discovery.k8s.io/v1`` EndpointSlice listed on the member.
        now: the observation time.

    Returns:
        ``{Work key: Work}`` for new or changed collected Works and ``{Work key: None}`` for those
        whose EndpointSlice (or marker Work) is gone; collected Works never reach a member, so
        they are dropped rather than marked terminating.
    """
    served = {_mcs_ref(w) for w in works.values()
              if is_marker_work(w) and not (w.get("metadata") or {}).get("deletionTimestamp")}
    space = execution_namespace(cluster)
    desired = {}
    for eps in slices:
        md = eps.get("metadata") or {}
        labels = md.get("labels") or {}
        if labels.get(EPS_MANAGED_BY_LABEL) in KARMADA_EPS_MANAGERS:
            continue
        if (md.get("namespace") or "", labels.get(SERVICE_NAME_LABEL) or "") not in served:
            continue
        wkey = ("work.karmada.io", "Work", space, work_name(md.get("namespace") or "", md.get("name") or "", EPS_KIND))
        desired[wkey] = collected_work(cluster, eps, works.get(wkey), now)
    out = {k: w for k, w in desired.items() if w is not works.get(k)}
    for wkey, work in works.items():
        if wkey not in desired and is_collected_work(work):
            out[wkey] = None
    return out


# --------------------------------------------------------------------------- steps


def _with_condition(key, mcs: dict, overlay: dict | None, ctype: str, want: tuple | None, now: str) -> dict | None:
    """The MCS overlay with condition ``ctype`` set to ``want`` (status, reason, message) or removed
    (None); the file's ``status.loadBalancer`` kept. Returns ``overlay`` itself when unchanged."""
    from karmactl.api.objects import remove_condition
    from karmactl.api.templates import new_overlay

    if overlay is None and want is None:
        return None
    current = get_condition(overlay, ctype) if overlay is not None else None
    if (current is None and want is None) or (
            current is not None and want is not None and current.get("lastTransitionTime")
            and (current.get("status"), current.get("reason"), current.get("message")) == want):
        return overlay  # as it is: no copy
    new = deepcopy(overlay) if overlay is not None else new_overlay(key, mcs)
    if "status" not in new:
        new["status"] = {k: deepcopy(v) for k, v in (mcs.get("status") or {}).items() if k != "conditions"}
    if want is None:
        changed = remove_condition(new, ctype)
    else:
        changed = set_condition(new, ctype, *want, now)
    return new if changed else overlay


def _idle(loaded, ctx) -> bool:
    """True when ``loaded`` has no MultiClusterService and nothing one left behind (its bindings,
    Works, status): then neither step has anything to do in this computation (checked once)."""
    idle = ctx.memo.get("multicluster_service_idle")
    if idle is None:
        idle = not (any(k[:2] == (GROUP, KIND) for k in loaded.user)
                    or any(k[:2] == (GROUP, KIND) for k in loaded.overlays)
                    or any(((b.get("metadata") or {}).get("labels") or {}).get(BINDING_MANAGED_BY_LABEL) == KIND
                           for b in loaded.bindings.values())
                    or any(is_marker_work(w) or _is_eps_work(w) for w in loaded.works.values()))
        ctx.memo["multicluster_service_idle"] = idle
    return idle


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``multiclusterservice`` (``mcs_controller.go``): marker Works, the Service's
    ResourceBinding and condition ``ServiceApplied`` of every MCS; Works and bindings of MCSs that
    are gone removed. Returns True when ``out`` changed."""
    if _idle(loaded, ctx):
        return False
    clusters = {c["metadata"]["name"]: c for c in clusters_of(out)}
    mcss = live_mcs(out)
    changed = False
    wanted_bindings: dict = {}
    providers_of: dict = {}
    for (ns, name), mcs in sorted(mcss.items()):
        providers_of[(ns, name)] = cluster_set(mcs, "providerClusters", clusters)
        changed = _sync_mcs(out, ns, name, mcs, clusters, providers_of[(ns, name)], wanted_bindings, now, ctx) or changed
    for bkey, binding in wanted_bindings.items():
        changed = out.set_binding(bkey, binding) or changed
    for bkey in [k for k, b in out.bindings.items() if k not in wanted_bindings
                 and ((b.get("metadata") or {}).get("labels") or {}).get(BINDING_MANAGED_BY_LABEL) == KIND]:
        changed = out.set_binding(bkey, None) or changed
    changed = _retrieve_marker_works(out, providers_of) or changed
    for key in [k for k in out.overlays if k[:2] == (GROUP, KIND) and k not in out.user]:
        changed = out.set_overlay(key, None) or changed
    return changed


def _sync_mcs(out, ns: str, name: str, mcs: dict, clusters: dict, providers: set, wanted_bindings: dict, now: str,
              ctx) -> bool:
    """One MCS: its marker Works in the provider clusters, its Service's binding (into
    ``wanted_bindings``), its creation time and ``ServiceApplied`` condition. True when ``out`` changed."""
    from karmactl.api.templates import template_view

    key = (GROUP, KIND, ns, name)
    consumers = cluster_set(mcs, "consumerClusters", clusters)
    changed = False
    for cluster in sorted(providers):
        problem = _cluster_problem(clusters.get(cluster), cluster, "Provider", "MultiClusterService")
        if problem:
            ctx.warn(f"MultiClusterService {ns}/{name}: {problem}")
            continue
        wkey = ("work.karmada.io", "Work", execution_namespace(cluster), work_name(ns, name, KIND))
        changed = out.set_work(wkey, marker_work(mcs, cluster, out.works.get(wkey), now)) or changed
    svc_key = ("", "Service", ns, name)
    svc = out.user.get(svc_key)
    if svc is None:
        want = ("False", "ServiceAppliedFailed", f'services "{name}" not found')
    else:
        bkey = ("work.karmada.io", "ResourceBinding", ns, binding_name(name, "Service"))
        view = template_view(svc, out.overlays.get(svc_key))
        wanted_bindings[bkey] = service_binding(view, svc, mcs, sorted(providers | consumers),
                                                out.bindings.get(bkey), now)
        want = SERVICE_APPLIED
    # the creation time the API server would stamp (``get mcs`` shows its AGE), then the condition
    overlay = stamp_creation(key, mcs, out.overlays.get(key), now)
    return out.set_overlay(key, _with_condition(key, mcs, overlay, COND_SERVICE_APPLIED, want, now)) or changed


def _retrieve_marker_works(out, providers_of: dict) -> bool:
    """``retrieveMultiClusterService``: marker Works outside the providers go, with what was
    collected under them. True when ``out`` changed."""
    changed = False
    for wkey in sorted(k for k, w in out.works.items() if is_marker_work(w)):
        ref = _mcs_ref(out.works[wkey])
        if cluster_of_execution_namespace(wkey[2]) in providers_of.get(ref, ()):
            continue
        changed = out.set_work(wkey, None) or changed
        for ckey in sorted(k for k, w in out.works.items() if k[2] == wkey[2] and is_collected_work(w)
                           and _mcs_ref(w) == ref):
            changed = out.set_work(ckey, None) or changed
    return changed


def dispatch_step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``endpointslice-dispatch`` (``endpointslice_dispatch_controller.go``): every
    collected EndpointSlice Work copied to the MCS's consumers, orphaned copies deleted, condition
    ``EndpointSliceDispatched`` on the MCSs that have collected Works. True when ``out`` changed."""

    if _idle(loaded, ctx):
        return False
    clusters = {c["metadata"]["name"]: c for c in clusters_of(out)}
    mcss = live_mcs(out)
    changed = False
    sources = {k: w for k, w in out.works.items() if is_collected_work(w)}
    consumers_of = {ref: cluster_set(mcs, "consumerClusters", clusters) for ref, mcs in mcss.items()}
    desired, dispatched = _desired_dispatches(out, sources, mcss, consumers_of, clusters, now, ctx)
    for wkey, work in desired.items():
        changed = out.set_work(wkey, work) or changed
    for wkey in sorted(k for k, w in out.works.items() if is_dispatched_work(w) and k not in desired):
        work = out.works[wkey]
        provider = ((work.get("metadata") or {}).get("annotations") or {}).get(PROVISION_CLUSTER_ANNOTATION)
        ref = _mcs_ref(work)
        source_key = ("work.karmada.io", "Work", execution_namespace(provider), wkey[3])
        consumer = cluster_of_execution_namespace(wkey[2])
        if ref in mcss and source_key in sources and consumer in consumers_of[ref] and consumer != provider:
            continue  # a consumer Karmada skips for now (not ready, ...) keeps what it has
        changed = out.set_work(wkey, delete_work(work, now)) or changed
    for (ns, name), mcs in sorted(mcss.items()):
        key = (GROUP, KIND, ns, name)
        want = EPS_DISPATCHED if (ns, name) in dispatched else None
        changed = out.set_overlay(key, _with_condition(key, mcs, out.overlays.get(key), COND_EPS_DISPATCHED,
                                                       want, now)) or changed
    return changed


def _desired_dispatches(out, sources: dict, mcss: dict, consumers_of: dict, clusters: dict, now: str,
                        ctx) -> tuple[dict, set]:
    """``(consumer Work key -> dispatched copy of a collected EndpointSlice Work, {(namespace, name)
    of the MCSs that have collected Works})``."""
    desired: dict = {}
    dispatched: set = set()
    for skey in sorted(sources):
        source = sources[skey]
        ref = _mcs_ref(source)
        mcs = mcss.get(ref)
        provider = cluster_of_execution_namespace(skey[2])
        if mcs is None or provider is None or (source.get("metadata") or {}).get("deletionTimestamp"):
            continue
        dispatched.add(ref)
        for consumer in sorted(consumers_of[ref] - {provider}):
            problem = _cluster_problem(clusters.get(consumer), consumer, "Consumer", "EndpointSlice")
            if problem:
                ctx.warn(f"MultiClusterService {ref[0]}/{ref[1]}: {problem}")
                continue
            wkey = ("work.karmada.io", "Work", execution_namespace(consumer), skey[3])
            desired[wkey] = dispatched_work(source, mcs, provider, consumer, out.works.get(wkey), now)
    return desired, dispatched


__all__ = ["collect", "dispatch_step", "is_collected_work", "is_dispatched_work", "is_marker_work", "step"]
