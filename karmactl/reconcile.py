"""One reconcile run: observe, decide, act, observe, report.

DESIGN §1, as one control loop over fresh member state::

    load the state directory
    -> probe members (Cluster status)  -> observe members (status of every member copy, now)
    -> compute: the control-plane pipeline (controllers/registry.py) until nothing changes
    -> act: apply / delete Works on members -> observe again -> compute again (status, and any
       decision the new observations lead to; acted on again, a bounded number of times)
    -> write what changed (or, for a dry run, report it)

Every decision is taken on observations of this run: application failover and graceful eviction
never read a member's status from an earlier run as evidence of how it is now, and the status a
run writes is what the members showed after the run's own changes. :func:`compute` is pure over a
:class:`Snapshot` and ``now``; members are reached only through the :class:`Members` interface,
which :class:`OfflineMembers` implements for offline runs (the recorded observations are all
there is) and ``karmactl.members.layer.MemberLayer`` for online ones.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Protocol

from karmactl.api.objects import describe_key
from karmactl.api.snapshot import Settings, Snapshot, StepContext
from karmactl.controllers import detector
from karmactl.controllers.registry import PIPELINE, wake_times
from karmactl.store.events import EVENTS_DIR, stage_events, stage_merged, unpack_events
from karmactl.store.state import InputError, Source, StateStore, key_of

MAX_PASSES = 10


class NotConvergedError(RuntimeError):
    """The controllers kept changing objects for :data:`MAX_PASSES` passes."""


@dataclass
class RunOptions:
    """Options of one run.

    Attributes:
        now: the run's clock (RFC 3339), read once.
        offline: never contact members; Cluster status is taken as written.
        dry_run: compute and report, write nothing.
    """

    now: str
    offline: bool = True
    dry_run: bool = False


@dataclass
class RunReport:
    """What a run did: file changes, passes, warnings and per-member failures.

    ``after`` is the computed snapshot; it is None for a large offline run, which is computed
    and written by several processes (:func:`_run_sharded`).

    ``incremental`` says how an offline run used the index of the last run
    (``karmactl/store/runindex.py``): ``unchanged``, ``partial: N template(s)`` or ``full: why``
    ("" for online and dry runs).

    ``member_changes`` is what an online dry run would do to member copies: ``[{"cluster": str,
    "action": "create"|"update"|"delete", "ref": "Deployment default/nginx" (cluster-scoped:
    "ClusterRole name"), "current": dict|None (the member copy as read), "desired": dict|None
    (what the run would apply)}]``; ``karmactl plan --online`` renders it
    (``karmactl/cli/diffing.py``).
    """

    changes: list = field(default_factory=list)
    passes: int = 0
    warnings: list = field(default_factory=list)
    events: list = field(default_factory=list)
    member_errors: dict = field(default_factory=dict)
    member_writes: int = 0
    member_changes: list = field(default_factory=list)
    after: Snapshot | None = None
    incremental: str = ""


class Members(Protocol):
    """How a run reaches member clusters (``karmactl.members.layer.MemberLayer`` online,
    :class:`OfflineMembers` offline; tests may bring their own).

    Every method returns a new snapshot (the input is not modified) and puts per-member failures
    in ``report.member_errors``, warnings and events in ``report``; none raises for a member's
    failure.
    """

    def probe(self, snap: Snapshot, now: str, report: "RunReport") -> Snapshot:
        """Cluster status (conditions, API enablements, resource summary) into each Cluster's overlay."""

    def observe(self, snap: Snapshot, now: str, report: "RunReport") -> Snapshot:
        """The status and health of every Work's member copy, as observed at ``now``."""

    def observed_clusters(self) -> frozenset | None:
        """The clusters the last :meth:`observe` read, or None when observations are recorded ones."""

    def act(self, snap: Snapshot, now: str, report: "RunReport", dry_run: bool = False) -> Snapshot:
        """Apply or delete every Work (``report.member_writes`` counts the writes); with
        ``dry_run``, send nothing and list the writes in ``report.member_changes``."""

    def close(self) -> None:
        """Release connections."""


class OfflineMembers:
    """:class:`Members` without members: Cluster status is what the state directory records
    (``cluster condition set``, the Cluster file), workload status what ``observe`` recorded, and
    nothing is applied."""

    def probe(self, snap: Snapshot, now: str, report: "RunReport") -> Snapshot:
        return snap

    def observe(self, snap: Snapshot, now: str, report: "RunReport") -> Snapshot:
        return snap

    def observed_clusters(self) -> frozenset | None:
        return None

    def act(self, snap: Snapshot, now: str, report: "RunReport", dry_run: bool = False) -> Snapshot:
        return snap

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- loading


def normalize_object(obj: dict, src: Source, registry, owned: bool = False, strict: bool = False) -> dict:
    """Alias normalisation, defaulting and validation of one user object (Karmada's webhooks).

    Args:
        owned: the caller hands ``obj`` over (a freshly parsed object): it may be rewritten in
            place instead of copied. Otherwise ``obj`` is left as it is.
        strict: first check a built-in kind against its Kubernetes OpenAPI schema as written
            (``karmactl.api.openapi.strict_errors``: unknown fields, wrong types), as ``kubectl
            apply --validate=strict``; ``apply`` asks for it.

    Raises:
        InputError: naming the file, line and object, and every invalid field (Karmada's
            webhooks aggregate all field errors of an object into one response).
    """
    from karmactl.api.defaults import default_object, normalize_aliases
    from karmactl.api.validation import validate_defaulted

    label = describe_key(key_of(obj))
    try:
        if strict:
            from karmactl.api.openapi import strict_errors

            schema_errors = strict_errors(obj)
            if schema_errors:  # a built-in kind: the schema's verdict is the whole verdict (no webhook)
                raise InputError.several([InputError(message, src.path, src.line, label, path)
                                          for path, message in schema_errors])
        obj, errors = normalize_aliases(obj, copy=not owned)
        if not errors:
            obj = default_object(obj, copy=not owned)
            errors = validate_defaulted(obj, registry)
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
        # a field of a type no check above expected: still bad input, never an internal error
        raise InputError(f"a field has a type Kubernetes does not accept ({type(exc).__name__}: {exc})",
                         src.path, src.line, label) from None
    if errors:
        raise InputError.several([InputError(e.message, src.path, src.line, label, e.path) for e in errors])
    return obj


