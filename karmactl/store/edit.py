"""Edits of user-written files: ``apply`` (create or update in place) and ``delete``.

An object that already lives in a file is updated in that file with ruamel.yaml's round-trip
mode, changing only the lines that differ: the file's comments, ordering, quoting and indentation
survive (DESIGN §4, :mod:`karmactl.store.rewrite`), and an unchanged object leaves its file
untouched. A new object goes to a canonical path: ``<plural>/<namespace>/<name>.yaml`` or
``<plural>/<name>.yaml``, with ``namespace: default`` only where the user wrote it.
"""
from __future__ import annotations

from pathlib import Path

from karmactl.api.kinds import KindInfo
from karmactl.store import yamlio
from karmactl.store.fsio import OutsideStateError, check_inside, read_text, remove_file, write_atomic
from karmactl.store.state import InputError, Key, Source, StateStore, path_part


def canonical_path(store: StateStore, info: KindInfo, namespace: str, name: str) -> Path:
    """Where ``apply`` puts a new object: ``<plural>/[<namespace>/]<name>.yaml`` under the state
    directory, each part checked to stay inside it (:func:`~karmactl.store.objects.path_part`).

    Raises:
        InputError: a plural, namespace or name that would leave the state directory.
    """
    base = store.root / path_part(info.plural, "spec.names.plural")
    file = path_part(name, "metadata.name", ".yaml")
    path = base / path_part(namespace, "metadata.namespace") / file if namespace else base / file
    _inside(store, path)
    return path


def _inside(store: StateStore, path: Path) -> None:
    try:
        check_inside(store.root, path)
    except OutsideStateError as exc:
        raise InputError(str(exc), store.rel(path)) from None


def update_in_place(node, new, read=None):
    """Make a ruamel node equal to ``new``, changing only what differs: entries that stay keep
    their comments, a value equal to ``new`` is kept as written, and a changed string keeps the
    quoting or block style of the one it replaces (``"1.0"`` -> ``"1.1"``, ``|`` stays ``|``).

    ``read`` is ``node`` as every other path reads it (:func:`_as_read`: Kubernetes' YAML 1.1
    scalars), compared with ``new``; None when unknown. Returns the node to store (``node``
    itself when it could be updated in place).
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import ScalarString

    if read is not None and read == new:
        return node
    if isinstance(node, CommentedMap) and isinstance(new, dict):
        read = read if isinstance(read, dict) else {}
        for k in [k for k in node if k not in new]:
            del node[k]
        for k, v in new.items():
            node[k] = update_in_place(node[k], v, read.get(k)) if k in node else v
        return node
    if isinstance(node, CommentedSeq) and isinstance(new, list):
        read = read if isinstance(read, list) and len(read) == len(node) else [None] * len(node)
        for i, v in enumerate(new):
            if i < len(node):
                node[i] = update_in_place(node[i], v, read[i])
            else:
                node.append(v)
        del node[len(new):]
        return node
    if isinstance(node, ScalarString) and isinstance(new, str):
        return type(node)(new)
    return new


def _plain(node):
    """ruamel round-trip nodes compared as plain data."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _as_read(node) -> object:
    """A ruamel round-trip node as every other path reads it (:func:`karmactl.store.yamlio.load_all`,
    Kubernetes' YAML 1.1 scalars), to compare with a parsed object: its rendering read back by
    PyYAML, so ruamel's own types (``ScalarFloat``, ``OctalInt``, quoted strings) compare as values."""
    from karmactl.store.rewrite import dump_docs

    return yamlio.load_all(dump_docs([node], (2, 2, 0), False))[0][0]


def _as_written(doc, new: dict) -> dict:
    """``new`` with the file's way of naming the default namespace: an object whose file leaves
    ``metadata.namespace`` out lives in ``default`` (:func:`karmactl.store.objects.check_object`
    fills it in when reading), so ``namespace: default`` is not added to it; nor is it removed
    where the file writes it."""
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    return as_written(new, not isinstance(meta, dict) or "namespace" in meta)


def _load(store: StateStore, source: Source):
    """(path, :class:`~karmactl.store.rewrite.UserFile`, the object's document) of ``source``."""
    from karmactl.store.rewrite import UserFile

    path = store.root / source.path
    _inside(store, path)
    text = read_text(path, keep_line_ends=True)
    try:
        file = UserFile(text)
    except Exception as exc:  # noqa: BLE001 - ruamel's errors have no common base worth naming
        raise InputError(f"cannot edit the file: {exc}", source.path, source.line) from None
    return path, file, file.live[source.index]


