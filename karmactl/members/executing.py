"""Work execution and status collection on one member: read the member copies, apply or delete.

The I/O shell of ``pkg/controllers/execution/execution_controller.go`` and
``pkg/controllers/status/work_status_controller.go`` (semantics §8, §9.5–§9.7); every decision is
in ``karmactl/controllers/execution.py`` and ``work_status.py``.

Per member:

* :func:`observe_member` reads every member copy karmactl manages (one cluster-wide LIST per kind,
  not a GET per Work) and records each applied Work's status and health as observed now;
* :func:`act_member` applies or deletes each Work from those copies; a write is sent only when the
  member copy differs from what karmactl would apply, and each write's answer updates the copies.
  Up to ``workers`` requests are in flight at once, in phases that keep the order that matters
  (:func:`act_phases`): Namespaces, then CRDs, then everything else are applied; then deletions
  run the other way round (namespaced objects and custom resources before their CRDs and
  Namespaces). Works that name the same member object are handled one after the other.

A transport failure stops the member's remaining Works (they keep their state and are retried
next run); an API error fails only the Work it belongs to (``Applied`` False).
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from karmactl.api import constants as C
from karmactl.controllers import execution as X
from karmactl.controllers import work_status
from karmactl.members.clients import MemberApiError, MemberClient, MemberUnreachable


@dataclass
class MemberOutcome:
    """What observing or executing did on one member.

    Attributes:
        works: Work key -> new Work (changed ones only), or None to drop it (member copy deleted).
        error: why the member failed (unreachable, not ready), else None.
        events: lines for ``report.events``.
        warnings: lines for ``report.warnings``.
        writes: POST/PUT/PATCH/DELETE requests sent.
        changes: with ``dry_run``, what would be sent: ``{cluster, action, ref, current, desired}``.
    """

    works: dict = field(default_factory=dict)
    error: str | None = None
    events: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    writes: int = 0
    changes: list = field(default_factory=list)


UPDATE_ATTEMPTS = 3  # a replace that meets a stale resourceVersion is planned again from a fresh read


def describe_manifest(manifest: dict) -> str:
    """``Deployment default/nginx`` for a manifest."""
    md = manifest.get("metadata") or {}
    ns = md.get("namespace")
    return f"{manifest.get('kind')} {ns + '/' if ns else ''}{md.get('name')}"


class MemberCopies:
    """The member copies read in this run: one LIST per resource, kept up to date with writes.
    Thread-safe: each resource is listed once however many workers ask for it.

    Args:
        client: the member's client.
    """

    def __init__(self, client: MemberClient):
        self.client = client
        self.index: dict = {}  # Resource.path() -> {(namespace, name): obj}
        self._lock = threading.Lock()
        self._list_locks: dict = {}  # Resource.path() -> Lock held while that resource is listed
        self._namespace_lock = threading.Lock()

    def resource(self, manifest: dict):
        """The member's REST resource for a manifest (raises MemberApiError 404 when not served)."""
        r = self.client.resource_for(manifest.get("apiVersion") or "", manifest.get("kind") or "")
        if r is None:
            raise MemberApiError(404, "NotFound", f'no matches for kind "{manifest.get("kind")}" in version '
                                                  f'"{manifest.get("apiVersion")}"')
        return r

    def objects(self, r) -> dict:
        """Every object of resource ``r`` by (namespace, name), listed on first use."""
        key = r.path()
        items = self.index.get(key)
        if items is not None:
            return items
        with self._lock:
            lock = self._list_locks.setdefault(key, threading.Lock())
        with lock:
            if key in self.index:
                return self.index[key]
            data = self.client.call("GET", key) or {}
            items = {}
            for obj in data.get("items") or []:
                # list items from real API servers carry no apiVersion/kind; the interpreter needs them
                obj.setdefault("apiVersion", r.group_version)
                obj.setdefault("kind", r.kind)
                md = obj.get("metadata") or {}
                items[(md.get("namespace") or "", md.get("name") or "")] = obj
            self.index[key] = items
        return items

    def get(self, r, namespace: str, name: str) -> dict | None:
        return self.objects(r).get((namespace if r.namespaced else "", name))

    def remember(self, r, namespace: str, name: str, obj: dict | None) -> None:
        items = self.objects(r)
        k = (namespace if r.namespaced else "", name)
        with self._lock:
            if obj is None:
                items.pop(k, None)
            else:
                items[k] = obj


def _locate(manifest: dict) -> tuple[str, str]:
    md = manifest.get("metadata") or {}
    return md.get("namespace") or "", md.get("name") or ""