def load(store: StateStore, computed: bool = True) -> Snapshot:
    """Load and validate the state directory (raises :class:`InputError`); with ``computed``
    False, its user files only (``StateStore.load``)."""
    import functools

    from karmactl.controllers.shards import layout_group
    from karmactl.store.state import validation_tag

    # the store hands over freshly parsed objects: defaulting may work on them in place
    # strict: files edited by hand (or merged in git) get the same checks as `apply`
    return store.load(normalize=lambda obj, src: normalize_object(obj, src, store.registry, owned=True, strict=True),
                      normalize_tag=validation_tag(), layout=functools.partial(layout_group, processes=SHARDS),
                      computed=computed)


def _reload(store: StateStore) -> Snapshot:
    """:func:`load` once more in the same run (its notes about skipped documents were given)."""
    from karmactl.store import state

    sink, state.note_sink = state.note_sink, None
    try:
        return load(store)
    finally:
        state.note_sink = sink


def _load_for_shards(store: StateStore, owners: dict) -> tuple:
    """Load the state directory for a full offline run that has the last run's index, ``owners``
    its ``runindex.computed_owners`` (``karmactl/store/shard_inputs.py``): ``(snapshot, None)`` as
    :func:`load` gives it, or, when the run can be sharded by its user objects, ``(snapshot,
    ShardInputs)``: the snapshot without the computed files that the index gives to one template's
    shard, for the shard processes to read.

    Raises:
        InputError: as :func:`load` (exactly: a damaged computed file the parent meets is
            reported by a whole load).
    """
    from karmactl.controllers.shards import template_binding_key
    from karmactl.store import runindex
    from karmactl.store.shard_inputs import ShardInputs, deferrable

    before = load(store, computed=False)
    try:
        config = detector.DetectorConfig(skipped_namespaces=settings_of(before).skipped_namespaces)
    except InputError:
        config = None  # reported after the computed files, as always
    if config is None or not _may_shard(before):
        store.read_computed(before)
        return before, None
    live = {runindex.owner_of_binding(template_binding_key(k)) for k, o in before.user.items()
            if runindex.is_split(k, o, config)}
    try:
        rels = store.read_computed(before, skip=deferrable(owners, live, runindex.SHARED))
    except InputError:
        return _reload(store), None  # raises what a load raises: the first damaged file in load order
    return before, (ShardInputs(rels, owners) if rels else None)


# --------------------------------------------------------------------------- compute


def interpreter_of(snap: Snapshot, now: str):
    """The run's resource interpreter (``karmactl.interpreter.Interpreter``) from the snapshot's
    ResourceInterpreterCustomizations.

    Raises:
        InputError: two customizations of one kind define the same operation (Karmada's webhook
            refuses the second; here the later by name), naming its file, object and field.
    """
    from karmactl.interpreter import Interpreter
    from karmactl.interpreter.customized import GROUP, KIND, OPERATIONS, conflicts

    for c, op, other in conflicts(snap.of_kind(GROUP, KIND)):
        name = c["metadata"]["name"]
        src = snap.sources.get((GROUP, KIND, "", name))
        raise InputError(f"conflicting with InterpreterOperation({OPERATIONS[op][0]}) of existing "
                         f"ResourceInterpreterCustomization({other})", src.path if src else None,
                         src.line if src else None, f"{KIND} {name}", f"spec.customizations.{op}")
    return Interpreter.for_snapshot(snap, now)


def settings_of(snap: Snapshot) -> Settings:
    """The run's settings from ``karmada-system/karmactl-config`` (raises :class:`InputError`)."""
    try:
        return Settings.from_snapshot(snap)
    except ValueError as exc:
        src = snap.sources.get(Settings.SETTINGS_KEY)
        raise InputError(str(exc), src.path if src else None, src.line if src else None,
                         "ConfigMap karmada-system/karmactl-config") from None


def compute(snap: Snapshot, now: str, report: RunReport | None = None,
            observed: frozenset | None = None) -> Snapshot:
    """Run the control plane over ``snap`` until nothing changes; returns the new snapshot.

    Each pass runs every step of :data:`karmactl.controllers.registry.PIPELINE` in order (cluster
    status, remedy, cluster taints, detector, taint manager, application failover, scheduler,
    graceful eviction, binding, namespace sync, execution, status). ``snap`` itself is not
    modified; it is what the run observed (the state directory and, online, the members).
    ``observed`` names the clusters whose workload status was read in this run (None offline).

    Raises:
        NotConvergedError: still changing after :data:`MAX_PASSES` passes.
        InputError: invalid settings.
    """
    report = report if report is not None else RunReport()
    interpreter = interpreter_of(snap, now)
    ctx = StepContext(settings=settings_of(snap), warnings=report.warnings, events=report.events, observed=observed,
                      interpreter=interpreter)
    out = snap.copy_computed()
    for passes in range(1, MAX_PASSES + 1):
        ctx.passes = passes
        changed = False
        for step in PIPELINE:
            changed = bool(step.run(snap, out, now, ctx)) or changed
        report.passes = passes
        for line in interpreter.failures:  # once, unless a step's warning already quotes it
            if not any(line in w for w in ctx.warnings):
                ctx.warn(line)
        if not changed:
            return out
    raise NotConvergedError(f"the control plane did not converge after {MAX_PASSES} passes")


