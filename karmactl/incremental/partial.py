"""The partial run: an offline run that recomputes only some split templates
(``karmactl/incremental/runindex.py`` says which and why that is sound).

Two calls, with the control plane between them (``karmactl.reconcile`` computes)::

    part = PartialRun.prepare(store, index, plan)   # read changed files, reason about policy edits
    after = compute(part.snapshot())                   # the caller: observe -> compute, offline
    report = part.commit(after, report, now, started_ns)  # stage and write the owned files, update the index

Each raises :class:`FullRun` (with the reason for ``reconcile -v``) when the split's assumptions
do not hold: nothing is then written, and the caller runs in full (which reports any error as it
would).

The sub-snapshot is what a shard of ``karmactl/incremental/shards.py`` gets: the shared objects
(the index's shared file, its changed policies replaced by what the files hold now, and the
computed files it owns as ``""``) plus these templates with their bindings, Works and status. Of the
policies that name their templates (``runindex.SharedFile``), only those that can matter to these
are decoded: those of the files read again, those claimed by the computed files read and those
naming the kind and name of any object of the snapshot (what ``shards.reach_of`` and
:func:`reached_policies_only` keep).
"""
from __future__ import annotations

import os

import orjson

from karmactl.api.objects import describe_key
from karmactl.api.snapshot import Snapshot
from karmactl.controllers.helper.template import DetectorConfig, is_template
from karmactl.pipeline.registry import wake_times
from karmactl.incremental import runindex
from karmactl.incremental.shards import has_cross_template_dependencies, policy_reach, template_binding_key
from karmactl.store.events import EVENTS_DIR, stage_events
from karmactl.store.state import COMPUTED_KINDS, InputError, Source, StateStore, change_list, file_signature, key_of
from karmactl.store.validation import normalize_object, settings_of


class FullRun(Exception):
    """A partial run is not possible (or not sound) here; ``str(exc)`` says why. Nothing was written."""


