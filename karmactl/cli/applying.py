"""Storing objects in the state directory as ``kubectl apply`` does (``apply``, and ``demo``'s sample)."""
from __future__ import annotations

from contextlib import nullcontext

from karmactl.cli.context import Context, err, out
from karmactl.cli.inputs import read_inputs
from karmactl.cli.objects import COMPUTED_KINDS
from karmactl.cli.stores import store_of
from karmactl.store.fsio import state_lock
from karmactl.store.state import InputError, check_object, key_of, Source


def apply_cmd(c: Context, paths: list[str], recursive: bool, dry_run: bool) -> None:
    """Store the objects of ``paths`` in the state directory (``kubectl apply``).

    What a server or controller fills in (``status``, ``uid``, Karmada's claim labels...:
    ``karmactl.api.objects.strip_server_fields``) is dropped first, so the output of ``get -o
    yaml`` applies cleanly. An object already stored is rewritten only where it differs (its file
    keeps its style; an unchanged one is ``unchanged``, with ``--dry-run`` too); a new one is written
    without ``namespace: default`` unless the input has it. Every object is checked before anything is written; every error of
    every file is reported (one :class:`InputError` carrying them all) and nothing is stored.

    Raises:
        InputError: exit 2, listing every bad file, object and field.
    """
    from karmactl.api.objects import strip_server_fields
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit

    store = store_of(c)
    with state_lock(store.root) if not dry_run else nullcontext():
        index = edit.index_user_objects(store)
        errors: list[InputError] = []
        inputs = read_inputs(paths, recursive, errors)
        for obj, display, _i, line in inputs:  # CRDs among the inputs define kinds for the rest
            if obj.get("kind") == "CustomResourceDefinition":
                store.registry.add_crd(obj)
        staged = []
        seen = {}
        for obj, display, i, line in inputs:
            try:
                obj, removed = strip_server_fields(obj)
                meta = obj.get("metadata")
                wrote_ns = isinstance(meta, dict) and bool(meta.get("namespace"))
                info = check_object(obj, store.registry, display, line)
                key = key_of(obj)
                if key[:2] in COMPUTED_KINDS:
                    raise InputError(f"{info.kind}s are computed by `karmactl reconcile` and cannot be applied; to "
                                     f"record what a member reports about a workload, use `karmactl observe KIND/NAME "
                                     f"--cluster CLUSTER --health Healthy|Unhealthy [--status-file F]`", display, line,
                                     f"{info.kind} {key[3]}", "kind")
                if key in seen:
                    raise InputError(f"duplicate object: also in {seen[key]}", display, line, f"{info.kind} {key[3]}")
                seen[key] = f"{display}:{line}"
                normalize_object(obj, Source(display, i, line), store.registry, strict=True)  # validate; store as written
            except InputError as exc:
                errors.append(exc)
                continue
            if removed and c.verbose:
                err(f"note: {display}:{line}: not stored (filled in by karmactl or a server): {', '.join(removed)}")
            staged.append((info, key, obj, wrote_ns))
        if errors:
            raise InputError.several(errors)
        for info, key, obj, wrote_ns in staged:
            ref = f"{info.singular}{'.' + info.group if info.group else ''}/{key[3]}"
            if key in index:
                changed = edit.replace_object(store, index[key], obj, dry_run=dry_run)
                out(f"{ref} {'configured' if changed else 'unchanged'}{' (dry run)' if dry_run else ''}")
            else:
                if not dry_run:
                    edit.append_new(store, info, obj, wrote_namespace=wrote_ns)
                    edit.stamp_creation(store, key, obj, c.now)
                out(f"{ref} created{' (dry run)' if dry_run else ''}")