# --------------------------------------------------------------------------- the run


def run(store: StateStore, options: RunOptions, members=None) -> RunReport:
    """One whole run: load, compute, (execute and collect unless offline), write unless dry-run.

    Args:
        store: the state directory.
        options: clock, offline, dry-run.
        members: the member-cluster layer (``karmactl.members.MemberLayer``); required unless offline.

    Raises:
        InputError: invalid state directory (nothing is written).
        NotConvergedError: the control plane did not settle (nothing is written).
    """
    from karmactl.gcpause import cyclic_gc_paused

    # Nothing in a run creates reference cycles that must be freed before it ends.
    with cyclic_gc_paused():
        return _run(store, options, members)


def _run(store: StateStore, options: RunOptions, members) -> RunReport:
    from karmactl.store import runindex

    report = RunReport()
    started_ns = time.time_ns()
    indexed = options.offline and not options.dry_run
    owners = None  # of the last run's computed files, for a full run (runindex.computed_owners)
    if indexed:  # incremental: karmactl/store/runindex.py
        tag = _index_tag()
        index = runindex.read_index(store.root, tag)
        plan = runindex.plan(store, index, options.now)
        if plan.mode == "unchanged":
            report.warnings.extend(index.warnings)
            report.passes = 1
            report.incremental = "unchanged"
            return report
        why = plan.reason
        if plan.mode == "partial":
            why = []
            done = _run_partial(store, options.now, report, index, plan, started_ns, why)
            if done is not None:
                return done
            report = RunReport()
            why = why[0] if why else "partial run not possible"
        report.incremental = f"full: {why}"
        # the last run's index (some 30 MB at 10,000 templates) is let go before the load: only
        # which template owns each computed file is kept
        owners = runindex.computed_owners(store.root, index) if index is not None else None
        index = plan = None
    later = None  # computed files the shard processes read (karmactl/store/shard_inputs.py)
    if owners is not None:
        before, later = _load_for_shards(store, owners)
        owners = None
    else:
        before = load(store)
    if _delete_expired_rebalancers(store, before, options.now, report, options.dry_run):
        before, later = load(store), None
    if indexed:
        import copy

        from karmactl.store.shard_inputs import StaleShardInputs

        runindex.drop_index(store.root)  # until the new one is written, a crash means a full run
        config = detector.DetectorConfig(skipped_namespaces=settings_of(before).skipped_namespaces)
        processes = shard_count(before)
        if later is not None and processes == 1:  # computed files (a pending rebalancer...) join them
            before, later = _reload(store), None
        if processes > 1:
            parts: dict = {}
            try:
                done = _run_sharded(store, before, options.now, copy.deepcopy(report), processes, parts, later)
            except StaleShardInputs:
                # the last run's owners do not fit what the files hold now: as without them
                before, later, parts = _reload(store), None, {}
                config = detector.DetectorConfig(skipped_namespaces=settings_of(before).skipped_namespaces)
                processes = shard_count(before)
                done = _run_sharded(store, before, options.now, report, processes, parts) if processes > 1 else None
            if done is not None:
                _record_index(store, before, done, parts["owners"], parts["wakes"], options.now, tag, config,
                              started_ns, parts["shared"], parts["split"], parts["written"])
                return done
        shared = runindex.shared_objects_bytes(before, config)  # before computing: as loaded
    members = OfflineMembers() if options.offline or members is None else members
    after = control_loop(before, options.now, members, report, dry_run=options.dry_run)
    report.after = after
    if options.dry_run:
        report.changes = _planned_changes(store, before, after)
    else:
        # Events (karmactl/store/events.py): derived from this run's changes, staged with its files
        report.changes = store.write_changes(before, after, extra=lambda w: stage_events(store, w, before, after, options.now))
    if indexed:
        owners = runindex.Owners.of(after.user, after.bindings, config).owner_map(store, after)
        _record_index(store, before, report, owners, wake_times(after, options.now, settings_of(after)), options.now,
                      tag, config, started_ns, shared)
    return report


def _record_index(store: StateStore, before: Snapshot, report: RunReport, owners: dict, wakes: list, now: str,
                  tag: str, config, started_ns: int, shared: tuple | None, split: set | None = None,
                  written: dict | None = None) -> None:
    """Write the index of a full offline run that committed (``karmactl/store/runindex.py``):
    ``owners`` ``{computed rel: [owner, claim]}`` (``runindex.Owners.owner_map``), ``wakes``
    ``registry.wake_times`` entries, ``shared`` the shared file (``runindex.shared_objects_bytes``;
    None: an object cannot be JSON, and no index is kept), ``split`` and ``written`` as for ``runindex.build_index``."""
    from karmactl.store import runindex

    if shared is not None:
        index = runindex.build_index(store, before, owners, runindex.wake_map(wakes, now), report.warnings, now,
                                     tag, config, started_ns, split, written)
        runindex.write_index(store.root, index, shared)


def _index_tag() -> str:
    """What an index of the last run must have been made by: this karmactl, these sources."""
    from karmactl import __version__
    from karmactl.store.runindex import code_stamp

    return f"karmactl-{__version__}-{code_stamp()}"