class PartialRun:
    """One partial run between :meth:`prepare` and :meth:`commit`.

    Attributes:
        sub: the snapshot to compute (shared objects, the templates recomputed, their results).
        templates: keys of the templates recomputed.
        owners: the owners (``runindex.owner_of_binding``) whose computed files this run may change.
        changed_old, changed_new: ``{key: policy}``, the (Cluster)PropagationPolicies changed, as
            the last run and this one see them.
    """

    def __init__(self, store: StateStore, index, plan, shared) -> None:
        self.store, self.index, self.plan, self.shared = store, index, plan, shared
        self.sub = Snapshot(store.registry)
        self.decoded: dict = {}  # index -> key of the shared file's name-selecting policies decoded
        self.reread = set(plan.touched) | set(plan.removed)
        self.templates: set = set()
        self.old_policies: dict = {}  # key -> the last run's version, of the policies of the files re-read
        self.new_policies: dict = {}
        self.held: dict = {}  # what the files re-read held in the last run
        self.shared_templates: list = []
        self.sigs: dict = {}
        self.entries: dict = {}
        self.changed_old: dict = {}
        self.changed_new: dict = {}
        self.reached: set = set()
        self.owners: set = set()
        self.loaded: dict = {}  # computed rel -> its owner in the last run
        self.shared_bytes = None
        self.config = None

    # ------------------------------------------------------------------ prepare

    @classmethod
    def prepare(cls, store: StateStore, index, plan) -> "PartialRun":
        """Read what changed and build the snapshot to compute (:meth:`snapshot`).

        Args:
            index: the last run's ``runindex.RunIndex``.
            plan: ``runindex.plan``'s answer, of mode ``partial``.

        Raises:
            FullRun: the last run warned, the index is incomplete, a file holds shared objects or
                has an error, a policy edit reaches beyond named templates, or templates are joined.
        """
        if index.warnings:
            # warnings cannot be told apart per template: a full run repeats them correctly
            raise FullRun("the last run warned")
        shared = runindex.read_shared(store.root, index.token)
        if shared is None or not runindex.read_detail(store.root, index):
            raise FullRun("the index's shared objects or its detail are missing")
        part = cls(store, index, plan, shared)
        part._add_shared_objects()
        part._read_changed_files()
        part._reason_about_policy_edits()
        part._read_owned_results()
        part._keep_shared_file()
        if has_cross_template_dependencies(part.sub) or _rebalancer_pending(part.sub):
            raise FullRun("templates are joined (propagateDeps, MultiClusterService, FederatedResourceQuota) or a "
                          "WorkloadRebalancer is pending")
        return part

    def snapshot(self) -> Snapshot:
        """What to compute: the sub-snapshot with only the policies that can matter to it."""
        return reached_policies_only(self.sub, self.config, keep=set(self.changed_new))

    def _add_shared_objects(self) -> None:
        """The shared file's objects (CRDs registered), and the run's detector settings."""
        sub, registry = self.sub, self.store.registry
        for obj, path, doc, line in self.shared.objects:
            key = key_of(obj)
            sub.user[key] = obj
            sub.sources[key] = Source(path, doc, line)
            if key[:2] == ("apiextensions.k8s.io", "CustomResourceDefinition"):
                registry.add_crd(obj)
        self.config = DetectorConfig(skipped_namespaces=settings_of(sub).skipped_namespaces)

    def _take(self, indices) -> None:
        """Decode the shared file's policies ``indices`` into the snapshot (once each)."""
        for i in indices:
            if i not in self.decoded:
                try:
                    obj, path, doc, line = self.shared.entry(i)
                except ValueError:
                    raise FullRun("the index's shared objects are damaged") from None
                key = self.decoded[i] = key_of(obj)
                self.sub.user[key] = obj
                self.sub.sources[key] = Source(path, doc, line)

    def _checked(self, rel: str) -> list:
        """``[(object, document index, line)]`` of one user file, checked as a load checks them.

        Raises:
            FullRun: it has an error (the full run reports it).
        """
        store = self.store
        normalize = lambda obj, src: normalize_object(obj, src, store.registry, owned=True, strict=True)  # noqa: E731
        try:
            return [(store.check_document(o, i, ln, rel, normalize), i, ln)
                    for o, i, ln in store.read_documents(store.root / rel, rel)]
        except InputError:
            raise FullRun(f"{rel} has an error") from None

    def _read_changed_files(self) -> None:
        """The last run's objects of the files changed or removed out, this run's in: split
        templates and name-selecting policies only."""
        for rel in self.reread:  # the last run's versions of their policies
            self._take(self.shared.in_file(rel))
        self.held = self.index.objects_of(self.reread)
        self.shared_templates = [key for key, obj in self.sub.user.items()
                                 if is_template(key, obj, self.config)]
        self._drop_last_versions()
        for rel in self.plan.touched:
            try:
                self.sigs[rel] = file_signature(self.store.root / rel)
            except InputError:
                raise FullRun(f"{rel} has an error") from None
            self.entries[rel] = [self._add_new_object(rel, obj, i, ln) for obj, i, ln in self._checked(rel)]

    def _drop_last_versions(self) -> None:
        """Templates of the files re-read are recomputed; their policies' last versions leave the
        snapshot (kept in :attr:`old_policies`)."""
        sub = self.sub
        for rel, objs in self.held.items():
            for key, split in objs:
                if split:
                    self.templates.add(key)
                    continue
                if not runindex.is_policy(key) or key not in sub.user:
                    raise FullRun(f"{rel} holds objects other templates read")  # a shared object changed
                self.old_policies[key] = sub.user.pop(key)  # its new version, if any, is read below
                del sub.sources[key]

    def _add_new_object(self, rel: str, obj: dict, i: int, ln: int) -> tuple:
        """One object of a changed file into the snapshot; its ``(key, split)`` entry."""
        key = key_of(obj)
        split = runindex.is_split(key, obj, self.config)
        if key in self.sub.user or self.index.held_elsewhere(key, self.reread) or not (split or runindex.is_policy(key)):
            # a duplicate, or a shared object: the full run decides
            raise FullRun(f"{rel} holds objects other templates read, or a duplicate")
        self.sub.user[key] = obj
        self.sub.sources[key] = Source(rel, i, ln)
        if split:
            self.templates.add(key)
        else:
            self.new_policies[key] = obj
        return key, split

    def _reason_about_policy_edits(self) -> None:
        """A changed policy: the templates it selected or selects, or that it claims (runindex
        docs), read from their unchanged files when not already read."""
        self.changed_old = {k: o for k, o in self.old_policies.items() if self.new_policies.get(k) != o}
        self.changed_new = {k: o for k, o in self.new_policies.items() if self.old_policies.get(k) != o}
        if self.changed_old or self.changed_new:
            holders = self._reach_policy_edits()
            self._read_reached_templates(holders)

    def _reach_policy_edits(self) -> dict:
        """Fill :attr:`reached`; ``{owner: (template key, file)}`` of the templates in files not re-read."""
        # the templates their selectors can name (reach_of matches by kind and name); any other
        # selector makes policy_change_owners answer None
        names = {target.split("/", 1)[1] for version in (self.changed_old, self.changed_new)
                 for key, obj in version.items() for target in runindex.named_targets(key, obj) or ()}
        every_template = {key: False for key in self.shared_templates}
        holders = {}
        for key, rel in self.index.split_templates(names):
            every_template[key] = True
            if rel not in self.reread:
                holders[runindex.owner_of_binding(template_binding_key(key))] = (key, rel)
        every_template.update((key, True) for key in self.templates)
        reached, reason = runindex.policy_change_owners(self.changed_old, self.changed_new, every_template, self.index)
        if reached is None:
            raise FullRun(reason)
        self.reached = reached
        return holders

    def _read_reached_templates(self, holders: dict) -> None:
        """The reached templates of files not re-read, from those (unchanged) files."""
        wanted: dict = {}  # file not re-read -> keys of the reached templates it holds
        for owner in self.reached:
            if owner in holders:
                wanted.setdefault(holders[owner][1], set()).add(holders[owner][0])
        for rel, keys in sorted(wanted.items()):
            for obj, i, ln in self._checked(rel):
                key = key_of(obj)
                if key in keys:
                    keys.discard(key)
                    self.sub.user[key] = obj
                    self.sub.sources[key] = Source(rel, i, ln)
                    self.templates.add(key)
            if keys:
                raise FullRun(f"{rel} changed while it was read")

    def _read_owned_results(self) -> None:
        """The computed files of the owners recomputed and the shared ones, the policies they
        claim, and the policies naming any object of the snapshot."""
        sub, index = self.sub, self.index
        self.owners = ({runindex.owner_of_binding(template_binding_key(k)) for k in self.templates}
                       | self.plan.due | self.reached)
        for owner in sorted(self.owners | {runindex.SHARED}):
            for rel in index.files_of(owner):
                self.loaded[rel] = owner
                try:
                    with open(self.store.root / rel, "rb") as fh:
                        obj = orjson.loads(fh.read())
                except (OSError, ValueError):
                    raise FullRun(f"{rel} cannot be read") from None
                key = key_of(obj)
                if key[:2] in COMPUTED_KINDS:
                    (sub.works if key[1] == "Work" else sub.bindings)[key] = obj
                else:
                    sub.overlays[key] = obj
                self._take(self.shared.of_claim(index.claims.get(rel, "")))  # a policy it claims
        for key in list(sub.user):  # the policies naming any of these objects (shards.reach_of matches so)
            self._take(self.shared.named(key[1], key[3]))

    def _keep_shared_file(self) -> None:
        """The shared file with the policies (and sources) of this run, when a policy file was read."""
        if not (self.old_policies or self.new_policies):
            return
        sub, shared = self.sub, self.shared
        entry = lambda k, o: (k, [o, sub.sources[k].path, sub.sources[k].index, sub.sources[k].line])  # noqa: E731
        if not any(e[1] in self.reread for e in shared.objects):  # in place, when only named policies moved
            self.shared_bytes = shared.replaced(
                {i: self.decoded[i] for rel in self.reread for i in shared.in_file(rel)},
                [entry(k, o) for k, o in self.new_policies.items()])
        if self.shared_bytes is None:
            self.shared_bytes = runindex.shared_file_bytes(
                [entry(k, o) for k, o in sub.user.items() if not runindex.is_split(k, o, self.config) and k in sub.sources],
                shared.carried(self.decoded))
        if self.shared_bytes is None:
            raise FullRun("a policy cannot be kept in the index")

    # ------------------------------------------------------------------ commit

    def commit(self, after: Snapshot, report, now: str, started_ns: int):
        """Write the files this run owns (and the Events of its objects) in one commit, and update
        the index; ``report`` (``reconcile.RunReport``) gets ``changes`` and ``incremental``.

        Raises:
            FullRun: a policy changed and the run warned, or the result changes something these
                templates do not own (nothing is written).
        """
        if (self.changed_old or self.changed_new) and report.warnings:
            # a warning may concern templates not computed here: a full run gives them all
            raise FullRun("a policy changed and the run warned")
        who = runindex.Owners.of(self.sub.user, {**self.sub.bindings, **after.bindings}, self.config)
        who.split |= self.templates  # removed templates keep their owner until their results are gone
        self._check_changes_owned(after, who)
        owned = lambda which, key, obj: who.owner(which, key, obj) in self.owners  # noqa: E731
        staged, written = self._stage_and_write(after, owned, now)
        report.changes = change_list(staged)
        self._update_index(after, who, owned, staged, written, report, now, started_ns)
        report.incremental = f"partial: {len(self.templates)} template(s)"
        if self.changed_old or self.changed_new:
            report.incremental += f", {len(set(self.changed_old) | set(self.changed_new))} policy(ies) changed"
        return report

    def _check_changes_owned(self, after: Snapshot, who) -> None:
        """Every object the computation changed is owned by a template recomputed."""
        for which in ("bindings", "works", "overlays"):
            old_map, new_map = getattr(self.sub, which), getattr(after, which)
            for key in set(old_map) | set(new_map):
                old, new = old_map.get(key), new_map.get(key)
                if old is not new and old != new and who.owner(which, key, new if new is not None else old) not in self.owners:
                    # the split's assumption does not hold here: compute everything
                    raise FullRun(f"the change reaches {which} {describe_key(key)}")

    def _stage_and_write(self, after: Snapshot, owned, now: str) -> tuple:
        """Stage the owned files and Events, drop the index, commit: ``(staged, written signatures)``."""
        store = self.store
        writer = store.new_writer()
        try:
            staged = store.stage_changes(self.sub, after, writer, keep=owned)
            staged += stage_events(store, writer, self.sub, after, now, keep=owned)
        except BaseException:
            writer.abort()
            raise
        runindex.drop_index(store.root)  # from here until the new index is written, a crash means a full run
        writer.commit()
        return staged, writer.written

    def _update_index(self, after: Snapshot, who, owned, staged: list, written: dict, report, now: str,
                      started_ns: int) -> None:
        """The index, updated for what this run read and wrote, and written."""
        index, store = self.index, self.store
        for rel in self.plan.removed:
            index.files.set(rel, None)
        for rel in self.plan.touched:
            index.files.set(rel, runindex.recorded_signature(self.sigs[rel], started_ns))
        detail = index.replace_objects(self.held, self.entries)
        owner_map = who.owner_map(store, after, keep=owned)
        for _i, _key, action, rel in staged:
            if rel.startswith(EVENTS_DIR + "/"):
                continue
            if action == "delete":
                detail |= index.record_computed(rel, None, was=self.loaded.get(rel))
                continue
            sig = written.get(rel)
            if sig is None:
                st = os.stat(store.root / rel)
                sig = (st.st_mtime_ns, st.st_size, st.st_ino)
            detail |= index.record_computed(rel, list(sig), *owner_map.get(rel, runindex.NO_OWNER),
                                            was=self.loaded.get(rel))
        wakes = {o: t for o, t in index.wakes.items() if o not in self.owners}
        for owner, when in runindex.wake_map(wake_times(after, now, settings_of(after)), now).items():
            if owner in self.owners:
                wakes[owner] = when
        index.wakes, index.warnings, index.now = wakes, list(report.warnings), now
        index.files.relist(store.root)
        index.computed.relist(store.root)
        runindex.write_index(store.root, index, self.shared_bytes, detail)


def _rebalancer_pending(snap: Snapshot) -> bool:
    from karmactl.controllers import workload_rebalancer

    return workload_rebalancer.pending(snap)


def reached_policies_only(sub: Snapshot, config, keep: set) -> Snapshot:
    """``sub`` (a partial run's snapshot: some templates and every shared object) without the
    (Cluster)PropagationPolicies that can matter to none of its templates (``shards.policy_reach``,
    as a shard of a full run gets them), but for those in ``keep``: the detector then indexes a
    handful of policies, not the 10,000 of a fleet where each names its template. The computed
    maps are ``sub``'s own (what the run compares its result with)."""
    templates = [k for k, o in sub.user.items() if is_template(k, o, config)]
    present = set(templates) | set(sub.bindings)
    drop = {k for k, reached in policy_reach(sub, templates).items()
            if reached is not None and k not in keep and not (reached & present)}
    if not drop:
        return sub
    return Snapshot(sub.registry, {k: o for k, o in sub.user.items() if k not in drop}, sub.sources, sub.overlays,
                    sub.bindings, sub.works)
