"""Which files of the state directory a load reads: the user files (outside karmactl's own trees,
``.karmactlignore`` and Helm charts left out, names checked) and those of ``computed/``, each
directory listed through an open descriptor (:func:`walk_listed`)."""
from __future__ import annotations

import os
from pathlib import Path

from karmactl.store.fsio import OutsideStateError, check_inside, is_environment_error
from karmactl.store.notes import note
from karmactl.store.objects import InputError

COMPUTED_DIR = "computed"
RUNTIME_DIR = ".karmactl"
_SKIP_DIRS = {COMPUTED_DIR, RUNTIME_DIR, ".git"}
IGNORE_FILE = ".karmactlignore"


def scan_user_dirs(root: Path):
    """Yield ``(directory, [os.DirEntry])`` for every directory the files of
    :meth:`~karmactl.store.state.StateStore.user_files` are looked for in, with those it holds
    (possibly none), unsorted (:func:`walk_listed`):
    ``directory`` relative to the state directory (``""`` for its top), each entry's ``name`` a
    file's. The one rule :meth:`~karmactl.store.state.StateStore.user_file_names`
    and the run index (``karmactl/incremental/runindex.py``) follow.

    Each directory is listed through an open descriptor, kept open while its entries are
    yielded, so ``entry.stat()`` (which follows a symlink, as ``os.stat`` does) looks the file
    up in it instead of resolving its whole path: stat them before asking for the next one.

    Raises:
        InputError: a symlinked file leads outside the state directory, or ``.karmactlignore``
            cannot be read.
    """
    if not root.is_dir():
        return
    ignore = ignore_spec(root)

    def subdir(d: str, rel: str, name: str) -> str | None:
        if (not rel and name in _SKIP_DIRS) or name.startswith("."):
            return None
        sub = f"{rel}/{name}" if rel else name
        if ignore is not None and ignore.match_file(sub + "/"):
            note(f"ignoring {sub}/: excluded by {IGNORE_FILE}")
            return None
        if os.path.isfile(os.path.join(d, name, "Chart.yaml")):
            note(f"ignoring {sub}/: a Helm chart (render it with `helm template` to apply its objects)")
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
                note(f"ignoring {sub}: excluded by {IGNORE_FILE}")
                return False
            if entry.is_symlink():
                try:
                    check_inside(root, os.path.join(d, name))
                except OutsideStateError as exc:
                    raise InputError(str(exc), sub) from None
        return True

    yield from walk_listed([(str(root), "")], subdir, wanted)


def ignore_spec(root: Path):
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
    path = root / IGNORE_FILE
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


def scan_computed(root):
    """Yield ``(relative path, os.DirEntry)`` for every file a load reads under ``computed/``:
    ``*.json``, not hidden, Events left out (history, not input: ``karmactl/store/events.py``),
    symlinked directories not entered. The one rule both :meth:`~karmactl.store.state.StateStore.computed_files` and the
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
    before ``a/b-c``), the order :meth:`~karmactl.store.state.StateStore.load` reads the files in and hence of the
    snapshot's maps."""
    return rel.split("/")


def computed_map(rel: str) -> str | None:
    """Which map of a snapshot a computed file's object goes to, by its relative path
    (:meth:`~karmactl.store.state.StateStore.computed_rel`): ``bindings``, ``works``, ``overlays``, or None for a path
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