def _run_partial(store: StateStore, now: str, report: RunReport, index, plan, started_ns: int,
                 why: list) -> RunReport | None:
    """An offline run that recomputes only some split templates (``karmactl/store/runindex.py``):
    those of the files that changed (or are gone), those whose wake time has come, and those a
    changed, added or removed name-selecting (Cluster)PropagationPolicy can reach
    (``runindex.policy_change_owners``; read from their unchanged files).

    The sub-snapshot is what a shard of ``controllers/shards.py`` gets: the shared objects (the
    index's shared file, its changed policies replaced by what the files hold now, and the computed
    files it owns as ``""``) plus these templates with their bindings, Works and status. Of the
    policies that name their templates (``runindex.SharedFile``), only those that can matter to
    these are decoded: those of the files read again, those claimed by the computed files read and
    those naming the kind and name of any object of the snapshot (what ``shards.reach_of`` and
    :func:`_reached_policies_only` keep). It is
    computed to its fixpoint; if that changes anything outside these templates' results (an
    assumption of the split that does not hold), nothing is written
    and None is returned: the caller runs in full. Otherwise only those files (and the Events of
    these objects) are written, in one commit, and the index updated (and the shared file, when a
    file holding policies was read).

    Returns:
        The report, or None when a full run must decide (any input error included: the full run
        reports it with every other one); ``why`` then receives the reason.
    """
    import orjson

    from karmactl.controllers import workload_rebalancer
    from karmactl.controllers.shards import has_cross_template_dependencies, template_binding_key
    from karmactl.store import runindex
    from karmactl.store.state import COMPUTED_KINDS, change_list, file_signature

    if index.warnings:
        why.append("the last run warned")
        return None  # warnings cannot be told apart per template: a full run repeats them correctly
    shared = runindex.read_shared(store.root, index.token)
    if shared is None or not runindex.read_detail(store.root, index):
        why.append("the index's shared objects or its detail are missing")
        return None
    sub = Snapshot(store.registry)
    for obj, path, doc, line in shared.objects:
        key = key_of(obj)
        sub.user[key] = obj
        sub.sources[key] = Source(path, doc, line)
        if key[:2] == ("apiextensions.k8s.io", "CustomResourceDefinition"):
            store.registry.add_crd(obj)
    decoded: dict = {}  # index -> key of the shared file's policies that name their templates, decoded on demand

    def take(indices) -> bool:
        for i in indices:
            if i not in decoded:
                try:
                    obj, path, doc, line = shared.entry(i)
                except ValueError:
                    why.append("the index's shared objects are damaged")
                    return False
                key = decoded[i] = key_of(obj)
                sub.user[key] = obj
                sub.sources[key] = Source(path, doc, line)
        return True
    config = detector.DetectorConfig(skipped_namespaces=settings_of(sub).skipped_namespaces)
    normalize = lambda obj, src: normalize_object(obj, src, store.registry, owned=True, strict=True)  # noqa: E731

    def checked(rel: str) -> list | None:
        """``[(object, document index, line)]`` of one user file, checked as a load checks them;
        None (and the reason given) when it has an error: the full run reports it."""
        try:
            return [(store.check_document(o, i, ln, rel, normalize), i, ln)
                    for o, i, ln in store.read_documents(store.root / rel, rel)]
        except InputError:
            why.append(f"{rel} has an error")
            return None

    reread = set(plan.touched) | set(plan.removed)
    for rel in reread:  # the last run's versions of their policies
        if not take(shared.in_file(rel)):
            return None
    held = index.objects_of(reread)  # what the files re-read held in the last run
    shared_templates = [key for key, obj in sub.user.items() if detector.is_template(key, obj, config)]
    old_policies = {}  # key -> the last run's version, of the policies of the files re-read
    templates = set()
    for rel, objs in held.items():
        for key, split in objs:
            if split:
                templates.add(key)
            else:
                if not runindex.is_policy(key) or key not in sub.user:
                    why.append(f"{rel} holds objects other templates read")
                    return None  # a shared object changed (other than a policy)
                old_policies[key] = sub.user.pop(key)  # its new version, if any, is read below
                del sub.sources[key]
    sigs = {}
    entries = {}
    new_policies = {}
    for rel in plan.touched:
        try:
            sigs[rel] = file_signature(store.root / rel)
        except InputError:
            why.append(f"{rel} has an error")
            return None
        objs = checked(rel)
        if objs is None:
            return None
        entries[rel] = []
        for obj, i, ln in objs:
            key = key_of(obj)
            split = runindex.is_split(key, obj, config)
            if key in sub.user or index.held_elsewhere(key, reread) or not (split or runindex.is_policy(key)):
                why.append(f"{rel} holds objects other templates read, or a duplicate")
                return None  # a duplicate, or a shared object: the full run decides
            sub.user[key] = obj
            sub.sources[key] = Source(rel, i, ln)
            if split:
                templates.add(key)
            else:
                new_policies[key] = obj
            entries[rel].append((key, split))
    # a changed policy: the templates it selected or selects, or that it claims (runindex docs)
    changed_old = {k: o for k, o in old_policies.items() if new_policies.get(k) != o}
    changed_new = {k: o for k, o in new_policies.items() if old_policies.get(k) != o}
    reached = set()
    if changed_old or changed_new:
        # the templates their selectors can name (reach_of matches by kind and name); any other
        # selector makes policy_change_owners answer None
        names = {target.split("/", 1)[1] for version in (changed_old, changed_new) for key, obj in version.items()
                 for target in runindex.named_targets(key, obj) or ()}
        every_template = {key: False for key in shared_templates}
        holders = {}  # owner -> (template key, file) of those templates in files not re-read
        for key, rel in index.split_templates(names):
            every_template[key] = True
            if rel not in reread:
                holders[runindex.owner_of_binding(template_binding_key(key))] = (key, rel)
        every_template.update((key, True) for key in templates)
        reached, reason = runindex.policy_change_owners(changed_old, changed_new, every_template, index)
        if reached is None:
            why.append(reason)
            return None
        wanted: dict = {}  # file not re-read -> keys of the reached templates it holds
        for owner in reached:
            if owner in holders:
                wanted.setdefault(holders[owner][1], set()).add(holders[owner][0])
        for rel, keys in sorted(wanted.items()):
            objs = checked(rel)
            if objs is None:
                return None
            for obj, i, ln in objs:
                key = key_of(obj)
                if key in keys:
                    keys.discard(key)
                    sub.user[key] = obj
                    sub.sources[key] = Source(rel, i, ln)
                    templates.add(key)
            if keys:
                why.append(f"{rel} changed while it was read")
                return None
    owners = {runindex.owner_of_binding(template_binding_key(k)) for k in templates} | plan.due | reached
    loaded = {}  # computed rel -> its owner in the last run
    for owner in sorted(owners | {runindex.SHARED}):
        for rel in index.files_of(owner):
            loaded[rel] = owner
            try:
                with open(store.root / rel, "rb") as fh:
                    obj = orjson.loads(fh.read())
            except (OSError, ValueError):
                why.append(f"{rel} cannot be read")
                return None
            key = key_of(obj)
            if key[:2] in COMPUTED_KINDS:
                (sub.works if key[1] == "Work" else sub.bindings)[key] = obj
            else:
                sub.overlays[key] = obj
            if not take(shared.of_claim(index.claims.get(rel, ""))):  # a policy it claims
                return None
    for key in list(sub.user):  # the policies naming any of these objects (shards.reach_of matches so)
        if not take(shared.named(key[1], key[3])):
            return None
    shared_bytes = None
    if old_policies or new_policies:  # the shared file gets the policies (and sources) of this run
        if not any(entry[1] in reread for entry in shared.objects):  # in place, when only named policies moved
            shared_bytes = shared.replaced(
                {i: decoded[i] for rel in reread for i in shared.in_file(rel)},
                [(k, [o, sub.sources[k].path, sub.sources[k].index, sub.sources[k].line])
                 for k, o in new_policies.items()])
        if shared_bytes is None:
            shared_bytes = runindex.shared_file_bytes(
                [(k, [o, sub.sources[k].path, sub.sources[k].index, sub.sources[k].line])
                 for k, o in sub.user.items() if not runindex.is_split(k, o, config) and k in sub.sources],
                shared.carried(decoded))
        if shared_bytes is None:
            why.append("a policy cannot be kept in the index")
            return None
    if has_cross_template_dependencies(sub) or workload_rebalancer.pending(sub):
        why.append("templates are joined (propagateDeps, MultiClusterService, FederatedResourceQuota) or a "
                   "WorkloadRebalancer is pending")
        return None
    try:
        after = control_loop(_reached_policies_only(sub, config, keep=set(changed_new)), now, OfflineMembers(), report)
    except (InputError, NotConvergedError) as exc:
        why.append(f"{type(exc).__name__}: {exc}")
        return None  # the full run decides (and reports it as it would)
    if (changed_old or changed_new) and report.warnings:
        why.append("a policy changed and the run warned")
        return None  # a warning may concern templates not computed here: a full run gives them all
    who = runindex.Owners.of(sub.user, {**sub.bindings, **after.bindings}, config)
    who.split |= templates  # removed templates keep their owner until their results are gone
    for which in ("bindings", "works", "overlays"):
        old_map, new_map = getattr(sub, which), getattr(after, which)
        for key in set(old_map) | set(new_map):
            old, new = old_map.get(key), new_map.get(key)
            if old is not new and old != new and who.owner(which, key, new if new is not None else old) not in owners:
                why.append(f"the change reaches {which} {describe_key(key)}")
                return None  # the split's assumption does not hold here: compute everything
    owned = lambda which, key, obj: who.owner(which, key, obj) in owners  # noqa: E731
    writer = store.new_writer()
    try:
        staged = store.stage_changes(sub, after, writer, keep=owned)
        staged += stage_events(store, writer, sub, after, now, keep=owned)
    except BaseException:
        writer.abort()
        raise
    runindex.drop_index(store.root)  # from here until the new index is written, a crash means a full run
    writer.commit()
    report.changes = change_list(staged)
    # the index, updated for what this run read and wrote
    for rel in plan.removed:
        index.files.set(rel, None)
    for rel in plan.touched:
        index.files.set(rel, runindex.recorded_signature(sigs[rel], started_ns))
    detail = index.replace_objects(held, entries)
    owner_map = who.owner_map(store, after, keep=owned)
    for _i, _key, action, rel in staged:
        if not rel.startswith(EVENTS_DIR + "/"):
            if action == "delete":
                detail |= index.record_computed(rel, None, was=loaded.get(rel))
            else:
                sig = writer.written.get(rel)
                if sig is None:
                    st = os.stat(store.root / rel)
                    sig = (st.st_mtime_ns, st.st_size, st.st_ino)
                detail |= index.record_computed(rel, list(sig), *owner_map.get(rel, runindex.NO_OWNER),
                                                was=loaded.get(rel))
    wakes = {o: t for o, t in index.wakes.items() if o not in owners}
    for owner, when in runindex.wake_map(wake_times(after, now, settings_of(after)), now).items():
        if owner in owners:
            wakes[owner] = when
    index.wakes, index.warnings, index.now = wakes, list(report.warnings), now
    index.files.relist(store.root)
    index.computed.relist(store.root)
    runindex.write_index(store.root, index, shared_bytes, detail)
    report.incremental = f"partial: {len(templates)} template(s)"
    if changed_old or changed_new:
        report.incremental += f", {len(set(changed_old) | set(changed_new))} policy(ies) changed"
    return report


