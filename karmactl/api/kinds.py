"""The registry of kinds karmactl knows: API group, versions, plural, short names and scope.

A kind is looked up by ``(apiVersion, kind)`` when loading files and by any of its names
(``deployments``, ``deployment``, ``deploy``, ``Deployment``) on the command line, as kubectl does.
CustomResourceDefinitions found in the state directory add kinds at load time
(:func:`KindRegistry.add_crd`).

Source of the Karmada kinds: ``charts/karmada/_crds/bases/**`` and ``pkg/apis/cluster/v1alpha1``.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class KindInfo:
    """One API kind.

    Attributes:
        group: API group ("" for core).
        version: preferred version (the one karmactl writes).
        kind: CamelCase kind.
        plural: lowercase plural resource name.
        namespaced: whether objects live in a namespace.
        short_names: kubectl short names.
        versions: every accepted version (the preferred one included).
        karmada: a Karmada control-plane kind (never propagated as a template).
    """

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    karmada: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def resource_ref(self) -> str:
        """``plural.group`` (e.g. ``deployments.apps``), kubectl's fully qualified resource name."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def accepts(self, api_version: str) -> bool:
        group, _, version = api_version.rpartition("/")
        return group == self.group and version in (self.versions or (self.version,))


def _k(group, version, kind, plural, namespaced, short=(), versions=(), karmada=False):
    return KindInfo(group, version, kind, plural, namespaced, tuple(short),
                    tuple(versions) or (version,), karmada)


