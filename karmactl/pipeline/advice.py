"""What the control plane leaves undone without a word, said as warnings (``reconcile``, ``plan``).

Karmada accepts these and silently does nothing with them (or something other than a reader
expects); karmactl acts exactly as Karmada does and says so once per run (issue 27):

* a binding whose ``spec.schedulerName`` is not ``default-scheduler``: karmactl's scheduler (as
  Karmada's, ``pkg/scheduler/event_handler.go``) leaves it for a scheduler that does not run here;
* ``spreadConstraints`` by ``zone`` / ``provider`` or ``spreadByLabel`` beside a ``cluster`` or
  ``region`` one: ``selectBestClustersBySpreadConstraints`` acts only on region and cluster;
* ``weightPreference.staticWeightList`` beside ``dynamicWeight``: the dynamic weight wins;
* an OverridePolicy's ``spec.overriders.fieldOverrider`` beside ``overrideRules``: the webhook lets
  it through (``emptyOverrides`` does not count it) and the override manager ignores ``overriders``;
* ``imageOverrider`` (without ``predicate``), ``commandOverrider`` and ``argsOverrider`` selecting
  kinds they do not know (only Pod, ReplicaSet, Deployment, DaemonSet, StatefulSet, Job);
* MultiClusterIngress ``rules`` / ``tls`` / ``defaultBackend``: no Ingress is made on any member
  (Karmada leaves that to a multicluster cloud provider); only its status is computed;
* a policy's deprecated ``association: true`` (no Karmada controller reads it; ``propagateDeps`` does
  what it meant);
* ``clusterAffinity.clusterNames`` entries that name no Cluster;
* (:func:`selection_advice`, called by the run on the whole snapshot it loaded) a
  (Cluster)PropagationPolicy that selects no resource template, and each resource template no
  policy selects.

A step of :data:`karmactl.pipeline.registry.PIPELINE` that changes nothing; it runs on the first
pass only (after the detector and the scheduler have run once). Pure.
"""
from __future__ import annotations

from karmactl.api import constants as C

# templates commonly kept on the control plane for what they give it: Namespaces (namespace sync
# propagates them without a policy), PriorityClasses (read by schedulePriority), CRDs (they define
# the kinds of the state directory; members usually have their own)
_UNSELECTED_IS_NORMAL = frozenset({("", "Namespace"), ("scheduling.k8s.io", "PriorityClass"),
                                   ("apiextensions.k8s.io", "CustomResourceDefinition")})

_CONTAINER_KINDS = frozenset({"Pod", "ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job"})


def _ref(obj: dict) -> str:
    md = obj.get("metadata") or {}
    return f"{obj.get('kind')} {md['namespace'] + '/' if md.get('namespace') else ''}{md.get('name')}"


def placement_advice(policy: dict, cluster_names: set) -> list[str]:
    """The warnings of one (Cluster)PropagationPolicy's placement (module docs)."""
    out = []
    placement = (policy.get("spec") or {}).get("placement") or {}
    who = _ref(policy)
    if (policy.get("spec") or {}).get("association"):
        out.append(f"{who}: spec.association is not acted on: Karmada deprecated it and reads propagateDeps instead")
    constraints = placement.get("spreadConstraints") or []
    fields = {c.get("spreadByField") for c in constraints if c.get("spreadByField")}
    if fields & {"cluster", "region"}:
        ignored = sorted(fields - {"cluster", "region"}) + (["spreadByLabel"] if any(c.get("spreadByLabel")
                                                                                     for c in constraints) else [])
        if ignored:
            out.append(f"{who}: spec.placement.spreadConstraints by {', '.join(ignored)} are not acted on: Karmada's "
                       f"scheduler spreads only by region and cluster")
    weight = ((placement.get("replicaScheduling") or {}).get("weightPreference") or {})
    if weight.get("staticWeightList") and weight.get("dynamicWeight"):
        out.append(f"{who}: spec.placement.replicaScheduling.weightPreference.staticWeightList is not acted on "
                   f"beside dynamicWeight: replicas are divided by {weight['dynamicWeight']}")
    affinities = [placement.get("clusterAffinity") or {}] + list(placement.get("clusterAffinities") or [])
    missing = sorted({n for a in affinities for n in (a.get("clusterNames") or []) if n not in cluster_names})
    if missing:
        out.append(f"{who}: clusterAffinity.clusterNames names no Cluster: {', '.join(missing)} "
                   f"(nothing is placed there until such a Cluster is joined)")
    return out


def override_advice(policy: dict) -> list[str]:
    """The warnings of one (Cluster)OverridePolicy (module docs)."""
    spec = policy.get("spec") or {}
    who = _ref(policy)
    out = []
    if spec.get("overrideRules") and (spec.get("overriders") or {}).get("fieldOverrider"):
        out.append(f"{who}: spec.overriders.fieldOverrider is not acted on beside overrideRules: Karmada applies "
                   f"only overrideRules")
    kinds = sorted({s.get("kind") for s in spec.get("resourceSelectors") or []
                    if s.get("kind") and s.get("kind") not in _CONTAINER_KINDS})
    rules = list(spec.get("overrideRules") or []) + ([{"overriders": spec["overriders"]}] if spec.get("overriders") else [])
    for rule in rules:
        ov = rule.get("overriders") or {}
        names = [n for n in ("commandOverrider", "argsOverrider") if ov.get(n)]
        if any(not o.get("predicate") for o in ov.get("imageOverrider") or []):
            names.insert(0, "imageOverrider")
        if names and kinds:
            out.append(f"{who}: {', '.join(names)} leave {', '.join(kinds)} unchanged: they know the containers of "
                       f"Pod, ReplicaSet, Deployment, DaemonSet, StatefulSet and Job only "
                       f"(imageOverrider with predicate.path reaches any kind)")
            break
    return out