def _reached_policies_only(sub: Snapshot, config, keep: set) -> Snapshot:
    """``sub`` (a partial run's snapshot: some templates and every shared object) without the
    (Cluster)PropagationPolicies that can matter to none of its templates (``shards.policy_reach``,
    as a shard of a full run gets them), but for those in ``keep``: the detector then indexes a
    handful of policies, not the 10,000 of a fleet where each names its template. The computed
    maps are ``sub``'s own (what the run compares its result with)."""
    from karmactl.controllers.shards import policy_reach

    templates = [k for k, o in sub.user.items() if detector.is_template(k, o, config)]
    present = set(templates) | set(sub.bindings)
    drop = {k for k, reached in policy_reach(sub, templates).items()
            if reached is not None and k not in keep and not (reached & present)}
    if not drop:
        return sub
    return Snapshot(sub.registry, {k: o for k, o in sub.user.items() if k not in drop}, sub.sources, sub.overlays,
                    sub.bindings, sub.works)


ACT_ROUNDS = 3  # act -> observe -> compute rounds in one run while decisions keep changing Works


def control_loop(before: Snapshot, now: str, members: Members, report: RunReport, dry_run: bool = False) -> Snapshot:
    """Observe, decide, act, observe, decide: the snapshot a run writes.

    The members are probed and observed first, so the control plane decides on this run's
    observations. Then Works are applied and deleted, the members observed again (the status the
    run reports is what they showed after its changes), and the control plane computed again;
    when that changes what is dispatched (an eviction the new status led to, a Work whose copy is
    gone), it is acted on again, at most :data:`ACT_ROUNDS` times. A dry run acts with
    ``dry_run`` (nothing is sent; ``report.member_changes`` lists what would be).

    Raises:
        NotConvergedError, InputError: from :func:`compute`.
    """
    snap = members.probe(before, now, report)
    snap = members.observe(snap, now, report)
    after = compute(snap, now, report, members.observed_clusters())
    if dry_run:
        members.act(after, now, report, dry_run=True)
        return after
    for _ in range(ACT_ROUNDS):
        writes = report.member_writes
        acted = members.act(after, now, report)
        if report.member_writes == writes and acted.works == after.works:
            break  # nothing sent and nothing learned: the observations of this run still hold
        dispatched = _dispatched(acted.works)
        snap = members.observe(acted, now, report) if report.member_writes != writes else acted
        after = compute(snap, now, report, members.observed_clusters())
        if _dispatched(after.works) == dispatched:
            break
    return after


