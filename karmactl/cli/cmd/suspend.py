"""Operator commands that edit policies in their own files: ``suspend`` and ``resume``.

They change ``spec.suspension`` of a PropagationPolicy / ClusterPropagationPolicy (semantics §8,
the dispatch suspension design document), keeping the file's comments and formatting; the next
reconcile copies it to the binding and the Works (``spec.suspendDispatching``).
"""
from __future__ import annotations

from typing import Optional

import typer

from karmactl.cli.context import CLIError, out

_ALIASES = ("suspendDispatching", "suspendDispatchingOnClusters")


def register(app: typer.Typer) -> None:
    """Add ``suspend`` and ``resume`` to the app."""

    @app.command()
    def suspend(ctx: typer.Context,
                kind: str = typer.Argument(..., help="pp or cpp (propagationpolicy, clusterpropagationpolicy)."),
                name: str = typer.Argument(...),
                namespace: str = typer.Option("default", "-n", "--namespace"),
                clusters: Optional[str] = typer.Option(None, "--clusters", help="Only these clusters (c1,c2); default all.")):
        """Pause propagation of a policy's resources: member copies stay as they are until resume."""
        change_suspension(ctx.obj, kind, name, namespace, _split(clusters), suspend=True)

    @app.command()
    def resume(ctx: typer.Context,
               kind: str = typer.Argument(..., help="pp or cpp."),
               name: str = typer.Argument(...),
               namespace: str = typer.Option("default", "-n", "--namespace"),
               clusters: Optional[str] = typer.Option(None, "--clusters", help="Only these clusters (c1,c2); default all.")):
        """Resume propagation: the next reconcile ships the newest version to the resumed clusters."""
        change_suspension(ctx.obj, kind, name, namespace, _split(clusters), suspend=False)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise CLIError("--clusters needs at least one cluster name")
    return names


def desired_suspension(current: dict | None, clusters: list[str] | None, suspend: bool,
                       all_clusters: list[str]) -> dict | None:
    """The new ``spec.suspension`` (dispatching parts only) after a suspend/resume.

    Args:
        current: the policy's suspension (aliases already normalised) or None.
        clusters: the clusters named on the command line, or None for all.
        suspend: suspend (True) or resume (False).
        all_clusters: every Cluster in the state directory (to resume some while all are suspended).

    Returns:
        ``{"dispatching": True}``, ``{"dispatchingOnClusters": {"clusterNames": [...]}}`` or None.
    """
    current = current or {}
    everything = bool(current.get("dispatching"))
    listed = list((current.get("dispatchingOnClusters") or {}).get("clusterNames") or [])
    if suspend:
        if clusters is None or everything:
            return {"dispatching": True}
        return {"dispatchingOnClusters": {"clusterNames": sorted(set(listed) | set(clusters))}}
    if clusters is None:
        return None
    remaining = [c for c in (all_clusters if everything else listed) if c not in clusters]
    return {"dispatchingOnClusters": {"clusterNames": sorted(remaining)}} if remaining else None


def change_suspension(c, kind: str, name: str, namespace: str, clusters: list[str] | None, suspend: bool) -> None:
    from karmactl.api.defaults import normalize_aliases
    from karmactl.cli.objects import not_found, resolve_kind
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import StateStore

    store = StateStore(c.state)
    info = resolve_kind(store.registry, kind)
    if info.kind not in ("PropagationPolicy", "ClusterPropagationPolicy"):
        raise CLIError(f'{"suspend" if suspend else "resume"} works on propagation policies (pp, cpp), not "{kind}"')
    with state_lock(store.root):
        index = edit.index_user_objects(store)
        key = (info.group, info.kind, namespace if info.namespaced else "", name)
        src = index.get(key)
        if src is None:
            raise not_found(info, name)
        objs = [o for o, i, _l in store.read_documents(store.root / src.path) if i == src.index]
        normalized, errors = normalize_aliases(objs[0])
        if errors:
            raise CLIError(f"{src.path}: {errors[0].path}: {errors[0].message}")
        current = (normalized.get("spec") or {}).get("suspension")
        all_clusters = sorted(k[3] for k in index if k[:2] == ("cluster.karmada.io", "Cluster"))
        new = desired_suspension(current, clusters, suspend, all_clusters)

        def mutate(doc):
            spec = doc.setdefault("spec", {})
            for alias in _ALIASES:
                spec.pop(alias, None)
            sus = spec.get("suspension")
            if sus is None and new is None:
                return
            if sus is None:
                spec["suspension"] = {}
                sus = spec["suspension"]
            for alias in _ALIASES:
                sus.pop(alias, None)
            for field in ("dispatching", "dispatchingOnClusters"):
                if new and field in new:
                    if sus.get(field) != new[field]:
                        sus[field] = new[field]
                else:
                    sus.pop(field, None)
            if not sus:
                del spec["suspension"]

        changed = edit.edit_object(store, src, mutate)
    what = "all clusters" if clusters is None else ", ".join(clusters)
    verb = "suspended" if suspend else "resumed"
    out(f"{info.singular}.{info.group}/{name} {verb} on {what}{'' if changed else ' (unchanged)'}")
