"""Looking objects up for commands: kind resolution and the merged view of a snapshot."""
from __future__ import annotations

from karmactl.api.kinds import KindInfo
from karmactl.cli.context import CLIError, ExitCode
from karmactl.cli.kindnames import lookup_kind
from karmactl.api.templates import merged_view
from karmactl.store.state import Snapshot


def resolve_kind(snap_or_registry, name: str) -> KindInfo:
    """KindInfo for a command-line resource name (``deploy``, ``rb``, ``works``, ``deployments.apps``,
    ``deployment.v1.apps``...).

    Raises:
        CLIError: unknown resource type (exit 2), with kubectl's wording.
    """
    info = lookup_kind(getattr(snap_or_registry, "registry", snap_or_registry), name)
    if info is None:
        raise CLIError(f'the server doesn\'t have a resource type "{name}"', ExitCode.INPUT_ERROR)
    return info


def objects_of(snap: Snapshot, info: KindInfo) -> list[dict]:
    """Every object of a kind as ``get`` shows it (status and computed metadata merged), by key."""
    gk = (info.group, info.kind)
    if gk in (("work.karmada.io", "ResourceBinding"), ("work.karmada.io", "ClusterResourceBinding")):
        source = {k: v for k, v in snap.bindings.items() if k[1] == info.kind}
    elif gk == ("work.karmada.io", "Work"):
        source = snap.works
    else:
        source = {k: merged_view(v, snap.overlays.get(k)) for k, v in snap.user.items() if k[:2] == gk}
        if gk == ("", "Namespace"):
            source.update(implied_namespaces(snap, source))
    return [source[k] for k in sorted(source)]


def implied_namespaces(snap: Snapshot, written: dict) -> dict:
    """The Namespaces a control plane would hold without anyone writing them: ``default``, each
    namespace a user object, binding or Work lives in (an API server refuses objects in a namespace
    that does not exist, and Karmada's execution namespaces ``karmada-es-<cluster>`` are created
    with the Cluster), as ``{key: Namespace}`` for those not in ``written``. Active, no AGE (no
    file records when they appeared)."""
    names = {"default"} | {k[2] for source in (snap.user, snap.bindings, snap.works) for k in source if k[2]}
    out = {}
    for name in names:
        key = ("", "Namespace", "", name)
        if key not in written:
            out[key] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                        "status": {"phase": "Active"}}
    return out


def find(snap: Snapshot, info: KindInfo, name: str, namespace: str) -> dict | None:
    """One object as :func:`objects_of` shows it, by name (and ``namespace`` for a namespaced kind), or
    None; looked up by key, without building the view of every object of the kind."""
    ns = namespace if info.namespaced else ""
    key = (info.group, info.kind, ns, name)
    gk = key[:2]
    if gk in (("work.karmada.io", "ResourceBinding"), ("work.karmada.io", "ClusterResourceBinding")):
        return snap.bindings.get(key)
    if gk == ("work.karmada.io", "Work"):
        return snap.works.get(key)
    if gk == ("", "Namespace"):
        return next((obj for obj in objects_of(snap, info) if obj["metadata"]["name"] == name), None)
    obj = snap.user.get(key)
    return None if obj is None else merged_view(obj, snap.overlays.get(key))


def not_found(info: KindInfo, name: str) -> CLIError:
    return CLIError(f'Error from server (NotFound): {info.resource_ref} "{name}" not found', ExitCode.NOT_FOUND)