def _dispatched(works: dict) -> dict:
    """What execution acts on: each Work's spec and whether it is terminating."""
    return {k: (w.get("spec"), (w.get("metadata") or {}).get("deletionTimestamp")) for k, w in works.items()}


# --------------------------------------------------------------------------- runs over time


def converged(snap: Snapshot) -> tuple[bool, str]:
    """Whether every binding is scheduled, fully applied and healthy in every target cluster
    (True for a snapshot without bindings).

    Returns ``(ok, what is still missing)``.
    """
    for key in sorted(snap.bindings):
        b = snap.bindings[key]
        conds = {x.get("type"): x.get("status") for x in (b.get("status") or {}).get("conditions") or []}
        name = f"{key[2]}/{key[3]}" if key[2] else key[3]
        if conds.get("Scheduled") != "True":
            return False, f"binding {name} not scheduled"
        if conds.get("FullyApplied") != "True":
            return False, f"binding {name} not fully applied"
        for item in (b.get("status") or {}).get("aggregatedStatus") or []:
            if item.get("health") != "Healthy":
                return False, f"binding {name}: {item.get('clusterName')} is {item.get('health') or 'not reported'}"
    return True, ""


def run_until_converged(store: StateStore, clock, members: Members | None, timeout: float, interval: float = 0.5,
                        on_run=None, locked=None, offline: bool = False) -> int:
    """Runs until one changes nothing and, online, :func:`converged` holds: the members have
    settled (``reconcile --wait``, ``demo``).

    Args:
        store: the state directory.
        clock: ``f() -> RFC 3339`` read once per run.
        members: the member layer (None with ``offline``).
        timeout: seconds before giving up.
        interval: seconds between runs.
        on_run: ``f(run number, RunReport, ok, why)`` after each run (progress output).
        locked: a context manager factory held around each run (the state lock), or None.
        offline: offline runs (the control plane only: until a run changes nothing).

    Returns:
        The number of runs.

    Raises:
        TimeoutError: not converged within ``timeout`` (the message says what is missing).
        InputError, NotConvergedError: from a run.
    """
    deadline = time.monotonic() + timeout
    runs = 0
    while True:
        runs += 1
        options = RunOptions(now=clock(), offline=offline)
        if locked is not None:
            with locked():
                report = run(store, options, members)
        else:
            report = run(store, options, members)
        ok, why = (True, "") if offline or report.after is None else converged(report.after)
        if on_run is not None:
            on_run(runs, report, ok, why)
        if ok and not report.changes:
            return runs
        if time.monotonic() > deadline:
            raise TimeoutError(why or "still changing")
        time.sleep(interval)


