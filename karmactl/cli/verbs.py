"""kubectl's everyday verbs on the state directory: ``version``, ``api-resources``, ``api-versions``,
``label``, ``annotate`` (kubectl's ``pkg/cmd/{version,apiresources,label,annotate}``).

``label`` and ``annotate`` edit the object in the file it lives in (comments and layout kept, through
:func:`karmactl.store.edit.edit_object`); the next ``reconcile`` propagates the change. Computed kinds
(ResourceBinding, ClusterResourceBinding, Work) are refused: ``reconcile`` rewrites them.
"""
from __future__ import annotations

import json
import platform
import sys
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out


# ---------------------------------------------------------------------------- version
def version_info() -> dict:
    """``{"clientVersion": {...}}`` as ``kubectl version -o json`` shapes it (karmactl's own version)."""
    from karmactl import __version__

    return {"clientVersion": {"gitVersion": f"v{__version__}", "pythonVersion": platform.python_version(),
                              "platform": f"{sys.platform}/{platform.machine()}"}}


def version_cmd(output: Optional[str]) -> None:
    """``karmactl version [-o json|yaml]``: the client version (there is no server: the state directory is it)."""
    info = version_info()
    if output == "json":
        out(json.dumps(info, indent=2))
    elif output == "yaml":
        from karmactl.store import yamlio
        out(yamlio.dump(info).rstrip("\n"))
    elif output:
        raise CLIError(f"--output must be 'yaml' or 'json'")
    else:
        out(f"Client Version: {info['clientVersion']['gitVersion']}")


# ---------------------------------------------------------------------------- api-resources / api-versions
def _registry(c: Context):
    """Kinds known to this state directory: karmactl's own and those its CRDs define."""
    from karmactl.store.edit import index_user_objects
    from karmactl.store.state import StateStore

    store = StateStore(c.state)
    if c.state.is_dir():
        index_user_objects(store)  # registers the CRDs found among the files
    return store.registry


def api_resources_cmd(c: Context, namespaced: Optional[bool], api_group: Optional[str], output: Optional[str],
                      no_headers: bool, sort_by: Optional[str]) -> None:
    """kubectl's ``api-resources``: NAME, SHORTNAMES, APIVERSION, NAMESPACED, KIND (``-o wide`` adds VERBS,
    ``-o name`` prints ``plural.group``)."""
    from karmactl.cli.printers import align

    if output not in (None, "wide", "name"):
        raise CLIError(f'--output {output} is not available: use wide or name')
    if sort_by not in (None, "name", "kind"):
        raise CLIError(f'--sort-by accepts only name or kind')
    infos = [i for i in _registry(c).all() if (namespaced is None or i.namespaced == namespaced)
             and (api_group is None or i.group == api_group)]
    infos.sort(key=lambda i: (i.kind,) if sort_by == "kind" else (i.plural,) if sort_by == "name" else (i.group, i.plural))
    if output == "name":
        out("".join(f"{i.resource_ref}\n" for i in infos).rstrip("\n"))
        return
    header = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"] + (["VERBS"] if output == "wide" else [])
    verbs = lambda i: "[create delete get list patch update]" if i.kind not in (  # noqa: E731
        "ResourceBinding", "ClusterResourceBinding", "Work", "Event") else "[get list]"
    rows = [[i.plural, ",".join(i.short_names), i.api_version, str(i.namespaced).lower(), i.kind]
            + ([verbs(i)] if output == "wide" else []) for i in infos]
    sys.stdout.write(align([header] + rows, no_headers))


def api_versions_cmd(c: Context) -> None:
    """kubectl's ``api-versions``: every ``group/version`` served, sorted, one per line."""
    found = {f"{i.group}/{v}" if i.group else v for i in _registry(c).all() for v in (i.versions or (i.version,))}
    out("\n".join(sorted(found)))


# ---------------------------------------------------------------------------- label / annotate
def parse_changes(args: list[str], what: str) -> tuple[dict, list[str]]:
    """``k=v`` and ``k-`` arguments -> ``({key: value}, [keys to remove])`` (kubectl's ``parseLabels``).

    Raises:
        CLIError: an argument that is neither, a key given twice, or (labels) an invalid key or value.
    """
    from karmactl.cli.selectors import check_label_key, check_label_value

    sets, removes = {}, []
    for a in args:
        if a.endswith("-") and "=" not in a:
            removes.append(a[:-1])
            if what == "label":
                check_label_key(a[:-1])
        elif "=" in a:
            k, v = a.split("=", 1)
            if k in sets:
                raise CLIError(f"cannot modify {what} {k} more than once in one command")
            if what == "label":
                check_label_key(k)
                check_label_value(v)
            elif not k:
                raise CLIError(f'invalid annotation spec "{a}": the key is empty')
            sets[k] = v
        else:
            raise CLIError(f'invalid {what} spec "{a}": expected KEY=VALUE or KEY-')
    overlap = set(sets) & set(removes)
    if overlap:
        raise CLIError(f"can not both modify and remove the following {what}(s) in the same command: "
                       + ", ".join(sorted(overlap)))
    return sets, removes


