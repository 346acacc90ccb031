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
from contextlib import nullcontext
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
        raise CLIError("--output must be 'yaml' or 'json'")
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
        raise CLIError('--sort-by accepts only name or kind')
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


# ---------------------------------------------------------------------------- patch
def patch_cmd(c: Context, args: list[str], namespace: str, patch: Optional[str], patch_file: Optional[str],
              patch_type: str, dry_run: bool, output: Optional[str]) -> None:
    """kubectl's ``patch``: a strategic merge (default), JSON merge (RFC 7386) or JSON (RFC 6902) patch
    applied to the object in its file (comments on untouched fields kept), then validated as ``apply``
    validates. Patch semantics are the emulator's (:mod:`karmactl.emulator.patching`).

    Raises:
        CLIError: no or malformed patch, a patch that fails or changes the object's identity, an invalid
            result (exit 2); the object not found (exit 1).
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.emulator.patching import PatchError, json_patch, merge_patch, strategic_merge
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import Source, StateStore

    if patch_type not in ("strategic", "merge", "json"):
        raise CLIError(f'--type must be one of [json merge strategic], not "{patch_type}"')
    if bool(patch) == bool(patch_file):
        raise CLIError("must specify exactly one of --patch (-p) or --patch-file")
    text = patch
    if patch_file:
        try:
            with open(patch_file, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise CLIError(f"cannot read --patch-file {patch_file}: {exc.strerror}") from None
    from karmactl.store import yamlio
    try:
        docs = [d for d, _line in yamlio.load_all(text)]
    except Exception as exc:  # noqa: BLE001 - YAML and JSON errors alike
        raise CLIError(f"unable to parse the patch: {exc}") from None
    if len(docs) != 1 or not isinstance(docs[0], (dict, list)):
        raise CLIError("unable to parse the patch: expected one JSON or YAML map (a list for --type json)")
    body = docs[0]
    with state_lock(c.state) if not dry_run else nullcontext():
        store = StateStore(c.state)
        index = edit.index_user_objects(store)
        targets, missing = select_targets(store, index, args, namespace, False, None, False, "patched")
        for info, n in missing:
            raise CLIError(f'Error from server (NotFound): {info.resource_ref} "{n}" not found', ExitCode.NOT_FOUND)
        for info, key, src in targets:
            obj = read_object(store, src)
            try:
                if patch_type == "json":
                    new = json_patch(obj, body)
                elif patch_type == "merge":
                    new = merge_patch(obj, body)
                else:
                    new = strategic_merge(obj, body)
            except PatchError as exc:
                raise CLIError(f"{src.path}: {info.kind} {key[3]}: the patch cannot be applied: {exc}") from None
            if not isinstance(new, dict) or (new.get("apiVersion"), new.get("kind")) != (obj.get("apiVersion"), obj.get("kind")) \
                    or (new.get("metadata") or {}).get("name") != key[3] \
                    or ((new.get("metadata") or {}).get("namespace") or "") != ((obj.get("metadata") or {}).get("namespace") or ""):
                raise CLIError(f"{src.path}: {info.kind} {key[3]}: a patch cannot change apiVersion, kind, name or namespace")
            normalize_object(new, Source(src.path, src.index, src.line), store.registry, strict=True)  # validate; store as patched
            changed = new != obj
            if not dry_run and changed:
                edit.replace_object(store, src, new)
            _print_one(c, info, new, output, f"{kind_prefix(info)}/{key[3]} patched{'' if changed else ' (no change)'}"
                                             f"{' (dry run)' if dry_run else ''}")


def _print_one(c: Context, info, obj: dict, output: Optional[str], message: str) -> None:
    """The object in an ``-o`` format, else kubectl's one-line ``message``.

    Raises:
        CLIError: an unknown format or bad template (exit 2).
    """
    from karmactl.cli.printers import render

    if not output:
        out(message)
        return
    try:
        sys.stdout.write(render([(info, obj)], output, c.now, single=True))
    except ValueError as exc:
        raise CLIError(str(exc)) from None


# ---------------------------------------------------------------------------- create
def _from_sources(literals: list[str], files: list[str], env_files: list[str], what: str) -> dict[str, str]:
    """kubectl's ``--from-literal k=v``, ``--from-file [key=]path`` (a directory: each regular file) and
    ``--from-env-file path`` (``KEY=VALUE`` lines) -> ``{key: text}``.

    Raises:
        CLIError: a malformed source, an unreadable file, a key given twice.
    """
    from pathlib import Path

    data: dict[str, str] = {}

    def put(k: str, v: str, origin: str) -> None:
        if not k:
            raise CLIError(f"{origin}: the key is empty")
        if k in data:
            raise CLIError(f'cannot add key "{k}", another key by that name already exists in {what}')
        data[k] = v

    for lit in literals:
        if "=" not in lit:
            raise CLIError(f'invalid --from-literal "{lit}": expected KEY=VALUE')
        k, v = lit.split("=", 1)
        put(k, v, f"--from-literal {lit}")
    for spec in files:
        key, _, path = spec.partition("=") if "=" in spec else ("", "", spec)
        p = Path(path)
        entries = sorted(f for f in p.iterdir() if f.is_file()) if p.is_dir() and not key else [p]
        for f in entries:
            try:
                put(key or f.name, f.read_text(encoding="utf-8"), f"--from-file {spec}")
            except (OSError, UnicodeDecodeError) as exc:
                raise CLIError(f"--from-file {spec}: cannot read {f}: {exc}") from None
    for path in env_files:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CLIError(f"--from-env-file {path}: {exc.strerror}") from None
        for n, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if "=" not in line:
                raise CLIError(f"--from-env-file {path}:{n}: expected KEY=VALUE")
            k, v = line.split("=", 1)
            put(k.strip(), v, f"--from-env-file {path}:{n}")
    return data


def generate(kind: str, name: str, namespace: str, literals=(), files=(), env_files=(), secret_type: str = "Opaque",
             image: Optional[str] = None, replicas: int = 1, port: Optional[int] = None) -> dict:
    """The object kubectl's ``create <kind>`` generators make: ``namespace``, ``configmap``,
    ``secret generic`` (values base64-encoded into ``data``), ``deployment`` (label ``app: NAME``, one
    container named after the image). Files are read as UTF-8 text.

    Raises:
        CLIError: bad sources or a missing ``--image``.
    """
    import base64

    meta = {"name": name}
    if kind == "namespace":
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
    meta["namespace"] = namespace
    if kind == "configmap":
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                "data": _from_sources(list(literals), list(files), list(env_files), "config map")}
    if kind == "secret":
        data = _from_sources(list(literals), list(files), list(env_files), "secret")
        return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": secret_type,
                "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}
    if kind == "deployment":
        if not image:
            raise CLIError("required flag(s) \"image\" not set")
        container = {"name": image.split("/")[-1].split(":")[0].split("@")[0], "image": image}
        if port is not None:
            container["ports"] = [{"containerPort": port}]
        labels = {"app": name}
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": dict(meta, labels=labels),
                "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}}}}
    raise CLIError(f'unknown generator "{kind}"')


def create_cmd(c: Context, obj: dict, dry_run: bool, output: Optional[str]) -> None:
    """Store a generated object at its canonical path (``apply``'s layout); an existing one is an error
    (kubectl ``create``). ``--dry-run -o yaml`` prints it without storing, kubectl's everyday idiom.

    Raises:
        CLIError: the object exists (exit 1), or it is invalid (exit 2).
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import Source, StateStore, key_of

    with state_lock(c.state) if not dry_run else nullcontext():
        store = StateStore(c.state)
        index = edit.index_user_objects(store) if c.state.is_dir() else {}
        info = store.registry.for_object(obj["apiVersion"], obj["kind"])
        normalize_object(obj, Source("<generated>", 0, 1), store.registry, strict=True)
        key = key_of(obj)
        if key in index:
            raise CLIError(f'Error from server (AlreadyExists): {info.resource_ref} "{key[3]}" already exists',
                           ExitCode.NOT_FOUND)
        if not dry_run:
            edit.append_new(store, info, obj)
            edit.stamp_creation(store, key, obj, c.now)
    _print_one(c, info, obj, output, f"{kind_prefix(info)}/{key[3]} created{' (dry run)' if dry_run else ''}")


# ---------------------------------------------------------------------------- edit
EDIT_HEADER = """# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
"""


def _editor() -> str:
    """``$KUBE_EDITOR``, else ``$EDITOR``, else ``vi`` (kubectl's order)."""
    import os
    return os.environ.get("KUBE_EDITOR") or os.environ.get("EDITOR") or "vi"


def edit_cmd(c: Context, args: list[str], namespace: str) -> None:
    """kubectl's ``edit``: the object as stored (its comments included) opens in the editor; the saved
    text is re-validated as ``apply`` validates and written back in place of the object's document in its
    file. On an error the file reopens with the error on top, as kubectl does; saving it unchanged (or
    empty) cancels.

    Raises:
        CLIError: not one object named (exit 2), the object not found (exit 1), the edit cancelled after
            an error (exit 1), the editor failing.
    """
    import os
    import subprocess
    import tempfile

    from karmactl.cli.printers import kind_prefix
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit, yamlio
    from karmactl.store.fsio import state_lock, write_atomic
    from karmactl.store.state import InputError, Source, StateStore

    with state_lock(c.state):
        store = StateStore(c.state)
        index = edit.index_user_objects(store)
        targets, missing = select_targets(store, index, args, namespace, False, None, False, "edited")
        for info, n in missing:
            raise CLIError(f'Error from server (NotFound): {info.resource_ref} "{n}" not found', ExitCode.NOT_FOUND)
        if len(targets) != 1:
            raise CLIError("edit takes one object: TYPE NAME or TYPE/NAME")
        info, key, src = targets[0]
        path = store.root / src.path
        docs = yamlio.round_trip_load_all(path.read_text(encoding="utf-8"))
        live = [i for i, d in enumerate(docs) if d is not None]
        original = yamlio.round_trip_dump_all([docs[live[src.index]]], False)
        text, error = original, None
        fd, tmp = tempfile.mkstemp(prefix=f"karmactl-edit-{key[3]}-", suffix=".yaml")
        os.close(fd)
        try:
            while True:
                shown = EDIT_HEADER + "".join(f"# {line}\n" for line in (error or "").splitlines()) + \
                    ("#\n" if error else "") + text
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(shown)
                if subprocess.call(f'{_editor()} "{tmp}"', shell=True) != 0:
                    raise CLIError(f"the editor ({_editor()}) exited with an error; nothing was changed")
                with open(tmp, encoding="utf-8") as fh:
                    saved = fh.read()
                prefix = shown[:len(shown) - len(text)]
                body = saved[len(prefix):] if saved.startswith(prefix) else _strip_header(saved)
                if error is not None and (not body.strip() or body == text):
                    raise CLIError("Edit cancelled, no valid changes were saved.", ExitCode.NOT_FOUND)
                if not body.strip():
                    out("Edit cancelled, no changes made.")
                    return
                if body == original:
                    out("Edit cancelled, no changes made.")
                    return
                text = body
                try:
                    parsed = [d for d, _line in yamlio.load_all(body)]
                    if len(parsed) != 1 or not isinstance(parsed[0], dict):
                        raise CLIError("the edited file must hold exactly one object")
                    new = parsed[0]
                    meta = new.get("metadata") if isinstance(new.get("metadata"), dict) else {}
                    if not (info.accepts(str(new.get("apiVersion"))) and new.get("kind") == info.kind
                            and meta.get("name") == key[3]
                            and (meta.get("namespace") or ("default" if info.namespaced else "")) == key[2]):
                        raise CLIError("apiVersion, kind, name and namespace cannot be changed by edit")
                    normalize_object(new, Source(src.path, src.index, src.line), store.registry, strict=True)
                except (CLIError, InputError, yamlio.YAMLSyntaxError) as exc:
                    error = f"{kind_prefix(info)} \"{key[3]}\" was not valid:\n* {exc}"
                    continue
                break
        finally:
            os.unlink(tmp)
        docs[live[src.index]] = yamlio.round_trip_load_all(text)[0]
        kept = [d for d in docs if d is not None]
        write_atomic(path, yamlio.round_trip_dump_all(kept, len(kept) > 1 or path.read_text().lstrip().startswith("---")))
        out(f"{kind_prefix(info)}/{key[3]} edited")


def _strip_header(saved: str) -> str:
    """The saved text without the leading comment block karmactl wrote (the object's own comments stay)."""
    lines = saved.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    return "".join(lines[i:])


# ---------------------------------------------------------------------------- promote
def policy_name(namespace: str, name: str, info) -> str:
    """karmadactl promote's generated policy name (``names.GeneratePolicyName``): ``<name>-<hash>``, the
    hash FNV-1a 32 of ``<namespace><group>/<version>, Kind=<kind>`` in decimal, safe-encoded, lowercased."""
    from karmactl.controllers.names import fnv1a_32, safe_encode

    gvk = f"{info.group}/{info.version}, Kind={info.kind}"
    return f"{name.replace(':', '.')}-{safe_encode(str(fnv1a_32((namespace + gvk).encode('utf-8'))))}".lower()


def promote_cmd(c: Context, kind: str, name: str, namespace: str, cluster: str, name_of_policy: Optional[str],
                auto_create_policy: bool, deps: bool, dry_run: bool, output: Optional[str]) -> None:
    """karmadactl's ``promote``: read an object that already runs on a member, write it into the state
    directory as a resource template (server fields pruned as Karmada's ``prune.RemoveIrrelevantFields``
    does, ``work.karmada.io/conflict-resolution: overwrite`` added) and, unless
    ``--auto-create-policy=false``, a (Cluster)PropagationPolicy placing it on that member with
    ``conflictResolution: Overwrite`` and ``preserveResourcesOnDeletion: true``, so the next reconcile
    takes the running object over instead of conflicting with it. Follows
    ``pkg/karmadactl/promote/promote.go``.

    Raises:
        CLIError: an unregistered cluster, an unreachable member, the object absent there, or the
            template or policy already in the state directory (exit 2); ``-o`` other than yaml/json.
    """
    from karmactl.api.constants import CONFLICT_RESOLUTION_ANNOTATION
    from karmactl.cli.commands import COMPUTED_KINDS, load_snapshot
    from karmactl.cli.kindnames import lookup_kind
    from karmactl.cli.members_view import MemberAccessError, MemberReader, resource_path
    from karmactl.cli.printers import render
    from karmactl.interpreter.prune import prune_manifest
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import Source, StateStore, key_of

    if output not in (None, "yaml", "json"):
        raise CLIError("invalid output format: supported formats are json and yaml")
    if not cluster:
        raise CLIError("the cluster cannot be empty")
    snap = load_snapshot(c)
    info = lookup_kind(snap.registry, kind)
    if info is None:
        raise CLIError(f'the server doesn\'t have a resource type "{kind}"')
    if info.karmada or (info.group, info.kind) in COMPUTED_KINDS:
        raise CLIError(f"{info.kind} is a Karmada kind: only workloads running on a member can be promoted")
    clusters = {k[3]: o for k, o in snap.user.items() if k[:2] == ("cluster.karmada.io", "Cluster")}
    if cluster not in clusters:
        raise CLIError(f'cluster "{cluster}" is not registered in the state directory (karmactl join)')
    ns = namespace if info.namespaced else ""
    try:
        reader = MemberReader(clusters[cluster], c.state)
    except MemberAccessError as exc:
        raise CLIError(f"cluster({cluster}): {exc}") from None
    try:
        obj = reader.get(resource_path(info, ns or None, name))
    except MemberAccessError as exc:
        if exc.status == 404:
            raise CLIError(f"the {kind} or {name} don't exist in cluster({cluster})") from None
        raise CLIError(f"cluster({cluster}): {exc}") from None
    finally:
        reader.close()
    obj.setdefault("apiVersion", info.api_version)
    obj.setdefault("kind", info.kind)
    template = prune_manifest(obj, remove_job_ttl=False)
    meta = template.setdefault("metadata", {})
    annotations = meta.get("annotations") or {}
    annotations.setdefault(CONFLICT_RESOLUTION_ANNOTATION, "overwrite")
    meta["annotations"] = annotations
    docs = [(info, template)]
    if auto_create_policy:
        pname = name_of_policy or policy_name(ns, name, info)
        pkind = "PropagationPolicy" if info.namespaced else "ClusterPropagationPolicy"
        policy = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": pkind,
                  "metadata": {"name": pname, **({"namespace": ns} if ns else {})},
                  "spec": {"propagateDeps": deps,
                           "resourceSelectors": [{"apiVersion": info.api_version, "kind": info.kind, "name": name}],
                           "placement": {"clusterAffinity": {"clusterNames": [cluster]}},
                           "conflictResolution": "Overwrite", "preserveResourcesOnDeletion": True}}
        docs.append((snap.registry.for_object(policy["apiVersion"], pkind), policy))
    if dry_run:
        for pinfo, o in docs:
            text = render([(pinfo, o)], output or "yaml", c.now, single=True)
            sys.stdout.write(text if output == "json" else "---\n" + text)
        return
    with state_lock(c.state):
        store = StateStore(c.state)
        index = edit.index_user_objects(store)
        for pinfo, o in docs:
            normalize_object(o, Source("<promoted>", 0, 1), store.registry, strict=True)
            if key_of(o) in index:
                if o is template:
                    raise CLIError(f'{info.resource_ref} "{name}" already exists in the state directory')
                where = f"{ns}/{o['metadata']['name']}" if ns else o["metadata"]["name"]
                raise CLIError(f"the {o['kind']}({where}) already exist, please edit it to propagate resource")
        for pinfo, o in docs:
            edit.append_new(store, pinfo, o)
            edit.stamp_creation(store, key_of(o), o, c.now)
    if auto_create_policy:
        where = f"{ns}/{docs[1][1]['metadata']['name']}" if ns else docs[1][1]["metadata"]["name"]
        out(f"{docs[1][1]['kind']} ({where}) is created successfully")
    gvr = f"{info.group}/{info.version}, Resource={info.plural}" if info.group else f"/{info.version}, Resource={info.plural}"
    out(f'Resource "{gvr}"({ns + "/" if ns else ""}{name}) is promoted successfully')


