"""Splitting one snapshot into independent shards, so a large run can use both cores.

Everything the control plane computes for one resource template (its ResourceBinding, the
scheduling result, its Works, the template's own status) depends only on that template, the
policies and the Clusters: Karmada's controllers reconcile one binding at a time. The few
exceptions read other templates' results:

* namespace sync turns every Namespace into Works (``namespace_sync.py``);
* MultiClusterIngress status reads the ResourceBindings of its backend Services
  (``multicluster_ingress.py``, after ``pkg/controllers/multiclusteringress``);
* the dependencies distributor gives a workload's ConfigMaps, Secrets, ... bindings that follow
  the workload's: a snapshot with ``propagateDeps`` is not split at all
  (:func:`has_cross_template_dependencies`);
* a FederatedResourceQuota sums (and its enforcement checks) every ResourceBinding of its
  namespace: a snapshot with one is not split either.

A shard therefore gets every object that is not a template (Clusters, Remedies,
MultiClusterIngresses, overrides, settings), every Namespace and Service with what was computed
for them, its own part of the other templates with their bindings and Works, and the
(Cluster)PropagationPolicies that can matter to those templates (:func:`policy_reach`): a policy
whose every resource selector names its object goes only to the shards of the templates it names
and of the templates (and bindings) that its claim marks; any other policy goes to every shard.
Each computed object has exactly one owner shard, whose result is the one kept
(:meth:`Sharding.owner`): a binding belongs to the shard of its key, a Work to its binding's
shard, a template's status to its binding's shard, and everything else (cluster status, namespace
Works, MultiClusterIngress status) to shard 0. The objects several shards compute (Namespaces,
Services, cluster status) come out the same in each, because each shard starts from the same
inputs for them.

A run has more shards than processes when it is large (``sharded.run_sharded``): each process
computes its shards one after the other and keeps only their files, so its memory is bounded by
one shard's results, not by its share of the fleet.
"""
from __future__ import annotations

import zlib

from karmactl.api import constants as C
from karmactl.api.snapshot import Key, Snapshot
from karmactl.controllers.helper.template import SKIPPED_GROUPS, DetectorConfig, is_template
from karmactl.controllers.helper.work import work_binding_key
from karmactl.api.names import binding_name

# templates whose results other objects read (see the module docstring): computed by every shard
SHARED_TEMPLATE_KINDS = frozenset({("", "Namespace"), ("", "Service")})
PROPAGATION_POLICY_KINDS = frozenset({("policy.karmada.io", "PropagationPolicy"),
                                      ("policy.karmada.io", "ClusterPropagationPolicy")})
BINDINGS = "bindings"
WORKS = "works"
OVERLAYS = "overlays"


def has_cross_template_dependencies(snap: Snapshot) -> bool:
    """Whether a binding of ``snap`` may require another template's binding (``propagateDeps``
    on a policy or a binding, or a binding with ``requiredBy``): the dependencies distributor
    then joins templates no key hash keeps together, so such a snapshot is computed whole; so is
    one with a MultiClusterService (``multicluster_service.py``) or a FederatedResourceQuota (which
    reads every binding of its namespace), and one where a policy's ``schedulePriority`` reads a
    PriorityClass (another template) or its ``workloadAffinity`` joins workloads in groups."""
    for key, obj in snap.user.items():
        if key[:2] in (("networking.karmada.io", "MultiClusterService"),
                       ("policy.karmada.io", "FederatedResourceQuota"), ("scheduling.k8s.io", "PriorityClass")):
            return True  # bindings and Works that span templates
        if key[0] == "policy.karmada.io" and key[1] in ("PropagationPolicy", "ClusterPropagationPolicy"):
            spec = obj.get("spec") or {}
            if spec.get("propagateDeps") or spec.get("schedulePriority") or \
                    (spec.get("placement") or {}).get("workloadAffinity"):
                return True
    return any((b.get("spec") or {}).get("propagateDeps") or (b.get("spec") or {}).get("requiredBy")
               for b in snap.bindings.values())


