"""The emulator's resource catalogue: built-in kinds, CRD-defined kinds, discovery and OpenAPI documents.

A :class:`Catalogue` belongs to one member server (CRDs differ per member). Storage is keyed by
``(group, plural)``; every served version of a resource shares one storage and objects are returned with
the requested ``apiVersion`` (no conversion, which is what the clients we serve need).
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field

from karmactl.api import openapi as schemas

SERVER_VERSION = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0",
    "gitCommit": "9edcffcde5595e8a5b1a35f88c421764e575afce",
    "gitTreeState": "clean",
    "buildDate": "2024-08-13T07:28:49Z",
    "goVersion": "go1.22.5",
    "compiler": "gc",
    "platform": "linux/amd64",
}

RW_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
SUB_VERBS = ["get", "patch", "update"]
# Resources whose kube-apiserver storage has no collection delete.
NO_DELETECOLLECTION = {("", "namespaces"), ("", "services")}


@dataclass
class ResourceType:
    """One served resource of one group-version.

    Attributes:
        group: API group ("" for core); version: the served version; kind: CamelCase kind;
        plural / singular: resource names; namespaced: scope; short_names, categories: for discovery;
        status / scale: whether the subresource exists; list_kind: kind of lists (``<Kind>List``);
        scale_paths: for CRDs, (specReplicasPath, statusReplicasPath, labelSelectorPath).
        review: a create-only review (SelfSubjectAccessReview...): answered, never stored.
    """

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: list[str] = field(default_factory=list)
    status: bool = False
    scale: bool = False
    categories: list[str] = field(default_factory=list)
    singular: str = ""
    list_kind: str = ""
    crd: bool = False
    scale_paths: tuple[str, str, str] = (".spec.replicas", ".status.replicas", "")
    printer_columns: list[dict] = field(default_factory=list)
    review: bool = False

    def __post_init__(self) -> None:
        self.singular = self.singular or self.kind.lower()
        self.list_kind = self.list_kind or self.kind + "List"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        """Storage key shared by all versions of this resource."""
        return (self.group, self.plural)

    @property
    def qualified(self) -> str:
        """``plural.group`` as API error messages spell it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _rt(gv: str, kind: str, plural: str, namespaced: bool = True, short: str = "", sub: str = "",
        cats: str = "") -> ResourceType:
    group, _, version = gv.rpartition("/")
    return ResourceType(group, version, kind, plural, namespaced, short.split() if short else [],
                        status="status" in sub, scale="scale" in sub, categories=cats.split() if cats else [])


