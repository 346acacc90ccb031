"""Editing a Cluster's taints in its own user file (``taint``, ``cordon``, ``uncordon``)."""
from __future__ import annotations

from karmactl.cli.context import CLIError, ExitCode


def edit_cluster_taints(c, name: str, change) -> str | None:
    """Load the Cluster's user file, apply ``change(cluster_name, taints) -> (message, taints | None)``,
    write it back in place. Returns the message."""
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import StateStore

    store = StateStore(c.state)
    key = ("cluster.karmada.io", "Cluster", "", name)
    with state_lock(store.root):
        index = edit.index_user_objects(store)
        src = index.get(key)
        if src is None:
            raise CLIError(f'Error from server (NotFound): clusters.cluster.karmada.io "{name}" not found', ExitCode.NOT_FOUND)
        docs = store.read_documents(store.root / src.path, src.path)
        obj = next(o for o, i, _line in docs if i == src.index)
        taints = list(((obj.get("spec") or {}).get("taints")) or [])
        message, new = change(name, taints)
        if new is not None and new != taints:
            obj = dict(obj)
            spec = dict(obj.get("spec") or {})
            if new:
                spec["taints"] = new
            else:
                spec.pop("taints", None)
            obj["spec"] = spec
            edit.replace_object(store, src, obj)
    return message