def select_targets(store, index: dict, args: list[str], namespace: str, all_objects: bool, selector: Optional[str],
                   all_namespaces: bool, verb: str) -> tuple[list, list]:
    """``TYPE NAME...`` / ``TYPE/NAME...`` / ``TYPE --all`` / ``TYPE -l SEL`` over the user objects ``index``
    (:func:`karmactl.store.edit.index_user_objects`) -> ``([(info, key, Source)], [(info, missing name)])``.

    Raises:
        CLIError: computed kinds (``verb`` names the refused action), names mixed with ``-l``/``--all``, or
            a type without names, selector or ``--all`` (kubectl's wording).
    """
    from karmactl.api.selectors import label_selector_matches
    from karmactl.cli.commands import COMPUTED_KINDS, parse_get_args
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


def meta_cmd(c: Context, what: str, args: list[str], namespace: str, overwrite: bool, all_objects: bool,
             selector: Optional[str], dry_run: bool, all_namespaces: bool = False) -> None:
    """``label`` / ``annotate`` (``what`` = ``label`` | ``annotation``): set ``k=v`` and remove ``k-`` on the
    chosen objects in their files; kubectl's messages (``deployment.apps/nginx labeled``).

    Raises:
        CLIError: bad arguments; a key that has another value without ``--overwrite`` (exit 2); objects
            not found (exit 1, after the others are changed).
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import StateStore

    # changes start at the first KEY=VALUE or KEY- (object names never end with "-")
    split = next((i for i, a in enumerate(args) if i > 0 and ("=" in a or a.endswith("-"))), len(args))
    resources, changes = args[:split], args[split:]
    if not changes:
        raise CLIError(f"at least one {what} update is required")
    sets, removes = parse_changes(changes, what)
    field = "labels" if what == "label" else "annotations"
    with state_lock(c.state):
        store = StateStore(c.state)
        index = edit.index_user_objects(store)
        targets, missing = select_targets(store, index, resources, namespace, all_objects, selector, all_namespaces,
                                          "labeled" if what == "label" else "annotated")
        for info, key, src in targets:
            current = (read_object(store, src).get("metadata") or {}).get(field) or {}
            if not overwrite:
                for k, v in sets.items():
                    if k in current and str(current[k]) != v:
                        raise CLIError(f"'{k}' already has a value ({current[k]}), and --overwrite is false")

            def mutate(node):
                meta = node.setdefault("metadata", {})
                data = meta.get(field)
                if data is None:
                    data = meta[field] = {}
                for k in removes:
                    data.pop(k, None)
                for k, v in sets.items():
                    data[k] = v
                if not data:
                    del meta[field]

            verb = "labeled" if what == "label" else "annotated"
            if dry_run:
                out(f"{kind_prefix(info)}/{key[3]} {verb} (dry run)")
                continue
            changed = edit.edit_object(store, src, mutate)
            out(f"{kind_prefix(info)}/{key[3]} {verb if changed else 'not ' + verb}")
    for info, n in missing:
        err(f'Error from server (NotFound): {info.resource_ref} "{n}" not found')
    if missing:
        raise SystemExit(int(ExitCode.NOT_FOUND))


# ---------------------------------------------------------------------------- registration
def register(app: typer.Typer) -> None:
    """Add version, api-resources, api-versions, label and annotate to the app."""

    @app.command()
    def version(output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml or json."),
                client: bool = typer.Option(True, "--client", help="Client version only (always: there is no server).")):
        """Print the karmactl version (kubectl version --client)."""
        version_cmd(output)

    @app.command("api-resources")
    def api_resources(ctx: typer.Context,
                      namespaced: Optional[str] = typer.Option(None, "--namespaced", metavar="true|false",
                                                                help="true: namespaced kinds only; false: cluster-scoped only."),
                      api_group: Optional[str] = typer.Option(None, "--api-group", help="Only this API group (\"\" for core)."),
                      output: Optional[str] = typer.Option(None, "-o", "--output", help="wide or name."),
                      no_headers: bool = typer.Option(False, "--no-headers"),
                      sort_by: Optional[str] = typer.Option(None, "--sort-by", help="name or kind.")):
        """Print the kinds karmactl knows (its own and those CRDs in the state directory define)."""
        if namespaced not in (None, "true", "false"):
            raise CLIError(f'invalid --namespaced "{namespaced}": must be true or false')
        api_resources_cmd(ctx.obj, None if namespaced is None else namespaced == "true", api_group, output,
                          no_headers, sort_by)

    @app.command("api-versions")
    def api_versions(ctx: typer.Context):
        """Print the API versions karmactl serves, as group/version."""
        api_versions_cmd(ctx.obj)

    def make(what: str, doc: str):
        def command(ctx: typer.Context,
                    args: List[str] = typer.Argument(..., metavar="TYPE NAME | TYPE/NAME... KEY=VALUE... KEY-..."),
                    namespace: str = typer.Option("default", "-n", "--namespace"),
                    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="With --all or -l: every namespace."),
                    overwrite: bool = typer.Option(False, "--overwrite", help="Replace keys that already have a value."),
                    all_objects: bool = typer.Option(False, "--all", help="Every object of the type (in the namespace)."),
                    selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Objects matching a label selector."),
                    dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change.")):
            meta_cmd(ctx.obj, what, args, namespace, overwrite, all_objects, selector, dry_run, all_namespaces)
        command.__doc__ = doc
        return command

    app.command("label")(make("label", "Update the labels of objects in the state directory (kubectl label)."))
    app.command("annotate")(make("annotation", "Update the annotations of objects in the state directory (kubectl annotate)."))
