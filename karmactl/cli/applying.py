"""Storing objects in the state directory as ``kubectl apply`` does (``apply``, and ``demo``'s sample)."""
from __future__ import annotations

from contextlib import nullcontext

from karmactl.cli.context import Context, err, out
from karmactl.cli.inputs import read_inputs
from karmactl.cli.objects import COMPUTED_KINDS
from karmactl.cli.stores import store_of
from karmactl.store.fsio import state_lock
from karmactl.store.state import InputError, check_object, key_of, Source
from karmactl.store.objects import cleared_namespace_message


def generated_policy(info, obj: dict, clusters: list[str] | None) -> dict:
    """The PropagationPolicy (ClusterPropagationPolicy for a cluster-scoped object) ``karmadactl apply
    --all-clusters`` (``clusters`` None: an empty clusterAffinity, every cluster) or ``-C a,b``
    (``clusterNames``) generates for one object (``pkg/karmadactl/apply/apply.go``), named by
    :func:`karmactl.api.names.policy_name`."""
    from karmactl.api.names import policy_name

    md = obj["metadata"]
    namespace = (md.get("namespace") or "default") if info.namespaced else ""
    gv = f"{info.group}/{info.version}" if info.group else info.version
    selector = {"apiVersion": gv, "kind": info.kind, "name": md["name"], **({"namespace": namespace} if namespace else {})}
    meta = {"name": policy_name(namespace, md["name"], f"{gv}, Kind={info.kind}"), **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy" if info.namespaced else "ClusterPropagationPolicy", "metadata": meta,
            "spec": {"resourceSelectors": [selector],
                     "placement": {"clusterAffinity": {"clusterNames": list(clusters)} if clusters else {}}}}


def _propagation_targets(index: dict, clusters: list[str] | None, all_clusters: bool) -> list[str] | None:
    """Check ``--all-clusters``/``-C`` as karmadactl does: not both, and every named cluster registered.

    Raises:
        CLIError: ``--all-clusters and --cluster cannot be used together``, ``cluster X does not exist`` (exit 2).
    """
    from karmactl.cli.context import CLIError

    if all_clusters and clusters:
        raise CLIError("--all-clusters and --cluster cannot be used together")
    if clusters:
        known = {k[3] for k in index if k[:2] == ("cluster.karmada.io", "Cluster")}
        missing = [f"cluster {n} does not exist" for n in clusters if n not in known]
        if missing:
            raise CLIError(", ".join(missing) if len(missing) == 1 else "[" + ", ".join(missing) + "]")
    return clusters


def _checked_input(store, obj: dict, display: str, i: int, line: int, seen: dict) -> tuple:
    """One input object of ``apply`` checked as it will be stored: server-filled fields dropped, its
    kind known and not computed, not given twice (``seen``: key -> where, updated), valid
    (``normalize_object`` strict); a namespace on a cluster-scoped kind is warned about (the API
    server clears it). Returns ``(object, removed field names, KindInfo, key, whether the input
    wrote a namespace)`` (a new object's file gets ``namespace`` only when it did).

    Raises:
        InputError: what is wrong, with the file, line, object and field.
    """
    from karmactl.api.objects import strip_server_fields
    from karmactl.reconcile import normalize_object

    obj, removed = strip_server_fields(obj)
    written_ns = (obj.get("metadata") or {}).get("namespace") if isinstance(obj.get("metadata"), dict) else None
    info = check_object(obj, store.registry, display, line)
    if written_ns and not info.namespaced:
        err(f"warning: {display}:{line}: {info.kind} {obj['metadata'].get('name')}: "
            f"{cleared_namespace_message(written_ns)}")
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
    return obj, removed, info, key, bool(written_ns)


def apply_cmd(c: Context, paths: list[str], recursive: bool, dry_run: bool, kustomize_dir: str | None = None,
              clusters: list[str] | None = None, all_clusters: bool = False) -> None:
    """Store the objects of ``paths`` (and of the kustomization ``kustomize_dir``) in the state
    directory (``kubectl apply``); with ``all_clusters`` or ``clusters`` also a policy per object that
    propagates it there, as ``karmadactl apply`` does (:func:`generated_policy`; objects of Karmada's own
    API groups get none: a policy never propagates them).

    What a server or controller fills in (``status``, ``uid``, Karmada's claim labels...:
    ``karmactl.api.objects.strip_server_fields``) is dropped first, so the output of ``get -o
    yaml`` applies cleanly. An object already stored is rewritten only where it differs (its file
    keeps its style; an unchanged one is ``unchanged``, with ``--dry-run`` too); a new one is written
    without ``namespace: default`` unless the input has it. Every object is checked before anything is written; every error of
    every file is reported (one :class:`InputError` carrying them all) and nothing is stored.

    Raises:
        InputError: exit 2, listing every bad file, object and field.
    """
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit

    store = store_of(c)
    with state_lock(store.root) if not dry_run else nullcontext():
        index = edit.index_user_objects(store)
        errors: list[InputError] = []
        propagate = all_clusters or bool(clusters)
        targets = _propagation_targets(index, clusters, all_clusters) if propagate else None
        inputs = read_inputs(paths, recursive, errors, kustomize_dir)
        for obj, display, _i, line in inputs:  # CRDs among the inputs define kinds for the rest
            if obj.get("kind") == "CustomResourceDefinition":
                store.registry.add_crd(obj)
        staged = []
        seen = {}
        for obj, display, i, line in inputs:
            try:
                obj, removed, info, key, wrote_ns = _checked_input(store, obj, display, i, line, seen)
            except InputError as exc:
                errors.append(exc)
                continue
            if removed and c.verbose:
                err(f"note: {display}:{line}: not stored (filled in by karmactl or a server): {', '.join(removed)}")
            staged.append((info, key, obj, wrote_ns))
            if propagate and not info.group.endswith("karmada.io"):
                policy = generated_policy(info, obj, targets)
                pinfo = check_object(policy, store.registry, f"{display} (generated)", line)
                normalize_object(policy, Source(display, i, line), store.registry, strict=True)
                staged.append((pinfo, key_of(policy), policy, True))
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
