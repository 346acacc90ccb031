"""Scheduling one binding end to end: eligibility, the reschedule decision, the algorithm, the write-back.

Follows ``pkg/scheduler/scheduler.go`` (``doScheduleBinding``, ``scheduleResourceBinding*``,
``patchScheduleResultFor*``, ``patchBindingStatusCondition``), ``pkg/scheduler/helper.go``
(``placementChanged``, ``getAffinityIndex``, ``getConditionByError``), ``pkg/scheduler/event_handler.go``
(which bindings are handled) and ``pkg/scheduler/core/generic_scheduler.go`` (``Schedule``).
ResourceBindings and ClusterResourceBindings have the same shape and are handled alike.

karmactl deviations (all for stable files; see the module docs of :mod:`assignment` too):

* ``spec.clusters`` is written sorted by cluster name (upstream's order carries no meaning), and a
  result equal to the current one as a set of (name, replicas) leaves the list untouched.
* ``status.lastScheduledTime`` is written on success only when the result changed, when it was
  missing, or when an explicit reschedule (``rescheduleTriggeredAt``) was pending; upstream stamps it
  on every successful run, which would rewrite files on every pass.
* When the scheduler changes ``spec`` it bumps ``metadata.generation`` itself (there is no API server),
  and a successful run records that new generation in ``schedulerObservedGeneration`` (upstream
  records the old one and catches up on the next event; this is the same fixpoint, one pass earlier).
* ``spec.clusters`` entries omit ``replicas`` when it is 0 (Go's ``omitempty``); an empty result
  removes the key. :attr:`ScheduleOutcome.result` always carries ``replicas``.
* Placements are compared after dropping nulls and empty lists/maps, so a Go-marshalled annotation
  (``omitempty``) and a YAML placement spelling out empty fields compare equal (upstream's
  ``reflect.DeepEqual`` would see nil != empty and reschedule every time).
* Webhook defaults absent from files are applied when reading a placement (``replicaSchedulingType:
  Divided``, ``replicaDivisionPreference: Weighted``), see :mod:`karmactl.scheduler.util`.
* Faithful quirk kept: ``clusterAffinities: []`` (present but empty) tries no term and reports
  ``Scheduled=True`` without touching ``spec.clusters``, as upstream does.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from karmactl.api import constants as C
from karmactl.api.objects import bump_generation, canonical_json, deepcopy, set_condition
from karmactl.scheduler.assignment import assign_replicas, reschedule_required
from karmactl.scheduler.estimator import cal_available_replicas
from karmactl.scheduler.framework import (
    FitError, SchedulingError, UnschedulableError, run_filter_plugins, run_score_plugins,
)
from karmactl.scheduler.plugins import FILTER_PLUGINS, SCORE_PLUGINS
from karmactl.scheduler.selection import build_cluster_details, select_best_clusters
from karmactl.scheduler.plugins.cluster_affinity import affinities_for
from karmactl.scheduler.util import (
    DIVIDED, DUPLICATED, DUPLICATED_STRATEGY, STATIC_WEIGHT_STRATEGY, cluster_name, is_deleting, is_static_weighted,
    is_workload, multi_template_applicable, replica_scheduling_type, replicas_of, strategy_type, target_clusters,
)

MANAGED_BY_LABEL = "binding.karmada.io/managed-by"


@dataclass(frozen=True)
class ScheduleOutcome:
    """What :func:`schedule_binding` did.

    Attributes:
        binding: the updated binding (a new dict; ``==`` the input when nothing changed).
        attempted: whether a scheduling run happened (the 3.2 decision said yes).
        error: the ``Scheduled`` condition message on failure, else None.
        filtered: ``{cluster name: first failing filter reason}`` of the last attempt (for ``describe``);
            computed on first access, since runs rarely need it.
        result: the chosen targets ``[{"name", "replicas"}]`` sorted by name; empty on failure.
    """

    binding: dict
    attempted: bool
    error: str | None = None
    explain: object = field(default=None, repr=False, compare=False)
    result: list[dict] = field(default_factory=list)

    @property
    def filtered(self) -> dict[str, str]:
        if callable(self.explain):
            return self.explain()
        return dict(self.explain or {})


# --------------------------------------------------------------------------------------------------
# 3.1 eligibility and 3.2 decision


def is_eligible(binding: dict, scheduler_name: str = C.DEFAULT_SCHEDULER_NAME) -> bool:
    """Whether the scheduler handles ``binding`` at all (``resourceBindingEventFilter``).

    ``spec.schedulerName`` (empty = ``default-scheduler``) must equal ``scheduler_name``,
    ``spec.suspension.scheduling`` must not be true, the binding must carry a PP/CPP permanent-id label
    or ``binding.karmada.io/managed-by``, and it must not be deleting.
    """
    spec = binding.get("spec") or {}
    if (spec.get("schedulerName") or C.DEFAULT_SCHEDULER_NAME) != scheduler_name:
        return False
    if (spec.get("suspension") or {}).get("scheduling") is True:
        return False
    labels = (binding.get("metadata") or {}).get("labels") or {}
    if not (labels.get(C.PP_PERMANENT_ID_LABEL) or labels.get(C.CPP_PERMANENT_ID_LABEL) or labels.get(MANAGED_BY_LABEL)):
        return False
    return not is_deleting(binding)


def _normalize(value):
    """Drop nulls and empty lists/maps so that a Go-marshalled annotation (``omitempty``) and a YAML
    placement that spells out empty fields compare equal."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _normalize(v)
            if v is None or v == [] or v == {}:
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    return value