def observe_member(works: dict, copies: MemberCopies, now: str, interpreter) -> MemberOutcome:
    """Read the member copy of every Work and record its status as observed at ``now``.

    Args:
        works: Work key -> Work, all in one member's execution namespace.
        copies: the member's copies (listed here, one LIST per kind, and kept for execution).
        now: the observation time (``karmactl.io/observed-at`` when a status changes).
        interpreter: the run's ``karmactl.interpreter.Interpreter`` (built from the snapshot).

    Returns:
        A :class:`MemberOutcome` whose ``works`` are the Works with a new observation. Only
        applied Works are reflected (§9.7); a kind the member does not serve is left to execution.

    Raises:
        MemberUnreachable: the member stopped answering.
    """
    out = MemberOutcome()
    for key, work in sorted(works.items()):
        manifest = X.manifest_of(work)
        if manifest is None or X.is_terminating(work):
            continue
        try:
            r = copies.resource(manifest)
            obj = copies.get(r, *_locate(manifest))
        except MemberApiError:
            continue
        new = _collect(work, manifest, obj, interpreter, now)
        if new is not work:
            out.works[key] = new
    return out


def target_of(manifest: dict) -> tuple:
    """The member object a manifest names: ``(apiVersion group, kind, namespace, name)`` (the
    version left out: two versions of one kind are one object)."""
    api_version = manifest.get("apiVersion") or ""
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    return (group, manifest.get("kind") or "", *_locate(manifest))


def act_phases(works: dict) -> list[list[list]]:
    """The order :func:`act_member` handles a member's Works in: phases run one after the other;
    a phase is a list of lanes that may run at once; a lane is Work keys handled in turn.

    Applies first, by kind rank (``karmactl.controllers.execution.apply_order``: Namespaces, CRDs,
    the rest), then deletions (terminating Works) in the reverse ranks, so a custom resource or a
    namespaced object is deleted before its CRD or Namespace, as Helm uninstalls. Works naming
    the same member object share a lane, in key order, whatever their phase (the earliest one's),
    so two Works never write one object at once. Lanes and phases are sorted: the order is
    deterministic.

    Args:
        works: Work key -> Work.

    Returns:
        ``[[[work key, ...], ...], ...]`` (empty phases left out).
    """
    def phase_of(work) -> int:
        rank = X.apply_order(X.manifest_of(work) or {})
        return 10 + rank if not X.is_terminating(work) else 30 - rank

    lanes: dict = {}  # target -> [keys]
    for key in sorted(works):
        manifest = X.manifest_of(works[key])
        target = target_of(manifest) if manifest is not None else ("", "", "", "", key)
        lanes.setdefault(target, []).append(key)
    phases: dict = {}
    for keys in lanes.values():
        keys.sort(key=lambda k: (phase_of(works[k]), k))
        phases.setdefault(phase_of(works[keys[0]]), []).append(keys)
    return [sorted(phases[p]) for p in sorted(phases)]


def act_member(cluster: str, works: dict, copies: MemberCopies | None, ready: bool, reachable_error: str | None,
               now: str, interpreter, progress=None, verbose: int = 0, dry_run: bool = False,
               workers: int = 1) -> MemberOutcome:
    """Apply or delete every Work of one member, from the copies :func:`observe_member` read.

    Args:
        cluster: member name.
        works: Work key -> Work, all in ``karmada-es-<cluster>``.
        copies: the member's copies, None when its client could not be built.
        ready: the Cluster's Ready condition (after thresholds) is True.
        reachable_error: the member's failure this run (it is not contacted then), or None.
        now: the run's clock (condition times).
        interpreter: the run's ``karmactl.interpreter.Interpreter`` (built from the snapshot).
        progress: optional ``f(n)`` called as Works are done (from worker threads).
        verbose: add an event line per write when > 0.
        dry_run: send nothing; ``changes`` lists what would be sent.
        workers: Works handled at once (lanes of a phase of :func:`act_phases`); the events,
            warnings and changes come out in that order whatever finished first.

    Returns:
        A :class:`MemberOutcome` (never raises for member failures): Works with their ``Applied``
        condition and version record, None for terminating Works whose copy is gone.
    """
    out = MemberOutcome()
    if copies is None or reachable_error or not ready:
        if reachable_error or copies is None:
            out.error = reachable_error or "no client"
        elif works:
            # reachable but Ready not (yet) True: Karmada's "cluster(<name>) not ready", retried later
            out.warnings.append(f"cluster({cluster}) not ready: {len(works)} work(s) wait")
        if progress:
            progress(len(works))
        return out
    start_writes = copies.client.writes
    live = {target_of(X.manifest_of(w)) for w in works.values()
            if X.manifest_of(w) is not None and not X.is_terminating(w)}
    stopped: list = []  # the first MemberUnreachable: the remaining Works wait for the next run

    def lane(keys: list) -> MemberOutcome:
        sink = MemberOutcome()
        for i, key in enumerate(keys):
            if stopped:
                if progress:
                    progress(len(keys) - i)
                break
            try:
                new = _execute_work(cluster, key, works[key], copies, now, interpreter, sink, verbose, dry_run, live)
            except MemberUnreachable as exc:
                stopped.append(exc)
                if progress:
                    progress(len(keys) - i)
                break
            if new is not works[key]:
                sink.works[key] = new
            if progress:
                progress(1)
        return sink

    sinks = []
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=f"member-{cluster}") if workers > 1 else None
    try:
        for phase in act_phases(works):
            if stopped:
                if progress:
                    progress(sum(len(keys) for keys in phase))
                continue
            sinks += list(pool.map(lane, phase)) if pool and len(phase) > 1 else [lane(keys) for keys in phase]
    finally:
        if pool:
            pool.shutdown(wait=True)
    for sink in sinks:
        out.works.update(sink.works)
        out.events += sink.events
        out.warnings += sink.warnings
        out.changes += sink.changes
    if stopped:
        out.error = f"cluster is not reachable: {stopped[0]}"
    out.writes = copies.client.writes - start_writes
    return out