def _delete_expired_rebalancers(store: StateStore, snap: Snapshot, now: str, report: RunReport,
                                dry_run: bool = False) -> bool:
    """Remove from their files the WorkloadRebalancers whose ``ttlSecondsAfterFinished`` has passed,
    as Karmada's controller deletes them; True if any was removed (the caller reloads). A dry run
    only says which it would delete."""
    from karmactl.controllers import workload_rebalancer as W
    from karmactl.store.edit import remove_object

    gone = [k for k in snap.keys_of_kind(W.GROUP, W.KIND) if W.expired(snap.user[k], snap.overlays.get(k), now)]
    # several objects of one file: remove from the last document up, so the indexes stay valid
    for key in sorted(gone, key=lambda k: (snap.sources[k].path, -snap.sources[k].index)):
        if not dry_run:
            remove_object(store, snap.sources[key])
        report.events.append(f"workloadrebalancer {key[3]} {'would be ' if dry_run else ''}deleted: "
                             f"ttlSecondsAfterFinished passed ({snap.sources[key].path})")
    return bool(gone) and not dry_run


# --------------------------------------------------------------------------- shards

SHARDS = 2
SHARD_MIN_OBJECTS = 2000  # below this, starting a second process costs more than it saves
SHARD_TEMPLATES = 600
"""Resource templates per shard, about: a large run is cut into more shards than processes, each
process computing its shards one after the other, so what a process holds at once is one shard's
results (its bindings, Works, statuses and Events: some 10 MB here), not its share of the fleet."""
_SHARD_JOB = None  # what forked shard processes compute from (inherited, never pickled)


def shard_count(snap: Snapshot) -> int:
    """How many processes compute and write an offline run of ``snap``: 1, or :data:`SHARDS`
    for large state directories on machines with several cores and ``fork``."""
    from karmactl.controllers import workload_rebalancer
    from karmactl.controllers.shards import has_cross_template_dependencies

    if not _may_shard(snap) or has_cross_template_dependencies(snap):
        return 1
    if workload_rebalancer.pending(snap):
        return 1  # a rebalancer reads bindings of every shard: the run that acts on it is not split
    return SHARDS


def _may_shard(snap: Snapshot) -> bool:
    """Whether :func:`shard_count` can give more than one process by what ``snap.user`` holds and
    the machine has (large enough, several cores, ``fork``, no object that joins templates); the
    computed objects may still say no."""
    import multiprocessing
    import os

    from karmactl.controllers.shards import has_cross_template_dependencies

    return (len(snap.user) >= SHARD_MIN_OBJECTS and (os.cpu_count() or 1) >= 2
            and "fork" in multiprocessing.get_all_start_methods()
            and not has_cross_template_dependencies(Snapshot(snap.registry, snap.user)))


def _compute_shard(worker: int) -> tuple:
    """What one process computes of a sharded run (in a forked process, or in the parent for
    worker 0): the shards ``worker``, ``worker + processes``, ... one after the other; for each,
    compute its part of the snapshot (with its computed files, when the parent left them to the
    shards: ``store/shard_inputs.py``), stage the files it owns, derive and merge the Events of the
    objects it owns (an Event file holds objects of several shards: the parent stages them), then
    let its results go. Returns ``(plan, staged, warnings, events, passes, error, merged Events,
    owners, wakes)`` (merged Events of all its shards as ``store.events.EventBuffer.packed``
    returns them; the last two for the run index: ``{computed rel: [owner, claim]}`` of the objects it
    owns, and the ``wake_times`` entries of its bindings and of the whole state); an error is
    returned, not raised, so the parent can undo every shard's staging."""
    from karmactl.controllers.events import derive_events
    from karmactl.store.events import EventBuffer, merge_derived
    from karmactl.store.fsio import TreeWriter
    from karmactl.store.runindex import Owners

    store, before, sharding, now, staging, processes, inputs = _SHARD_JOB
    # What the other processes compute is not this one's to keep: dropped, its memory (grouped by
    # shards.layout_group) takes this process's results. The parent's (worker 0) run index
    # needs only the sources of what it drops.
    sharding.keep_only(before, worker, processes)
    writer = TreeWriter(store.root, staging)
    report = RunReport()
    staged: list = []
    merged = EventBuffer()
    owners: dict = {}
    wakes: list = []
    passes = 0
    stored: dict = {}  # Event files read, for the shards after (store.events.merge_derived)
    try:
        for index in range(worker, sharding.shards, processes):
            sub = sharding.split(before, index)
            if inputs is not None:  # this shard's computed files, read now (store/shard_inputs.py)
                inputs.add_to(store, sub, sharding, index)
            after = compute(sub, now, report=report)
            passes = max(passes, report.passes)
            owned = lambda which, key, obj, index=index: sharding.owner(which, key, obj) == index  # noqa: E731
            staged += store.stage_changes(sub, after, writer, keep=owned)
            merged.add(merge_derived(store.root, derive_events(sub, after, now, keep=owned), now, stored))
            settings = settings_of(after)
            config = detector.DetectorConfig(skipped_namespaces=settings.skipped_namespaces)
            owners.update(Owners.of(after.user, after.bindings, config).owner_map(store, after, keep=owned))
            wakes += [(b, t) for b, t in wake_times(after, now, settings)
                      if b is None or sharding.owner("bindings", b, {}) == index]
            del sub, after
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        return writer.plan(), [], report.warnings, report.events, passes, exc, None, {}, []
    # the objects are done with (the parent's run index reads only the sources): their memory
    # takes what follows
    before.user = before.bindings = before.works = before.overlays = {}
    result = (writer.plan(), staged, report.warnings, report.events, passes, None, merged.packed(), owners, wakes)
    return _compressed(result) if worker else result


