"""Namespace sync: every user namespace goes to every member cluster.

Follows ``pkg/controllers/namespace/namespace_sync_controller.go``: for each Namespace except
reserved ones, ``default``, namespaces matching the skipped patterns and namespaces labelled
``namespace.karmada.io/skip-auto-propagation: "true"``, a Work named by the usual hash rule in every
cluster's execution namespace. (ClusterOverridePolicies are not applied to namespace Works here.)
Where a policy also selects the Namespace, its binding's Work takes that cluster's place.
"""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.objects import bump_generation, permanent_id
from karmactl.controllers.binding import delete_work, work_binding_key, work_records
from karmactl.controllers.names import execution_namespace, work_name

SKIP_AUTO_PROPAGATION_LABEL = "namespace.karmada.io/skip-auto-propagation"
NAMESPACE_WORK_LABEL = "namespace.karmada.io/name"


def _eligible(ns_obj: dict, config) -> bool:
    name = ns_obj["metadata"]["name"]
    if name == "default" or config.namespace_skipped(name):
        return False
    return (ns_obj["metadata"].get("labels") or {}).get(SKIP_AUTO_PROPAGATION_LABEL) != "true"


def reconcile(user: dict, clusters: list[str], works: dict, now: str, config) -> dict:
    """Desired namespace Works: key -> Work (new/changed) or None / terminating Work (removed)."""
    wanted: dict = {}
    for key, obj in user.items():
        if key[:2] != ("", "Namespace") or not _eligible(obj, config):
            continue
        name = key[3]
        manifest = {"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "labels": dict(sorted({**(obj["metadata"].get("labels") or {}),
                                                                      C.MANAGED_LABEL: "true"}.items()))}}
        if obj["metadata"].get("annotations"):
            manifest["metadata"]["annotations"] = dict(sorted(obj["metadata"]["annotations"].items()))
        for cluster in clusters:
            wns = execution_namespace(cluster)
            wname = work_name("", name, "Namespace")
            wanted[("work.karmada.io", "Work", wns, wname)] = (manifest, wns, wname, name)
    out: dict = {}
    for wkey, (manifest, wns, wname, ns_name) in wanted.items():
        old = works.get(wkey)
        if old is not None and work_binding_key(old) is not None:
            # A (Cluster)PropagationPolicy also selects this Namespace: its binding renders the
            # Work of the same name in this cluster, and namespace sync leaves it alone (else the
            # two would rewrite one Work back and forth).
            continue
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
        if work_records(old):
            work["metadata"]["annotations"] = work_records(old)
        if old is not None and "status" in old:
            work["status"] = old["status"]
        bump_generation(old, work)
        if work != old:
            out[wkey] = work
    for wkey, work in works.items():
        if NAMESPACE_WORK_LABEL in ((work.get("metadata") or {}).get("labels") or {}) and wkey not in wanted:
            new = delete_work(work, now)
            if new is not work:
                out[wkey] = new
    return out


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``namespace-sync``: a Namespace Work in every member cluster for each user
    Namespace (``pkg/controllers/namespace/namespace_sync_controller.go``)."""
    from karmactl.controllers.detector import template_inputs

    config = template_inputs(loaded, ctx).config
    clusters = [key[3] for key in loaded.keys_of_kind("cluster.karmada.io", "Cluster")]
    changed = False
    for wkey, w in reconcile(loaded.user, clusters, out.works, now, config).items():
        changed = out.set_work(wkey, w) or changed
    return changed