def builtin_types() -> list[ResourceType]:
    """Every built-in resource the emulator serves (a fresh list; callers may mutate it)."""
    return [
        _rt("v1", "Namespace", "namespaces", False, "ns", "status"),
        _rt("v1", "ConfigMap", "configmaps", True, "cm"),
        _rt("v1", "Secret", "secrets"),
        _rt("v1", "Service", "services", True, "svc", "status", "all"),
        _rt("v1", "ServiceAccount", "serviceaccounts", True, "sa"),
        _rt("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, "pvc", "status"),
        _rt("v1", "PersistentVolume", "persistentvolumes", False, "pv", "status"),
        _rt("v1", "Pod", "pods", True, "po", "status", "all"),
        _rt("v1", "Node", "nodes", False, "no", "status"),
        _rt("v1", "Event", "events", True, "ev"),
        _rt("v1", "Endpoints", "endpoints", True, "ep"),
        _rt("v1", "LimitRange", "limitranges", True, "limits"),
        _rt("v1", "ResourceQuota", "resourcequotas", True, "quota", "status"),
        _rt("apps/v1", "Deployment", "deployments", True, "deploy", "status scale", "all"),
        _rt("apps/v1", "StatefulSet", "statefulsets", True, "sts", "status scale", "all"),
        _rt("apps/v1", "DaemonSet", "daemonsets", True, "ds", "status", "all"),
        _rt("apps/v1", "ReplicaSet", "replicasets", True, "rs", "status scale", "all"),
        _rt("apps/v1", "ControllerRevision", "controllerrevisions"),
        _rt("batch/v1", "Job", "jobs", True, "", "status", "all"),
        _rt("batch/v1", "CronJob", "cronjobs", True, "cj", "status", "all"),
        _rt("networking.k8s.io/v1", "Ingress", "ingresses", True, "ing", "status"),
        _rt("networking.k8s.io/v1", "IngressClass", "ingressclasses", False),
        _rt("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", True, "netpol"),
        _rt("discovery.k8s.io/v1", "EndpointSlice", "endpointslices"),
        _rt("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", True, "pdb", "status"),
        _rt("rbac.authorization.k8s.io/v1", "Role", "roles"),
        _rt("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"),
        _rt("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False),
        _rt("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False),
        _rt("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, "hpa", "status", "all"),
        _rt("autoscaling/v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, "hpa", "status", "all"),
        _rt("storage.k8s.io/v1", "StorageClass", "storageclasses", False, "sc"),
        _rt("coordination.k8s.io/v1", "Lease", "leases"),
        _rt("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False,
            "crd crds", "status"),
        ResourceType("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False,
                     singular="", review=True),
        ResourceType("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False,
                     singular="", review=True),
    ]


def crd_types(crd: dict) -> list[ResourceType]:
    """The resource types a CustomResourceDefinition serves (one per served version)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    out = []
    for ver in spec.get("versions") or []:
        if not ver.get("served", True):
            continue
        subs = ver.get("subresources") or {}
        scale = subs.get("scale")
        rt = ResourceType(
            spec.get("group", ""), ver.get("name", "v1"), names.get("kind", ""), names.get("plural", ""),
            spec.get("scope", "Namespaced") == "Namespaced", list(names.get("shortNames") or []),
            status="status" in subs, scale=scale is not None, categories=list(names.get("categories") or []),
            singular=names.get("singular", ""), list_kind=names.get("listKind", ""), crd=True,
            printer_columns=list(ver.get("additionalPrinterColumns") or []))
        if scale is not None:
            rt.scale_paths = (scale.get("specReplicasPath", ".spec.replicas"),
                              scale.get("statusReplicasPath", ".status.replicas"),
                              scale.get("labelSelectorPath", ""))
        out.append(rt)
    return out


class Catalogue:
    """The resource types one member serves; thread-safe; CRDs add and remove types at run time."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._builtin = builtin_types()
        self._crds: dict[str, list[ResourceType]] = {}
        self._docs_cache: dict[str, tuple[str, dict]] | None = None

    def all(self) -> list[ResourceType]:
        with self._lock:
            out = list(self._builtin)
            for types in self._crds.values():
                out.extend(types)
            return out

    def add_crd(self, crd: dict) -> None:
        with self._lock:
            self._crds[crd["metadata"]["name"]] = crd_types(crd)
            self._docs_cache = None

    def remove_crd(self, name: str) -> None:
        with self._lock:
            self._crds.pop(name, None)
            self._docs_cache = None

    def crd_storage_key(self, name: str) -> tuple[str, str] | None:
        with self._lock:
            types = self._crds.get(name)
            return types[0].key if types else None

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at ``/apis/<group>/<version>/<plural>`` or None."""
        for rt in self.all():
            if rt.group == group and rt.version == version and rt.plural == plural:
                return rt
        return None

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        for rt in self.all():
            if rt.group == group and rt.version == version and rt.kind == kind:
                return rt
        return None

    def by_key(self, key: tuple[str, str]) -> ResourceType | None:
        """The preferred served type for a storage key."""
        for rt in self.all():
            if rt.key == key:
                return rt
        return None

    def group_versions(self) -> dict[str, list[str]]:
        """group -> served versions, preferred first, in a stable order."""
        out: dict[str, list[str]] = {}
        for rt in self.all():
            versions = out.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        return out

    # ---- discovery -------------------------------------------------------------------------------

    def api_versions(self, server_address: str) -> dict:
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}

    def _group_doc(self, group: str, versions: list[str]) -> dict:
        vs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": vs, "preferredVersion": vs[0]}

    def api_group_list(self) -> dict:
        groups = [self._group_doc(g, vs) for g, vs in self.group_versions().items() if g]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def api_group(self, group: str) -> dict | None:
        versions = self.group_versions().get(group)
        if not group or not versions:
            return None
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group_doc(group, versions)}

    def resource_list(self, group: str, version: str) -> dict | None:
        types = [rt for rt in self.all() if rt.group == group and rt.version == version]
        if not types:
            return None
        resources = []
        for rt in types:
            entry = {"name": rt.plural, "singularName": "" if rt.review else rt.singular,
                     "namespaced": rt.namespaced, "kind": rt.kind,
                     "verbs": ["create"] if rt.review else
                     [v for v in RW_VERBS if not (v == "deletecollection" and rt.key in NO_DELETECOLLECTION)]}
            if rt.short_names:
                entry["shortNames"] = rt.short_names
            if rt.categories:
                entry["categories"] = rt.categories
            resources.append(entry)
            if rt.status:
                resources.append({"name": rt.plural + "/status", "singularName": "", "namespaced": rt.namespaced,
                                  "kind": rt.kind, "verbs": list(SUB_VERBS)})
            if rt.key == ("", "pods"):
                resources.append({"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod",
                                  "verbs": ["get"]})
            if rt.scale:
                resources.append({"name": rt.plural + "/scale", "singularName": "", "namespaced": rt.namespaced,
                                  "group": "autoscaling", "version": "v1", "kind": "Scale",
                                  "verbs": list(SUB_VERBS)})
        gv = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}

    # ---- OpenAPI ---------------------------------------------------------------------------------
    # Built-in kinds get their real schemas (:mod:`.schemas`), so `kubectl explain` works; custom
    # kinds a permissive object schema. kubectl's apply validation asks the OpenAPI v3 document of the
    # object's group-version whether PATCH accepts the `fieldValidation` query parameter; if so it
    # leaves validation to the server (see Store._admit). So each document lists, per kind, a PATCH
    # operation tagged with x-kubernetes-group-version-kind and that parameter. The PATCH request body
    # deliberately omits strategic-merge-patch+json: kubectl then builds its patches from its
    # compiled-in types, as it does against kube-apiserver.

    def _openapi_docs(self) -> dict[str, tuple[str, dict]]:
        with self._lock:
            if self._docs_cache is not None:
                return self._docs_cache
            docs: dict[str, tuple[str, dict]] = {}
            by_gv: dict[tuple[str, str], list[ResourceType]] = {}
            for rt in self.all():
                by_gv.setdefault((rt.group, rt.version), []).append(rt)
            for (group, version), types in by_gv.items():
                key = f"apis/{group}/{version}" if group else f"api/{version}"
                doc = _openapi_doc(group, version, types)
                digest = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
                docs[key] = (digest, doc)
            self._docs_cache = docs
            return docs

    def openapi_index(self) -> dict:
        return {"paths": {k: {"serverRelativeURL": f"/openapi/v3/{k}?hash={h}"}
                          for k, (h, _) in sorted(self._openapi_docs().items())}}

    def openapi_doc(self, key: str) -> dict | None:
        entry = self._openapi_docs().get(key.strip("/"))
        return entry[1] if entry else None

    def openapi_v2(self) -> dict:
        """The Swagger 2.0 document of ``/openapi/v2`` (JSON): every built-in definition, a permissive
        one per custom kind; no paths (clients read it for schemas, e.g. ``kubectl explain
        --output plaintext-openapiv2``)."""
        definitions = dict(schemas.openapi_v2_definitions())
        for rt in self.all():
            if rt.crd:
                definitions[_schema_name(rt)] = _permissive(rt)
        return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": SERVER_VERSION["gitVersion"]},
                "paths": {}, "definitions": definitions}


def _schema_name(rt: ResourceType) -> str:
    if not rt.crd:
        name = schemas.definition_name(rt.group, rt.version, rt.kind)
        if name:
            return name
    group = rt.group or "core"
    rev = ".".join(reversed(group.split("."))) if rt.crd else f"io.k8s.api.{group.split('.')[0]}"
    return f"{rev}.{rt.version}.{rt.kind}"


def _permissive(rt: ResourceType) -> dict:
    return {
        "type": "object",
        "description": f"{rt.kind} (custom resource; the emulator accepts any fields)",
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-group-version-kind": [{"group": rt.group, "version": rt.version, "kind": rt.kind}],
        "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                       "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }


def _openapi_doc(group: str, version: str, types: list[ResourceType]) -> dict:
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    paths: dict[str, dict] = {}
    components: dict[str, dict] = {}
    builtin: list[str] = []
    params = [{"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
              {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
              {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": True}}]
    ok = {"200": {"description": "OK"}}
    for rt in types:
        gvk = {"group": group, "version": version, "kind": rt.kind}
        ref = {"$ref": f"#/components/schemas/{_schema_name(rt)}"}
        base = f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
        body = {"content": {"application/json": {"schema": ref}}}
        patch_body = {"content": {t: {"schema": {"type": "object"}} for t in
                                  ("application/json-patch+json", "application/merge-patch+json",
                                   "application/apply-patch+yaml")}}
        paths[base] = {
            "get": {"x-kubernetes-action": "list", "x-kubernetes-group-version-kind": gvk, "responses": ok},
            "post": {"x-kubernetes-action": "post", "x-kubernetes-group-version-kind": gvk,
                     "parameters": params, "requestBody": body, "responses": ok},
        }
        paths[base + "/{name}"] = {
            "get": {"x-kubernetes-action": "get", "x-kubernetes-group-version-kind": gvk, "responses": ok},
            "put": {"x-kubernetes-action": "put", "x-kubernetes-group-version-kind": gvk,
                    "parameters": params, "requestBody": body, "responses": ok},
            "patch": {"x-kubernetes-action": "patch", "x-kubernetes-group-version-kind": gvk,
                      "parameters": params, "requestBody": patch_body, "responses": ok},
            "delete": {"x-kubernetes-action": "delete", "x-kubernetes-group-version-kind": gvk, "responses": ok},
        }
        if rt.crd or _schema_name(rt) not in schemas.definitions():
            components[_schema_name(rt)] = _permissive(rt)
        else:
            builtin.append(_schema_name(rt))
    components.update(schemas.closure(builtin, "#/components/schemas/"))
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": SERVER_VERSION["gitVersion"]},
            "paths": paths, "components": {"schemas": components}}
