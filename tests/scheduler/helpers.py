"""Builders for Cluster and ResourceBinding dicts used by the scheduler tests."""
from __future__ import annotations

from karmactl.api import constants as C

NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-01T01:00:00Z"

DEPLOY_API = [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
              {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]}]


def make_cluster(name: str, *, labels=None, region=None, zones=None, provider=None, taints=None,
                 pods: int | None = 110, cpu=None, memory=None, allocated=None, apis=DEPLOY_API,
                 deleting=False, models=None, modelings=None, summary=True) -> dict:
    """A Cluster dict; ``pods``/``cpu``/``memory`` fill ``resourceSummary.allocatable``."""
    meta = {"name": name, "labels": dict(labels or {})}
    if deleting:
        meta["deletionTimestamp"] = NOW
    spec = {"syncMode": "Push"}
    if region:
        spec["region"] = region
    if zones:
        spec["zones"] = list(zones)
    if provider:
        spec["provider"] = provider
    if taints:
        spec["taints"] = list(taints)
    if models:
        spec["resourceModels"] = models
    status: dict = {}
    if apis is not None:
        status["apiEnablements"] = apis
    if summary:
        allocatable = {}
        if pods is not None:
            allocatable["pods"] = str(pods)
        if cpu is not None:
            allocatable["cpu"] = str(cpu)
        if memory is not None:
            allocatable["memory"] = str(memory)
        rs = {"allocatable": allocatable}
        if allocated:
            rs["allocated"] = dict(allocated)
        if modelings:
            rs["allocatableModelings"] = modelings
        status["resourceSummary"] = rs
    return {"apiVersion": C.CLUSTER_API, "kind": "Cluster", "metadata": meta, "spec": spec, "status": status}


def make_binding(*, replicas: int = 0, placement=None, clusters=None, requirements=None, uid: str = "",
                 kind: str = "Deployment", api_version: str = "apps/v1", status=None, eviction_tasks=None,
                 generation: int = 1, labels=None, annotations=None, **spec_extra) -> dict:
    """A ResourceBinding dict claimed by a PropagationPolicy."""
    spec = {
        "resource": {"apiVersion": api_version, "kind": kind, "namespace": "default", "name": "nginx", "uid": uid},
        "placement": placement if placement is not None else {},
    }
    if replicas:
        spec["replicas"] = replicas
    if requirements is not None:
        spec["replicaRequirements"] = requirements
    if clusters is not None:
        spec["clusters"] = clusters
    if eviction_tasks:
        spec["gracefulEvictionTasks"] = eviction_tasks
    spec.update(spec_extra)
    lbls = {C.PP_PERMANENT_ID_LABEL: "pp-id"} if labels is None else labels
    meta = {"name": "nginx-deployment", "namespace": "default", "generation": generation, "labels": lbls}
    if annotations:
        meta["annotations"] = dict(annotations)
    b = {"apiVersion": C.WORK_API_V2, "kind": "ResourceBinding", "metadata": meta, "spec": spec}
    if status is not None:
        b["status"] = status
    return b


def divided(preference="Weighted", weight_preference=None, **extra) -> dict:
    rs = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": preference}
    if weight_preference is not None:
        rs["weightPreference"] = weight_preference
    return {"replicaScheduling": rs, **extra}


DYNAMIC = {"dynamicWeight": "AvailableReplicas"}


def targets(binding: dict) -> dict[str, int]:
    return {c["name"]: c.get("replicas", 0) for c in binding["spec"].get("clusters") or []}


def condition(binding: dict, ctype: str = "Scheduled") -> dict | None:
    for c in (binding.get("status") or {}).get("conditions") or []:
        if c["type"] == ctype:
            return c
    return None
