"""Namespace sync: every user namespace goes to every member cluster.

Follows ``pkg/controllers/namespace/namespace_sync_controller.go``: for each Namespace except
reserved ones, ``default``, namespaces matching the skipped patterns and namespaces labelled
``namespace.karmada.io/skip-auto-propagation: "true"``, a Work named by the usual hash rule in every
cluster's execution namespace. ClusterOverridePolicies that select the Namespace are applied per
cluster (OverridePolicies are namespaced and never apply to a Namespace) and recorded in the Work's
``policy.karmada.io/applied-cluster-overrides``; a rule that fails to apply leaves that cluster's
Work as it was, with a warning (Karmada returns the error and retries). Where a policy also selects
the Namespace, its binding's Work takes that cluster's place.
"""
from __future__ import annotations

import json

from karmactl.api import constants as C
from karmactl.api.objects import bump_generation, permanent_id
from karmactl.api.names import execution_namespace, work_name
from karmactl.controllers.helper.template import template_inputs
from karmactl.controllers.helper.work import delete_work, render_hooks, work_binding_key, work_records

SKIP_AUTO_PROPAGATION_LABEL = "namespace.karmada.io/skip-auto-propagation"
NAMESPACE_WORK_LABEL = "namespace.karmada.io/name"


def _eligible(ns_obj: dict, config) -> bool:
    name = ns_obj["metadata"]["name"]
    if name == "default" or config.namespace_skipped(name):
        return False
    return (ns_obj["metadata"].get("labels") or {}).get(SKIP_AUTO_PROPAGATION_LABEL) != "true"


def _finish(manifest: dict) -> dict:
    """The manifest as ``CreateOrUpdateWork`` stores it: Karmada's managed label, sorted metadata."""
    md = dict(manifest.get("metadata") or {})
    md["labels"] = dict(sorted({**(md.get("labels") or {}), C.MANAGED_LABEL: "true"}.items()))
    if md.get("annotations"):
        md["annotations"] = dict(sorted(md["annotations"].items()))
    else:
        md.pop("annotations", None)
    return {**manifest, "metadata": md}


def reconcile(user: dict, clusters: list[str], works: dict, now: str, config, cluster_overrides=None,
              warn=lambda _line: None) -> dict:
    """Desired namespace Works: key -> Work (new/changed) or None / terminating Work (removed).

    Args:
        cluster_overrides: ``f(manifest, cluster name) -> (manifest, applied cluster overrides)`` applying
            the ClusterOverridePolicies (``pkg/util/overridemanager``), or None when there are none; it
            raises when a rule fails.
        warn: receives one line per Work left as it was because an override failed.
    """
    wanted: dict = {}
    for key, obj in user.items():
        if key[:2] != ("", "Namespace") or not _eligible(obj, config):
            continue
        name = key[3]
        base = {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "labels": dict(obj["metadata"].get("labels") or {})}}
        if obj["metadata"].get("annotations"):
            base["metadata"]["annotations"] = dict(obj["metadata"]["annotations"])
        plain = _finish(base)
        for cluster in clusters:
            wns = execution_namespace(cluster)
            wname = work_name("", name, "Namespace")
            wkey = ("work.karmada.io", "Work", wns, wname)
            manifest, applied = plain, []
            if cluster_overrides is not None:
                try:
                    overridden, applied = cluster_overrides(base, cluster)
                except Exception as exc:  # noqa: BLE001 - an override error fails this cluster's Work only
                    warn(f"sync namespace({name}) to cluster({cluster}) failed due to: {exc}")
                    wanted[wkey] = None
                    continue
                manifest = _finish(overridden)
            wanted[wkey] = (manifest, wns, wname, name, applied)
    out: dict = {}
    for wkey, entry in wanted.items():
        if entry is None:
            continue  # kept as it is (override failure)
        manifest, wns, wname, ns_name, applied = entry
        old = works.get(wkey)
        if old is not None and work_binding_key(old) is not None:
            # A (Cluster)PropagationPolicy also selects this Namespace: its binding renders the
            # Work of the same name in this cluster, and namespace sync leaves it alone (else the
            # two would rewrite one Work back and forth).
            continue
        work = _namespace_work(manifest, wns, wname, ns_name, applied, old, now)
        if work != old:
            out[wkey] = work
    for wkey, work in works.items():
        if NAMESPACE_WORK_LABEL in ((work.get("metadata") or {}).get("labels") or {}) and wkey not in wanted:
            new = delete_work(work, now)
            if new is not work:
                out[wkey] = new
    return out


def _namespace_work(manifest: dict, wns: str, wname: str, ns_name: str, applied: list, old: dict | None,
                    now: str) -> dict:
    """The Work carrying one Namespace to one cluster (``old`` keeps its creation time, generation,
    records and status)."""
    old_meta = (old or {}).get("metadata") or {}
    work = {"apiVersion": C.WORK_API_V1, "kind": "Work",
            "metadata": {"name": wname, "namespace": wns,
                         "labels": {NAMESPACE_WORK_LABEL: ns_name,
                                    C.WORK_PERMANENT_ID_LABEL: permanent_id("Work", wns, wname)},
                         "finalizers": [C.EXECUTION_CONTROLLER_FINALIZER],
                         "creationTimestamp": old_meta.get("creationTimestamp") or now,
                         "generation": old_meta.get("generation") or 1},
            "spec": {"workload": {"manifests": [manifest]}, "suspendDispatching": False,
                     "preserveResourcesOnDeletion": False}}
    annotations = dict(work_records(old))
    if applied:
        annotations[C.APPLIED_CLUSTER_OVERRIDES_ANNOTATION] = json.dumps(applied, separators=(",", ":"))
    if annotations:
        work["metadata"]["annotations"] = dict(sorted(annotations.items()))
    if old is not None and "status" in old:
        work["status"] = old["status"]
    bump_generation(old, work)
    return work


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``namespace-sync``: a Namespace Work in every member cluster for each user
    Namespace, ClusterOverridePolicies applied (``pkg/controllers/namespace/namespace_sync_controller.go``)."""

    config = template_inputs(loaded, ctx).config
    clusters = [key[3] for key in loaded.keys_of_kind("cluster.karmada.io", "Cluster")]
    cluster_overrides = None
    if loaded.keys_of_kind("policy.karmada.io", "ClusterOverridePolicy"):
        hooks = (ctx.memo.get("binding") or {}).get("hooks") or render_hooks(loaded)

        def apply_cops(manifest, cluster):
            overridden, _ops_applied, applied = hooks.apply_overrides(manifest, cluster)
            return overridden, applied
        cluster_overrides = apply_cops
    changed = False
    for wkey, w in reconcile(loaded.user, clusters, out.works, now, config, cluster_overrides, ctx.warn).items():
        changed = out.set_work(wkey, w) or changed
    return changed
