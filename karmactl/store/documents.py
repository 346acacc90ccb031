"""Parsing one user file's text into documents: YAML (multi-document, ``List`` kinds expanded) or
JSON, leaving out documents that are not Kubernetes objects (:func:`not_an_object`)."""
from __future__ import annotations

import json
from pathlib import Path

from karmactl.api.kinds import group_of
from karmactl.store.fsio import is_environment_error
from karmactl.store.objects import InputError

# configuration files of client-side tools, never objects an API server serves
_TOOL_CONFIG_GROUPS = {"kustomize.config.k8s.io"}


def read_documents(path: Path, display: str, skipped: list) -> list[tuple[dict, int, int]]:
    """``[(object, document_index, line)]`` of one file (``display`` names it in errors and in
    ``skipped``); see :meth:`karmactl.store.state.StateStore.read_documents`.

    Raises:
        InputError: unreadable file, malformed YAML, or a document that is not an object.
        OSError: an environment error (permission, I/O...), naming the path.
    """
    from karmactl.store import yamlio  # PyYAML only when a file is parsed (get from the cache needs none)

    try:
        text = yamlio.read_input_file(path)
    except OSError as exc:
        if is_environment_error(exc):
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise InputError(f"cannot read file: {exc.strerror or exc}", display) from None
    except yamlio.YAMLSyntaxError as exc:
        raise InputError(str(exc), display, exc.line) from None
    if path.suffix == ".json":
        return parse_json_documents(text, display, skipped)
    return parse_documents(text, display, skipped)


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
