"""Work execution and status collection on one member: read the member copies, apply or delete.

The I/O shell of ``pkg/controllers/execution/execution_controller.go`` and
``pkg/controllers/status/work_status_controller.go`` (semantics §8, §9.5–§9.7); every decision is
in ``karmactl/controllers/execution.py`` and ``work_status.py``.

Per member, in one thread:

* :func:`observe_member` reads every member copy karmactl manages (one cluster-wide LIST per kind,
  not a GET per Work) and records each applied Work's status and health as observed now;
* :func:`act_member` applies or deletes each Work from those copies (Namespaces first, then CRDs,
  then the rest); a write is sent only when the member copy differs from what karmactl would
  apply, and each write's answer updates the copies.

A transport failure stops the member's remaining Works (they keep their state and are retried
next run); an API error fails only the Work it belongs to (``Applied`` False).
"""
from __future__ import annotations

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

    Args:
        client: the member's client.
    """

    def __init__(self, client: MemberClient):
        self.client = client
        self.index: dict = {}  # Resource.path() -> {(namespace, name): obj}

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
        if key not in self.index:
            data = self.client.call("GET", key) or {}
            items = {}
            for obj in data.get("items") or []:
                # list items from real API servers carry no apiVersion/kind; the interpreter needs them
                obj.setdefault("apiVersion", r.group_version)
                obj.setdefault("kind", r.kind)
                md = obj.get("metadata") or {}
                items[(md.get("namespace") or "", md.get("name") or "")] = obj
            self.index[key] = items
        return self.index[key]

    def get(self, r, namespace: str, name: str) -> dict | None:
        return self.objects(r).get((namespace if r.namespaced else "", name))

    def remember(self, r, namespace: str, name: str, obj: dict | None) -> None:
        items = self.objects(r)
        k = (namespace if r.namespaced else "", name)
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


def act_member(cluster: str, works: dict, copies: MemberCopies | None, ready: bool, reachable_error: str | None,
               now: str, interpreter, progress=None, verbose: int = 0, dry_run: bool = False) -> MemberOutcome:
    """Apply or delete every Work of one member, from the copies :func:`observe_member` read.

    Args:
        cluster: member name.
        works: Work key -> Work, all in ``karmada-es-<cluster>``.
        copies: the member's copies, None when its client could not be built.
        ready: the Cluster's Ready condition (after thresholds) is True.
        reachable_error: the member's failure this run (it is not contacted then), or None.
        now: the run's clock (condition times).
        interpreter: the run's ``karmactl.interpreter.Interpreter`` (built from the snapshot).
        progress: optional ``f(n)`` called as Works are done.
        verbose: add an event line per write when > 0.
        dry_run: send nothing; ``changes`` lists what would be sent.

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
    order = sorted(works, key=lambda k: (X.apply_order(X.manifest_of(works[k]) or {}), k))
    done = 0
    try:
        for key in order:
            new = _execute_work(cluster, key, works[key], copies, now, interpreter, out, verbose, dry_run)
            if new is not works[key]:
                out.works[key] = new
            done += 1
            if progress:
                progress(1)
    except MemberUnreachable as exc:
        out.error = f"cluster is not reachable: {exc}"
        if progress:
            progress(len(order) - done)
    out.writes = copies.client.writes - start_writes
    return out


def _plan_change(out: MemberOutcome, cluster: str, action: str, manifest: dict, current, desired) -> None:
    out.changes.append({"cluster": cluster, "action": action, "ref": describe_manifest(manifest),
                        "current": current, "desired": desired})


def _execute_work(cluster: str, key, work: dict, copies: MemberCopies, now: str, interpreter, out: MemberOutcome,
                  verbose: int, dry_run: bool):
    """The Work after handling it (None when it was terminating and is done). Raises MemberUnreachable."""
    manifest = X.manifest_of(work)
    if manifest is None:
        return None if X.is_terminating(work) else work
    ns, name = _locate(manifest)
    if X.is_terminating(work):
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


__all__ = ["MemberCopies", "MemberOutcome", "act_member", "describe_manifest", "observe_member"]