def _ingress_advice(mci: dict) -> list[str]:
    spec = mci.get("spec") or {}
    given = [f for f in ("rules", "tls", "defaultBackend", "ingressClassName") if spec.get(f)]
    if not given:
        return []
    return [f"{_ref(mci)}: spec.{', spec.'.join(given)} make no Ingress on any member: karmactl, like Karmada "
            f"without a multicluster cloud provider, only computes its status (serviceLocations, trafficBlockClusters)"]


def _binding_advice(out) -> list[str]:
    lines = []
    for key in sorted(out.bindings):
        spec = out.bindings[key].get("spec") or {}
        name = spec.get("schedulerName")
        if name and name != C.DEFAULT_SCHEDULER_NAME:
            lines.append(f"{key[1]} {key[2] + '/' if key[2] else ''}{key[3]}: spec.schedulerName is \"{name}\": "
                         f"karmactl's scheduler is {C.DEFAULT_SCHEDULER_NAME}, so the binding is never scheduled here")
    return lines


_DEPENDENCY_KINDS = frozenset({("", "ConfigMap"), ("", "Secret"), ("", "PersistentVolumeClaim"), ("", "ServiceAccount")})


def selection_advice(snap, skipped_namespaces: tuple, policies_too: bool = True) -> list[str]:
    """Policies that select no resource template, and resource templates no policy selects (and
    no binding propagates, e.g. as a dependency), over a whole loaded snapshot: one line each.

    Called by the run on what it loaded (``karmactl/reconcile.py``), not by a step: a shard or a
    partial run sees only part of the templates and policies. ``policies_too=False`` leaves out the
    policy lines (a partial run, whose snapshot holds only the templates it recomputes).
    Namespaces, PriorityClasses and CRDs are left out: they are commonly kept on the control plane
    for what they give it. With ``propagateDeps`` anywhere, ConfigMaps, Secrets, PVCs and
    ServiceAccounts are left out too (their bindings may come with their workload's).
    """
    from karmactl.api.selectors import policy_priority
    from karmactl.controllers.detector import template_binding_key
    from karmactl.controllers.helper.mcs import service_claims
    from karmactl.controllers.helper.template import DetectorConfig, is_template

    config = DetectorConfig(skipped_namespaces=skipped_namespaces)
    policies = [snap.user[k] for kind in ("PropagationPolicy", "ClusterPropagationPolicy")
                for k in snap.keys_of_kind("policy.karmada.io", kind)]
    by_gvk: dict = {}
    for p in policies:
        for gvk in {(s.get("apiVersion"), s.get("kind")) for s in (p.get("spec") or {}).get("resourceSelectors") or []}:
            by_gvk.setdefault(gvk, []).append(p)
    deps = any((p.get("spec") or {}).get("propagateDeps") for p in policies)
    # templates left on the control plane without a word: propagated otherwise, or usually kept there
    elsewhere = set(service_claims(snap)) | {k for k in snap.user if template_binding_key(k) in snap.bindings}

    def selectors_of(key, obj) -> list:
        return [p for p in by_gvk.get((obj.get("apiVersion"), obj.get("kind")), ())
                if (p["kind"] == "ClusterPropagationPolicy" or p["metadata"].get("namespace") == key[2])
                and policy_priority(p, obj) > 0]

    selecting: set = set()
    unselected = []
    for key, obj in sorted(snap.user.items()):
        if not is_template(key, obj, config):
            continue
        hits = selectors_of(key, obj)
        selecting.update(id(p) for p in hits)
        if not hits and key not in elsewhere and key[:2] not in _UNSELECTED_IS_NORMAL \
                and not (deps and key[:2] in _DEPENDENCY_KINDS):
            unselected.append(key)
    lines = [f"{_ref(p)} selects no resource template: it propagates nothing"
             for p in policies if policies_too and id(p) not in selecting]
    lines += [f"{k[1]} {k[2] + '/' if k[2] else ''}{k[3]}: selected by no PropagationPolicy or "
              f"ClusterPropagationPolicy, it stays on the control plane only" for k in unselected]
    return lines


def step(loaded, out, now: str, ctx) -> bool:
    """Pipeline step ``advice``: the warnings of the module docs, on the first pass; changes nothing."""
    if ctx.passes != 1:
        return False
    clusters = {k[3] for k in loaded.keys_of_kind("cluster.karmada.io", "Cluster")}
    lines = []
    for kind in ("PropagationPolicy", "ClusterPropagationPolicy"):
        for key in loaded.keys_of_kind("policy.karmada.io", kind):
            lines += placement_advice(loaded.user[key], clusters)
    for kind in ("OverridePolicy", "ClusterOverridePolicy"):
        for key in loaded.keys_of_kind("policy.karmada.io", kind):
            lines += override_advice(loaded.user[key])
    for key in loaded.keys_of_kind("networking.karmada.io", "MultiClusterIngress"):
        lines += _ingress_advice(loaded.user[key])
    lines += _binding_advice(out)
    for line in lines:
        ctx.warn(line)
    return False


__all__ = ["override_advice", "placement_advice", "selection_advice", "step"]
