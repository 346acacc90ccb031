"""How a Cluster is reached: which kubeconfig file(s) and which context.

A Cluster names its kubeconfig and context in annotations (set by ``karmactl join``), so no
credential ever enters the state directory (DESIGN §4):

* ``karmactl.io/kubeconfig``: a path, relative to the state directory unless absolute (``~`` expanded);
* ``karmactl.io/context``: the context in it (default: the cluster's name).

Without the annotation the kubeconfig comes from ``--kubeconfig`` (when the CLI passes one), else
``KUBECONFIG`` (a path list, merged as kubectl does), else ``~/.kube/config``, with a context named
like the cluster. The context is always named explicitly: the Python client would otherwise take
``current-context`` from the *last* file in ``KUBECONFIG`` where kubectl takes the first.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

KUBECONFIG_ANNOTATION = "karmactl.io/kubeconfig"
CONTEXT_ANNOTATION = "karmactl.io/context"


class AccessError(Exception):
    """The Cluster names no usable kubeconfig (message says which and why)."""


@dataclass(frozen=True)
class ClusterAccess:
    """Where a member is reached.

    Attributes:
        cluster: the Cluster's name.
        paths: kubeconfig files, merged in order (first wins, as with kubectl).
        context: the context to use.
    """

    cluster: str
    paths: tuple[str, ...]
    context: str


def resolve_access(cluster: dict, state_dir: Path | str, kubeconfig: str | None = None,
                   environ: dict | None = None) -> ClusterAccess:
    """The kubeconfig and context of a Cluster object.

    Args:
        cluster: the Cluster (user object; only ``metadata`` is read).
        state_dir: relative annotation paths are resolved against it.
        kubeconfig: the ``--kubeconfig`` fallback (a path or an ``os.pathsep`` list), or None.
        environ: environment for ``KUBECONFIG``/``HOME`` (default ``os.environ``).

    Raises:
        AccessError: the annotated file does not exist, or no fallback kubeconfig exists.
    """
    env = os.environ if environ is None else environ
    md = cluster.get("metadata") or {}
    name = md.get("name") or ""
    ann = md.get("annotations") or {}
    context = ann.get(CONTEXT_ANNOTATION) or name
    annotated = ann.get(KUBECONFIG_ANNOTATION)
    if annotated:
        path = Path(os.path.expanduser(annotated))
        if not path.is_absolute():
            path = Path(state_dir) / path
        if not path.is_file():
            raise AccessError(f"kubeconfig {path} (annotation {KUBECONFIG_ANNOTATION}) does not exist")
        return ClusterAccess(name, (str(path),), context)
    listed = kubeconfig or env.get("KUBECONFIG") or ""
    paths = tuple(p for p in listed.split(os.pathsep) if p and os.path.isfile(os.path.expanduser(p)))
    if not paths and not listed:
        home = os.path.join(os.path.expanduser(env.get("HOME") or "~"), ".kube", "config")
        if os.path.isfile(home):
            paths = (home,)
    if not paths:
        raise AccessError(f"no kubeconfig: set annotation {KUBECONFIG_ANNOTATION} on the Cluster "
                          f"(karmactl join does) or KUBECONFIG with a context named {name}")
    return ClusterAccess(name, tuple(os.path.expanduser(p) for p in paths), context)


__all__ = ["AccessError", "ClusterAccess", "CONTEXT_ANNOTATION", "KUBECONFIG_ANNOTATION", "resolve_access"]


# ---------------------------------------------------------------------------- secrets
_SECRETS: set[str] = set()
_PATTERNS = None


def register_secret(value) -> None:
    """Remember a credential (token, password, key) so :func:`redact` hides it wherever it appears."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        for part in {value, value.strip(), value.removeprefix("Bearer ").strip()}:
            if len(part) >= 6:
                _SECRETS.add(part)


def redact_known(text: str) -> str:
    """``text`` with every registered credential replaced by ``<redacted>`` (no pattern guessing:
    for data output)."""
    if _SECRETS and isinstance(text, str):
        for secret in sorted(_SECRETS, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, "<redacted>")
    return text


def redact(text: str) -> str:
    """``text`` with every registered credential and anything shaped like one (``Bearer <token>``,
    ``token: ...``/``password: ...`` fields, ``*-data`` kubeconfig fields, PEM private keys)
    replaced by ``<redacted>``. Used on every error, warning and ``-v`` line karmactl prints."""
    global _PATTERNS
    import re

    if not isinstance(text, str) or not text:
        return text
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "<redacted>")
    if _PATTERNS is None:
        _PATTERNS = [
            (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S),
             "<redacted private key>"),
            (re.compile(r"(Bearer|Basic) +[A-Za-z0-9._~+/=-]{6,}[^\s'\",}\]]*"), r"\1 <redacted>"),
            (re.compile(r"((?:token|password|client-key-data|client-certificate-data|authorization)"
                        r"[\"']?\s*[:=]\s*[\"']?)[^\s'\",}\]]+", re.I), r"\1<redacted>"),
        ]
    for rx, repl in _PATTERNS:
        text = rx.sub(repl, text)
    return text
