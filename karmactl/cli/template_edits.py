"""Edits of workload templates in their files for ``scale``, ``set image`` and ``rollout undo``
(kubectl ``pkg/cmd/{scale,set,rollout}``): each chosen object is read, changed, validated as ``apply``
validates, and written back with only the lines that changed (:func:`karmactl.store.edit.replace_object`).
The next ``reconcile`` propagates the change to the members.
"""
from __future__ import annotations

import copy
from contextlib import nullcontext

from karmactl.cli.context import CLIError, Context, ExitCode, err, out

# where each kind keeps its Pod template's spec (kubectl's polymorphichelpers.updatePodSpecForObject)
POD_SPEC_PATHS = {
    ("", "Pod"): ("spec",),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
    **{gk: ("spec", "template", "spec") for gk in (
        ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"), ("apps", "ReplicaSet"),
        ("batch", "Job"), ("", "ReplicationController"))},
}

# kinds whose replicas ``scale`` sets (kubectl's scale subresource of the built-in kinds)
SCALABLE = {("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet"), ("", "ReplicationController")}


def pod_spec(obj: dict, gk: tuple[str, str]) -> dict | None:
    """The Pod spec inside ``obj`` (created along the path when missing), None for a kind without one."""
    path = POD_SPEC_PATHS.get(gk)
    if path is None:
        return None
    node = obj
    for part in path:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = node[part] = {}
        node = nxt
    return node


def edit_templates(c: Context, args: list[str], namespace: str, change, verb: str, dry_run: bool = False,
                   all_objects: bool = False, selector: str | None = None, all_namespaces: bool = False,
                   report_unchanged: bool = False) -> None:
    """Apply ``change(info, obj) -> new obj`` to each object ``args`` (``TYPE NAME...`` | ``TYPE/NAME...``,
    or ``TYPE`` with ``--all``/``-l``) names, in its file, printing kubectl's ``<kind>/<name> <verb>``
    for each changed object (``(dry run)`` appended without writing); an unchanged one prints nothing,
    as ``kubectl set`` prints nothing for an empty patch, unless ``report_unchanged`` (``kubectl scale``
    says ``scaled`` either way).

    Raises:
        CLIError: whatever ``change`` raises, an invalid result (exit 2); objects not found (exit 1,
            after the others are changed).
    """
    from karmactl.cli.objects import read_object, select_targets
    from karmactl.cli.printers import kind_prefix
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import Source, StateStore

    with state_lock(c.state) if not dry_run else nullcontext():
        store = StateStore(c.state)
        index = edit.index_user_objects(store)
        targets, missing = select_targets(store, index, args, namespace, all_objects, selector, all_namespaces, verb)
        for info, key, src in targets:
            obj = read_object(store, src)
            new = change(info, copy.deepcopy(obj))
            if new == obj:
                if report_unchanged:
                    out(f"{kind_prefix(info)}/{key[3]} {verb}{' (dry run)' if dry_run else ''}")
                continue
            normalize_object(copy.deepcopy(new), Source(src.path, src.index, src.line), store.registry, strict=True)
            if not dry_run:
                edit.replace_object(store, src, new)
            out(f"{kind_prefix(info)}/{key[3]} {verb}{' (dry run)' if dry_run else ''}")
    for info, n in missing:
        err(f'Error from server (NotFound): {info.resource_ref} "{n}" not found')
    if missing:
        raise SystemExit(int(ExitCode.NOT_FOUND))


def not_scalable(info, name: str) -> CLIError:
    """kubectl's answer for a kind without a scale subresource here."""
    return CLIError(f'{info.resource_ref} "{name}" cannot be scaled: karmactl scales '
                    f"Deployments, StatefulSets, ReplicaSets and ReplicationControllers (spec.replicas)")