def placement_changed(placement: dict, applied: str | None, observed_affinity_name: str) -> bool:
    """``placementChanged``: whether ``spec.placement`` differs from the applied-placement annotation.

    A missing annotation means changed; an undecodable one means *not* changed (upstream logs and
    moves on). When only ``clusterAffinities`` differ, only the term named ``observed_affinity_name``
    is compared (no observed name -> changed). An annotation that is the placement's own
    :func:`canonical_json` (what the scheduler writes) means unchanged without decoding it.
    """
    if not applied:
        return True
    if applied == canonical_json(placement or {}):
        return False
    try:
        old = json.loads(applied)
    except ValueError:
        return False
    if not isinstance(old, dict):
        return False
    new, old = _normalize(placement or {}), _normalize(old)
    if new == old:
        return False
    for key in ("clusterAffinity", "clusterTolerations", "spreadConstraints", "replicaScheduling"):
        if new.get(key) != old.get(key):
            return True
    if not observed_affinity_name:
        return True

    def term(p: dict):
        for t in p.get("clusterAffinities") or []:
            if t.get("affinityName") == observed_affinity_name:
                return t
        return None

    new_term, old_term = term(new), term(old)
    return new_term is None or old_term is None or new_term != old_term


def replicas_changed(spec: dict) -> bool:
    """``IsBindingReplicasChanged`` (only with ``replicaScheduling`` set): Duplicated -> any target's
    replicas differ from ``spec.replicas``; Divided -> the sum of target replicas differs."""
    placement = spec.get("placement") or {}
    if placement.get("replicaScheduling") is None:
        return False
    targets = target_clusters(spec)
    kind = replica_scheduling_type(placement)
    if kind == DUPLICATED:
        return any(t["replicas"] != replicas_of(spec) for t in targets)
    if kind == DIVIDED:
        return sum(t["replicas"] for t in targets) != replicas_of(spec)
    return False


def _has_terminating_target(spec: dict, clusters: dict[str, dict]) -> bool:
    return any(is_deleting(clusters.get(t["name"])) for t in target_clusters(spec))


def needs_schedule(binding: dict, clusters: dict[str, dict]) -> bool:
    """The ``doScheduleBinding`` decision (3.2 items 1-5), first true item wins.

    Args:
        binding: an RB/CRB dict.
        clusters: ``{name: Cluster}``, used for item 5 (a target cluster being deleted).
    """
    spec = binding.get("spec") or {}
    status = binding.get("status") or {}
    placement = spec.get("placement")
    if placement is None:
        return False
    annotations = (binding.get("metadata") or {}).get("annotations") or {}
    if placement_changed(placement, annotations.get(C.APPLIED_PLACEMENT_ANNOTATION),
                         status.get("schedulerObservingAffinityName") or ""):
        return True
    if replicas_changed(spec):
        return True
    if reschedule_required(spec, status):
        return True
    if not is_workload(spec) or replica_scheduling_type(placement) == DUPLICATED:
        return True
    return _has_terminating_target(spec, clusters)


# --------------------------------------------------------------------------------------------------
# the algorithm (generic_scheduler.Schedule)


