"""Execution on one member: apply or delete every Work's manifest, then read the member copy back.

The I/O shell of ``pkg/controllers/execution/execution_controller.go`` and
``pkg/controllers/status/work_status_controller.go`` (semantics §8, §9.5–§9.7); every decision is
in ``karmactl/controllers/execution.py`` and ``work_status.py``.

Per member, in one thread: member copies are read with one cluster-wide LIST per kind (not a GET per
Work), Works are handled Namespaces first, then CRDs, then the rest, and a write is sent only when
the member copy differs from what karmactl would apply. A transport failure stops the member's
remaining Works (they keep their state and are retried next run); an API error fails only the Work
it belongs to (``Applied`` False).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from karmactl.controllers import execution as X
from karmactl.controllers import work_status
from karmactl.members.clients import MemberApiError, MemberClient, MemberUnreachable


@dataclass
class MemberOutcome:
    """What execution did on one member.

    Attributes:
        works: Work key -> new Work (changed ones only), or None to drop it (member copy deleted).
        error: why the member failed (unreachable, not ready), else None.
        events: lines for ``report.events``.
        warnings: lines for ``report.warnings``.
        writes: POST/PUT/PATCH/DELETE requests sent.
    """

    works: dict = field(default_factory=dict)
    error: str | None = None
    events: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    writes: int = 0


def describe_manifest(manifest: dict) -> str:
    md = manifest.get("metadata") or {}
    ns = md.get("namespace")
    return f"{manifest.get('kind')} {ns + '/' if ns else ''}{md.get('name')}"


class _Member:
    """Member copies read so far: one LIST per resource, kept up to date with our own writes."""

    def __init__(self, client: MemberClient):
        self.client = client
        self.index: dict = {}  # Resource.path() -> {(namespace, name): obj}

    def resource(self, manifest: dict):
        r = self.client.resource_for(manifest.get("apiVersion") or "", manifest.get("kind") or "")
        if r is None:
            raise MemberApiError(404, "NotFound", f'no matches for kind "{manifest.get("kind")}" in version '
                                                  f'"{manifest.get("apiVersion")}"')
        return r

    def objects(self, r) -> dict:
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


def execute_member(cluster: str, works: dict, client: MemberClient | None, ready: bool, reachable_error: str | None,
                   now: str, interpreter, progress=None, verbose: int = 0) -> MemberOutcome:
    """Execute every Work of one member.

    Args:
        cluster: member name.
        works: Work key -> Work, all in ``karmada-es-<cluster>``.
        client: the member's client, None when it could not be built.
        ready: the Cluster's Ready condition (after thresholds) is True.
        reachable_error: the probe's failure this run (the member is not contacted then), or None.
        now: the run's clock (condition times).
        interpreter: ``karmactl.interpreter``.
        progress: optional ``f(n)`` called as Works are done.
        verbose: add an event line per write when > 0.

    Returns:
        A :class:`MemberOutcome` (never raises for member failures).
    """
    out = MemberOutcome()
    current = dict(works)
    for key, work in sorted(works.items()):
        if not X.is_terminating(work):
            new = X.with_dispatching(work, now)
            if new is not work:
                current[key] = out.works[key] = new
            if X.is_suspended(work):
                out.events.append(f"work {key[2]}/{key[3]}: dispatching suspended")
    if client is None or reachable_error or not ready:
        if reachable_error or client is None:
            out.error = reachable_error or "no client"
        elif works:
            # reachable but Ready not (yet) True: Karmada's "cluster(<name>) not ready", retried later
            out.warnings.append(f"cluster({cluster}) not ready: {len(works)} work(s) wait")
        if progress:
            progress(len(works))
        return out
    member = _Member(client)
    start_writes = client.writes
    order = sorted(current, key=lambda k: (X.apply_order(X.manifest_of(current[k]) or {}), k))
    done = 0
    try:
        for key in order:
            new = _execute_work(cluster, key, current[key], member, now, interpreter, out, verbose)
            if new is not current[key]:
                out.works[key] = new
            done += 1
            if progress:
                progress(1)
    except MemberUnreachable as exc:
        out.error = f"cluster is not reachable: {exc}"
        if progress:
            progress(len(order) - done)
    out.writes = client.writes - start_writes
    return out


def _execute_work(cluster: str, key, work: dict, member: _Member, now: str, interpreter, out: MemberOutcome,
                  verbose: int):
    """The Work after handling it (None when it was terminating and is done). Raises MemberUnreachable."""
    manifest = X.manifest_of(work)
    if manifest is None:
        return None if X.is_terminating(work) else work
    md = manifest.get("metadata") or {}
    ns, name = md.get("namespace") or "", md.get("name") or ""
    if X.is_terminating(work):
        return _delete(cluster, key, work, manifest, member, out, verbose)
    try:
        r = member.resource(manifest)
        obj = member.get(r, ns, name)
    except MemberApiError as exc:
        return X.with_applied(work, 0, 1, [exc.message], now)
    if X.is_suspended(work):
        # status collection is not suspended (§8.3)
        return _collect(work, manifest, obj, interpreter)
    try:
        plan = X.plan_apply(manifest, obj, cluster, interpreter.retain)
    except interpreter.InterpreterError as exc:
        return X.with_applied(work, 0, 1, [str(exc)], now)
    if plan.action == "conflict":
        return X.with_applied(work, 0, 1, [plan.error], now)
    if plan.action in ("create", "update"):
        try:
            if r.namespaced and ns:
                _ensure_namespace(member, ns, out, verbose, cluster)
            query = [("fieldManager", X.FIELD_MANAGER)] + ([("force", "true")] if plan.force else [])
            obj = member.client.call("PATCH", r.path(ns, name), plan.body, "application/apply-patch+yaml", query)
        except MemberApiError as exc:
            return X.with_applied(work, 0, 1, [exc.message], now)
        obj.setdefault("apiVersion", r.group_version)
        obj.setdefault("kind", r.kind)
        member.remember(r, ns, name, obj)
        if verbose:
            out.events.append(f"member {cluster}: {'created' if plan.action == 'create' else 'updated'} "
                              f"{describe_manifest(manifest)}")
    work = X.with_applied(work, 1, 1, [], now)
    return _collect(work, manifest, obj, interpreter)


def _collect(work: dict, manifest: dict, obj: dict | None, interpreter) -> dict:
    """Reflect the member copy into ``manifestStatuses`` (only for applied Works, §9.7)."""
    from karmactl.api.objects import get_condition

    applied = get_condition(work, "Applied")
    if obj is None or applied is None or applied.get("status") != "True":
        return work
    return work_status.with_manifest_status(work, work_status.manifest_status(manifest, obj, interpreter))


def _ensure_namespace(member: _Member, ns: str, out: MemberOutcome, verbose: int, cluster: str) -> None:
    """Create a missing namespace before a namespaced object goes into it."""
    ns_manifest = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    r = member.resource(ns_manifest)
    if member.get(r, "", ns) is not None:
        return
    status, data = member.client.request("POST", r.path(), ns_manifest)
    if status == 409:  # created meanwhile
        data = member.client.call("GET", r.path(None, ns))
    elif not 200 <= status < 300:
        msg = data.get("message") if isinstance(data, dict) else str(data)
        raise MemberApiError(status, "", f"failed to create namespace {ns}: {msg}")
    member.remember(r, "", ns, data)
    if verbose:
        out.events.append(f"member {cluster}: created Namespace {ns}")


def _delete(cluster: str, key, work: dict, manifest: dict, member: _Member, out: MemberOutcome, verbose: int):
    """Delete (or, with preserveResourcesOnDeletion, hand over) the member copy; None when done.

    A failing API call keeps the Work terminating (retried next run) and is reported.
    """
    md = manifest.get("metadata") or {}
    ns, name = md.get("namespace") or "", md.get("name") or ""
    try:
        r = member.resource(manifest)
        obj = member.get(r, ns, name)
        if obj is None:
            return None
        if (work.get("spec") or {}).get("preserveResourcesOnDeletion"):
            patch = X.strip_patch(obj)
            if patch is not None:
                member.client.call("PATCH", r.path(ns, name), patch, "application/merge-patch+json")
                if verbose:
                    out.events.append(f"member {cluster}: released {describe_manifest(manifest)}")
        elif X.is_managed(obj):
            member.client.call("DELETE", r.path(ns, name), {"propagationPolicy": "Background"},
                               query=[("propagationPolicy", "Background")], ok_missing=True)
            member.remember(r, ns, name, None)
            if verbose:
                out.events.append(f"member {cluster}: deleted {describe_manifest(manifest)}")
    except MemberApiError as exc:
        out.events.append(f"work {key[2]}/{key[3]}: failed to delete {describe_manifest(manifest)} "
                          f"from cluster {cluster}: {exc.message}")
        return work
    return None


__all__ = ["MemberOutcome", "execute_member"]