def _plan_change(out: MemberOutcome, cluster: str, action: str, manifest: dict, current, desired) -> None:
    out.changes.append({"cluster": cluster, "action": action, "ref": describe_manifest(manifest),
                        "current": current, "desired": desired})


def _execute_work(cluster: str, key, work: dict, copies: MemberCopies, now: str, interpreter, out: MemberOutcome,
                  verbose: int, dry_run: bool, live: frozenset | set = frozenset()):
    """The Work after handling it (None when it was terminating and is done). ``live``: the
    targets of this member's Works that are not terminating. Raises MemberUnreachable."""
    manifest = X.manifest_of(work)
    if manifest is None:
        return None if X.is_terminating(work) else work
    ns, name = _locate(manifest)
    if X.is_terminating(work):
        if target_of(manifest) in live:
            # another Work of this member applies the object in this run: deleting it now would
            # only take the workload down until the next run puts it back (Karmada gets there by
            # re-syncing that Work when it sees the deletion); the object stays, that Work's
            return None
        return _delete(cluster, key, work, manifest, copies, out, verbose, dry_run)
    if X.is_suspended(work):
        return work  # dispatching suspended (§8.3); status is still observed
    try:
        r = copies.resource(manifest)
        obj = copies.get(r, ns, name)
    except MemberApiError as exc:
        return X.with_applied(work, 0, 1, [exc.message], now)
    recorded = ((work.get("metadata") or {}).get("annotations") or {}).get(C.APPLIED_VERSION_ANNOTATION)
    for attempt in range(UPDATE_ATTEMPTS):
        try:
            plan = X.plan_apply(manifest, obj, cluster, interpreter.retain, recorded)
        except interpreter.InterpreterError as exc:
            return X.with_applied(work, 0, 1, [str(exc)], now)
        if plan.action == "conflict":
            return X.with_applied(work, 0, 1, [plan.error], now)
        if plan.action == "skip":
            break
        if dry_run:
            _plan_change(out, cluster, plan.action, manifest, obj, _server_dry_run(copies, r, ns, name, plan))
            return work
        try:
            if r.namespaced and ns:
                _ensure_namespace(copies, ns, out, verbose, cluster)
            written = _write(copies, r, ns, name, plan)
        except MemberApiError as exc:
            if exc.code == 409 and plan.action == "update" and attempt + 1 < UPDATE_ATTEMPTS:
                # the member's controllers wrote meanwhile (a stale resourceVersion): read the
                # copy again and plan from it, as client-go's RetryOnConflict
                obj = copies.client.call("GET", r.path(ns, name), ok_missing=True)
                if obj is not None:
                    obj.setdefault("apiVersion", r.group_version)
                    obj.setdefault("kind", r.kind)
                copies.remember(r, ns, name, obj)
                continue
            return X.with_applied(work, 0, 1, [exc.message], now)
        obj = written
        obj.setdefault("apiVersion", r.group_version)
        obj.setdefault("kind", r.kind)
        copies.remember(r, ns, name, obj)
        if verbose:
            what = "created" if plan.action == "create" else f"updated ({plan.reason})"
            out.events.append(f"member {cluster}: {what} {describe_manifest(manifest)}")
        break
    if obj is not None:
        work = work_status.with_annotation(work, C.APPLIED_VERSION_ANNOTATION, X.object_version(obj))
    return X.with_applied(work, 1, 1, [], now)