def _available_replicas(feasible: list[dict], spec: dict) -> dict[str, int]:
    """The estimator's answer, skipped where nothing reads it.

    Duplicated and static-weight placements without spread constraints select every feasible
    cluster and never consult capacity (3.6.2, 3.6.5, 3.6.6), and karmactl writes results in name
    order, so the estimate would only order clusters nobody re-orders: give 0 instead.
    """
    placement = spec.get("placement") or {}
    strategy = strategy_type(placement)
    if strategy in (DUPLICATED_STRATEGY, STATIC_WEIGHT_STRATEGY) and (
            not placement.get("spreadConstraints") or is_static_weighted(placement)):
        return {cluster_name(c): 0 for c in feasible}
    return cal_available_replicas(feasible, spec)


_BY_NAME_CACHE: list = [None, None]


def _clusters_by_name(clusters: list[dict]) -> dict[str, dict]:
    """``{name: cluster}``, cached for the last list seen (a pass schedules every binding against
    the same cluster list)."""
    if _BY_NAME_CACHE[0] is not clusters or len(_BY_NAME_CACHE[1]) != len(clusters):
        _BY_NAME_CACHE[0], _BY_NAME_CACHE[1] = clusters, {cluster_name(c): c for c in clusters}
    return _BY_NAME_CACHE[1]


def _named_clusters(spec: dict, status: dict) -> set[str] | None:
    """The only cluster names that can pass ClusterAffinity, when every affinity lists clusterNames
    (a set lookup then rejects the rest without evaluating selectors); None when any affinity
    could match clusters by labels or fields alone."""
    affinities = affinities_for(spec, status)
    if not affinities:
        return None
    names: set[str] = set()
    for affinity in affinities:
        if not affinity.get("clusterNames"):
            return None
        names.update(affinity["clusterNames"])
    return names


_AFFINITY = next(p for p in FILTER_PLUGINS if p.name == "ClusterAffinity")
_FACTS: list = [None, []]  # the last cluster list seen, and its (cluster, name, deleting) triples


def _cluster_facts(clusters: list[dict]) -> list[tuple[dict, str, bool]]:
    """``(cluster, name, deleting)`` per cluster; one pass schedules every binding against the
    same list, so the triples are kept for the list last seen (reused only while it holds the
    very same cluster objects: clusters are never modified in place)."""
    facts = _FACTS[1]
    if (_FACTS[0] is not clusters or len(facts) != len(clusters)
            or not all(f[0] is c for f, c in zip(facts, clusters))):
        _FACTS[0] = clusters
        _FACTS[1] = [(c, cluster_name(c), is_deleting(c)) for c in clusters]
    return _FACTS[1]


def run_algorithm(spec: dict, status: dict, clusters: list[dict], *, enable_empty_workload_propagation: bool = False,
                  diagnosis: dict[str, str] | None = None, extra_filters: tuple = ()) -> list[dict]:
    """One scheduling attempt: filter, score, estimate, select, assign.

    Args:
        spec, status: the binding's spec and the attempt's status (``schedulerObservingAffinityName``
            set to the ``clusterAffinities`` term being tried).
        clusters: every known Cluster (deleting ones are skipped but counted in the FitError total).
        diagnosis: if given, filled with ``{cluster: first failing filter reason}`` (costs a full
            filter chain per rejected cluster; without it reasons are computed only on a FitError).
        extra_filters: filter plugins run after the in-tree ones (the gated WorkloadAffinity pair).

    Returns:
        targets ``[{"name", "replicas"}]`` in assignment order.

    Raises:
        FitError: no cluster passed the filters.
        UnschedulableError / SchedulingError: selection or assignment failed (message prefixed with
            ``failed to select clusters: `` or ``failed to assign replicas: ``).
    """
    # Feasibility does not depend on filter order, so the cheap affinity check runs first and most
    # clusters of a clusterNames placement are rejected without the other plugins. The first failing
    # reason in the documented order (what FitError and `describe` report) is computed only for the
    # clusters that need it: all of them when nothing fits.
    feasible, rejected = [], []
    plugins = FILTER_PLUGINS + tuple(extra_filters)
    named = _named_clusters(spec, status)
    for cluster, name, deleting in _cluster_facts(clusters):
        if deleting:
            continue  # never schedule onto a deleting cluster; not reported as a failure
        if named is not None and name not in named:
            rejected.append(cluster)
            continue
        if not _AFFINITY.filter(spec, status, cluster).ok:
            rejected.append(cluster)
            continue
        result = run_filter_plugins(plugins, spec, status, cluster)
        if result.ok:
            feasible.append(cluster)
        else:
            rejected.append(cluster)
    failures: dict[str, str] = {}
    if not feasible or diagnosis is not None:
        for cluster in rejected:
            failures[cluster_name(cluster)] = run_filter_plugins(plugins, spec, status, cluster).reason
    if diagnosis is not None:
        diagnosis.clear()
        diagnosis.update(failures)
    if not feasible:
        raise FitError(len(clusters), failures)
    scored = [(c, run_score_plugins(SCORE_PLUGINS, spec, c)) for c in feasible]
    details = build_cluster_details(scored, spec, status, _available_replicas(feasible, spec))
    try:
        # a set of components is scheduled as a whole: one set must fit (common.go: SelectClusters)
        selected = select_best_clusters(spec, details, 1 if multi_template_applicable(spec) else replicas_of(spec))
    except SchedulingError as err:
        raise err.prefixed("failed to select clusters: ") from err
    try:
        targets = assign_replicas(selected, spec, status)
    except SchedulingError as err:
        raise err.prefixed("failed to assign replicas: ") from err
    if enable_empty_workload_propagation:
        present = {t["name"] for t in targets}
        targets = targets + [{"name": c.name, "replicas": 0} for c in selected if c.name not in present]
    return targets


