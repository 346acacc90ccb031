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
"""
from __future__ import annotations

import json
import os

import orjson
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from karmactl.api.kinds import UNSUPPORTED_KARMADA_KINDS, KindInfo, KindRegistry, crd_kind, group_of
from karmactl.api.objects import describe_key
from karmactl.api.snapshot import Snapshot
from karmactl.store.fsio import (OutsideStateError, TreeWriter, check_inside, ensure_runtime_dir, is_environment_error,
                                 read_runtime_file, runtime_subdir_ok, write_atomic)

from karmactl.api.snapshot import Key  # noqa: E402  (group, kind, namespace, name)

COMPUTED_DIR = "computed"
RUNTIME_DIR = ".karmactl"
_SKIP_DIRS = {COMPUTED_DIR, RUNTIME_DIR, ".git"}
IGNORE_FILE = ".karmactlignore"
# configuration files of client-side tools, never objects an API server serves
_TOOL_CONFIG_GROUPS = {"kustomize.config.k8s.io"}

# where notes about what a load left out go: ``f(text)``, or None to drop them (the CLI sets it
# with -v; a plain callable instead of ``logging``, which costs start-up time on every command)
note_sink = None


def _note(text: str) -> None:
    if note_sink is not None:
        note_sink(text)


@contextmanager
def notes_silenced():
    """Drop the notes of what a load leaves out while the block runs (a second load in one run:
    its notes were given by the first)."""
    global note_sink
    sink, note_sink = note_sink, None
    try:
        yield
    finally:
        note_sink = sink
COMPUTED_KINDS = {("work.karmada.io", "ResourceBinding"), ("work.karmada.io", "ClusterResourceBinding"),
                  ("work.karmada.io", "Work")}


class InputError(Exception):
    """Bad input: names the file (and line), the object and the field. Exit code 2.

    One exception may carry several errors (every invalid field of an object, every bad file
    given to ``apply``): the first in its own attributes, the others in ``more``; ``str()`` puts
    each further one on its own ``error: ...`` line, as the CLI prints the first.

    Attributes:
        file: path of the file, relative to the state directory or as given.
        line: 1-based line of the document (or of the YAML error), or None.
        obj: ``Kind namespace/name`` of the object, or None.
        field: the offending field path, or None.
        more: further errors, each an :class:`InputError` without ``more`` of its own.
    """

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 obj: str | None = None, field: str | None = None, more: list | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.obj = obj
        self.field = field
        self.more: list[InputError] = [m if isinstance(m, InputError) else InputError(*m) for m in more or ()]

    @classmethod
    def several(cls, errors: list[InputError]) -> InputError:
        """One exception for ``errors`` (at least one), in their order."""
        flat = [e for err in errors for e in err.all()]
        first = flat[0]
        return cls(first.message, first.file, first.line, first.obj, first.field, flat[1:])

    def all(self) -> list[InputError]:
        """This error and the further ones, each alone."""
        return [InputError(self.message, self.file, self.line, self.obj, self.field), *self.more]

    def fields(self) -> list:
        """``[message, file, line, object, field, [further errors' fields]]``: JSON-friendly, the
        positional arguments of the constructor."""
        return [self.message, self.file, self.line, self.obj, self.field, [e.fields()[:5] for e in self.more]]

    def __reduce__(self):  # keeps file, line, object and field when sent between processes
        return (InputError, tuple(self.fields()))

    def _one(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        what = f"{self.obj}: " if self.obj else ""
        fld = f"{self.field}: " if self.field else ""
        return f"{where}{what}{fld}{self.message}"

    def __str__(self) -> str:
        return "".join([self._one(), *(f"\nerror: {e._one()}" for e in self.more)])


NAME_MAX = 255  # bytes in one file name on Linux file systems


def path_part(value: str, what: str, ext: str = "") -> str:
    """``value`` as one file-name component (``ext`` appended) that stays where it is put.

    A component that would not stay inside its directory (empty, ``.``, ``..``, holding ``/`` or
    NUL) is refused; a name too long for the file system (``NAME_MAX`` bytes, e.g. a valid
    253-character Kubernetes name plus ``.yaml``) is shortened to a prefix and a hash of the whole
    name, so every valid name has a file. Readers key objects on their content, not their file
    name, so the shortening is invisible.

    Raises:
        InputError: naming ``what`` (e.g. ``metadata.name``) and the value.
    """
    if (not isinstance(value, str) or value in ("", ".", "..") or "/" in value or "\0" in value
            or "\\" in value):
        raise InputError(f"{value!r} cannot be used as a file name (it must stay inside the state directory)",
                         field=what)
    name = value + ext
    if len(name.encode("utf-8", "surrogatepass")) > NAME_MAX:
        import hashlib

        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = value.encode("utf-8", "surrogatepass")[:NAME_MAX - 24 - len(ext)].decode("utf-8", "ignore") + "-" + digest + ext
    return name


def key_of(obj: dict) -> Key:
    """(group, kind, namespace, name) of an object dict."""
    m = obj.get("metadata") or {}
    return (group_of(obj.get("apiVersion", "")), obj.get("kind", ""), m.get("namespace") or "", m.get("name", ""))


@dataclass
class Source:
    """Where a user-written object lives: relative path, 0-based document index and 1-based line."""

    path: str
    index: int
    line: int


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
        are looked for in, with those it holds (possibly none), unsorted (:func:`walk_listed`):
        ``directory`` relative to the state directory (``""`` for its top), each entry's ``name`` a
        file's. The one rule :meth:`user_file_names`
        and the run index (``karmactl/incremental/runindex.py``) follow.

        Each directory is listed through an open descriptor, kept open while its entries are
        yielded, so ``entry.stat()`` (which follows a symlink, as ``os.stat`` does) looks the file
        up in it instead of resolving its whole path: stat them before asking for the next one.

        Raises:
            InputError: a symlinked file leads outside the state directory, or ``.karmactlignore``
                cannot be read.
        """
        if not self.root.is_dir():
            return
        ignore = self.ignore_spec()

        def subdir(d: str, rel: str, name: str) -> str | None:
            if (not rel and name in _SKIP_DIRS) or name.startswith("."):
                return None
            sub = f"{rel}/{name}" if rel else name
            if ignore is not None and ignore.match_file(sub + "/"):
                _note(f"ignoring {sub}/: excluded by {IGNORE_FILE}")
                return None
            if os.path.isfile(os.path.join(d, name, "Chart.yaml")):
                _note(f"ignoring {sub}/: a Helm chart (render it with `helm template` to apply its objects)")
                return None
            return sub

        def wanted(d: str, rel: str, entry) -> bool:
            name = entry.name
            if not name.endswith((".yaml", ".yml", ".json")) or name.startswith("."):
                return False
            if not (name.isascii() and rel.isascii()):
                check_file_name(f"{rel}/{name}" if rel else name)
            if ignore is not None or entry.is_symlink():
                sub = f"{rel}/{name}" if rel else name
                if ignore is not None and ignore.match_file(sub):
                    _note(f"ignoring {sub}: excluded by {IGNORE_FILE}")
                    return False
                if entry.is_symlink():
                    try:
                        check_inside(self.root, os.path.join(d, name))
                    except OutsideStateError as exc:
                        raise InputError(str(exc), sub) from None
            return True

        yield from walk_listed([(str(self.root), "")], subdir, wanted)

    def ignore_spec(self):
        """The patterns of ``<state>/.karmactlignore`` (gitignore syntax, paths relative to the
        state directory) as a ``pathspec.GitIgnoreSpec``, or None when there is no such file.

        The file comes with the state directory (a merge request may change it), so its patterns
        are matched by RE2 (``google-re2``, pathspec's ``re2`` backend): in time linear in the
        path, whatever the pattern (Python's ``re`` backtracks: nine ``**`` against a path 60
        directories deep took minutes).

        Raises:
            InputError: the file cannot be read, or a pattern is invalid.
            OSError: an environment error (permission...) naming the file.
        """
        path = self.root / IGNORE_FILE
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            if is_environment_error(exc):
                raise
            raise InputError(f"cannot read file: {exc.strerror or exc}", IGNORE_FILE) from None
        except UnicodeDecodeError as exc:
            raise InputError(f"cannot read file: {exc}", IGNORE_FILE) from None
        return compile_ignore(text.splitlines(), IGNORE_FILE)

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

        Documents that are not Kubernetes objects (see :func:`not_an_object`: a Helm
        ``Chart.yaml``, a ``config.json``) are left out, and described in ``skipped``
        (``"file:line: reason"``) when a list is given.

        Raises:
            InputError: unreadable file, malformed YAML, or a document that is not an object.
        """
        from karmactl.store import yamlio  # PyYAML only when a file is parsed (get from the cache needs none)

        display = display or self.rel(path)
        try:
            text = yamlio.read_input_file(path)
        except OSError as exc:
            if is_environment_error(exc):
                raise OSError(exc.errno, exc.strerror, str(path)) from None
            raise InputError(f"cannot read file: {exc.strerror or exc}", display) from None
        except yamlio.YAMLSyntaxError as exc:
            raise InputError(str(exc), display, exc.line) from None
        skipped = skipped if skipped is not None else []
        if path.suffix == ".json":
            return parse_json_documents(text, display, skipped)
        return parse_documents(text, display, skipped)

    @property
    def cache_path(self) -> Path:
        return self.root / RUNTIME_DIR / "cache" / "parsed.json"

    def _read_cache(self, tag: str) -> dict:
        """The parse cache's ``files`` (``{rel: entry}``), or ``{}`` when it is missing, made under
        another tag, or malformed in any way (it is then rebuilt): an entry is used only when it
        has the shape :meth:`load` writes (:func:`_cache_entry_ok`)."""
        if not runtime_subdir_ok(self.root, "cache"):
            return {}
        try:
            data = orjson.loads(read_runtime_file(self.cache_path))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("tag") != tag or not isinstance(data.get("files"), dict):
            return {}
        return {rel: entry for rel, entry in data["files"].items() if _cache_entry_ok(entry)}

    def _write_cache(self, tag: str, files: dict) -> None:
        if not runtime_subdir_ok(self.root, "cache"):
            return  # never through a symlink out of the runtime directory
        try:
            ensure_runtime_dir(self.root)
            write_atomic(self.cache_path, orjson.dumps({"tag": tag, "files": files}))
        except (OSError, TypeError):
            pass  # a read-only state directory still works, only slower

    def _parse_many(self, paths: list[str], normalize=None, layout=None) -> list[tuple[list, list]]:
        """``([(signature, documents, skipped) or None], errors)``: for each path (a string, as
        :meth:`user_file_names` gives) in order, None when
        it failed (its :class:`InputError` is in ``errors``, in path order), else the signature
        ``[mtime_ns, size, inode]`` read before the file, the documents ``[[object, index, line,
        checked]]`` and ``skipped``, the notes about documents that are not objects.

        Large batches are parsed by two worker processes (YAML parsing is CPU-bound Python and
        these machines have two cores), each taking every other file so both get the same mix;
        the workers also check and ``normalize`` every object of a built-in kind (``checked``
        True). Objects of other kinds (custom resources, whose CustomResourceDefinition may be in
        any file) and CRDs themselves are left to the caller. Each batch sends its objects group by
        group (``layout``, see :meth:`load`), and they are built in that order, equal strings
        shared (:func:`share_strings`).

        """
        workers = min(PARSE_WORKERS, os.cpu_count() or 1)
        if len(paths) < PARALLEL_PARSE_MIN_FILES or workers < 2 or "fork" not in _start_methods():
            out, errors = [], []
            for p in paths:
                try:
                    sig, skipped = file_signature(p), []
                    docs = [[o, i, ln, False] for o, i, ln in self.read_documents(Path(p), skipped=skipped)]
                    out.append((sig, docs, skipped))
                except InputError as exc:
                    errors.append(exc)
                    out.append(None)
            return out, errors
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        global _WORKER_JOB
        nb = workers * PARSE_BATCHES_PER_WORKER
        _WORKER_JOB = (self, normalize, layout)  # inherited by the forked workers, never pickled
        from karmactl.store.fsio import die_with_parent, kill_pool

        out: list = [None] * len(paths)
        errors = []
        canon: dict = {}  # share_strings
        try:
            pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                                       initializer=die_with_parent)
            try:
                # each batch is decoded as it arrives, while the workers parse the next ones
                for i, batch in enumerate(pool.map(_parse_batch, [paths[i::nb] for i in range(nb)])):
                    if isinstance(batch, bytes):
                        batch = orjson.loads(batch)
                    docs = batch["docs"]
                    for objs, places in zip(batch["groups"], batch["places"]):
                        share_strings(objs, canon)
                        for obj, (j, d) in zip(objs, places):
                            docs[j][1][d][0] = obj
                    for j, item in enumerate(docs):
                        out[i + j * nb] = item
                    errors.extend((i + j * nb, fields) for j, fields in batch["errors"])  # InputError.fields()
            except BaseException:
                kill_pool(pool)
                raise
            pool.shutdown()
        finally:
            _WORKER_JOB = None
        return out, [InputError(*fields) for _position, fields in sorted(errors, key=lambda e: e[0])]

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
        cache = self._read_cache(normalize_tag)
        builtin_kinds = set(self.registry.group_kinds())
        parsed, errors = self._parse_changed(names, cache, normalize, layout)
        files = [rel for rel in names if rel in parsed]
        # CRDs first, so custom resources in any file are known.
        crds = [obj for rel in files for obj in _crds_of(item[0] for item in parsed[rel].get("raw") or
                                                         parsed[rel].get("objs") or [])]
        for crd in crds:
            self.registry.add_crd(crd)
        crd_tag = _fingerprint(crds)
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
                _note(f"ignoring {note}")
            self._add_user_objects(snap, rel, new_cache[rel]["objs"], errors)
        if errors:
            raise InputError.several(errors)
        # what each file was when read (the run index, karmactl/incremental/runindex.py, records it)
        self.loaded_signatures = {rel: parsed[rel]["sig"] for rel in files}
        if dirty and self.root.is_dir():
            # the cache is written as parsed (not the caller's later mutations): serialize now
            self._write_cache(normalize_tag, new_cache)
            # hand out fresh copies so callers may not alias cached data
        if computed:
            self.read_computed(snap)
        return snap

    def _parse_changed(self, names: dict, cache: dict, normalize, layout) -> tuple:
        """``(parsed, errors)``: ``{rel: cache entry}`` of every user file, from the parse cache
        when its signature matches, else parsed now (``{"sig", "raw", "skipped"}``, see
        :meth:`_parse_many`); a file that failed is left out, its :class:`InputError` in ``errors``."""
        parsed: dict[str, dict] = {}
        missed = []
        for rel, name in names.items():
            hit = cache.get(rel)
            if hit is not None and hit.get("sig") == file_signature(name):
                parsed[rel] = hit
            else:
                missed.append(rel)
        results, errors = self._parse_many([names[rel] for rel in missed], normalize, layout)
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
                reads (:func:`scan_computed`), in :meth:`computed_files` order.
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
        try:
            fd = os.open(path, os.O_RDONLY)  # a third cheaper than open() for 10,000 small files
            try:
                chunks = []
                while chunk := os.read(fd, 1 << 16):
                    chunks.append(chunk)
            finally:
                os.close(fd)
            obj = orjson.loads(b"".join(chunks))
        except (OSError, ValueError) as exc:
            if is_environment_error(exc):
                raise OSError(exc.errno, exc.strerror, str(path)) from None
            raise InputError(f"cannot read computed file (delete it to recompute): {exc}", rel) from None
        if not isinstance(obj, dict):
            raise InputError("a computed file must hold one object (delete it to recompute)", rel)
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
        entries = self._cache_as_files(self._read_cache(normalize_tag))
        if entries is None:
            return None
        crds = [obj for _rel, entry in entries for obj in _crds_of(o[0] for o in entry["objs"])]
        crd_tag = _fingerprint(crds)
        if any(entry.get("crds") != crd_tag for _rel, entry in entries):
            return None
        for crd in crds:
            self.registry.add_crd(crd)
        snap = Snapshot(self.registry)
        for rel, entry in entries:
            for note in entry.get("skipped") or ():
                _note(f"ignoring {note}")
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
            if (group, kind) in COMPUTED_KINDS:
                base = COMPUTED_DIR + "/" + {"ResourceBinding": "resourcebindings",
                                             "ClusterResourceBinding": "clusterresourcebindings",
                                             "Work": "works"}[kind]
            else:
                info = self.registry.by_group_kind(group, kind)
                resource = info.resource_ref if info else (f"{kind.lower()}.{group}" if group else kind.lower())
                base = f"{COMPUTED_DIR}/status/{path_part(resource, 'resource')}"
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
                    writer.write(rel, dump_computed(new))
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
        return change_list(changes)


def change_list(staged: list[tuple]) -> list[tuple[str, str]]:
    """``[(action, path)]`` in report order (bindings, Works, overlays, Events; each by key) from
    :meth:`StateStore.stage_changes` results."""
    # by one string per change: NUL sorts below every character a key part holds, so it orders as the
    # tuple (index, key) would, compared in C (a cold run of 10,000 templates reports 41,700 changes)
    return [(action, rel) for _i, _k, action, rel in sorted(staged, key=lambda c: f"{c[0]}\0" + "\0".join(c[1]))]


PARSE_WORKERS = 2
PARSE_BATCHES_PER_WORKER = 4  # results stream back while the workers go on
PARALLEL_PARSE_MIN_FILES = 2000


_WORKER_JOB = None  # (StateStore, normalize, layout) for forked parse workers


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def validation_tag() -> str:
    """The parse cache's ``normalize_tag`` for karmactl's own checks (``reconcile.load``): karmactl's
    version and the newest modification time of ``karmactl/api/*.py``, so cached checking and
    defaulting results expire whenever that code changes."""
    from karmactl import __version__
    from karmactl import api

    api_dir = os.path.dirname(api.__file__)
    stamp = max(int(os.path.getmtime(os.path.join(api_dir, f))) for f in os.listdir(api_dir) if f.endswith(".py"))
    return f"karmactl-{__version__}-{stamp}"


def scan_computed(root):
    """Yield ``(relative path, os.DirEntry)`` for every file a load reads under ``computed/``:
    ``*.json``, not hidden, Events left out (history, not input: ``karmactl/store/events.py``),
    symlinked directories not entered. The one rule both :meth:`StateStore.computed_files` and the
    run index (``karmactl/incremental/runindex.py``) follow; :func:`scan_computed_dirs` gives the same
    files directory by directory.

    ``entry.stat()`` looks the file up through its directory's open descriptor (see
    :func:`scan_computed_dirs`): call it before the next entry is yielded. ``entry.path`` is the
    bare name then."""
    for rel, entries in scan_computed_dirs(root):
        for entry in entries:
            yield f"{rel}/{entry.name}", entry


def scan_computed_dirs(root, start=None, skip=()):
    """Yield ``(directory relative to the state directory, [os.DirEntry])`` for every directory
    under ``computed/`` with the files :func:`scan_computed` reads in it (possibly none).
    ``start``, when given, lists the directories (relative paths) to walk instead of
    ``computed/`` (raises OSError for one that is missing); directories in ``skip`` (and so
    their subtrees) are not entered.

    Each directory is listed through an open descriptor, kept open while its entries are yielded,
    so ``entry.stat()`` looks the file up in it instead of resolving its whole path again (a third
    of the time an unchanged run spends on 40,000 computed files): stat the entries before asking
    for the next directory."""
    if start is None:
        base = os.path.join(str(root), COMPUTED_DIR)
        if not os.path.isdir(base):
            return
        top = [(base, COMPUTED_DIR)]
    else:
        top = [(os.path.join(str(root), rel), rel) for rel in start]

    def subdir(_d: str, rel: str, name: str) -> str | None:
        sub = f"{rel}/{name}"
        return None if (rel == COMPUTED_DIR and name == "events") or sub in skip else sub

    def wanted(_d: str, _rel: str, entry) -> bool:  # a symlinked directory is neither entered nor read
        return entry.name.endswith(".json") and not entry.name.startswith(".") and not entry.is_dir()

    yield from walk_listed(top, subdir, wanted)


def walk_listed(top: list, subdir, wanted):
    """Walk directory trees, yielding ``(relative path, [os.DirEntry])`` per directory with the
    entries ``wanted(path, rel, entry)`` accepts among those that are not directories (symlinks to
    directories included). ``top``: ``[(path, rel)]`` to start from; a directory entry is entered
    when ``subdir(path, rel, name)`` gives its relative path (None: not entered).

    Each directory is listed through an open descriptor, kept open while its entries are yielded,
    so ``entry.stat()`` looks the file up in it instead of resolving its whole path again: stat
    the entries before asking for the next directory (``entry.path`` is the bare name).

    Raises:
        OSError: a directory cannot be opened.
    """
    stack = list(top)
    while stack:
        d, rel = stack.pop()
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            files = []
            with os.scandir(fd) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False):
                        sub = subdir(d, rel, entry.name)
                        if sub is not None:
                            stack.append((os.path.join(d, entry.name), sub))
                    elif wanted(d, rel, entry):
                        files.append(entry)
            yield rel, files
        finally:
            os.close(fd)


def computed_order(rel: str) -> list[str]:
    """The sort key of a computed file's relative path: its components, as paths sort (``a/b``
    before ``a/b-c``), the order :meth:`StateStore.load` reads the files in and hence of the
    snapshot's maps."""
    return rel.split("/")


def computed_map(rel: str) -> str | None:
    """Which map of a snapshot a computed file's object goes to, by its relative path
    (:meth:`StateStore.computed_rel`): ``bindings``, ``works``, ``overlays``, or None for a path
    no computed object has."""
    parts = rel.split("/")
    if len(parts) < 3 or parts[0] != COMPUTED_DIR:
        return None
    return {"works": "works", "status": "overlays", "resourcebindings": "bindings",
            "clusterresourcebindings": "bindings"}.get(parts[1])


def quote_path(rel: str) -> str:
    """A path as git shows one it has to quote (``core.quotePath``): ``"dir/bad\\377.yaml"``, the
    bytes that are not printable ASCII as octal escapes; other paths as they are."""
    raw = os.fsencode(rel)
    if all(32 <= b < 127 and b not in (34, 92) for b in raw):
        return rel
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else
                         {34: '\\"', 92: "\\\\"}.get(b, f"\\{b:03o}") for b in raw) + '"'


def check_file_name(rel: str) -> None:
    """Refuse a user file whose name is not valid UTF-8 (bytes the file system holds, that Python
    carries as surrogate escapes).

    Such a file is refused, not skipped: skipping it would drop its objects, and the next reconcile
    would delete their bindings and Works (and their copies on the members); refusing loses nothing,
    and kubectl or git users get the name in git's quoting to rename it (``git mv``). Kubernetes
    names are UTF-8, and so are the paths the parse cache and the run index keep.

    Raises:
        InputError: naming the file (:func:`quote_path`).
    """
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("the file name is not valid UTF-8; rename it (e.g. `git mv`)", quote_path(rel)) from None


def compile_ignore(lines: list[str], display: str):
    """``lines`` (gitignore syntax) as a ``pathspec.GitIgnoreSpec`` matched by RE2 (linear time).

    Raises:
        InputError: a pattern pathspec or RE2 refuses, naming ``display`` and the line.
    """
    import pathspec  # only when there is an ignore file: it is slow to import

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines, backend="re2")
    except Exception as whole:  # noqa: BLE001 - pathspec's and re2's errors: the bad line is named
        for number, line in enumerate(lines, 1):
            try:
                pathspec.GitIgnoreSpec.from_lines([line], backend="re2")
            except Exception as exc:  # noqa: BLE001
                raise InputError(f"invalid pattern {line!r}: {exc}", display, number) from None
        raise InputError(f"invalid patterns: {whole}", display) from None  # e.g. RE2's memory budget


def _cache_entry_ok(entry) -> bool:
    """Whether a parse cache entry has the shape :meth:`StateStore.load` writes: ``{"sig":
    [mtime_ns, size, inode], "crds": str, "objs": [[object, index, line]], "skipped"?: [str]}``
    (a damaged cache is rebuilt, never trusted)."""
    if type(entry) is not dict:
        return False
    sig, objs, skipped = entry.get("sig"), entry.get("objs"), entry.get("skipped", [])
    if type(sig) is not list or len(sig) != 3 or not all(type(n) is int for n in sig) \
            or type(entry.get("crds")) is not str or type(objs) is not list or type(skipped) is not list:
        return False
    for item in objs:
        if type(item) is not list or len(item) != 3 or type(item[0]) is not dict or type(item[1]) is not int \
                or type(item[2]) is not int:
            return False
    return all(type(note) is str for note in skipped)


def file_signature(path: Path) -> list[int]:
    """``[mtime_ns, size, inode]`` of a file: what the parse cache keys on.

    Raises:
        InputError: the file cannot be read.
    """
    try:
        st = os.stat(str(path))
    except OSError as exc:
        if is_environment_error(exc):
            raise
        raise InputError(f"cannot read file: {exc}", str(path)) from None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _parse_batch(paths: list[str]) -> list:
    """Worker: parse files and check objects of built-in kinds. Returns ``{"docs": [per file:
    (signature, [[object, index, line, checked]], skipped) or None for a failing file], "errors": [[index in
    docs, InputError.fields()]]}``, as orjson bytes when JSON can hold it; the objects themselves
    are sent first, in ``"groups"`` (a list of objects per group of the layout function, one group
    without it) and ``"places"`` (``[file, document]`` of each), and None stands in for them in
    ``docs``."""
    store, normalize, layout = _WORKER_JOB
    crd = ("apiextensions.k8s.io", "CustomResourceDefinition")
    out: list = []
    errors = []
    for p in paths:
        path = Path(p)
        rel = store.rel(path)
        try:
            sig, skipped = file_signature(path), []
            docs = []
            for obj, index, line in store.read_documents(path, rel, skipped):
                api_version, kind = obj.get("apiVersion"), obj.get("kind")
                known = (isinstance(api_version, str) and isinstance(kind, str)
                         and (group_of(api_version), kind) != crd and store.registry.for_object(api_version, kind))
                if known:
                    docs.append([store.check_document(obj, index, line, rel, normalize), index, line, True])
                else:
                    docs.append([obj, index, line, False])
            out.append((sig, docs, skipped))
        except InputError as exc:
            errors.append([len(out), exc.fields()])
            out.append(None)
    # the objects group by group (one group without a layout), first: the parent builds them in this order
    groups: dict = {}
    for j, item in enumerate(out):
        for d, doc in enumerate(item[1] if item is not None else ()):
            objs, places = groups.setdefault(layout(doc[0]) if layout is not None else 0, ([], []))
            objs.append(doc[0])
            places.append((j, d))
            doc[0] = None
    order = sorted(groups)
    result = {"groups": [groups[g][0] for g in order], "places": [groups[g][1] for g in order],
              "docs": out, "errors": errors}
    try:
        # JSON crosses the process boundary several times faster than a pickle of the same dicts;
        # values JSON cannot hold (binary, sets, huge integers) fall back to pickling
        return orjson.dumps(result)
    except TypeError:
        return result


def share_strings(objs: list, canon: dict) -> None:
    """Make equal string values of ``objs`` (parsed objects, changed in place) one object each,
    through ``canon`` (``{string: string}``, kept across calls): JSON decoding builds a new string
    for every value, and 10,000 Deployments with their PropagationPolicies repeat ``default``,
    ``apps/v1``, ``Deployment``, defaulted fields... some 290,000 times, 15 MB that a forked shard
    process would otherwise copy too. Mapping keys are shared by the decoder already."""
    get = canon.setdefault
    stack = [o for o in objs if type(o) is dict or type(o) is list]
    while stack:
        o = stack.pop()
        for k, v in (o.items() if type(o) is dict else enumerate(o)):  # a value replaced in place
            if type(v) is str:
                c = get(v, v)
                if c is not v:
                    o[k] = c
            elif type(v) is dict or type(v) is list:
                stack.append(v)


def dump_computed(obj: dict) -> bytes:
    """Serialize a computed object: JSON indented by two spaces, keys in the order they were built.

    orjson writes indented JSON in C (the standard library falls back to pure Python as soon as
    ``indent`` is given, which made serialization the largest cost of a cold run).
    """
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def _crds_of(objs):
    """The CustomResourceDefinitions among ``objs``, in order."""
    return [obj for obj in objs if obj.get("kind") == "CustomResourceDefinition"
            and group_of(obj.get("apiVersion", "")) == "apiextensions.k8s.io"]


def _fingerprint(objs: list) -> str:
    import hashlib
    return hashlib.sha256(json.dumps(objs, sort_keys=True, default=str).encode()).hexdigest()[:16] if objs else ""


def not_an_object(doc) -> str | None:
    """Why a parsed document is not a Kubernetes object, or None when it is one (or means to be).

    A document is taken for an object when it is a mapping with ``kind`` or ``metadata``: one
    that lacks only ``apiVersion`` or a name is a mistake to report, while a Helm ``Chart.yaml``
    (``apiVersion`` alone), a ``values.yaml``, a ``config.json`` or a plain ``kustomization.yaml``
    are not objects at all, nor is a kubeconfig (``kind: Config``). Kustomize's own ``Kustomization``/``Component`` (group
    ``kustomize.config.k8s.io``) configure a client-side tool and are not objects either.
    """
    if not isinstance(doc, dict):
        return f"not a Kubernetes object (a YAML {_yaml_type(doc)}, not a mapping)"
    if "kind" not in doc and "metadata" not in doc:
        return "not a Kubernetes object (no kind)"
    api_version = doc.get("apiVersion")
    if doc.get("kind") == "Config" and api_version == "v1" and "metadata" not in doc:
        return "a kubeconfig, not a Kubernetes object"
    if isinstance(api_version, str) and group_of(api_version) in _TOOL_CONFIG_GROUPS:
        return f"a {group_of(api_version)} configuration file, not a Kubernetes object"
    return None


def _yaml_type(doc) -> str:
    return "sequence" if isinstance(doc, list) else "scalar"


def parse_documents(text: str, display: str, skipped: list | None = None) -> list[tuple[dict, int, int]]:
    """Parse YAML text into ``[(object, document_index, line)]`` (``List`` kinds expanded).

    With a ``skipped`` list, documents that are not objects (:func:`not_an_object`) are left out
    and described in it as ``"file:line: reason"``; without one they raise.

    Raises:
        InputError: malformed YAML or a document that is not a mapping.
    """
    from karmactl.store import yamlio

    try:
        docs = yamlio.load_all(text)
    except yamlio.YAMLSyntaxError as exc:
        raise InputError(str(exc), display, exc.line) from None
    out = []
    for index, (doc, line) in enumerate(docs):
        if skipped is not None:
            reason = not_an_object(doc)
            if reason is not None:
                skipped.append(f"{display}:{line}: {reason}")
                continue
        if not isinstance(doc, dict):
            raise InputError("a document must be a mapping with apiVersion, kind and metadata", display, line)
        if doc.get("kind") == "List" or (str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list)):
            for item in doc.get("items") or []:
                if not isinstance(item, dict):
                    raise InputError("a List item must be a mapping", display, line)
                out.append((item, index, line))
        else:
            out.append((doc, index, line))
    return out


class _DuplicateJSONKey(ValueError):
    pass


def _unique_pairs(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        for k, _v in pairs:
            if k in seen:
                raise _DuplicateJSONKey(k)
            seen.add(k)
    return out


def parse_json_documents(text: str, display: str, skipped: list | None = None) -> list[tuple[dict, int, int]]:
    """A ``.json`` file: one object or a ``List``; ``skipped`` as for :func:`parse_documents`.

    Raises:
        InputError: malformed JSON (with its line) or not an object.
    """
    from karmactl.store import yamlio

    try:
        doc = json.loads(text, object_pairs_hook=_unique_pairs)
    except _DuplicateJSONKey as exc:
        raise InputError(f'duplicate key "{exc}" in one object', display) from None
    except RecursionError:
        raise InputError(f"nesting deeper than {yamlio.MAX_DEPTH} levels", display) from None
    except ValueError as exc:
        raise InputError(f"invalid JSON: {getattr(exc, 'msg', exc)}", display, getattr(exc, "lineno", None)) from None
    try:
        yamlio.check_plain(doc)
    except yamlio.YAMLSyntaxError as exc:
        raise InputError(str(exc), display, exc.line) from None
    if skipped is not None:
        reason = not_an_object(doc)
        if reason is not None:
            skipped.append(f"{display}:1: {reason}")
            return []
    if not isinstance(doc, dict):
        raise InputError("a document must be an object with apiVersion, kind and metadata", display, 1)
    if isinstance(doc.get("items"), list) and str(doc.get("kind", "")).endswith("List"):
        return [(item, 0, 1) for item in doc["items"] if isinstance(item, dict)]
    return [(doc, 0, 1)]


def _check_crd_names(obj: dict, display: str, line: int | None, label: str | None) -> None:
    """A CRD's group and plural name directories (``<plural>/``, ``computed/status/<plural>.<group>/``):
    as the API server's CRD validation, the plural must be a DNS-1035 label and the group a DNS
    subdomain.

    Raises:
        InputError: naming the field.
    """
    from karmactl.api.validation_fields import dns1035_label, dns1123_subdomain

    spec, names = obj.get("spec"), (obj.get("spec") or {}).get("names") if isinstance(obj.get("spec"), dict) else None
    for path, value in (("spec", spec), ("spec.names", names)):
        if not isinstance(value, dict):
            raise InputError("required field is missing" if value is None else
                             f"must be an object, not {type(value).__name__}", display, line, label, path)
    plural, group = names.get("plural"), spec.get("group")
    if not isinstance(plural, str) or dns1035_label(plural):
        raise InputError(f"{plural!r} is not a DNS-1035 label (lowercase letters, digits, '-')", display, line,
                         label, "spec.names.plural")
    if not isinstance(group, str) or dns1123_subdomain(group):
        raise InputError(f"{group!r} is not a DNS subdomain", display, line, label, "spec.group")


def check_object(obj: dict, registry: KindRegistry, display: str, line: int | None) -> KindInfo:
    """Check what every object needs before it can be keyed: apiVersion, a known kind, a name.

    Raises:
        InputError: naming the file, line, object and field.
    """
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    label = f"{kind or '?'} {name}" if name else (kind or None)
    if not isinstance(api_version, str) or not api_version:
        raise InputError("required field is missing", display, line, label, "apiVersion")
    if not isinstance(kind, str) or not kind:
        raise InputError("required field is missing", display, line, label, "kind")
    if not isinstance(meta, dict):
        raise InputError("required field is missing", display, line, label, "metadata")
    if not isinstance(name, str) or not name:
        raise InputError("required field is missing", display, line, label, "metadata.name")
    unsupported = UNSUPPORTED_KARMADA_KINDS.get((group_of(api_version), kind))
    if unsupported is not None:
        raise InputError(f"{kind} ({unsupported}) is not supported by karmactl: Karmada's control plane runs it "
                         f"(see `karmactl export --to-karmada`)", display, line, label, "kind")
    if kind == "CustomResourceDefinition":
        _check_crd_names(obj, display, line, label)
    info = registry.for_object(api_version, kind)
    if info is None:
        raise InputError(f'unknown kind "{kind}" in apiVersion "{api_version}" (no built-in kind and no '
                         f"CustomResourceDefinition in the state directory defines it)", display, line, label, "kind")
    ns = meta.get("namespace")
    if ns is not None and not isinstance(ns, str):
        raise InputError("must be a string", display, line, label, "metadata.namespace")
    if info.namespaced and not ns:
        meta["namespace"] = "default"
    return info
