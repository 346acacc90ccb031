"""A template's revisions, for ``rollout history`` and ``rollout undo``: the versions of its file in
git. Karmada's control plane keeps no ReplicaSets for a template (each member keeps its own, with its
own revision numbers), and karmactl's state directory is meant to live in git, so a template's history
is its file's: every commit in which the template's Pod template (``spec.template``) changed is a
revision, numbered from 1 (the oldest), and a working copy that differs from the last commit is the
newest revision. CHANGE-CAUSE is the template's ``kubernetes.io/change-cause`` annotation at that
revision, else the commit's subject.

git runs with the repository's hooks, pager and file-system monitor disabled (a state directory may be
a stranger's clone: nothing in it may run code), reading only the one file's history.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from karmactl.cli.context import CLIError, ExitCode

_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat",
         "-c", "diff.external=", "-c", "core.untrackedCache=false")


@dataclass(frozen=True)
class Revision:
    """One revision: its number, the commit (None: the uncommitted working copy), the change cause and
    the whole template object at that revision."""

    number: int
    commit: str | None
    cause: str
    obj: dict


def _git(root: Path, *args: str) -> str | None:
    """stdout of ``git <args>`` in ``root``, None when git fails or is missing."""
    binary = shutil.which("git")
    if binary is None:
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    try:
        proc = subprocess.run([binary, "--no-pager", *_SAFE, *args], cwd=root, capture_output=True, text=True,
                              env=env, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _object_in(text: str, key: tuple) -> dict | None:
    """The document of ``text`` that is the object ``key`` (group, kind, namespace, name; a namespaced
    object written without a namespace is in ``default``, as the state directory reads it), or None."""
    from karmactl.store import yamlio

    try:
        docs = yamlio.load_all(text)
    except yamlio.YAMLSyntaxError:
        return None
    group, kind, namespace, name = key
    for doc, _line in docs:
        md = doc.get("metadata") if isinstance(doc, dict) else None
        if not isinstance(md, dict) or not isinstance(doc.get("apiVersion"), str):
            continue
        ns = md.get("namespace") or ("default" if namespace else "")
        if (doc["apiVersion"].rpartition("/")[0], doc.get("kind"), ns, md.get("name")) == (group, kind, namespace, name):
            return doc
    return None


def revisions(state: Path, rel_path: str, key: tuple, current: dict) -> list[Revision]:
    """The revisions of the template ``key`` living in ``rel_path`` (relative to the state directory),
    oldest first; ``current`` is the object as its file holds it now.

    Raises:
        CLIError: git is missing or the state directory is not in a git repository (exit 2: the
            history cannot be known), naming why.
    """
    top = _git(state, "rev-parse", "--show-toplevel")
    if top is None:
        raise CLIError("no rollout history: karmactl keeps a template's revisions in git (Karmada's control plane "
                       "has no ReplicaSets of a template) and the state directory is not in a git repository "
                       "(or git is not installed)")
    log = _git(state, "log", "--follow", "--name-only", "--format=%x00%H%x09%s", "--", rel_path) or ""
    found: list[tuple[str | None, dict, str]] = []
    for block in reversed(log.split("\0")[1:]):
        lines = [ln for ln in block.splitlines() if ln]
        if len(lines) < 2:
            continue
        commit, _tab, subject = lines[0].partition("\t")
        text = _git(Path(top.strip()), "show", f"{commit}:{lines[-1]}")
        obj = _object_in(text, key) if text is not None else None
        if obj is not None:
            found.append((commit, obj, subject))
    found.append((None, current, "(uncommitted)"))
    out: list[Revision] = []
    for commit, obj, subject in found:
        template = (obj.get("spec") or {}).get("template")
        if out and (out[-1].obj.get("spec") or {}).get("template") == template:
            continue
        cause = ((obj.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/change-cause") or subject
        out.append(Revision(len(out) + 1, commit, cause, obj))
    return out


def not_found(revision: int) -> CLIError:
    """kubectl's answer for a revision that does not exist."""
    return CLIError(f"unable to find specified revision {revision} in history", ExitCode.INPUT_ERROR)