# --------------------------------------------------------------------------------------------------
# schedule_binding


def _explainer(diagnosis, spec: dict, status: dict, clusters: list[dict], extra_filters: tuple = ()):
    """``filtered`` for an outcome: the FitError's reasons, or a lazy full filter run."""
    if diagnosis is not None:
        return dict(diagnosis)

    def explain() -> dict[str, str]:
        out: dict[str, str] = {}
        for cluster in clusters:
            if is_deleting(cluster):
                continue
            result = run_filter_plugins(FILTER_PLUGINS + tuple(extra_filters), spec, status, cluster)
            if not result.ok:
                out[cluster_name(cluster)] = result.reason
        return out
    return explain


def _sorted_targets(targets: list[dict]) -> list[dict]:
    out = []
    for t in targets:
        entry = {"name": t["name"], "replicas": int(t.get("replicas") or 0)}
        if t.get("components"):  # a whole set of a multi-component workload (TargetCluster.Components)
            entry["components"] = [{"name": c["name"], "replicas": int(c.get("replicas") or 0)} for c in t["components"]]
        out.append(entry)
    return sorted(out, key=lambda t: t["name"])


def _write_clusters(binding: dict, targets: list[dict]) -> bool:
    """Set ``spec.clusters`` (name order, ``replicas`` omitted when 0 like Go's omitempty; the
    ``components`` of a target that runs a whole set) unless the current list already holds the
    same targets. Returns whether it changed."""
    spec = binding.setdefault("spec", {})
    new = _sorted_targets(targets)
    if _sorted_targets(spec.get("clusters") or []) == new:
        return False
    if new:
        spec["clusters"] = [{k: v for k, v in t.items() if k != "replicas" or v} for t in new]
    else:
        spec.pop("clusters", None)
    return True


def _condition_for(err: SchedulingError | None) -> tuple[str, str, str]:
    """``getConditionByError``: (status, reason, message) of the ``Scheduled`` condition."""
    if err is None:
        return "True", C.REASON_SCHEDULE_SUCCESS, C.MSG_SCHEDULE_SUCCESS
    if isinstance(err, UnschedulableError):
        return "False", C.REASON_UNSCHEDULABLE, str(err)
    if isinstance(err, FitError):
        return "False", C.REASON_NO_CLUSTER_FIT, str(err)
    return "False", C.REASON_SCHEDULER_ERROR, str(err)


def _affinity_index(terms: list[dict], observed: str) -> int:
    if not observed:
        return 0
    for i, term in enumerate(terms):
        if term.get("affinityName") == observed:
            return i
    return 0