# ---------------------------------------------------------------------------- registration
def register(app: typer.Typer) -> None:
    """Add version, api-resources, api-versions, label, annotate, patch, create, edit, explain and promote."""

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

    @app.command()
    def patch(ctx: typer.Context,
              args: List[str] = typer.Argument(..., metavar="TYPE NAME | TYPE/NAME"),
              namespace: str = typer.Option("default", "-n", "--namespace"),
              patch_text: Optional[str] = typer.Option(None, "-p", "--patch", help="The patch (JSON or YAML)."),
              patch_file: Optional[str] = typer.Option(None, "--patch-file", help="A file holding the patch."),
              patch_type: str = typer.Option("strategic", "--type", help="strategic, merge or json."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change."),
              output: Optional[str] = typer.Option(None, "-o", "--output", help="Print the patched object (yaml, json...).")):
        """Update fields of an object in the state directory with a patch (kubectl patch)."""
        patch_cmd(ctx.obj, args, namespace, patch_text, patch_file, patch_type, dry_run, output)

    create_app = typer.Typer(no_args_is_help=True, help="Create an object in the state directory with kubectl's generators.")
    app.add_typer(create_app, name="create")
    create_secret = typer.Typer(no_args_is_help=True, help="Create a Secret.")
    create_app.add_typer(create_secret, name="secret")

    @create_app.command("namespace")
    def create_namespace(ctx: typer.Context, name: str = typer.Argument(...),
                         dry_run: bool = typer.Option(False, "--dry-run", help="Only print the object."),
                         output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml, json, name...")):
        """Create a Namespace (kubectl create namespace)."""
        create_cmd(ctx.obj, generate("namespace", name, ""), dry_run, output)

    @create_app.command("configmap")
    def create_configmap(ctx: typer.Context, name: str = typer.Argument(...),
                         namespace: str = typer.Option("default", "-n", "--namespace"),
                         from_literal: Optional[List[str]] = typer.Option(None, "--from-literal", help="KEY=VALUE (repeatable)."),
                         from_file: Optional[List[str]] = typer.Option(None, "--from-file", help="[KEY=]PATH, a file or directory (repeatable)."),
                         from_env_file: Optional[List[str]] = typer.Option(None, "--from-env-file", help="A file of KEY=VALUE lines (repeatable)."),
                         dry_run: bool = typer.Option(False, "--dry-run", help="Only print the object."),
                         output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml, json, name...")):
        """Create a ConfigMap from literals, files or env files (kubectl create configmap)."""
        create_cmd(ctx.obj, generate("configmap", name, namespace, from_literal or [], from_file or [],
                                     from_env_file or []), dry_run, output)

    @create_secret.command("generic")
    def create_secret_generic(ctx: typer.Context, name: str = typer.Argument(...),
                              namespace: str = typer.Option("default", "-n", "--namespace"),
                              from_literal: Optional[List[str]] = typer.Option(None, "--from-literal", help="KEY=VALUE (repeatable)."),
                              from_file: Optional[List[str]] = typer.Option(None, "--from-file", help="[KEY=]PATH (repeatable)."),
                              from_env_file: Optional[List[str]] = typer.Option(None, "--from-env-file", help="KEY=VALUE lines (repeatable)."),
                              secret_type: str = typer.Option("Opaque", "--type", help="The Secret's type."),
                              dry_run: bool = typer.Option(False, "--dry-run", help="Only print the object."),
                              output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml, json, name...")):
        """Create a generic Secret from literals, files or env files (kubectl create secret generic)."""
        create_cmd(ctx.obj, generate("secret", name, namespace, from_literal or [], from_file or [],
                                     from_env_file or [], secret_type), dry_run, output)

    @create_app.command("deployment")
    def create_deployment(ctx: typer.Context, name: str = typer.Argument(...),
                          namespace: str = typer.Option("default", "-n", "--namespace"),
                          image: Optional[str] = typer.Option(None, "--image", help="The container image (required)."),
                          replicas: int = typer.Option(1, "-r", "--replicas"),
                          port: Optional[int] = typer.Option(None, "--port", help="The container port."),
                          dry_run: bool = typer.Option(False, "--dry-run", help="Only print the object."),
                          output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml, json, name...")):
        """Create a Deployment running one image (kubectl create deployment)."""
        create_cmd(ctx.obj, generate("deployment", name, namespace, image=image, replicas=replicas, port=port),
                   dry_run, output)

    @app.command()
    def promote(ctx: typer.Context, kind: str = typer.Argument(..., metavar="TYPE"), name: str = typer.Argument(...),
                namespace: str = typer.Option("default", "-n", "--namespace"),
                cluster: str = typer.Option("", "-C", "--cluster", help="The member the object runs on (e.g. -C member1)."),
                policy_name_: Optional[str] = typer.Option(None, "--policy-name", help="Name of the policy to create (default: NAME-<hash>)."),
                auto_create_policy: bool = typer.Option(True, "--auto-create-policy/--no-auto-create-policy",
                                                        help="Also write a (Cluster)PropagationPolicy placing it on that member."),
                deps: bool = typer.Option(False, "-d", "--dependencies", help="Set propagateDeps on the policy."),
                dry_run: bool = typer.Option(False, "--dry-run", help="Print the template and policy; write nothing."),
                output: Optional[str] = typer.Option(None, "-o", "--output", help="json or yaml (with --dry-run).")):
        """Put an object already running on a member under management: its template and a policy (karmadactl promote)."""
        promote_cmd(ctx.obj, kind, name, namespace, cluster, policy_name_, auto_create_policy, deps, dry_run, output)

    @app.command()
    def explain(ctx: typer.Context, target: str = typer.Argument(..., metavar="TYPE[.FIELD...]",
                                                                 help="e.g. deploy.spec.replicas, pp.spec.placement"),
                recursive: bool = typer.Option(False, "--recursive", help="Every field, nested, names and types only.")):
        """Describe a kind's fields from its schema (kubectl explain)."""
        from karmactl.cli.explain import explain as explain_text
        from karmactl.cli.kindnames import lookup_kind

        registry = _registry(ctx.obj)
        parts = target.split(".")
        # the longest prefix that names a kind: deploy, deployments.apps, deployment.v1.apps
        for n in range(min(3, len(parts)), 0, -1):
            info = lookup_kind(registry, ".".join(parts[:n]))
            if info is not None:
                break
        else:
            raise CLIError(f'the server doesn\'t have a resource type "{parts[0]}"')
        sys.stdout.write(explain_text(info, parts[n:], recursive))

    @app.command()
    def edit(ctx: typer.Context, args: List[str] = typer.Argument(..., metavar="TYPE NAME | TYPE/NAME"),
             namespace: str = typer.Option("default", "-n", "--namespace")):
        """Edit an object of the state directory in $KUBE_EDITOR or $EDITOR (kubectl edit); comments are kept."""
        edit_cmd(ctx.obj, args, namespace)

    app.command("label")(make("label", "Update the labels of objects in the state directory (kubectl label)."))
    app.command("annotate")(make("annotation", "Update the annotations of objects in the state directory (kubectl annotate)."))