def shard_of(binding_key: Key, shards: int) -> int:
    """The shard of a ResourceBinding/ClusterResourceBinding key: a stable hash (CRC-32 of
    ``namespace/name``) modulo ``shards``, the same in every process and every run."""
    return zlib.crc32(f"{binding_key[2]}/{binding_key[3]}".encode()) % shards


def template_binding_key(key: Key) -> Key:
    """The key of the binding the detector makes for a template key (``detector.py``)."""
    _group, kind, ns, name = key
    return ("work.karmada.io", "ResourceBinding" if ns else "ClusterResourceBinding", ns, binding_name(name, kind))


def shared_binding(binding: dict) -> bool:
    """Whether a binding is one of a template kind every shard computes (:data:`SHARED_TEMPLATE_KINDS`)."""
    res = (binding.get("spec") or {}).get("resource") or {}
    return res.get("apiVersion") == "v1" and ("", res.get("kind")) in SHARED_TEMPLATE_KINDS


def claimed_policy_key(metadata: dict | None) -> Key | None:
    """The key of the (Cluster)PropagationPolicy whose claim a template's or a binding's
    ``metadata`` carries (``propagationpolicy.karmada.io/namespace`` + ``/name``, or
    ``clusterpropagationpolicy.karmada.io/name``; ``pkg/detector/claim.go``), or None."""
    ann = (metadata or {}).get("annotations") or {}
    if ann.get(C.PP_NAME_ANNOTATION):
        return ("policy.karmada.io", "PropagationPolicy", ann.get(C.PP_NAMESPACE_ANNOTATION) or "",
                ann[C.PP_NAME_ANNOTATION])
    if ann.get(C.CPP_NAME_ANNOTATION):
        return ("policy.karmada.io", "ClusterPropagationPolicy", "", ann[C.CPP_NAME_ANNOTATION])
    return None


def policy_reach(snap: Snapshot, templates) -> dict:
    """Which resource templates each (Cluster)PropagationPolicy of ``snap`` can matter to: :func:`reach_of`
    with the claims of the templates' overlays and of the bindings of ``snap``.

    Args:
        snap: the loaded snapshot (user objects, overlays, bindings).
        templates: the keys of the resource templates.

    Returns:
        As :func:`reach_of`; the keys are those of templates and of ResourceBindings /
        ClusterResourceBindings (a claim left on a binding whose template is gone).
    """
    claims = [(k, claimed_policy_key((snap.overlays.get(k) or {}).get("metadata"))) for k in templates]
    claims += [(k, claimed_policy_key(b.get("metadata"))) for k, b in snap.bindings.items()]
    return reach_of(snap.user, templates, claims)


def reach_of(objects: dict, templates, claims) -> dict:
    """Which resource templates each (Cluster)PropagationPolicy among ``objects`` can matter to.

    A policy whose every ``resourceSelectors`` entry has a ``name`` can select only templates of
    those kinds and names (``pkg/util/selector.go``: a named selector matches nothing else, and a
    labelSelector beside it only narrows it); besides, it matters to the templates whose claim
    (overlay) or whose binding names it, since the detector keeps or drops that claim. Other
    policies (a selector without a name selects by labels or the whole kind) may select anything.

    Args:
        objects: ``{key: object}``; only its (Cluster)PropagationPolicies are looked at.
        templates: the keys of the resource templates.
        claims: ``(target, policy key or None)`` pairs: what carries a claim (a template key, a
            binding key, or whatever the caller uses to name it) and the key of the policy it
            names (:func:`claimed_policy_key`).

    Returns:
        ``{policy key: set of template keys and claim targets, or None for "any template"}`` for
        every (Cluster)PropagationPolicy of ``objects``. Templates are compared by kind and name
        only, a superset of what the detector matches (apiVersion and namespace are not looked at).
    """
    by_name: dict = {}
    for key in templates:
        by_name.setdefault((key[1], key[3]), []).append(key)
    reach: dict = {}
    for key, policy in objects.items():
        if key[:2] not in PROPAGATION_POLICY_KINDS:
            continue
        selectors = (policy.get("spec") or {}).get("resourceSelectors") or []
        if any(not (s or {}).get("name") for s in selectors):
            reach[key] = None
            continue
        named = set()
        for s in selectors:
            named.update(by_name.get((s.get("kind"), s["name"]), ()))
        reach[key] = named
    for target, pkey in claims:
        if pkey is not None and reach.get(pkey) is not None:
            reach[pkey].add(target)
    return reach