def _write(copies: MemberCopies, r, ns: str, name: str, plan, dry_run: bool = False) -> dict:
    """Send a create (server-side apply) or an update (replace); with ``dry_run`` the member
    answers what it would store (``dryRun=All``) and stores nothing."""
    query = [("fieldManager", X.FIELD_MANAGER)] + ([("dryRun", "All")] if dry_run else [])
    if plan.action == "create":
        return copies.client.call("PATCH", r.path(ns, name), plan.body, "application/apply-patch+yaml",
                                  query + [("force", "true")])
    return copies.client.call("PUT", r.path(ns, name), plan.body, query=query)


def _server_dry_run(copies: MemberCopies, r, ns: str, name: str, plan) -> dict:
    """What the member would store for ``plan`` (its defaults filled in, as ``kubectl diff`` shows),
    or the body karmactl would send when the member cannot answer (e.g. its namespace is missing)."""
    try:
        return _write(copies, r, ns, name, plan, dry_run=True)
    except MemberApiError:
        return plan.body


def _collect(work: dict, manifest: dict, obj: dict | None, interpreter, now: str) -> dict:
    """Reflect the member copy into ``manifestStatuses`` (only for applied Works, §9.7)."""
    from karmactl.api.objects import get_condition

    applied = get_condition(work, C.COND_APPLIED)
    if obj is None or applied is None or applied.get("status") != "True":
        return work
    return work_status.with_observation(work, work_status.manifest_status(manifest, obj, interpreter), now)


def _ensure_namespace(copies: MemberCopies, ns: str, out: MemberOutcome, verbose: int, cluster: str) -> None:
    """Create a missing namespace before a namespaced object goes into it."""
    ns_manifest = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    r = copies.resource(ns_manifest)
    if copies.get(r, "", ns) is not None:
        return
    with copies._namespace_lock:  # workers writing into one new namespace create it once
        if copies.get(r, "", ns) is None:
            _create_namespace(copies, r, ns, ns_manifest, out, verbose, cluster)


def _create_namespace(copies: MemberCopies, r, ns: str, ns_manifest: dict, out: MemberOutcome, verbose: int,
                      cluster: str) -> None:
    status, data = copies.client.request("POST", r.path(), ns_manifest)
    if status == 409:  # created meanwhile
        data = copies.client.call("GET", r.path(None, ns))
    elif not 200 <= status < 300:
        msg = data.get("message") if isinstance(data, dict) else str(data)
        raise MemberApiError(status, "", f"failed to create namespace {ns}: {msg}")
    copies.remember(r, "", ns, data)
    if verbose:
        out.events.append(f"member {cluster}: created Namespace {ns}")


def _delete(cluster: str, key, work: dict, manifest: dict, copies: MemberCopies, out: MemberOutcome, verbose: int,
            dry_run: bool):
    """Delete (or, with preserveResourcesOnDeletion, hand over) the member copy; None when done.

    A failing API call keeps the Work terminating (retried next run) and is reported.
    """
    ns, name = _locate(manifest)
    try:
        r = copies.resource(manifest)
        obj = copies.get(r, ns, name)
        if obj is None:
            return None
        preserve = bool((work.get("spec") or {}).get("preserveResourcesOnDeletion"))
        if dry_run:
            if not preserve and X.is_managed(obj):
                _plan_change(out, cluster, "delete", manifest, obj, None)
            return work
        if preserve:
            patch = X.strip_patch(obj)
            if patch is not None:
                copies.client.call("PATCH", r.path(ns, name), patch, "application/merge-patch+json")
                if verbose:
                    out.events.append(f"member {cluster}: released {describe_manifest(manifest)}")
        elif X.is_managed(obj):
            copies.client.call("DELETE", r.path(ns, name), {"propagationPolicy": "Background"},
                               query=[("propagationPolicy", "Background")], ok_missing=True)
            copies.remember(r, ns, name, None)
            if verbose:
                out.events.append(f"member {cluster}: deleted {describe_manifest(manifest)}")
    except MemberApiError as exc:
        out.events.append(f"work {key[2]}/{key[3]}: failed to delete {describe_manifest(manifest)} "
                          f"from cluster {cluster}: {exc.message}")
        return work
    return None


__all__ = ["MemberCopies", "MemberOutcome", "act_member", "act_phases", "describe_manifest", "observe_member",
           "target_of"]