def schedule_binding(binding: dict, clusters: list[dict], now: str, *,
                     enable_empty_workload_propagation: bool = False, extra_filters: tuple = ()) -> ScheduleOutcome:
    """Schedule one RB/CRB as Karmada's scheduler would (section 3 of the semantics reference).

    Args:
        binding: the binding dict (not modified).
        clusters: every Cluster object known (deleting ones included).
        now: the pass's RFC 3339 time, used for ``lastScheduledTime`` and condition transitions.
        enable_empty_workload_propagation: scheduler flag ``--enable-empty-workload-propagation``.
        extra_filters: filter plugins after the in-tree ones (``plugins/workload_affinity.py``,
            gate ``WorkloadAffinity``).

    Returns:
        a :class:`ScheduleOutcome`; ``binding`` is a new dict with ``spec.clusters``, the
        applied-placement annotation, ``status.conditions[Scheduled]``, ``lastScheduledTime``,
        ``schedulerObservedGeneration`` and ``schedulerObservingAffinityName`` updated as applicable.
    """
    # The early exits below return the input object itself when nothing changes (or a shallow
    # copy with a new status), so the common "nothing to do" case costs no deep copy.
    skipped = _unscheduled(binding, clusters)
    if skipped is not None:
        return skipped
    old_status = binding.get("status") or {}
    new = _writable_copy(binding)
    spec = new["spec"]
    placement = spec.get("placement")
    placement_json = canonical_json(placement)
    fresh = reschedule_required(spec, old_status)
    options = {"enable_empty_workload_propagation": enable_empty_workload_propagation, "extra_filters": extra_filters}
    if placement.get("clusterAffinities") is not None:
        attempt = _schedule_by_affinities(spec, old_status, clusters, fresh, options)
    else:
        attempt = _schedule_placement(spec, old_status, clusters, options)
    _record(binding, new, placement_json, attempt, fresh, now)
    targets, error = attempt.targets, attempt.error
    result = _sorted_targets(targets) if error is None and targets is not None else []
    return ScheduleOutcome(binding=new, attempted=True, error=None if error is None else str(error),
                           explain=_explainer(attempt.diagnosis, spec, attempt.last_status, clusters, extra_filters),
                           result=result)


@dataclass
class _Attempt:
    """What one scheduling run of :func:`schedule_binding` found: the targets (None: none chosen),
    the error, the last FitError's diagnosis, the status the last run saw, whether ``spec.clusters``
    is written, and the cluster affinity term that succeeded (None without terms or success)."""

    targets: list[dict] | None = None
    error: SchedulingError | None = None
    diagnosis: dict[str, str] | None = None
    last_status: dict = field(default_factory=dict)
    patch_spec: bool = False
    observed_name: str | None = None


def _unscheduled(binding: dict, clusters: list[dict]) -> ScheduleOutcome | None:
    """The outcome of a binding :func:`schedule_binding` does not schedule (not eligible, without a
    placement, or not needing a schedule: then only ``schedulerObservedGeneration`` is caught up);
    None when it must be scheduled."""
    if not is_eligible(binding):
        return ScheduleOutcome(binding=binding, attempted=False)
    old_status = binding.get("status") or {}
    if (binding.get("spec") or {}).get("placement") is None:
        # upstream: "failed to get placement from resourceBinding(...)" and nothing written
        meta = binding.get("metadata") or {}
        key = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
        return ScheduleOutcome(binding=binding, attempted=False, error=f"failed to get placement from binding({key})")
    if not needs_schedule(binding, _clusters_by_name(clusters)):
        generation = (binding.get("metadata") or {}).get("generation")
        if generation is not None and old_status.get("schedulerObservedGeneration") != generation:
            new = dict(binding, status=dict(old_status, schedulerObservedGeneration=generation))
            return ScheduleOutcome(binding=new, attempted=False)
        return ScheduleOutcome(binding=binding, attempted=False)
    return None


def _writable_copy(binding: dict) -> dict:
    """A copy of ``binding`` holding only what :func:`schedule_binding` writes: metadata
    (annotations, generation), the top level of spec (clusters is replaced, never edited) and
    status (conditions are edited in place)."""
    new = dict(binding)
    meta = dict(binding.get("metadata") or {})
    if "annotations" in meta:
        meta["annotations"] = dict(meta["annotations"] or {})
    new["metadata"] = meta
    new["spec"] = dict(binding.get("spec") or {})
    if "status" in binding:
        new["status"] = deepcopy(binding["status"])
    return new