BUILTIN_KINDS: tuple[KindInfo, ...] = (
    # Karmada control-plane kinds
    _k("cluster.karmada.io", "v1alpha1", "Cluster", "clusters", False, ("cluster",), karmada=True),
    _k("policy.karmada.io", "v1alpha1", "PropagationPolicy", "propagationpolicies", True, ("pp",), karmada=True),
    _k("policy.karmada.io", "v1alpha1", "ClusterPropagationPolicy", "clusterpropagationpolicies", False, ("cpp",), karmada=True),
    _k("policy.karmada.io", "v1alpha1", "OverridePolicy", "overridepolicies", True, ("op",), karmada=True),
    _k("policy.karmada.io", "v1alpha1", "ClusterOverridePolicy", "clusteroverridepolicies", False, ("cop",), karmada=True),
    _k("policy.karmada.io", "v1alpha1", "ClusterTaintPolicy", "clustertaintpolicies", False, (), karmada=True),
    _k("work.karmada.io", "v1alpha2", "ResourceBinding", "resourcebindings", True, ("rb",), ("v1alpha2", "v1alpha1"), karmada=True),
    _k("work.karmada.io", "v1alpha2", "ClusterResourceBinding", "clusterresourcebindings", False, ("crb",), ("v1alpha2", "v1alpha1"), karmada=True),
    _k("work.karmada.io", "v1alpha1", "Work", "works", True, ("wk", "work"), karmada=True),
    _k("remedy.karmada.io", "v1alpha1", "Remedy", "remedies", False, ("remedy",), karmada=True),
    _k("networking.karmada.io", "v1alpha1", "MultiClusterIngress", "multiclusteringresses", True, ("mci",), karmada=True),
    _k("networking.karmada.io", "v1alpha1", "MultiClusterService", "multiclusterservices", True, ("mcs",), karmada=True),
    _k("config.karmada.io", "v1alpha1", "ResourceInterpreterCustomization", "resourceinterpretercustomizations", False, ("ric",), karmada=True),
    # core
    _k("", "v1", "Namespace", "namespaces", False, ("ns",)),
    _k("", "v1", "ConfigMap", "configmaps", True, ("cm",)),
    _k("", "v1", "Secret", "secrets", True),
    _k("", "v1", "Service", "services", True, ("svc",)),
    _k("", "v1", "ServiceAccount", "serviceaccounts", True, ("sa",)),
    _k("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("pvc",)),
    _k("", "v1", "PersistentVolume", "persistentvolumes", False, ("pv",)),
    _k("", "v1", "Pod", "pods", True, ("po",)),
    _k("", "v1", "LimitRange", "limitranges", True, ("limits",)),
    _k("", "v1", "ResourceQuota", "resourcequotas", True, ("quota",)),
    _k("", "v1", "Endpoints", "endpoints", True, ("ep",)),
    _k("", "v1", "Node", "nodes", False, ("no",)),
    # apps
    _k("apps", "v1", "Deployment", "deployments", True, ("deploy",)),
    _k("apps", "v1", "StatefulSet", "statefulsets", True, ("sts",)),
    _k("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",)),
    _k("apps", "v1", "ReplicaSet", "replicasets", True, ("rs",)),
    # batch
    _k("batch", "v1", "Job", "jobs", True),
    _k("batch", "v1", "CronJob", "cronjobs", True, ("cj",)),
    # networking / policy / rbac / autoscaling / scheduling / apiextensions
    _k("networking.k8s.io", "v1", "Ingress", "ingresses", True, ("ing",)),
    _k("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, ("netpol",)),
    _k("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",)),
    _k("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
    _k("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    _k("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    _k("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    _k("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("hpa",), ("v2", "v1")),
    _k("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ("pc",)),
    _k("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ("sc",)),
    # recorded by runs under computed/events/, never written by people (karmactl/store/events.py)
    _k("events.k8s.io", "v1", "Event", "events", True, ("ev",)),
    _k("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False, ("crd", "crds")),
    # Karmada control-plane kinds added later
    _k("apps.karmada.io", "v1alpha1", "WorkloadRebalancer", "workloadrebalancers", False, (), karmada=True),
    _k("policy.karmada.io", "v1alpha1", "FederatedResourceQuota", "federatedresourcequotas", True, (), karmada=True),
)


# Karmada kinds karmactl does not implement: refused by name (even when a CRD in the state directory
# defines them) rather than stored and never acted upon.
UNSUPPORTED_KARMADA_KINDS: dict[tuple[str, str], str] = {
    ("autoscaling.karmada.io", "FederatedHPA"): "federated autoscaling",
    ("autoscaling.karmada.io", "CronFederatedHPA"): "scheduled federated autoscaling",
}


@dataclass
class KindRegistry:
    """Lookup of :class:`KindInfo` by (group, kind), by apiVersion+kind and by command-line name."""

    _by_group_kind: dict[tuple[str, str], KindInfo] = field(default_factory=dict)
    _by_name: dict[str, list[KindInfo]] = field(default_factory=dict)

    @classmethod
    def default(cls) -> "KindRegistry":
        reg = cls()
        for info in BUILTIN_KINDS:
            reg.add(info)
        return reg

    def add(self, info: KindInfo) -> None:
        self._by_group_kind[(info.group, info.kind)] = info
        names = {info.kind.lower(), info.plural, info.singular, *info.short_names,
                 info.resource_ref, f"{info.singular}.{info.group}" if info.group else info.singular}
        for name in names:
            bucket = self._by_name.setdefault(name.lower(), [])
            if info not in bucket:
                bucket.append(info)

    def add_crd(self, crd: dict) -> KindInfo | None:
        """Register the kind a CustomResourceDefinition object defines; returns it, or None (and
        registers nothing) when the CRD is malformed: a field of the wrong shape (``spec: [1]``,
        ``names: [a]``, a list as ``group``), a scope other than Namespaced/Cluster, no named
        version. Validation (``validation_rules.crd_errors``) then says what is wrong."""
        found = crd_kind(crd)
        if found is None:
            return None
        group, kind, plural, namespaced, short_names, versions, storage = found
        info = _k(group, storage, kind, plural, namespaced, short_names, versions)
        self.add(info)
        return info

    def for_object(self, api_version: str, kind: str) -> KindInfo | None:
        group = api_version.rpartition("/")[0]
        info = self._by_group_kind.get((group, kind))
        if info is None or not info.accepts(api_version):
            return None
        return info

    def group_kinds(self) -> list[tuple[str, str]]:
        """Every ``(group, kind)`` known."""
        return list(self._by_group_kind)

    def by_group_kind(self, group: str, kind: str) -> KindInfo | None:
        return self._by_group_kind.get((group, kind))

    def resolve(self, name: str) -> KindInfo | None:
        """Resolve a command-line resource name (``deploy``, ``deployments.apps``, ``rb``...)."""
        found = self._by_name.get(name.lower())
        if not found:
            return None
        # Prefer core/built-in over later-added kinds with the same short name.
        return found[0]

    def all(self) -> list[KindInfo]:
        return list(self._by_group_kind.values())


def suggest_for_object(registry: KindRegistry, api_version: str, kind: str) -> str:
    """A hint for an object whose ``apiVersion``/``kind`` no kind matches: `` (did you mean apiVersion
    "apps/v1"?)`` when the kind exists under another group or version, `` (did you mean kind
    "Deployment"?)`` for a near spelling (difflib, kinds of the same group first), else ``""``."""
    import difflib

    same_kind = [i for i in registry.all() if i.kind == kind]
    if same_kind:
        return f' (did you mean apiVersion "{" or ".join(sorted({i.api_version for i in same_kind}))}"?)'
    group = api_version.rpartition("/")[0]
    infos = registry.all()
    for pool in ([i for i in infos if i.group == group], infos):
        close = difflib.get_close_matches(kind, sorted({i.kind for i in pool}), n=1, cutoff=0.75)
        if close:
            info = next(i for i in pool if i.kind == close[0])
            hint = f'kind "{info.kind}"' + ("" if info.accepts(api_version) else f' in apiVersion "{info.api_version}"')
            return f" (did you mean {hint}?)"
    return ""


def suggest_for_name(registry: KindRegistry, name: str) -> str:
    """A hint for a command-line resource name no kind answers to: `` (did you mean "deployments"?)``
    (difflib over plurals, singulars and short names), else ``""``."""
    import difflib

    names = sorted({n for i in registry.all() for n in (i.plural, i.singular, *i.short_names)})
    close = difflib.get_close_matches(name.lower(), names, n=1, cutoff=0.75)
    return f' (did you mean "{close[0]}"?)' if close else ""


def crd_kind(crd) -> tuple | None:
    """``(group, kind, plural, namespaced, short names, version names, storage version)`` a
    CustomResourceDefinition defines, or None when any of these fields has the wrong shape or is
    missing (never raises, whatever ``crd`` holds)."""
    spec = crd.get("spec") if isinstance(crd, dict) else None
    names = spec.get("names") if isinstance(spec, dict) else None
    if not isinstance(names, dict):
        return None
    group, kind, plural = spec.get("group"), names.get("kind"), names.get("plural")
    scope = spec.get("scope", "Namespaced")
    short = names.get("shortNames") or []
    raw_versions = spec.get("versions")
    if not (isinstance(group, str) and group and isinstance(kind, str) and kind and isinstance(plural, str)
            and plural and scope in ("Namespaced", "Cluster") and isinstance(short, list)
            and all(isinstance(n, str) and n for n in short) and isinstance(raw_versions, list)):
        return None
    versions = [v for v in raw_versions if isinstance(v, dict) and isinstance(v.get("name"), str) and v.get("name")]
    if not versions:
        return None
    names_ = tuple(v["name"] for v in versions)
    storage = next((v["name"] for v in versions if v.get("storage") is True), names_[0])
    return group, kind, plural, scope == "Namespaced", tuple(short), names_, storage


def group_of(api_version: str) -> str:
    """The API group of an apiVersion string (``apps/v1`` -> ``apps``, ``v1`` -> ``""``)."""
    return api_version.rpartition("/")[0]
