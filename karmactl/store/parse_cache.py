"""The parse cache, ``.karmactl/cache/parsed.json``: each user file's validated objects keyed by its
signature ``[mtime_ns, size, inode]`` (:func:`file_signature`), under a tag naming the checks made
(:func:`validation_tag`) and a fingerprint of the CRDs they were checked against
(:func:`fingerprint`). Read (:func:`read_cache`, every entry's shape checked), written
(:func:`write_cache`); a damaged or foreign cache is rebuilt, never trusted."""
from __future__ import annotations

import json
import os
from pathlib import Path

import orjson

from karmactl.api.kinds import group_of
from karmactl.store.fsio import (ensure_runtime_dir, is_environment_error, read_runtime_file, runtime_subdir_ok,
                                 write_atomic)
from karmactl.store.objects import InputError
from karmactl.store.scan import RUNTIME_DIR


def cache_path(root: Path) -> Path:
    """``<root>/.karmactl/cache/parsed.json``."""
    return root / RUNTIME_DIR / "cache" / "parsed.json"


def read_cache(root: Path, tag: str) -> dict:
    """The parse cache's ``files`` (``{rel: entry}``), or ``{}`` when it is missing, made under
    another tag, or malformed in any way (it is then rebuilt): an entry is used only when it
    has the shape :meth:`~karmactl.store.state.StateStore.load` writes (:func:`entry_ok`)."""
    if not runtime_subdir_ok(root, "cache"):
        return {}
    try:
        data = orjson.loads(read_runtime_file(cache_path(root)))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("tag") != tag or not isinstance(data.get("files"), dict):
        return {}
    return {rel: entry for rel, entry in data["files"].items() if entry_ok(entry)}


def write_cache(root: Path, tag: str, files: dict) -> None:
    """Write the parse cache ``{"tag": tag, "files": files}`` atomically; nothing when the runtime
    directory cannot take it (a symlink, a read-only state directory)."""
    if not runtime_subdir_ok(root, "cache"):
        return  # never through a symlink out of the runtime directory
    try:
        ensure_runtime_dir(root)
        write_atomic(cache_path(root), orjson.dumps({"tag": tag, "files": files}))
    except (OSError, TypeError):
        pass  # a read-only state directory still works, only slower


def entry_ok(entry) -> bool:
    """Whether a parse cache entry has the shape :meth:`~karmactl.store.state.StateStore.load` writes: ``{"sig":
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


def crds_of(objs):
    """The CustomResourceDefinitions among ``objs``, in order."""
    return [obj for obj in objs if obj.get("kind") == "CustomResourceDefinition"
            and group_of(obj.get("apiVersion", "")) == "apiextensions.k8s.io"]


def fingerprint(objs: list) -> str:
    """A short hash of ``objs`` (the CRDs of a load; ``""`` for none): cache entries checked under
    other CRDs are checked again."""
    import hashlib
    return hashlib.sha256(json.dumps(objs, sort_keys=True, default=str).encode()).hexdigest()[:16] if objs else ""


def validation_tag() -> str:
    """The parse cache's ``normalize_tag`` for karmactl's own checks (``reconcile.load``): karmactl's
    version and the newest modification time of ``karmactl/api/*.py``, so cached checking and
    defaulting results expire whenever that code changes."""
    from karmactl import __version__
    from karmactl import api

    api_dir = os.path.dirname(api.__file__)
    stamp = max(int(os.path.getmtime(os.path.join(api_dir, f))) for f in os.listdir(api_dir) if f.endswith(".py"))
    return f"karmactl-{__version__}-{stamp}"