def _index(file, doc) -> int:
    return next(i for i, d in enumerate(file.docs) if d is doc)


def _scalar_changes(old, new, path: tuple, acc: list) -> bool:
    """Collect ``(path, value)`` for every scalar of ``old`` that ``new`` changes; False when ``new``
    differs otherwise (a key or item added or removed, a scalar becoming a map...)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return list(old) == list(new) and all(_scalar_changes(old[k], new[k], path + (k,), acc) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_scalar_changes(o, n, path + (i,), acc) for i, (o, n) in enumerate(zip(old, new)))
    if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        return False
    if old != new or type(old) is not type(new):
        acc.append((path, new))
    return True


def _scalar_text(value, style: str | None) -> str | None:
    """``value`` written as a YAML scalar in the ``style`` of the one it replaces (None: not written so)."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if not isinstance(value, str) or "\n" in value:
        return None
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style == '"':
        return json.dumps(value)
    return value if style is None else None


def _splice_scalars(text: str, index: int, old: dict, new: dict) -> str | None:
    """``text`` with only the scalars that differ between ``old`` and ``new`` (the ``index``-th object
    of the file) rewritten in place, each in its own quoting, every other byte kept; None when ``new``
    changes more than scalars or the result would not read back as exactly ``new``."""
    import yaml

    changes: list = []
    if not _scalar_changes(old, new, (), changes) or not changes:
        return None
    try:
        nodes = [n for n in yaml.compose_all(text, Loader=yaml.SafeLoader) if isinstance(n, yaml.MappingNode)]
        before = [d for d, _line in yamlio.load_all(text)]
    except (yaml.YAMLError, yamlio.YAMLSyntaxError):
        return None
    if len(nodes) != len(before) or index >= len(nodes):
        return None
    spans = []
    for path, value in changes:
        node = nodes[index]
        for part in path:
            if isinstance(node, yaml.MappingNode):
                node = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                node = node.value[part]
            else:
                return None
        written = _scalar_text(value, node.style) if isinstance(node, yaml.ScalarNode) else None
        if written is None:
            return None
        spans.append((node.start_mark.index, node.end_mark.index, written))
    out = text
    for start, end, written in sorted(spans, reverse=True):
        out = out[:start] + written + out[end:]
    try:
        after = [d for d, _line in yamlio.load_all(out)]
    except yamlio.YAMLSyntaxError:
        return None
    return out if after == before[:index] + [new] + before[index + 1:] else None


def replace_object(store: StateStore, source: Source, new: dict, dry_run: bool = False) -> bool:
    """Replace the object at ``source`` with ``new`` in its file, changing only the lines that
    differ: when only scalars change, only their text (:func:`_splice_scalars`, every other byte
    kept, comment columns included), else through :mod:`karmactl.store.rewrite`; returns False, and leaves the file untouched, when the
    object is unchanged. With ``dry_run`` only says whether it would change.

    Raises:
        InputError: the file left the state directory or no longer parses.
    """
    path, file, doc = _load(store, source)
    new = _as_written(doc, new)
    read = _as_read(doc)
    if read == new:
        return False
    if not dry_run:
        # only scalars changed (scale, set image, most patches): their text alone, byte for byte
        spliced = _splice_scalars(file.original, source.index, read, new) if not file.crlf else None
        if spliced is not None:
            write_atomic(path, spliced)
            return True
        idx = _index(file, doc)
        file.docs[idx] = update_in_place(doc, new, read)
        write_atomic(path, file.render())
    return True


def replace_document(store: StateStore, source: Source, node) -> bool:
    """Put the round-trip document ``node`` (``edit``'s saved text, parsed by ruamel) in place of
    the object at ``source``; only the lines that differ change. Returns False when the file
    would not change."""
    path, file, doc = _load(store, source)
    file.docs[_index(file, doc)] = node
    text = file.render(keep_comments=False)
    if text == file.original:
        return False
    write_atomic(path, text)
    return True


