"""The state directory: loading user-written and computed objects, and writing computed ones.

Layout (DESIGN §4)::

    <state>/                    any *.yaml / *.yml files, any layout, multi-document: what people write
    <state>/computed/           karmactl's own tree, one object per file, stable paths:
        resourcebindings/<namespace>/<name>.json
        clusterresourcebindings/<name>.json
        works/<karmada-es-cluster>/<name>.json
        status/<resource>[.<group>]/[<namespace>/]<name>.json    computed metadata + status of a
                                                                 user-written object ("overlay")
    <state>/.karmactl/          runtime data, never tracked: lock, parse cache, local members

User files are never rewritten by a run; ``apply``/``delete`` edit them on request.

Computed objects are written as indented JSON (a subset of YAML, accepted by kubectl and Karmada):
one key per line diffs well in git, and the C ``json`` codec reads and writes it about ten times
faster than YAML, which is what keeps a 10,000-binding run close to the cost of parsing its input.
User files are YAML (``.yaml``/``.yml``) or JSON (``.json``).

Parsing user files is the hot path of every run, so ``.karmactl/cache/parsed.json`` keeps each
file's validated objects keyed by its (mtime, size, inode): an unchanged file is not parsed again.

:class:`StateStore` composes the modules of what each step does: ``scan.py`` (which files a load
reads), ``parse_cache.py`` (the parse cache), ``parsing.py`` (parsing many files, in forked
workers from ``PARALLEL_PARSE_MIN_FILES`` on), ``documents.py`` (one file's text into documents),
``objects.py`` (:class:`InputError`, keys, the checks every object needs), ``notes.py`` (what a
load left out), ``computed.py`` (one computed file: its directory, reading, serializing).
"""
from __future__ import annotations

import os
from pathlib import Path

from karmactl.api.kinds import KindRegistry, crd_kind
from karmactl.api.objects import describe_key
from karmactl.api.snapshot import Snapshot
from karmactl.store import computed, notes, parse_cache, scan
from karmactl.store.documents import read_documents
from karmactl.store.fsio import TreeWriter, check_inside, ensure_runtime_dir
from karmactl.store.objects import COMPUTED_KINDS, InputError, Key, Source, check_object, key_of, path_part
from karmactl.store.parse_cache import crds_of, file_signature, fingerprint
from karmactl.store.parsing import parse_many
from karmactl.store.scan import computed_order, quote_path, scan_computed

# the names other modules import from here, each defined in the module of what it does
from karmactl.store.computed import change_list, dump_computed  # noqa: E402,F401
from karmactl.store.documents import parse_documents  # noqa: E402,F401
from karmactl.store.notes import notes_silenced  # noqa: E402,F401
from karmactl.store.parse_cache import validation_tag  # noqa: E402,F401
from karmactl.store.scan import COMPUTED_DIR, RUNTIME_DIR, computed_map, scan_computed_dirs  # noqa: E402,F401