def _compressed(result: tuple) -> bytes:
    """A forked shard process's result as it is sent to the parent (:func:`_shard_result`):
    pickled straight into a zlib stream, so that neither the pickle of some 20,000 file names
    nor the pipe's copies of it are ever held whole."""
    import pickle
    import zlib

    class _Sink:
        def __init__(self):
            self.zip, self.chunks = zlib.compressobj(1), []

        def write(self, data) -> int:
            self.chunks.append(self.zip.compress(data))
            return len(data)

    sink = _Sink()
    pickle.Pickler(sink, protocol=pickle.HIGHEST_PROTOCOL).dump(result)
    sink.chunks.append(sink.zip.flush())
    return b"".join(sink.chunks)


def _shard_result(sent) -> tuple:
    """What :func:`_compute_shard` returned in a forked process (compressed there)."""
    import pickle
    import zlib

    return pickle.loads(zlib.decompress(sent)) if isinstance(sent, bytes) else sent


def _run_sharded(store: StateStore, before: Snapshot, now: str, report: RunReport, processes: int,
                 index_parts: dict | None = None, later=None) -> RunReport:
    """An offline run computed and written by ``processes`` processes, in shards of about
    :data:`SHARD_TEMPLATES` templates (``controllers/shards.py`` says why the shards are
    independent); the files of all shards land together or not at all. ``index_parts``, when
    given, receives for the run index (``karmactl/store/runindex.py``) ``owners`` and ``wakes``,
    gathered from the shards, ``shared`` and ``split`` (``runindex.shared_objects_bytes`` and the
    split templates, taken from the objects as loaded while the other processes compute), and
    ``written`` (the signatures of the files written, ``TreeWriter.written``). ``later``, when
    given, is the ``store.shard_inputs.ShardInputs`` of :func:`_load_for_shards`: computed files
    ``before`` does not hold, each read by the process of its shard just before computing it.

    Raises:
        InputError, NotConvergedError, OSError: as a single-process run would (nothing is written).
        StaleShardInputs: a file of ``later`` does not fit its shard (nothing is written; the
            caller computes from the whole snapshot).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from karmactl.controllers.shards import Sharding
    from karmactl.gcpause import return_free_memory
    from karmactl.store.fsio import die_with_parent, kill_pool
    from karmactl.store.state import change_list

    global _SHARD_JOB
    settings = settings_of(before)
    config = detector.DetectorConfig(skipped_namespaces=settings.skipped_namespaces)
    sharding = Sharding(before, lambda templates: processes * max(1, -(-templates // (SHARD_TEMPLATES * processes))),
                        config)
    if later is not None:
        later.split(sharding.shards)
    return_free_memory()  # what loading left free, before two processes count it
    writer = store.new_writer()
    _SHARD_JOB = (store, before, sharding, now, writer.staging, processes, later)
    try:
        pool = ProcessPoolExecutor(max_workers=processes - 1, mp_context=multiprocessing.get_context("fork"),
                                   initializer=die_with_parent)
        try:
            futures = [pool.submit(_compute_shard, i) for i in range(1, processes)]
            if index_parts is not None:  # while the others compute, from the objects as loaded
                from karmactl.store.runindex import is_split, shared_objects_bytes

                index_parts["shared"] = shared_objects_bytes(before, config)
                index_parts["split"] = {k for k in sharding.split_templates() if is_split(k, before.user[k], config)}
            mine = _compute_shard(0)
            sent = [f.result() for f in futures]
        except BaseException:  # never wait for (or leave behind) a worker after an interrupt
            kill_pool(pool)
            raise
        pool.shutdown()  # the processes are gone (and their memory with them) before their results unpack
        results = [mine] + [_shard_result(s) for s in sent]
    except BaseException:  # a shard process died, or the run was interrupted: drop all staging
        writer.abort()
        raise
    finally:
        _SHARD_JOB = None
    staged: list = []
    merged: list = []
    owners: dict = {}
    wakes: list = []
    for plan, part, warnings, events, passes, _error, shard_events, shard_owners, shard_wakes in results:
        if shard_events is not None:
            merged.append(unpack_events(shard_events))
        writer.adopt(plan)
        owners.update(shard_owners)
        wakes.extend(shard_wakes)
        staged.extend(part)
        for line in warnings:
            if line not in report.warnings:
                report.warnings.append(line)
        for line in events:
            if line not in report.events:
                report.events.append(line)
        report.passes = max(report.passes, passes)
    errors = [r[5] for r in results if r[5] is not None]
    if errors:
        from karmactl.store.shard_inputs import StaleShardInputs

        writer.abort()
        # stale inputs first: computed from the whole snapshot, the run reports what it would
        raise next((e for e in errors if isinstance(e, StaleShardInputs)), errors[0])
    try:
        staged += stage_merged(store.root, writer, merged)
    except BaseException:
        writer.abort()
        raise
    writer.commit()
    report.changes = change_list(staged)
    if index_parts is not None:
        index_parts.update(owners=owners, wakes=wakes, written=writer.written)
    return report


def _planned_changes(store: StateStore, before: Snapshot, after: Snapshot) -> list:
    out = []
    for old_map, new_map in ((before.bindings, after.bindings), (before.works, after.works),
                             (before.overlays, after.overlays)):
        for key in sorted(set(old_map) | set(new_map)):
            old, new = old_map.get(key), new_map.get(key)
            if old != new:
                action = "create" if old is None else "delete" if new is None else "update"
                out.append((action, store.rel(store.computed_path(key))))
    return out


__all__ = ["Members", "OfflineMembers", "RunOptions", "RunReport", "run", "compute", "control_loop", "converged",
           "load", "run_until_converged", "NotConvergedError", "InputError"]
