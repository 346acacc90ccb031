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
    registry = getattr(snap_or_registry, "registry", snap_or_registry)
    info = lookup_kind(registry, name)
    if info is None:
        from karmactl.api.kinds import suggest_for_name
        raise CLIError(f'the server doesn\'t have a resource type "{name}"{suggest_for_name(registry, name)}',
                       ExitCode.INPUT_ERROR)
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


COMPUTED_KINDS = {("work.karmada.io", "ResourceBinding"), ("work.karmada.io", "ClusterResourceBinding"),
                  ("work.karmada.io", "Work")}


# kubectl's "all" category: the workload kinds and Services (k8s.io/kubernetes pkg/registry categories)
ALL_CATEGORY = ("pods", "services", "daemonsets", "deployments", "replicasets", "statefulsets",
                "horizontalpodautoscalers", "cronjobs", "jobs")


def parse_get_args(registry, args: list[str]) -> list[tuple]:
    """kubectl's resource arguments -> ``[(KindInfo, [names])]`` (no names: every object of the kind).

    Accepts ``TYPE [NAME...]``, ``TYPE1,TYPE2 [NAME...]``, ``all``, ``TYPE/NAME [TYPE/NAME...]`` and full
    names such as ``deployments.apps`` or ``deployment.v1.apps`` (kubectl's ``resource.Builder``).

    Raises:
        CLIError: no type, an unknown type, or ``TYPE/NAME`` mixed with plain arguments (exit 2).
    """
    if not args:
        raise CLIError('You must specify the type of resource to get. Use "karmactl api-resources" for a complete '
                       'list of supported resources.')
    if any("/" in a for a in args):
        if not all("/" in a for a in args):
            raise CLIError("there is no need to specify a resource type as a separate argument when passing "
                           "arguments in resource/name form (e.g. 'karmactl get resource/<resource_name>' instead "
                           "of 'karmactl get resource resource/<resource_name>'")
        pairs: list[tuple] = []
        for a in args:
            kind, name = a.split("/", 1)
            if not kind or not name:
                raise CLIError(f'arguments in resource/name form must have a single resource and name: "{a}"')
            info = resolve_kind(registry, kind)
            if pairs and pairs[-1][0] == info:
                pairs[-1][1].append(name)
            else:
                pairs.append((info, [name]))
        return pairs
    kinds = []
    for word in args[0].split(","):
        if not word:
            raise CLIError(f'invalid resource type list "{args[0]}"')
        if word == "all":
            kinds += [registry.resolve(k) for k in ALL_CATEGORY if registry.resolve(k)]
        else:
            kinds.append(resolve_kind(registry, word))
    return [(info, list(args[1:])) for info in dict.fromkeys(kinds)]


def multiple_types(args: list[str]) -> bool:
    """kubectl's ``MultipleTypesRequested``: ``a,b``, ``all``, or TYPE/NAME of more than one type."""
    if args and ("," in args[0] or args[0] == "all"):
        return True
    return len({a.split("/", 1)[0] for a in args if "/" in a}) > 1


def select_targets(store, index: dict, args: list[str], namespace: str, all_objects: bool, selector: str | None,
                   all_namespaces: bool, verb: str) -> tuple[list, list]:
    """``TYPE NAME...`` / ``TYPE/NAME...`` / ``TYPE --all`` / ``TYPE -l SEL`` over the user objects ``index``
    (:func:`karmactl.store.edit.index_user_objects`) -> ``([(info, key, Source)], [(info, missing name)])``.

    Raises:
        CLIError: computed kinds (``verb`` names the refused action), names mixed with ``-l``/``--all``, or
            a type without names, selector or ``--all`` (kubectl's wording).
    """
    from karmactl.api.selectors import label_selector_matches
    from karmactl.cli.selectors import parse_label_selector

    sel = parse_label_selector(selector) if selector else None
    found, missing = [], []
    for info, names in parse_get_args(store.registry, args):
        if (info.group, info.kind) in COMPUTED_KINDS:
            raise CLIError(f"{info.kind}s are computed by `karmactl reconcile` and cannot be {verb}; change the "
                           f"template or policy instead")
        ns = namespace if info.namespaced else ""
        if names:
            if all_objects or sel is not None:
                raise CLIError("names cannot be provided when a selector or --all is specified")
            for n in names:
                key = (info.group, info.kind, ns, n)
                (found.append((info, key, index[key])) if key in index else missing.append((info, n)))
            continue
        if not (all_objects or sel is not None):
            raise CLIError("resource(s) were provided, but no name was specified: use NAME, TYPE/NAME, "
                           "-l SELECTOR or --all")
        for key, src, labels in _objects_with_labels(store, index, info):
            if (all_namespaces or key[2] == ns) and (sel is None or label_selector_matches(sel, labels)):
                found.append((info, key, src))
    return found, missing


def read_object(store, src) -> dict:
    """The object at a Source (file and document index), as parsed from its file."""
    for obj, i, _line in store.read_documents(store.root / src.path, src.path):
        if i == src.index:
            return obj
    raise CLIError(f"{src.path}: document {src.index} is gone (the file changed meanwhile)")


def _objects_with_labels(store, index: dict, info) -> list:
    """``[(key, Source, labels)]`` of the user objects of a kind, in key order."""
    return [(key, src, ((read_object(store, src).get("metadata") or {}).get("labels") or {}))
            for key, src in sorted(index.items()) if key[:2] == (info.group, info.kind)]