def layout_group(obj: dict, processes: int) -> int:
    """Which of ``processes`` processes of a sharded run will most likely compute ``obj`` (a user
    object as parsed), or ``processes`` for an object every process reads: the process of the
    template's binding key (:func:`shard_of`, which for any number of shards that is a multiple
    of ``processes`` gives the same process), the process of the first template a policy names,
    else shared. Loading places the objects of each group together in memory
    (``StateStore.load``'s ``layout``), so that a process that lets go of the others' objects
    (:meth:`Sharding.keep_only`) gives their memory back. A guess is never wrong, only less
    thrifty: it decides where objects live, not who computes them."""
    metadata = obj.get("metadata") or {}
    api_version, kind, name = obj.get("apiVersion"), obj.get("kind"), metadata.get("name")
    if not (isinstance(api_version, str) and isinstance(kind, str) and isinstance(name, str)):
        return processes
    group = api_version.rpartition("/")[0]
    namespace = metadata.get("namespace") or ""
    if group not in SKIPPED_GROUPS:
        return shard_of(template_binding_key((group, kind, namespace, name)), processes)
    if (group, kind) in PROPAGATION_POLICY_KINDS:
        selectors = (obj.get("spec") or {}).get("resourceSelectors") or []
        first = selectors[0] if selectors and isinstance(selectors[0], dict) else {}
        if isinstance(first.get("name"), str) and isinstance(first.get("kind"), str) \
                and all(isinstance(s, dict) and s.get("name") for s in selectors):
            namespace = first.get("namespace") or (namespace if kind == "PropagationPolicy" else "")
            return shard_of(template_binding_key(("", first["kind"], namespace, first["name"])), processes)
    return processes


