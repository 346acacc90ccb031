"""Invalid input as CI annotations on the merge request's lines (``plan --annotations``).

``github``: one workflow command per error on stdout, ``::error file=state/nginx/deployment.yaml,
line=11,title=karmactl::Deployment default/nginx: spec.replicas: ...``, which GitHub Actions shows
on the line of the pull request's diff. ``gitlab``: a Code Quality report (a JSON list, GitLab's
``artifacts:reports:codequality``) written to a file, ``[]`` when the input is valid, so the merge
request widget shows the errors and clears them once fixed.

Paths are relative to the working directory (the repository's root in a CI job) when the file is
under it. The line is the line of the offending field when the error names one and the document
still has it (:func:`field_line`), else the line the error gives (its document's, or the YAML
error's).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

FORMATS = ("github", "gitlab")
GITLAB_REPORT = "gl-code-quality-report.json"
MAX_FILE_BYTES = 4 << 20  # a file larger than this is not read again for a field's line

_INDEX = re.compile(r"\[(\d+)\]")


def field_line(path: Path, doc_line: int | None, field: str | None) -> int | None:
    """The 1-based line of ``field`` (``spec.template.spec.containers[0].image``) in the YAML
    document of ``path`` that holds or follows ``doc_line``; the deepest part of the path found
    when the rest is missing; None when the file cannot be read or parsed, or names no such
    document. Mapping keys holding dots cannot be told from nested keys: the walk stops there."""
    if not field or not doc_line:
        return None
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        import yaml

        docs = list(yaml.compose_all(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader))
    except (OSError, ValueError, yaml.YAMLError):
        return None
    node = next((d for d in docs if d is not None and d.end_mark.line + 1 >= doc_line), None)
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in _INDEX.sub(r".\1", field).split("."):
        if isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
            if found is None:
                break
            line, node = found[0].start_mark.line + 1, found[1]
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
            line = node.start_mark.line + 1
        else:
            break
    return line


def errors_of(exc, state_root: Path, cwd: Path | None = None) -> list[dict]:
    """Every error of an ``InputError`` (``karmactl/store/objects.py``) as ``{"message", "file",
    "line", "object", "field"}``: ``file`` relative to ``cwd`` (default: the working directory)
    when under it, else as the error names it (None when it names none); ``line`` as
    :func:`field_line` finds it."""
    cwd = Path(cwd or os.getcwd()).resolve()
    out = []
    for e in exc.all():
        file, line = e.file, e.line
        if file:
            where = Path(file) if Path(file).is_absolute() else Path(state_root) / file
            line = field_line(where, e.line, e.field) or e.line
            try:
                file = str(where.resolve().relative_to(cwd))
            except (ValueError, OSError):
                file = str(where)
        text = ": ".join(x for x in (e.obj, e.field, e.message) if x)
        out.append({"message": text, "file": file, "line": line, "object": e.obj, "field": e.field})
    return out


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(errors: list[dict]) -> list[str]:
    """GitHub Actions' ``::error`` workflow commands, one per error."""
    lines = []
    for e in errors:
        props = [f"file={_escape_property(e['file'])}"] if e.get("file") else []
        if e.get("file") and e.get("line"):
            props.append(f"line={int(e['line'])}")
        props.append("title=karmactl")
        lines.append(f"::error {','.join(props)}::{_escape_data(e['message'])}")
    return lines


def gitlab_report(errors: list[dict]) -> list[dict]:
    """GitLab's Code Quality report: one ``major`` issue per error, fingerprinted by file, object,
    field and message (a fixed error disappears from the merge request widget)."""
    report = []
    for e in errors:
        fingerprint = hashlib.sha256(json.dumps([e.get("file"), e.get("object"), e.get("field"), e["message"]])
                                     .encode()).hexdigest()
        report.append({"description": e["message"], "check_name": "karmactl-invalid-input",
                       "fingerprint": fingerprint, "severity": "major",
                       "location": {"path": e.get("file") or ".", "lines": {"begin": int(e.get("line") or 1)}}})
    return report


def write_gitlab_report(path: str, errors: list[dict]) -> None:
    """Write :func:`gitlab_report` to ``path`` (atomically, ``karmactl/store/fsio.py: write_atomic``).

    Raises:
        OSError: the file cannot be written (an environment error, exit 6).
    """
    from karmactl.store.fsio import write_atomic

    write_atomic(Path(path), json.dumps(gitlab_report(errors), indent=2) + "\n")