def as_written(obj: dict, wrote_namespace: bool) -> dict:
    """A new object as it goes into a file: ``metadata.namespace: default`` only when the user
    wrote it (``-n default``, or in the applied file); the default namespace is implied."""
    meta = obj.get("metadata")
    if wrote_namespace or not isinstance(meta, dict) or meta.get("namespace") != "default":
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "namespace"}}


def append_new(store: StateStore, info: KindInfo, obj: dict, wrote_namespace: bool = True) -> Path:
    """Write a new object at its canonical path (appending a document, in the file's own style,
    if that file exists); ``wrote_namespace`` as for :func:`as_written`."""
    from karmactl.store.rewrite import UserFile

    m = obj["metadata"]
    path = canonical_path(store, info, m.get("namespace") or "" if info.namespaced else "", m["name"])
    obj = as_written(obj, wrote_namespace)
    if path.exists():
        text = read_text(path)
        try:
            added = UserFile(text).style_dump(obj)
        except Exception:  # noqa: BLE001 - an unparsable file: append in the default style
            added = yamlio.dump_all([obj])
        write_atomic(path, text + ("" if text.endswith("\n") or not text else "\n") + added)
    else:
        write_atomic(path, yamlio.dump(obj))
    return path


def remove_object(store: StateStore, source: Source) -> None:
    """Remove the object at ``source`` from its file (only its lines go); the file goes when
    nothing is left in it."""
    path, file, doc = _load(store, source)
    file.docs[_index(file, doc)] = None
    if not file.live:
        remove_file(path, store.root)
    else:
        write_atomic(path, file.render(keep_comments=False))  # the document's own comments go with it


def stamp_creation(store: StateStore, key: Key, obj: dict, now: str) -> bool:
    """Record ``metadata.creationTimestamp`` = ``now`` for an object stored for the first time, in
    its computed overlay (``computed/status/...``, merged by ``get``; the detector keeps it for
    templates), as the API server stamps an object on create: so every kind shows an AGE, and a
    file stays free of server fields. Returns False (and writes nothing) when the object already
    has an overlay."""
    from karmactl.store.computed import dump_computed

    path = store.computed_path(key)
    if path.exists():
        return False
    meta = {"name": key[3], **({"namespace": key[2]} if key[2] else {}), "creationTimestamp": now}
    overlay = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": meta}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, dump_computed(overlay))
    return True


def remove_overlay(store: StateStore, key: Key) -> None:
    """Remove the computed status and metadata of a deleted user object
    (``computed/status/<resource>/[<namespace>/]<name>.json``), as the API server deletes an object
    with its status: an object re-created under the same name starts afresh (a new
    ``creationTimestamp``, no stale status). Bindings and Works are the next run's to remove."""
    remove_file(store.computed_path(key), store.root)


def index_user_objects(store: StateStore) -> dict[Key, Source]:
    """Key -> Source of every user object (parsed, not validated), for the editing commands
    (apply, delete, label, annotate, patch, suspend, create...).

    Every CustomResourceDefinition of the state directory is registered before any object is
    checked, so an object of a CRD-backed kind is known whatever the order of the files
    (``clonesets/`` sorts before ``customresourcedefinitions/``).

    Raises:
        InputError: unreadable file, malformed YAML, or an object of an unknown kind (file and
            line named).
    """
    from karmactl.store.state import check_object, key_of

    documents = []
    for path in store.user_files():
        rel = store.rel(path)
        docs = store.read_documents(path, rel)
        documents.append((rel, docs))
        for obj, _i, _line in docs:
            if obj.get("kind") == "CustomResourceDefinition":
                store.registry.add_crd(obj)
    index: dict[Key, Source] = {}
    for rel, docs in documents:
        for obj, i, line in docs:
            check_object(obj, store.registry, rel, line)
            index.setdefault(key_of(obj), Source(rel, i, line))
    return index


def edit_object(store: StateStore, source: Source, mutate) -> bool:
    """Edit one object in its own file with ``mutate(node)`` on the ruamel round-trip node.

    Only the lines ``mutate`` changes differ afterwards (:mod:`karmactl.store.rewrite`). Returns
    False (and leaves the file untouched) when the object did not change.
    """
    path, file, doc = _load(store, source)
    before = _plain(doc)
    mutate(doc)
    if _plain(doc) == before:
        return False
    write_atomic(path, file.render())
    return True