class Sharding:
    """Ownership of every object of one snapshot among ``shards`` shards.

    Args:
        snap: the loaded snapshot.
        shards: number of shards (>= 1), or ``f(number of templates) -> number of shards``.
        config: the detector settings (which namespaces are skipped decides what is a template).
    """

    def __init__(self, snap: Snapshot, shards, config: DetectorConfig):
        templates = [key for key, obj in snap.user.items() if is_template(key, obj, config)]
        self.shards = shards = shards(len(templates)) if callable(shards) else shards
        self._user_split: dict = {}  # templates only one shard gets: key -> shard
        self._user_owner: dict = dict.fromkeys(snap.user, 0)  # every user object: key -> shard that keeps its status
        self._policy_split: dict = {}  # policies only some shards get: key -> frozenset of shards
        for key in templates:
            owner = shard_of(template_binding_key(key), shards)
            self._user_owner[key] = owner
            if key[:2] not in SHARED_TEMPLATE_KINDS:
                self._user_split[key] = owner
        self._shared_bindings = {k for k, b in snap.bindings.items() if shared_binding(b)}
        for pkey, reached in policy_reach(snap, templates).items():
            parts = set()
            for key in reached if reached is not None else ():
                part = self._input(BINDINGS, key, {}) if key[0] == "work.karmada.io" else self._user_split.get(key, -1)
                if part is None or part == -1:  # a shared template or binding: every shard
                    break
                parts.add(part)
            else:
                if reached is not None:
                    parts = parts or {0}  # selecting nothing: shard 0 (its warnings are still given)
                    self._policy_split[pkey] = frozenset(parts)
                    self._user_owner[pkey] = min(parts)

    def split_templates(self) -> set:
        """The keys of the templates only one shard gets (those of ``SHARED_TEMPLATE_KINDS`` go to
        every shard)."""
        return set(self._user_split)

    def owner(self, which: str, key: Key, obj: dict) -> int:
        """The shard whose result is kept for a computed object (``which``: bindings, works, overlays)."""
        if which == BINDINGS:
            return shard_of(key, self.shards)
        if which == WORKS:
            bkey = work_binding_key(obj)
            return 0 if bkey is None else shard_of(bkey, self.shards)
        return self._user_owner.get(key, 0)  # status of an object no longer in the files: shard 0

    def _input(self, which: str, key: Key, obj: dict) -> int | None:
        """The one shard that gets an input object, or None when every shard gets it."""
        if which == BINDINGS:
            return None if key in self._shared_bindings else shard_of(key, self.shards)
        if which == WORKS:
            bkey = work_binding_key(obj)
            if bkey is None or bkey in self._shared_bindings:
                return None
            return shard_of(bkey, self.shards)
        return self._user_split.get(key)  # status of a template goes with it; the rest is shared

    def late_input_conflict(self, which: str, key: Key, obj: dict, shard: int) -> str | None:
        """Why a computed object (``which``: bindings, works, overlays) that was not in the snapshot
        this sharding was built from cannot simply be added to the part shard ``shard`` computes
        (:meth:`split`), or None when it can: when the sharding, built with it, would have given
        it to that shard alone and would have split everything else the same.

        That is: it goes to that one shard (:meth:`_input`); it is no binding of a shared template
        kind (every shard would get it and its Works) nor one that joins templates
        (``propagateDeps``, ``requiredBy``: :func:`has_cross_template_dependencies`, no split at
        all); and the (Cluster)PropagationPolicy its claim names, when that policy goes to some
        shards only, goes to this one (:func:`policy_reach` adds the claiming template's shard).
        A sharded run that reads some computed files only in the shard that owns them
        (``sharded.run_sharded``) checks each with this; a conflict means computing the run
        from the whole snapshot instead."""
        if which == BINDINGS:
            spec = obj.get("spec") or {}
            if shared_binding(obj):
                return "a binding of a template every shard reads"
            if spec.get("propagateDeps") or spec.get("requiredBy"):
                return "a binding that joins templates (propagateDeps, requiredBy)"
        part = self._input(which, key, obj)
        if part != shard:
            return f"belongs to {'every shard' if part is None else f'shard {part}'}"
        if which != WORKS:
            pkey = claimed_policy_key(obj.get("metadata"))
            parts = self._policy_split.get(pkey) if pkey is not None else None
            if parts is not None and shard not in parts:
                return f"claims {pkey[1]} {pkey[2]}/{pkey[3]}, which its shard does not get"
        return None

    def keep_only(self, snap: Snapshot, process: int, processes: int) -> None:
        """Let ``snap`` (in one process of a sharded run) hold only what the shards ``process``,
        ``process + processes``, ... get: the objects of the other processes' shards are dropped
        (``snap.sources`` is left whole), and their memory, grouped by :func:`layout_group`,
        holds this process's results instead of new pages."""
        mine = lambda shard: shard % processes == process  # noqa: E731
        split, policies = self._user_split, self._policy_split
        snap.user = {k: v for k, v in snap.user.items()
                     if mine(split.get(k, process)) and any(mine(s) for s in policies.get(k, (process,)))}
        for which in (BINDINGS, WORKS, OVERLAYS):
            src = getattr(snap, which)
            part = {}
            for k, v in src.items():
                s = self._input(which, k, v)
                if s is None or mine(s):
                    part[k] = v
            setattr(snap, which, part)

    def split(self, snap: Snapshot, shard: int) -> Snapshot:
        """The part of ``snap`` shard ``shard`` computes from (shares the objects, copies the maps)."""
        out = Snapshot(snap.registry)
        split, policies = self._user_split, self._policy_split
        out.user = {k: v for k, v in snap.user.items()
                    if split.get(k, shard) == shard and shard in policies.get(k, (shard,))}
        out.sources = {k: snap.sources[k] for k in out.user if k in snap.sources}
        for which in (BINDINGS, WORKS, OVERLAYS):
            src = getattr(snap, which)
            part = {}
            for k, v in src.items():
                s = self._input(which, k, v)
                if s is None or s == shard:
                    part[k] = v
            setattr(out, which, part)
        return out