class StateStore:
    """Reads and writes one state directory.

    Args:
        root: the state directory (created on first write).
        registry: kinds to accept; defaults to the built-in registry plus CRDs found in the files.
    """

    def __init__(self, root: Path | str, registry: KindRegistry | None = None):
        self.root = Path(root)
        self.registry = registry or KindRegistry.default()
        self._computed_dirs: dict = {}
        self._root_prefix = str(self.root).rstrip("/") + "/"
        self.loaded_signatures: dict = {}  # relative path -> [mtime_ns, size, inode] of the last load

    # ------------------------------------------------------------------ reading
    def user_files(self) -> list[Path]:
        """Every ``*.yaml``/``*.yml``/``*.json`` file outside karmactl's own trees, sorted (see
        :meth:`user_file_names`)."""
        return [Path(name) for name in self.user_file_names()]

    def user_file_names(self) -> list[str]:
        """The paths of :meth:`user_files` as strings (the state directory's path joined with the
        file's), sorted by their parts: an unchanged incremental run stats 20,000 of them, and
        building a ``Path`` for each cost about a quarter of it.

        Raises:
            InputError: a symlinked file leads outside the state directory, or ``.karmactlignore``
                cannot be read.
        """
        found = [(f"{d}/{entry.name}" if d else entry.name) for d, entries in self.scan_user_dirs() for entry in entries]
        found.sort(key=lambda rel: rel.split("/"))  # Path's order (by parts), without building Paths
        return [self._root_prefix + rel for rel in found]

    def scan_user_dirs(self):
        """Yield ``(directory, [os.DirEntry])`` for every directory the files of :meth:`user_files`
        are looked for in (:func:`karmactl.store.scan.scan_user_dirs`).

        Raises:
            InputError: a symlinked file leads outside the state directory, or ``.karmactlignore``
                cannot be read.
        """
        return scan.scan_user_dirs(self.root)

    def ignore_spec(self):
        """The patterns of ``<state>/.karmactlignore`` (:func:`karmactl.store.scan.ignore_spec`).

        Raises:
            InputError: the file cannot be read, or a pattern is invalid.
            OSError: an environment error (permission...) naming the file.
        """
        return scan.ignore_spec(self.root)

    def computed_files(self) -> list[Path]:
        """Every file a load reads under ``computed/`` (see :func:`scan_computed`), sorted
        (:func:`computed_order`)."""
        return [self.root / rel for rel in self.computed_rels()]

    def computed_rels(self) -> list[str]:
        """The relative paths of :meth:`computed_files`, in the same order."""
        return sorted((rel for rel, _entry in scan_computed(self.root)), key=computed_order)

    def rel(self, path: Path | str) -> str:
        """``path`` (a ``Path``, or a string such as :meth:`user_file_names` gives) relative to the
        state directory (as given when outside it)."""
        text, root = str(path), self._root_prefix
        if text.startswith(root):
            return text[len(root):]
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return text

    def read_documents(self, path: Path, display: str | None = None,
                       skipped: list | None = None) -> list[tuple[dict, int, int]]:
        """``[(object, document_index, line)]`` of one file; ``List`` documents are expanded.

        Documents that are not Kubernetes objects (see :func:`~karmactl.store.documents.not_an_object`: a Helm
        ``Chart.yaml``, a ``config.json``) are left out, and described in ``skipped``
        (``"file:line: reason"``) when a list is given.

        Raises:
            InputError: unreadable file, malformed YAML, or a document that is not an object.
        """
        display = display or self.rel(path)
        return read_documents(path, display, skipped if skipped is not None else [])

    @property
    def cache_path(self) -> Path:
        """``.karmactl/cache/parsed.json`` (:mod:`karmactl.store.parse_cache`)."""
        return parse_cache.cache_path(self.root)

    def check_document(self, obj: dict, index: int, line: int, rel: str, normalize=None) -> dict:
        """Check one user object (apiVersion, kind, name; not a computed kind) and normalize it.

        Raises:
            InputError: naming the file, line, object and field.
        """
        info = check_object(obj, self.registry, rel, line)
        if (info.group, info.kind) in COMPUTED_KINDS:
            raise InputError(f"{info.kind} objects are computed by karmactl and cannot be written by hand",
                             rel, line, describe_key(key_of(obj)))
        if normalize is not None:
            obj = normalize(obj, Source(rel, index, line))
        return obj

    def load(self, normalize=None, normalize_tag: str = "", layout=None, computed: bool = True) -> Snapshot:
        """Load the whole state directory.

        Args:
            normalize: optional ``f(obj, source) -> obj`` applied to every user object (alias
                normalisation, defaulting and validation live in the caller's layer); it raises
                :class:`InputError` for invalid objects.
            normalize_tag: identifies ``normalize``'s behaviour (e.g. karmactl's version); cached
                results made under another tag, or under other CRDs, are not used.
            layout: optional ``f(obj) -> int``, a memory group per object: objects parsed by the
                worker processes are built in the parent group by group, so that a forked process
                that later drops the objects of a group frees whole pages
                (``incremental/shards.py: layout_group``). It changes nothing else.
            computed: False to read the user files only; the caller then reads the computed files
                with :meth:`read_computed` (a sharded run reads some of them per shard).

        Raises:
            InputError: malformed files, unknown kinds, objects without name, invalid fields (all
                of them, of every file), duplicate keys; a damaged computed file
                (:meth:`read_computed`); a file name that is not UTF-8 (:func:`check_file_name`).
            RuntimeDirError: ``.karmactl`` is a symlink or tracked by git (``fsio.check_runtime_dir``).
            StateLockedError: a commit under way did not end in time (``fsio.read_lock``).
            OSError: an environment error (permission, I/O...), naming the path.
        """
        from karmactl.store.fsio import flush_batch, read_lock

        flush_batch()  # writes of this command so far, before reading the directory back
        # a consistent tree: no commit under way, a killed writer's journal finished (fsio.read_lock)
        read_lock(self.root)
        # files by their path relative to the state directory (strings: no Path per file)
        names = {self.rel(name): name for name in self.user_file_names()}
        cache = parse_cache.read_cache(self.root, normalize_tag)
        builtin_kinds = set(self.registry.group_kinds())
        parsed, errors = self._parse_changed(names, cache, normalize, layout)
        files = [rel for rel in names if rel in parsed]
        # CRDs first, so custom resources in any file are known.
        crds = [obj for rel in files for obj in crds_of(item[0] for item in parsed[rel].get("raw") or
                                                         parsed[rel].get("objs") or [])]
        for crd in crds:
            self.registry.add_crd(crd)
        crd_tag = fingerprint(crds)
        # a CRD that redefines a built-in kind makes the workers' checks of that kind stale
        shadowed = any(found is not None and (found[0], found[1]) in builtin_kinds for found in map(crd_kind, crds))
        snap = Snapshot(self.registry)
        new_cache: dict = {}
        dirty = len(cache) != len(files)
        for rel in files:
            entry = parsed[rel]
            if "objs" in entry and entry.get("crds") == crd_tag:
                new_cache[rel] = entry
            else:
                dirty = True
                new_cache[rel] = self._checked_entry(rel, names[rel], entry, crd_tag, shadowed, normalize, errors)
            for note in new_cache[rel].get("skipped") or ():
                notes.note(f"ignoring {note}")
            self._add_user_objects(snap, rel, new_cache[rel]["objs"], errors)
        if errors:
            raise InputError.several(errors)
        # what each file was when read (the run index, karmactl/incremental/runindex.py, records it)
        self.loaded_signatures = {rel: parsed[rel]["sig"] for rel in files}
        if dirty and self.root.is_dir():
            # the cache is written as parsed (not the caller's later mutations): serialize now
            parse_cache.write_cache(self.root, normalize_tag, new_cache)
            # hand out fresh copies so callers may not alias cached data
        if computed:
            self.read_computed(snap)
        return snap

    def _parse_changed(self, names: dict, cache: dict, normalize, layout) -> tuple:
        """``(parsed, errors)``: ``{rel: cache entry}`` of every user file, from the parse cache
        when its signature matches, else parsed now (``{"sig", "raw", "skipped"}``, see
        :func:`~karmactl.store.parsing.parse_many`); a file that failed is left out, its :class:`InputError` in ``errors``."""
        parsed: dict[str, dict] = {}
        missed = []
        for rel, name in names.items():
            hit = cache.get(rel)
            if hit is not None and hit.get("sig") == file_signature(name):
                parsed[rel] = hit
            else:
                missed.append(rel)
        results, errors = parse_many(self, [names[rel] for rel in missed], normalize, layout)
        for rel, result in zip(missed, results):
            if result is None:  # reported in errors; the other files are still checked
                continue
            sig, docs, skipped = result
            parsed[rel] = {"sig": sig, "raw": docs, "skipped": skipped}
        return parsed, errors

    def _checked_entry(self, rel: str, name: str, entry: dict, crd_tag: str, shadowed: bool, normalize,
                       errors: list) -> dict:
        """The parse cache entry of one file whose objects are checked now (parsed again when the
        workers' checks are stale); each bad object's :class:`InputError` goes to ``errors``."""
        raw, skipped = entry.get("raw"), entry.get("skipped") or []
        if not raw or shadowed:
            skipped = []
            raw = [[o, i, ln, False] for o, i, ln in self.read_documents(Path(name), rel, skipped)]
        objs = []
        for obj, index, line, checked in raw:
            try:
                objs.append([obj if checked else self.check_document(obj, index, line, rel, normalize), index, line])
            except InputError as exc:  # every bad object of every file is reported
                errors.append(exc)
        out = {"sig": entry["sig"], "crds": crd_tag, "objs": objs}
        if skipped:
            out["skipped"] = skipped
        return out

    @staticmethod
    def _add_user_objects(snap: Snapshot, rel: str, objs: list, errors: list) -> None:
        """One file's checked objects ``[[object, index, line]]`` into ``snap.user``; a duplicate
        key's :class:`InputError` goes to ``errors``."""
        for obj, index, line in objs:
            key = key_of(obj)
            if key in snap.user:
                other = snap.sources[key]
                errors.append(InputError(f"duplicate object: also defined in {other.path}:{other.line}",
                                         rel, line, describe_key(key)))
                continue
            snap.user[key] = obj
            snap.sources[key] = Source(rel, index, line)

    def read_computed(self, snap: Snapshot, rels=None, skip=None) -> list[str]:
        """Put the objects of computed files into ``snap`` (bindings, Works, overlays), checked
        as :meth:`load` checks them.

        Args:
            snap: the snapshot to fill (its maps get the objects in the order read).
            rels: relative paths of the files to read, in that order; None for every file a load
                reads (:func:`~karmactl.store.scan.scan_computed`), in :meth:`computed_files` order.
            skip: optional ``f(relative path) -> bool``: the files it accepts are not read.

        Returns:
            The relative paths skipped, in the order they came.

        Raises:
            InputError: the first file (in that order) that is unreadable, not one object, or not
                at the path its key names.
        """
        skipped = []
        if rels is None:
            rels = self.computed_rels()
        root = self._root_prefix
        for rel in rels:
            if skip is not None and skip(rel):
                skipped.append(rel)
            else:
                self._add_computed(snap, root + rel)
        return skipped

    def _add_computed(self, snap: Snapshot, path: Path | str) -> None:
        """Put the object of one computed file into ``snap`` (binding, Work or overlay).

        Raises:
            InputError: unreadable, not one object, or not at the path its key names.
        """
        rel = self.rel(path)
        if not rel.isascii():
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:  # named as git names it (octal escapes): never a computed path
                rel = quote_path(rel)
        obj = computed.read_computed_object(path, rel)
        key = key_of(obj)
        try:
            where = self.computed_rel(key)
        except InputError:
            where = None
        if where != rel:
            raise InputError("this computed file does not hold the object its path names (placed by hand? "
                             "delete it to recompute)", rel, None, describe_key(key))
        if (key[0], key[1]) in COMPUTED_KINDS:
            (snap.works if key[1] == "Work" else snap.bindings)[key] = obj
        else:
            snap.overlays[key] = obj

    def load_cached(self, normalize_tag: str, kinds_of) -> Snapshot | None:
        """The part of the state directory that reading some kinds needs (``get``, ``describe``),
        from the parse cache alone, or None when the cache cannot answer.

        Answers only when the cache was written under ``normalize_tag`` by a load of exactly the
        current user files (same relative paths and signatures, the same CRDs), that is by a load
        that found every object valid; then the result holds every user object as :meth:`load`
        would, the CRDs registered, and the computed files of only what ``kinds_of(registry) ->
        iterable of (group, kind) or (group, kind, namespace, name)`` names (every object of a
        kind, or one object), plus Clusters' (``describe`` reads them) and, when Namespaces are
        asked for, every computed file (the Namespaces a control plane implies come from bindings
        and Works). Otherwise (a file added, removed or
        changed, another tag, a batch to replay, no cache) None: the caller calls :meth:`load`,
        which parses, checks and reports. Nothing is written.

        Raises:
            InputError: a computed file read is unreadable or misplaced (as :meth:`load`).
            RuntimeDirError, StateLockedError, OSError: as :meth:`load`.
            whatever ``kinds_of`` raises (it sees the registry with the CRDs).
        """
        from karmactl.store.fsio import flush_batch, pending_journal, read_lock

        flush_batch()
        read_lock(self.root)
        if pending_journal(self.root):
            return None
        entries = self._cache_as_files(parse_cache.read_cache(self.root, normalize_tag))
        if entries is None:
            return None
        crds = [obj for _rel, entry in entries for obj in crds_of(o[0] for o in entry["objs"])]
        crd_tag = fingerprint(crds)
        if any(entry.get("crds") != crd_tag for _rel, entry in entries):
            return None
        for crd in crds:
            self.registry.add_crd(crd)
        snap = Snapshot(self.registry)
        for rel, entry in entries:
            for note in entry.get("skipped") or ():
                notes.note(f"ignoring {note}")
            for obj, index, line in entry["objs"]:
                key = key_of(obj)
                if key in snap.user:  # never in a cache a successful load wrote; let load report it
                    return None
                snap.user[key] = obj
                snap.sources[key] = Source(rel, index, line)
        wanted = {tuple(w) for w in kinds_of(self.registry)} | {("cluster.karmada.io", "Cluster")}
        for path in self._computed_paths_of(wanted):
            self._add_computed(snap, path)
        return snap

    def _cache_as_files(self, cache: dict) -> list | None:
        """``[(rel, entry)]`` of the parse cache in user file order, when it holds checked objects
        (``objs``) of exactly the current user files with their signatures; else None."""
        if not cache:
            return None
        files = self.user_file_names()
        if len(files) != len(cache):
            return None
        entries = []
        for path in files:
            rel = self.rel(path)
            entry = cache.get(rel)
            if entry is None or "objs" not in entry or entry.get("sig") != file_signature(path):
                return None
            entries.append((rel, entry))
        return entries

    def _computed_paths_of(self, wanted: set) -> list:
        """The computed files :meth:`load_cached` reads for ``wanted`` (``(group, kind)`` or keys):
        every one when Namespaces are asked for, else those of the kinds and objects named, sorted."""
        if any(w[:2] == ("", "Namespace") for w in wanted):
            return self.computed_files()
        paths = []  # strings, not Paths: building and sorting 10,000 Paths costs more than reading the files
        kinds = {w for w in wanted if len(w) == 2}
        for group, kind in sorted(kinds):
            base = os.path.join(self.root, self.computed_rel((group, kind, "", "x")).rsplit("/", 1)[0])
            paths += [os.path.join(d, f) for d, _dirs, names in os.walk(base) for f in names
                      if f.endswith(".json") and not f.startswith(".")]
        for key in sorted(w for w in wanted if len(w) == 4 and w[:2] not in kinds):
            try:
                path = os.path.join(self.root, self.computed_rel(key))
            except InputError:  # a name no file can have: no computed file either
                continue
            if os.path.isfile(path):
                paths.append(path)
        return sorted(set(paths))

    # ------------------------------------------------------------------ writing
    def computed_rel(self, key: Key) -> str:
        """Stable path of a computed object or an overlay, relative to the state directory
        (``computed/works/karmada-es-member1/nginx-687f7fb96f.json``)."""
        group, kind, ns, name = key
        base = self._computed_dirs.get((group, kind))
        if base is None:
            base = computed.computed_dir(self.registry, group, kind)
            self._computed_dirs[(group, kind)] = base
        file = path_part(name, "metadata.name", ".json")
        return f"{base}/{path_part(ns, 'metadata.namespace')}/{file}" if ns else f"{base}/{file}"

    def computed_path(self, key: Key) -> Path:
        """Stable path of a computed object or an overlay in ``computed/``.

        Raises:
            InputError: a name that cannot be a file name.
            OutsideStateError: a symlinked directory on the way leads outside the state directory.
        """
        path = self.root / self.computed_rel(key)
        check_inside(self.root, path)
        return path

    def new_writer(self) -> TreeWriter:
        """A :class:`~karmactl.store.fsio.TreeWriter` for this directory's computed files, after
        clearing staging trees left by a process that was killed while writing."""
        import shutil

        runtime = ensure_runtime_dir(self.root)
        mine = f"staging.{os.getpid()}"
        for stale in runtime.glob("staging.*"):
            if stale.is_symlink() or not stale.is_dir():
                stale.unlink()  # never written through
            elif stale.name != mine:
                shutil.rmtree(stale, ignore_errors=True)
        return TreeWriter(self.root, runtime / mine)

    def stage_changes(self, before: Snapshot, after: Snapshot, writer: TreeWriter, keep=None) -> list[tuple]:
        """Stage, on ``writer``, every computed object or overlay that differs between ``before``
        and ``after``.

        Args:
            keep: optional ``f(which, key, obj) -> bool`` (``which``: bindings, works, overlays)
                limiting the objects considered.

        Returns:
            ``[(which_index, key, action, relative_path)]``; action ``write`` or ``delete``.

        Raises:
            OSError: the file system refused a write.
        """
        changes: list[tuple] = []
        for index, which in enumerate(("bindings", "works", "overlays")):
            old_map, new_map = getattr(before, which), getattr(after, which)
            for key in set(old_map) | set(new_map):
                old, new = old_map.get(key), new_map.get(key)
                if old is new or old == new:
                    continue
                if keep is not None and not keep(which, key, new if new is not None else old):
                    continue
                rel = self.computed_rel(key)
                if new is None:
                    writer.delete(rel)
                    changes.append((index, key, "delete", rel))
                else:
                    writer.write(rel, computed.dump_computed(new))
                    changes.append((index, key, "write", rel))
        return changes

    def write_changes(self, before: Snapshot, after: Snapshot, extra=None) -> list[tuple[str, str]]:
        """Write every computed object or overlay that differs between ``before`` and ``after``.

        ``extra``, if given, is ``f(writer) -> [(index, key, action, path)]`` staging more files
        in the same batch (the run's Events, ``karmactl/store/events.py``).

        The whole batch lands together (:class:`~karmactl.store.fsio.TreeWriter`): if any write
        fails, nothing is changed. Returns ``[(action, relative_path)]`` with action ``write`` or
        ``delete``, bindings first, then Works, then overlays, each by key. Objects equal to what
        is on disk are not written (no timestamp churn).

        Raises:
            OSError: the file system refused a write (the state directory is unchanged).
        """
        writer = self.new_writer()
        try:
            changes = self.stage_changes(before, after, writer)
            if extra is not None:
                changes += extra(writer)
        except BaseException:
            writer.abort()
            raise
        writer.commit()
        return computed.change_list(changes)