def _schedule_by_affinities(spec: dict, old_status: dict, clusters: list[dict], fresh: bool,
                            options: dict) -> _Attempt:
    """Karmada's scheduleResourceBindingWithClusterAffinities: each ``clusterAffinities`` term in
    turn from the observed one (the first when ``fresh``) until one schedules. When every remaining
    term failed the observed term stays and only a FitError clears the result."""
    terms = spec["placement"]["clusterAffinities"]
    index = 0 if fresh else _affinity_index(terms, old_status.get("schedulerObservingAffinityName") or "")
    attempt = _Attempt(last_status=old_status)
    first_error: SchedulingError | None = None
    while index < len(terms):
        attempt_status = deepcopy(old_status)
        attempt.last_status = attempt_status
        attempt_status["schedulerObservingAffinityName"] = terms[index].get("affinityName")
        try:
            attempt.targets = run_algorithm(spec, attempt_status, clusters, **options)
            attempt.observed_name = terms[index].get("affinityName")
            attempt.diagnosis = None  # the successful attempt's reasons are what describe shows
            break
        except SchedulingError as err:
            if isinstance(err, FitError):
                attempt.diagnosis = err.diagnosis
            first_error = first_error or err  # any error moves on to the next term
            index += 1
    if attempt.targets is not None:
        attempt.patch_spec = True
    else:
        attempt.error = first_error
        if isinstance(first_error, FitError):
            attempt.targets, attempt.patch_spec = [], True
    return attempt


def _schedule_placement(spec: dict, old_status: dict, clusters: list[dict], options: dict) -> _Attempt:
    """One scheduling run of a placement without cluster affinity terms; a FitError clears the result."""
    attempt = _Attempt(last_status=old_status)
    try:
        attempt.targets = run_algorithm(spec, old_status, clusters, **options)
    except FitError as err:
        attempt.error, attempt.targets, attempt.diagnosis = err, [], err.diagnosis
    except SchedulingError as err:
        attempt.error = err
    attempt.patch_spec = attempt.error is None or isinstance(attempt.error, FitError)
    return attempt


def _record(binding: dict, new: dict, placement_json: str, attempt: _Attempt, fresh: bool, now: str) -> None:
    """Write a scheduling run's result into ``new`` (the copy of ``binding``), in place: the targets
    and applied-placement annotation (bumping the generation when spec changed), the observed
    affinity term, ``Scheduled``, and on success ``schedulerObservedGeneration`` and
    ``lastScheduledTime`` (when clusters changed, on a fresh schedule, or never set)."""
    clusters_changed = False
    if attempt.patch_spec:
        new.setdefault("metadata", {}).setdefault("annotations", {})[C.APPLIED_PLACEMENT_ANNOTATION] = placement_json
        clusters_changed = _write_clusters(new, attempt.targets or [])
        if new.get("spec") != binding.get("spec"):
            bump_generation(binding, new)
    status = new.setdefault("status", {})
    observed_name = attempt.observed_name
    if observed_name is not None and status.get("schedulerObservingAffinityName") != observed_name:
        status["schedulerObservingAffinityName"] = observed_name
    error = attempt.error
    cond_status, reason, message = _condition_for(error)
    set_condition(new, C.COND_SCHEDULED, cond_status, reason, message, now)
    if error is None:
        generation = new["metadata"].get("generation") if new.get("metadata") else None
        if generation is not None and status.get("schedulerObservedGeneration") != generation:
            status["schedulerObservedGeneration"] = generation
        if clusters_changed or fresh or not status.get("lastScheduledTime"):
            status["lastScheduledTime"] = now


def explain_filters(binding: dict, clusters: list[dict]) -> dict[str, str]:
    """Why each cluster would be filtered out for ``binding`` now: ``{cluster: reason or ""}``.

    Runs the filter plugins in their fixed order for every cluster (deleting clusters reported as
    ``cluster is being deleted``); "" means the cluster passes. Used by ``describe rb``.
    """
    spec = binding.get("spec") or {}
    status = binding.get("status") or {}
    out: dict[str, str] = {}
    for cluster in clusters:
        if is_deleting(cluster):
            out[cluster_name(cluster)] = "cluster is being deleted"
            continue
        result = run_filter_plugins(FILTER_PLUGINS, spec, status, cluster)
        out[cluster_name(cluster)] = "" if result.ok else result.reason
    return out
