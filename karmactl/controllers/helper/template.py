"""Resource templates: which user objects the detector handles, and what the detector, the binding
controller and the dependencies distributor read of them, built once per computation
(``pkg/detector/``, ``pkg/util/helper/``)."""
from __future__ import annotations

from dataclasses import dataclass, field

from karmactl.api import constants as C
from karmactl.api.objects import content_hash
from karmactl.api.regex import compile_user_regex
from karmactl.api.templates import spec_hash, template_view
from karmactl.controllers.helper.mcs import service_claims
from karmactl.interpreter._common import InterpreterError

# Groups the detector never treats as templates (§2.1).
SKIPPED_GROUPS = frozenset({
    "cluster.karmada.io", "policy.karmada.io", "work.karmada.io", "config.karmada.io",
    "networking.karmada.io", "autoscaling.karmada.io", "remedy.karmada.io", "apps.karmada.io",
    "events.k8s.io", "coordination.k8s.io", "search.karmada.io",


})


@dataclass
class DetectorConfig:
    """Detector settings (controller-manager flags).

    Attributes:
        skipped_namespaces: anchored regexes of namespaces to ignore (``--skipped-propagating-namespaces``),
            compiled with RE2 (Go's ``regexp``, linear time: :mod:`karmactl.api.regex`).
        preemption: the feature gate ``PropagationPolicyPreemption`` (``--feature-gates``).
        priority_classes: ``{PriorityClass name: value}`` of the PriorityClasses in the state
            directory (``scheduling.k8s.io/v1``), or None when the gate ``PriorityBasedScheduling``
            is off (the detector then leaves ``spec.schedulePriority`` off the bindings).
        workload_affinity: the feature gate ``WorkloadAffinity`` (``spec.workloadAffinityGroups``).
    """

    skipped_namespaces: tuple[str, ...] = C.DEFAULT_SKIPPED_NAMESPACE_PATTERNS
    preemption: bool = False
    priority_classes: dict | None = None
    workload_affinity: bool = False

    def __post_init__(self):
        # raises RegexError (a ValueError) for a pattern RE2 refuses; Settings.from_snapshot checks
        # them first, naming the ConfigMap's field
        self._re = [compile_user_regex(p, "skippedPropagatingNamespaces", anchored=True)
                    for p in self.skipped_namespaces]

    def namespace_skipped(self, namespace: str) -> bool:
        if not namespace:
            return False
        if namespace in C.RESERVED_NAMESPACES or namespace.startswith(C.EXECUTION_SPACE_PREFIX):
            return True
        return any(r.match(namespace) for r in self._re)


def is_template(key, obj: dict, config: DetectorConfig) -> bool:
    """Whether a user object is a resource template the detector handles (§2.1)."""
    group, kind, ns, name = key
    if group in SKIPPED_GROUPS or (group == "" and kind == "Event"):
        return False
    if config.namespace_skipped(ns):
        return False
    if kind == "ConfigMap" and ns == "kube-system" and name == "extension-apiserver-authentication":
        return False
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return C.CLAIMED_BY_LABEL not in labels


def template_hash(obj: dict) -> str:
    """A short content hash of a template without status: karmactl's resourceVersion for templates."""
    body = {k: v for k, v in obj.items() if k != "status"}
    return content_hash(body)


@dataclass
class TemplateInputs:
    """What the detector and the binding controller read from the loaded snapshot, built once
    per computation (kept in ``ctx.memo["templates"]``).

    Attributes:
        config: the detector settings.
        templates: template key -> user object (:func:`is_template`).
        hashes: template key -> ``spec_hash`` of the user object.
        pps / cpps: (Cluster)PropagationPolicies that are not being deleted.
        override_names: ``{(kind, namespace, name)}`` of Override/ClusterOverridePolicies.
        views: template key -> (overlay, view) cache of :func:`template_view` by overlay identity.
        claimed_elsewhere: Service key -> the claim of its MultiClusterService
            (``multicluster_service.service_claims``).
    """

    config: DetectorConfig
    templates: dict
    hashes: dict
    pps: list
    cpps: list
    override_names: set
    views: dict = field(default_factory=dict)
    claimed_elsewhere: dict = field(default_factory=dict)
    replica_memo: dict = field(default_factory=dict)
    detector_memo: dict = field(default_factory=dict)

    def view(self, out, key) -> dict:
        """The template as Karmada sees it in ``out`` (uid, generation and claim from its overlay)."""

        overlay = out.overlays.get(key)
        cached = self.views.get(key)
        if cached is not None and cached[0] is overlay:
            return cached[1]
        v = template_view(self.templates[key], overlay)
        self.views[key] = (overlay, v)
        return v

    def interpret_replica(self, view: dict, interpreter, components: bool = False):
        """The interpreter's replica answer ``(replicas, replicaRequirements, components)``, once
        per template spec: it reads only apiVersion, kind and spec, and every view of a template
        shares the template's ``spec`` object. With ``components`` (gate
        ``MultiplePodTemplatesScheduling``) a kind with ``InterpretComponent`` answers
        ``(0, None, components)`` (``detector.go: applyReplicaInterpretation``); otherwise
        components are None."""
        spec = view.get("spec")
        gvk = (view.get("apiVersion"), view.get("kind"))
        hit = self.replica_memo.get(id(spec))
        if hit is None or hit[0] is not spec or hit[1] != gvk:
            try:
                if components and interpreter.has_component_hook(*gvk):
                    hit = (spec, gvk, (0, None, interpreter.interpret_components(view)))
                else:
                    hit = (spec, gvk, interpreter.interpret_replica(view) + (None,))
            except InterpreterError as exc:  # a failing script fails once per computation, not per pass
                hit = (spec, gvk, exc)
            self.replica_memo[id(spec)] = hit
        if isinstance(hit[2], InterpreterError):
            raise hit[2]
        return hit[2]


def template_inputs(loaded, ctx) -> TemplateInputs:
    """The :class:`TemplateInputs` of this computation (built on first use)."""

    inputs = ctx.memo.get("templates")
    if inputs is None:
        classes = None
        if ctx.settings.priority_based_scheduling:
            classes = {k[3]: loaded.user[k].get("value")
                       for k in loaded.keys_of_kind("scheduling.k8s.io", "PriorityClass")}
        config = DetectorConfig(skipped_namespaces=ctx.settings.skipped_namespaces,
                                preemption=ctx.settings.policy_preemption, priority_classes=classes,
                                workload_affinity=ctx.settings.workload_affinity)
        templates = {k: v for k, v in loaded.user.items() if is_template(k, v, config)}
        live = lambda kind: [p for p in loaded.of_kind("policy.karmada.io", kind)  # noqa: E731
                             if not p["metadata"].get("deletionTimestamp")]
        inputs = TemplateInputs(
            config=config, templates=templates, hashes={k: spec_hash(o) for k, o in templates.items()},
            pps=live("PropagationPolicy"), cpps=live("ClusterPropagationPolicy"),
            override_names={(k[1], k[2], k[3]) for k in loaded.user if k[0] == "policy.karmada.io"
                            and k[1] in ("OverridePolicy", "ClusterOverridePolicy")},
            claimed_elsewhere=service_claims(loaded))
        ctx.memo["templates"] = inputs
    return inputs
