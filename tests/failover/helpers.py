"""Builders for failover unit tests: Clusters, bindings, snapshots and step contexts as plain dicts."""
from __future__ import annotations

import json

from karmactl.api.kinds import KindRegistry
from karmactl.api.snapshot import Settings, Snapshot, StepContext

T0 = "2026-01-01T00:00:00Z"


def at(seconds: float) -> str:
    """T0 + seconds as RFC 3339."""
    from karmactl.api.objects import add_seconds
    return add_seconds(T0, seconds)


def ready(status: str | None) -> dict:
    """A Cluster status with the given Ready status (None = a status without Ready)."""
    conds = [] if status is None else [{"type": "Ready", "status": status, "reason": "R", "message": "",
                                         "lastTransitionTime": T0}]
    return {"conditions": conds}


def cluster(name: str, taints=None, labels=None, status=None) -> dict:
    c = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
         "metadata": {"name": name, **({"labels": labels} if labels else {})},
         "spec": {"syncMode": "Push", **({"taints": taints} if taints else {})}}
    if status is not None:
        c["status"] = status
    return c


def taint(key: str, effect: str, added: str | None = None, value: str = "") -> dict:
    t = {"key": key}
    if value:
        t["value"] = value
    t["effect"] = effect
    if added:
        t["timeAdded"] = added
    return t


def binding(name: str = "nginx-deployment", clusters=None, tolerations=None, failover=None, kind="ResourceBinding",
            tasks=None, aggregated=None, applied_placement=True, propagate_deps=True, generation=1,
            observed_generation=1, replicas=3, history=None) -> dict:
    placement = {"clusterAffinity": {"clusterNames": ["member1", "member2", "member3"]}}
    if tolerations is not None:
        placement["clusterTolerations"] = tolerations
    meta = {"name": name, "generation": generation,
            "labels": {"propagationpolicy.karmada.io/permanent-id": "pp-id",
                       "resourcebinding.karmada.io/permanent-id": "rb-id"}}
    if kind == "ResourceBinding":
        meta["namespace"] = "default"
    if applied_placement:
        meta["annotations"] = {"policy.karmada.io/applied-placement": json.dumps(placement)}
    spec = {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"},
            "replicas": replicas, "placement": placement}
    if propagate_deps:
        spec["propagateDeps"] = True
    if clusters is not None:
        spec["clusters"] = [{"name": n, "replicas": r} if r else {"name": n} for n, r in clusters]
    if failover is not None:
        spec["failover"] = failover
    if tasks is not None:
        spec["gracefulEvictionTasks"] = tasks
    if history is not None:
        spec["activeEvictionHistory"] = history
    status = {"schedulerObservedGeneration": observed_generation}
    if aggregated is not None:
        status["aggregatedStatus"] = [{"clusterName": n, "applied": True, "health": h} for n, h in aggregated]
    return {"apiVersion": "work.karmada.io/v1alpha2", "kind": kind, "metadata": meta, "spec": spec, "status": status}


def ctx(**settings) -> StepContext:
    return StepContext(settings=Settings(**settings))


def snapshot(clusters=(), bindings=(), policies=(), overlays=None) -> Snapshot:
    snap = Snapshot(KindRegistry())
    for c in clusters:
        snap.user[("cluster.karmada.io", "Cluster", "", c["metadata"]["name"])] = c
    for p in policies:
        snap.user[("policy.karmada.io", "ClusterTaintPolicy", "", p["metadata"]["name"])] = p
    for b in bindings:
        m = b["metadata"]
        snap.bindings[("work.karmada.io", b["kind"], m.get("namespace") or "", m["name"])] = b
    for k, v in (overlays or {}).items():
        snap.overlays[("cluster.karmada.io", "Cluster", "", k)] = v
    return snap


def taint_policy(name: str, taints, add_on=None, remove_on=None, targets=None, created=None) -> dict:
    spec = {"taints": taints}
    if add_on is not None:
        spec["addOnConditions"] = add_on
    if remove_on is not None:
        spec["removeOnConditions"] = remove_on
    if targets is not None:
        spec["targetClusters"] = targets
    meta = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterTaintPolicy", "metadata": meta, "spec": spec}


def work(cluster: str, health: str | None, binding_id: str = "rb-id") -> tuple:
    """(key, Work) of the nginx Deployment in ``cluster``: applied, with a manifest status of ``health``
    (None: not applied)."""
    manifest = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx", "namespace": "default"}}
    w = {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
         "metadata": {"name": "nginx-687f7fb96f", "namespace": f"karmada-es-{cluster}",
                      "labels": {"resourcebinding.karmada.io/permanent-id": binding_id}},
         "spec": {"workload": {"manifests": [manifest]}}}
    if health is not None:
        w["status"] = {"conditions": [{"type": "Applied", "status": "True"}],
                       "manifestStatuses": [{"identifier": {"ordinal": 0, "group": "apps", "version": "v1",
                                                            "kind": "Deployment", "namespace": "default",
                                                            "name": "nginx"}, "status": {}, "health": health}]}
    return ("work.karmada.io", "Work", f"karmada-es-{cluster}", "nginx-687f7fb96f"), w
