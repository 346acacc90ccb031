"""Detector: find the policy of each resource template and build its ResourceBinding.

Follows ``pkg/detector/detector.go``, ``pkg/detector/policy.go``, ``pkg/util/selector.go`` and
``pkg/util/helper/binding.go`` (semantics §2):

* which objects are templates (§2.1), selector matching with implicit priority (§2.2),
  PropagationPolicy before ClusterPropagationPolicy, explicit then implicit priority, then name (§2.3);
* claim metadata kept on the template's overlay (§2.4): a claimed template stays with its policy
  while that policy exists and still selects it;
* the binding (§2.5): ``<name>-<kind>`` in the template's namespace (ClusterResourceBinding for
  cluster-scoped templates), spec copied from the policy, replicas from the interpreter, scheduler-
  owned fields (``clusters``, ``gracefulEvictionTasks``, ``requiredBy``, ``rescheduleTriggeredAt``)
  never touched.

Deviation (documented, DESIGN §3): when no policy selects a template any more (its policy was
deleted or no longer matches), karmactl removes the binding, so its Works and member copies go
too. Karmada leaves such a binding (and the member copies) behind with no file that could ever
delete it; in a file-backed tool, removing the policy file is how a user stops propagating.

The binding's ``spec.schedulePriority`` (gate ``PriorityBasedScheduling``) and
``spec.workloadAffinityGroups`` (gate ``WorkloadAffinity``) are resolved, not copied
(:func:`binding_extras`); a PriorityClass that does not exist fails the policy's application
(``ApplyPolicyFailed``). A template labelled ``resourcetemplate.karmada.io/deletion-protected: Always``
keeps its binding when no policy selects it any more (the deviation below does not apply to it).

Policy preemption (``pkg/detector/preemption.go``) behind Karmada's feature gate
``PropagationPolicyPreemption`` (karmactl-config ``propagationPolicyPreemption``, off by default):
see :func:`preempting_policy`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from karmactl.api import constants as C
from karmactl.api.objects import bump_generation, permanent_id
from karmactl.api.selectors import policy_priority
from karmactl.api.names import binding_name
from karmactl.controllers.helper.binding import DEPENDED_BY_LABEL_PREFIX, SCHEDULER_OWNED, is_attached
from karmactl.controllers.helper.template import DetectorConfig, template_hash, template_inputs
from karmactl.interpreter._common import InterpreterError


@dataclass
class DetectorResult:
    """What one detector pass wants.

    Attributes:
        bindings: binding key -> desired binding, or None to delete it.
        claims: template key -> claim metadata ``{"labels": {...}, "annotations": {...}}`` ({} when unclaimed).
        waiting: human messages for templates that could not be bound (missing dependent overrides).
        preempted: ``(template key, preempting policy, preempted policy)`` for every claim that
            moved to a higher-priority policy in this pass.
        failed: ``(template key, policy, error)`` of every template whose policy could not be
            applied (Karmada's ``ApplyPolicyFailed``): its binding stays as it was, or is not made.
    """

    bindings: dict = field(default_factory=dict)
    claims: dict = field(default_factory=dict)
    waiting: list = field(default_factory=list)
    preempted: list = field(default_factory=list)
    failed: list = field(default_factory=list)


class PolicyIndex:
    """Policies indexed by (apiVersion, kind) so matching stays linear in the number of templates."""

    def __init__(self, policies: list[dict]):
        self.by_gvk: dict[tuple[str, str], list[dict]] = {}
        for policy in policies:
            seen = set()
            for s in (policy.get("spec") or {}).get("resourceSelectors") or []:
                gvk = (s.get("apiVersion"), s.get("kind"))
                if gvk not in seen:
                    seen.add(gvk)
                    self.by_gvk.setdefault(gvk, []).append(policy)
        # name-specific selectors dominate in practice; keep a name index to avoid scanning them all
        self.named: dict[tuple, list[dict]] = {}
        self.unnamed: dict[tuple, list[dict]] = {}
        for gvk, pols in self.by_gvk.items():
            for policy in pols:
                sels = [s for s in policy["spec"]["resourceSelectors"] if (s.get("apiVersion"), s.get("kind")) == gvk]
                if all(s.get("name") for s in sels):
                    for s in sels:
                        self.named.setdefault((gvk, s["name"]), []).append(policy)
                else:
                    self.unnamed.setdefault(gvk, []).append(policy)

    def candidates(self, obj: dict) -> list[dict]:
        gvk = (obj.get("apiVersion"), obj.get("kind"))
        name = (obj.get("metadata") or {}).get("name")
        out = self.named.get((gvk, name), []) + self.unnamed.get(gvk, [])
        return out


def best_policy(candidates: list[dict], obj: dict) -> dict | None:
    """§2.3 "best": highest explicit priority, then implicit priority, then smaller name."""
    best, best_key = None, None
    for policy in candidates:
        implicit = policy_priority(policy, obj)
        if implicit == 0:
            continue
        explicit = (policy.get("spec") or {}).get("priority") or 0
        rank = (-explicit, -implicit, policy["metadata"]["name"])
        if best_key is None or rank < best_key:
            best, best_key = policy, rank
    return best


def _names_template(policy: dict, obj: dict) -> bool:
    """Whether a selector of ``policy`` names ``obj`` (Karmada fetches the template a preempting
    policy takes by the selector's name) and the policy selects it."""
    md = obj.get("metadata") or {}
    named = any(s.get("name") == md.get("name") and s.get("apiVersion") == obj.get("apiVersion")
                and s.get("kind") == obj.get("kind") for s in (policy.get("spec") or {}).get("resourceSelectors") or [])
    return named and policy_priority(policy, obj) > 0


def _explicit(policy: dict) -> int:
    return (policy.get("spec") or {}).get("priority") or 0


def preempting_policy(claimed: dict, obj: dict, pp_candidates: list[dict], cpp_candidates: list[dict]) -> dict | None:
    """The policy that takes ``obj`` from the policy that claims it, or None
    (``pkg/detector/preemption.go``; call only with the feature gate on).

    A policy preempts when it has ``preemption: Always`` and one of its selectors names the
    template: a PropagationPolicy takes it from a PropagationPolicy of lower explicit ``priority``
    and from any ClusterPropagationPolicy (``preemptClusterPropagationPolicyDirectly``); a
    ClusterPropagationPolicy takes it only from a ClusterPropagationPolicy of lower priority. Karmada
    runs this when the preempting policy is created or updated, and when the claimed policy loses
    priority (``HandleDeprioritizedPropagationPolicy``): checking every pass gives both. Among several
    preempting policies the highest priority wins, then the smaller name (deterministic; DESIGN §3.5).
    """
    def best(cands, above):
        ranked = sorted((-_explicit(p), p["metadata"]["name"], i) for i, p in enumerate(cands)
                        if (p.get("spec") or {}).get("preemption") == "Always" and p is not claimed
                        and (above is None or _explicit(p) > above) and _names_template(p, obj))
        return cands[ranked[0][2]] if ranked else None

    if claimed["kind"] == "PropagationPolicy":
        return best(pp_candidates, _explicit(claimed))
    return best(pp_candidates, None) or best(cpp_candidates, _explicit(claimed))


def policy_id(policy: dict) -> str:
    """The policy's permanent id (label set by defaulting; derived from its key when absent)."""
    cluster_scoped = policy["kind"] == "ClusterPropagationPolicy"
    label = C.CPP_PERMANENT_ID_LABEL if cluster_scoped else C.PP_PERMANENT_ID_LABEL
    labels = policy["metadata"].get("labels") or {}
    return labels.get(label) or permanent_id(policy["kind"], policy["metadata"].get("namespace") or "",
                                             policy["metadata"]["name"])


def claim_metadata(policy: dict) -> dict:
    """The labels/annotations that claim a template for ``policy`` (§2.4)."""
    pid = policy_id(policy)
    if policy["kind"] == "ClusterPropagationPolicy":
        return {"labels": {C.CPP_PERMANENT_ID_LABEL: pid},
                "annotations": {C.CPP_NAME_ANNOTATION: policy["metadata"]["name"]}}
    return {"labels": {C.PP_PERMANENT_ID_LABEL: pid},
            "annotations": {C.PP_NAMESPACE_ANNOTATION: policy["metadata"]["namespace"],
                            C.PP_NAME_ANNOTATION: policy["metadata"]["name"]}}


def _claimed_policy(claim: dict, pps: dict, cpps: dict) -> dict | None:
    labels = claim.get("labels") or {}
    ann = claim.get("annotations") or {}
    if labels.get(C.PP_PERMANENT_ID_LABEL):
        p = pps.get((ann.get(C.PP_NAMESPACE_ANNOTATION), ann.get(C.PP_NAME_ANNOTATION)))
        return p if p is not None and policy_id(p) == labels[C.PP_PERMANENT_ID_LABEL] else None
    if labels.get(C.CPP_PERMANENT_ID_LABEL):
        p = cpps.get(ann.get(C.CPP_NAME_ANNOTATION))
        return p if p is not None and policy_id(p) == labels[C.CPP_PERMANENT_ID_LABEL] else None
    return None


def reconcile(templates: dict, views: dict, claims: dict, pps: list[dict], cpps: list[dict],
              bindings: dict, override_names: set, now: str, interpret_replica,
              config: DetectorConfig | None = None, memo: dict | None = None,
              claimed_elsewhere: dict | None = None) -> DetectorResult:
    """Compute the desired bindings for every template.

    Args:
        templates: template key -> user object, already filtered by :func:`is_template`.
        views: template key -> the template as Karmada would see it (uid, generation, claim metadata merged).
        claims: template key -> current claim metadata (``{"labels":…, "annotations":…}``).
        pps / cpps: PropagationPolicies / ClusterPropagationPolicies (defaulted, not being deleted).
        bindings: existing bindings by key (RB and CRB).
        override_names: ``{("OverridePolicy", ns, name), ("ClusterOverridePolicy", "", name)}`` that exist
            (for ``dependentOverrides``).
        now: the run's clock, RFC 3339 (creationTimestamp of new bindings).
        interpret_replica: ``f(obj) -> (replicas, replicaRequirements | None[, components | None])``
            (components: ``spec.components``, gate ``MultiplePodTemplatesScheduling``).
        memo: optional dict kept across the passes of one run (policy indexes, template hashes);
            entries are checked by identity, so passing the same dict is always safe.
        claimed_elsewhere: template key -> claim metadata of another controller (a MultiClusterService's
            ``resourcetemplate.karmada.io/claimed-by``): no policy claims those templates and their
            bindings are left to that controller.

    Returns:
        A :class:`DetectorResult`; bindings of templates that are gone or unclaimed map to None.
    """
    config = config or DetectorConfig()
    result = DetectorResult()
    pp_by_key = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pps}
    cpp_by_name = {p["metadata"]["name"]: p for p in cpps}
    memo = memo if memo is not None else {}
    pp_index, cpp_index = _policy_indexes(pps, cpps, memo)
    hashes = memo.setdefault("template_hash", {})
    wanted: set = set()
    for key in sorted(templates):
        obj = templates[key]
        bkey = template_binding_key(key)
        if claimed_elsewhere and key in claimed_elsewhere:
            result.claims[key] = claimed_elsewhere[key]
            wanted.add(bkey)  # its binding is the claiming controller's
            continue
        policy = _choose_policy(key, obj, claims.get(key) or {}, pp_by_key, cpp_by_name, pp_index, cpp_index,
                                config, result)
        if policy is None:
            result.claims[key] = {}
            continue
        result.claims[key] = claim_metadata(policy)
        if _bind_template(key, bkey, obj, views[key], policy, bindings.get(bkey), override_names, now,
                          interpret_replica, hashes, result, config):
            wanted.add(bkey)
    protected = {template_binding_key(k): k for k, o in templates.items() if _deletion_protected(o)}
    for bkey in bindings:
        if bkey not in wanted and _owned_by_detector(bindings[bkey]):
            if bkey in protected:  # as Karmada, whose bindings outlive their policy: the copies stay
                key = protected[bkey]
                result.waiting.append(f"{key[1]} {key[2] + '/' if key[2] else ''}{key[3]}: no policy selects it any "
                                      f"more, but it is labelled {C.DELETION_PROTECTED_LABEL}: Always, so its "
                                      f"ResourceBinding and member copies stay; remove the label to stop propagating it")
                continue
            result.bindings[bkey] = None
    return result


def template_binding_key(key) -> tuple:
    """The key of the binding the detector makes for a template key."""
    _group, kind, ns, name = key
    return ("work.karmada.io", "ResourceBinding" if ns else "ClusterResourceBinding", ns, binding_name(name, kind))


def _deletion_protected(obj: dict) -> bool:
    """``resourcetemplate.karmada.io/deletion-protected: Always`` (Karmada's ResourceDeletionProtection)."""
    return ((obj.get("metadata") or {}).get("labels") or {}).get(C.DELETION_PROTECTED_LABEL) == "Always"


def _policy_indexes(pps: list[dict], cpps: list[dict], memo: dict) -> tuple[dict, PolicyIndex]:
    """``({namespace: PolicyIndex of its PropagationPolicies}, PolicyIndex of the
    ClusterPropagationPolicies)``, kept in ``memo`` while the policy lists are the same objects."""
    cached = memo.get("policy_index")
    if cached is not None and cached[0] is pps and cached[1] is cpps:
        return cached[2], cached[3]
    pp_by_ns: dict[str, list[dict]] = {}
    for p in pps:
        pp_by_ns.setdefault(p["metadata"]["namespace"], []).append(p)
    pp_index = {ns: PolicyIndex(ps) for ns, ps in pp_by_ns.items()}
    cpp_index = PolicyIndex(cpps)
    memo["policy_index"] = (pps, cpps, pp_index, cpp_index)
    return pp_index, cpp_index


def _template_version(hashes: dict, obj: dict) -> str:
    """:func:`template_hash` of ``obj``, kept in ``hashes`` by object identity."""
    hit = hashes.get(id(obj))
    if hit is None or hit[0] is not obj:
        hit = hashes[id(obj)] = (obj, template_hash(obj))
    return hit[1]


def _choose_policy(key, obj: dict, claim: dict, pp_by_key: dict, cpp_by_name: dict, pp_index: dict,
                   cpp_index: PolicyIndex, config: DetectorConfig, result: DetectorResult) -> dict | None:
    """The policy that claims the template in this pass: its current claim while that policy still
    selects it (unless a higher-priority policy preempts it, recorded in ``result.preempted``), else
    the best PropagationPolicy of its namespace, else the best ClusterPropagationPolicy, else None."""
    ns = key[2]
    policy = _claimed_policy(claim, pp_by_key, cpp_by_name)
    if policy is not None and policy_priority(policy, obj) == 0:
        policy = None  # the claimed policy no longer selects the template: release the claim (§2.6a)
    if policy is not None and config.preemption:
        taker = preempting_policy(policy, obj, pp_index[ns].candidates(obj) if ns and ns in pp_index else [],
                                  cpp_index.candidates(obj))
        if taker is not None:
            result.preempted.append((key, taker, policy))
            policy = taker
    if policy is None and ns and ns in pp_index:
        policy = best_policy(pp_index[ns].candidates(obj), obj)
    if policy is None:
        policy = best_policy(cpp_index.candidates(obj), obj)
    return policy


def _bind_template(key, bkey, obj: dict, view: dict, policy: dict, old: dict | None, override_names: set, now: str,
                   interpret_replica, hashes: dict, result: DetectorResult, config: DetectorConfig) -> bool:
    """The binding of a template claimed by ``policy`` into ``result.bindings`` (``old`` kept while
    dependent overrides are missing, the replicas cannot be interpreted, or a Lazy policy waits for
    the template to change). Returns whether the binding is wanted (False only when none exists
    and none could be built)."""
    _group, kind, ns, name = key
    missing = _missing_dependent_overrides(policy, override_names)
    if missing:
        result.waiting.append(f"{kind} {ns + '/' if ns else ''}{name}: waiting for dependent overrides {', '.join(missing)}")
        result.bindings[bkey] = old  # keep whatever exists until the overrides appear
        return old is not None
    if (old is not None and (policy.get("spec") or {}).get("activationPreference") == "Lazy"
            and ((old.get("spec") or {}).get("resource") or {}).get("resourceVersion") == _template_version(hashes, obj)
            and _claim_of_binding(old) == result.claims[key]):
        result.bindings[bkey] = old  # Lazy: policy changes wait for a change of the template itself
        return True
    try:
        extra = binding_extras(bkey, view, policy, config)
    except PriorityClassNotFound as exc:  # ApplyPolicyFailed: the binding stays as it was (or none is made)
        result.failed.append((key, policy, str(exc)))
        result.bindings[bkey] = old
        return old is not None
    try:
        result.bindings[bkey] = build_binding(bkey, view, obj, policy, old, now, interpret_replica,
                                              _template_version(hashes, obj), extra)
    except InterpreterError as exc:  # Karmada's detector retries: the binding stays as it was
        result.waiting.append(f"{kind} {ns + '/' if ns else ''}{name}: cannot interpret replicas: {exc}")
        result.bindings[bkey] = old
        return old is not None
    return True


def _claim_of_binding(binding: dict) -> dict:
    m = binding.get("metadata") or {}
    labels = {k: v for k, v in (m.get("labels") or {}).items() if k in (C.PP_PERMANENT_ID_LABEL, C.CPP_PERMANENT_ID_LABEL)}
    ann = {k: v for k, v in (m.get("annotations") or {}).items()
           if k in (C.PP_NAMESPACE_ANNOTATION, C.PP_NAME_ANNOTATION, C.CPP_NAME_ANNOTATION)}
    return {"labels": labels, "annotations": ann}


def _owned_by_detector(binding: dict) -> bool:
    """Bindings made by other controllers (``binding.karmada.io/managed-by``, and the attached
    bindings of the dependencies distributor) are left alone."""
    return ("binding.karmada.io/managed-by" not in ((binding.get("metadata") or {}).get("labels") or {})
            and not is_attached(binding))


def _missing_dependent_overrides(policy: dict, override_names: set) -> list[str]:
    deps = (policy.get("spec") or {}).get("dependentOverrides") or []
    if policy["kind"] == "ClusterPropagationPolicy":
        return [d for d in deps if ("ClusterOverridePolicy", "", d) not in override_names]
    ns = policy["metadata"]["namespace"]
    return [d for d in deps if ("OverridePolicy", ns, d) not in override_names]


_POLICY_FIELDS = ("propagateDeps", "schedulerName", "placement", "failover", "conflictResolution",
                  "preserveResourcesOnDeletion")


class PriorityClassNotFound(LookupError):
    """A policy's ``schedulePriority`` names a PriorityClass the state directory does not hold;
    ``str()`` is the API server's answer Karmada's detector reports
    (``priorityclasses.scheduling.k8s.io "<name>" not found``)."""


def binding_extras(bkey, view: dict, policy: dict, config: DetectorConfig) -> dict:
    """The binding fields the detector resolves rather than copies from the policy
    (``BuildResourceBinding`` in ``pkg/detector/detector.go``); ResourceBindings only, as Karmada's
    ``BuildClusterResourceBinding`` sets neither:

    * ``schedulePriority: {priority: <value>}`` under the gate ``PriorityBasedScheduling``: the
      ``value`` of the PriorityClass the policy's ``schedulePriority.priorityClassName`` names
      (``priorityClassSource: KubePriorityClass``, the only source Karmada's CRD admits:
      ``PodPriorityClass`` and ``FederatedPriorityClass`` are refused at load by its enum);
    * ``workloadAffinityGroups`` under the gate ``WorkloadAffinity`` (``getWorkloadAffinityGroups``):
      ``<groupByLabelKey>=<value>`` of the template's label for ``affinity`` / ``antiAffinity``,
      absent when the template lacks the label.

    Raises:
        PriorityClassNotFound: the named PriorityClass does not exist.
    """
    extra: dict = {}
    if bkey[1] != "ResourceBinding":
        return extra
    pspec = policy.get("spec") or {}
    wanted = pspec.get("schedulePriority")
    if config.priority_classes is not None and isinstance(wanted, dict):
        name = wanted.get("priorityClassName") or ""
        if name not in config.priority_classes:
            raise PriorityClassNotFound(f'priorityclasses.scheduling.k8s.io "{name}" not found')
        extra["schedulePriority"] = {"priority": int(config.priority_classes[name] or 0)}
    affinity = (pspec.get("placement") or {}).get("workloadAffinity")
    if config.workload_affinity and isinstance(affinity, dict):
        labels = (view.get("metadata") or {}).get("labels") or {}
        groups = {}
        for term, out_name in (("affinity", "affinityGroup"), ("antiAffinity", "antiAffinityGroup")):
            label_key = (affinity.get(term) or {}).get("groupByLabelKey")
            if label_key and label_key in labels:
                groups[out_name] = f"{label_key}={labels[label_key]}"
        if groups:
            extra["workloadAffinityGroups"] = groups
    return extra


def build_binding(bkey, view: dict, obj: dict, policy: dict, old: dict | None, now: str, interpret_replica,
                  version: str | None = None, extra: dict | None = None) -> dict:
    """The desired ResourceBinding / ClusterResourceBinding for a template claimed by ``policy`` (§2.5).

    ``version`` is :func:`template_hash` of ``obj`` when the caller has it already; ``extra`` holds
    the fields :func:`binding_extras` resolved.

    ``old`` keeps its scheduler-owned spec fields, its status, its extra annotations (e.g. the
    applied placement written by the scheduler) and its creationTimestamp; ``metadata.generation``
    is bumped when the spec changed.
    """
    pspec = policy.get("spec") or {}
    metadata = _binding_metadata(bkey, view, claim_metadata(policy), (old or {}).get("metadata") or {}, now)
    spec = _binding_spec(view, obj, pspec, (old or {}).get("spec") or {}, interpret_replica, version)
    if extra:
        spec.update(extra)
    binding = {"apiVersion": C.WORK_API_V2, "kind": bkey[1], "metadata": metadata, "spec": spec}
    if old is not None and old.get("status") is not None:
        binding["status"] = old["status"]
    bump_generation(old, binding)
    if old is not None and binding == old:
        return old
    return binding


def _binding_metadata(bkey, view: dict, claim: dict, old_meta: dict, now: str) -> dict:
    """The binding's metadata: the policy's claim, the depended-by labels and other annotations it
    had, its permanent id, the template as owner, the finalizer, creation time and generation."""
    _g, bkind, ns, bname = bkey
    vm = view["metadata"]
    id_label = C.RB_PERMANENT_ID_LABEL if bkind == "ResourceBinding" else C.CRB_PERMANENT_ID_LABEL
    labels = dict(claim["labels"])
    # the dependencies distributor's depended-by labels stay (Karmada merges labels on update)
    labels.update((k, v) for k, v in (old_meta.get("labels") or {}).items() if k.startswith(DEPENDED_BY_LABEL_PREFIX))
    labels[id_label] = (old_meta.get("labels") or {}).get(id_label) or permanent_id(bkind, ns, bname)
    # a policy taking over from a MultiClusterService drops its annotations (retrieveService)
    annotations = {k: v for k, v in (old_meta.get("annotations") or {}).items()
                   if k not in (C.PP_NAMESPACE_ANNOTATION, C.PP_NAME_ANNOTATION, C.CPP_NAME_ANNOTATION,
                                "multiclusterservice.karmada.io/name", "multiclusterservice.karmada.io/namespace")}
    annotations.update(claim["annotations"])
    metadata = {"name": bname}
    if ns:
        metadata["namespace"] = ns
    metadata["labels"] = dict(sorted(labels.items()))
    metadata["annotations"] = dict(sorted(annotations.items()))
    metadata["ownerReferences"] = [{"apiVersion": view["apiVersion"], "kind": view["kind"], "name": vm["name"],
                                    "uid": vm["uid"], "controller": True, "blockOwnerDeletion": True}]
    metadata["finalizers"] = [C.BINDING_CONTROLLER_FINALIZER if bkind == "ResourceBinding" else C.CRB_CONTROLLER_FINALIZER]
    metadata["creationTimestamp"] = old_meta.get("creationTimestamp") or now
    metadata["generation"] = old_meta.get("generation") or 1
    return metadata


def _binding_spec(view: dict, obj: dict, pspec: dict, old_spec: dict, interpret_replica, version: str | None) -> dict:
    """The binding's spec: the template reference, the interpreted replicas, the policy's fields,
    the dispatching suspension, and the fields other controllers own kept from ``old_spec``."""
    vm = view["metadata"]
    resource = {"apiVersion": view["apiVersion"], "kind": view["kind"]}
    if vm.get("namespace"):
        resource["namespace"] = vm["namespace"]
    resource.update({"name": vm["name"], "uid": vm["uid"], "resourceVersion": version or template_hash(obj)})
    spec: dict = {"resource": resource}
    found = interpret_replica(view)
    replicas, requirements = found[0], found[1]
    if replicas:
        spec["replicas"] = replicas
    if requirements:
        spec["replicaRequirements"] = requirements
    if len(found) > 2 and found[2]:
        spec["components"] = found[2]
    # Policy values are shared, not copied: snapshot objects are never mutated in place (every
    # controller replaces what it changes), and copying placements was a large part of a
    # 10,000-template run.
    for fname in _POLICY_FIELDS:
        if fname in pspec and pspec[fname] is not None:
            if fname == "propagateDeps" and not pspec[fname]:
                continue
            spec[fname] = pspec[fname]
    spec.setdefault("placement", {})
    spec.setdefault("schedulerName", C.DEFAULT_SCHEDULER_NAME)
    spec.setdefault("conflictResolution", "Abort")
    suspension = {k: v for k, v in (pspec.get("suspension") or {}).items()
                  if k in ("dispatching", "dispatchingOnClusters") and v not in (None, False, {})}
    if (old_spec.get("suspension") or {}).get("scheduling"):
        suspension["scheduling"] = True
    if suspension:
        spec["suspension"] = suspension
    for fname in SCHEDULER_OWNED:
        if old_spec.get(fname) is not None:
            spec[fname] = old_spec[fname]
    return spec


# --------------------------------------------------------------------------- the pipeline step


def _policy_ref(policy: dict) -> str:
    md = policy["metadata"]
    return f"{policy['kind']} {md['namespace'] + '/' if md.get('namespace') else ''}{md['name']}"


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``detector``: template bookkeeping (uid, generation, creation time), policy
    claims on templates, and the desired ResourceBindings / ClusterResourceBindings
    (``pkg/detector/detector.go``)."""
    from karmactl.api.templates import refresh_overlay
    from karmactl.interpreter import Interpreter

    interpreter = Interpreter.of(ctx)

    inputs = template_inputs(loaded, ctx)
    templates, hashes = inputs.templates, inputs.hashes
    changed = False
    # template bookkeeping (uid, generation) before the detector reads the views
    for key, obj in templates.items():
        changed = out.set_overlay(key, refresh_overlay(key, obj, out.overlays.get(key), None, now, hashes[key])) or changed
    views = {k: inputs.view(out, k) for k in templates}
    claims = {k: {"labels": (out.overlays.get(k) or {}).get("metadata", {}).get("labels") or {},
                  "annotations": (out.overlays.get(k) or {}).get("metadata", {}).get("annotations") or {}}
              for k in templates}
    det = reconcile(templates, views, claims, inputs.pps, inputs.cpps, out.bindings, inputs.override_names, now,
                    lambda view: inputs.interpret_replica(view, interpreter,
                                                          ctx.settings.multiple_pod_templates_scheduling),
                    inputs.config, inputs.detector_memo,
                    inputs.claimed_elsewhere)
    for line in det.waiting:
        ctx.warn(line)
    failures = {}
    for key, policy, error in det.failed:
        md = policy["metadata"]
        note = failures[key] = (f"Apply policy({md['namespace']}/{md['name']}) failed: {error}"
                                if policy["kind"] == "PropagationPolicy" else
                                f"Apply cluster policy({md['name']}) failed: {error}")
        what = f"{key[1]} {key[2] + '/' if key[2] else ''}{key[3]}"
        ctx.warn(f"{what}: {note}: no ResourceBinding is made or updated until the PriorityClass exists "
                 f"(spec.schedulePriority.priorityClassName of {_policy_ref(policy)})")
    for key, taker, loser in det.preempted:
        what = f"{key[1]} {key[2] + '/' if key[2] else ''}{key[3]}"
        ctx.event(f"{_policy_ref(taker)}: PreemptPolicySucceed: preempted {_policy_ref(loser)} for {what}")
        ctx.event(f"{_policy_ref(loser)}: PreemptPolicySucceed: {what} preempted by {_policy_ref(taker)}")
    _gate_warnings(inputs, ctx)
    for key, claim in det.claims.items():
        overlay = refresh_overlay(key, templates[key], out.overlays.get(key), claim, now, hashes[key])
        changed = out.set_overlay(key, _with_failure(overlay, failures.get(key))) or changed
    for bkey, b in det.bindings.items():
        changed = out.set_binding(bkey, b) or changed
    return changed


def _with_failure(overlay: dict, note: str | None) -> dict:
    """``overlay`` with ``observed.applyPolicyFailed`` set to ``note`` (removed when None): the
    Event ApplyPolicyFailed is derived from it (``pipeline/events.py``)."""
    observed = overlay.get("observed") or {}
    if observed.get("applyPolicyFailed") == note:
        return overlay
    observed = {k: v for k, v in observed.items() if k != "applyPolicyFailed"}
    if note is not None:
        observed["applyPolicyFailed"] = note
    return dict(overlay, observed=observed)


def _gate_warnings(inputs, ctx) -> None:
    """A warning for each policy field a feature gate that is off makes Karmada ignore."""
    config = inputs.config
    for p in inputs.pps + inputs.cpps:
        spec = p.get("spec") or {}
        if not config.preemption and spec.get("preemption") == "Always":
            ctx.warn(f"{_policy_ref(p)} sets preemption: Always, but the feature gate PropagationPolicyPreemption "
                     f"is off (karmactl-config data.propagationPolicyPreemption: \"true\" turns it on)")
        if config.priority_classes is None and spec.get("schedulePriority"):
            ctx.warn(f"{_policy_ref(p)} sets schedulePriority, but the feature gate PriorityBasedScheduling is off "
                     f"(karmactl-config data.priorityBasedScheduling: \"false\"): its bindings get no priority")
        if not config.workload_affinity and (spec.get("placement") or {}).get("workloadAffinity"):
            ctx.warn(f"{_policy_ref(p)} sets placement.workloadAffinity, but the feature gate WorkloadAffinity is off "
                     f"(karmactl-config data.workloadAffinity: \"true\" turns it on): its workloads are placed "
                     f"without regard to their groups")
