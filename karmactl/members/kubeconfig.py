"""How a Cluster is reached: which kubeconfig file(s) and which context, and what a kubeconfig may do.

A Cluster names its kubeconfig and context in annotations (set by ``karmactl join``), so no
credential ever enters the state directory (DESIGN §4):

* ``karmactl.io/kubeconfig``: a path, relative to the state directory unless absolute (``~`` expanded);
* ``karmactl.io/context``: the context in it (default: the cluster's name).

Without the annotation the kubeconfig comes from ``--kubeconfig`` (when the CLI passes one), else
``KUBECONFIG`` (a path list, merged as kubectl does), else ``~/.kube/config``, with a context named
like the cluster. The context is always named explicitly: the Python client would otherwise take
``current-context`` from the *last* file in ``KUBECONFIG`` where kubectl takes the first.

The annotation is written by whoever wrote the Cluster file, a merge request included, so what it
names is confined (:class:`CredentialPolicy`, issue 23):

* the file must resolve (symlinks followed) inside the *kubeconfig directory*, which the operator
  names with ``--kubeconfig-dir`` / ``KARMACTL_KUBECONFIG_DIR`` (default ``<state>/.karmactl``, the
  runtime directory git ignores, where ``local-up`` and the CI write kubeconfigs);
* the files it names in turn (``tokenFile``, ``client-certificate``, ``client-key``,
  ``certificate-authority``, resolved against the kubeconfig's directory as client-go does) must
  resolve inside that directory too, so no file of the runner is sent to a server the MR chose.

Whatever the kubeconfig (annotated or the fallback), an ``exec`` credential plugin or an
``auth-provider`` (which may run its ``cmd-path`` or call its issuer) is used only when the operator
allows it with ``--allow-exec-plugins`` / ``KARMACTL_ALLOW_EXEC_PLUGINS=1``: the MR chooses the
context, and so which command would run. A refusal is an :class:`AccessError` naming the Cluster,
the annotation or field and the way to allow it; for a run that is this member's failure (exit 3,
the other members served), as a missing kubeconfig is.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

KUBECONFIG_ANNOTATION = "karmactl.io/kubeconfig"
CONTEXT_ANNOTATION = "karmactl.io/context"
KUBECONFIG_DIR_ENV = "KARMACTL_KUBECONFIG_DIR"
ALLOW_EXEC_ENV = "KARMACTL_ALLOW_EXEC_PLUGINS"
RUNTIME_DIR = ".karmactl"


class AccessError(Exception):
    """The Cluster names no usable kubeconfig (message says which and why)."""


@dataclass(frozen=True)
class CredentialPolicy:
    """What the operator allows member kubeconfigs (flags and environment: trusted).

    Attributes:
        kubeconfig_dir: the directory annotated kubeconfigs must resolve inside (None: the
            environment's ``KARMACTL_KUBECONFIG_DIR``, else ``<state>/.karmactl``).
        allow_exec: run ``exec`` credential plugins and ``auth-provider`` s (None: the
            environment's ``KARMACTL_ALLOW_EXEC_PLUGINS``).
    """

    kubeconfig_dir: str | None = None
    allow_exec: bool | None = None

    def directory(self, state_dir: Path | str, environ=None) -> str:
        """The kubeconfig directory as an absolute real path (it need not exist)."""
        env = os.environ if environ is None else environ
        chosen = self.kubeconfig_dir or env.get(KUBECONFIG_DIR_ENV) or os.path.join(str(state_dir), RUNTIME_DIR)
        return os.path.realpath(os.path.expanduser(str(chosen)))

    def exec_allowed(self, environ=None) -> bool:
        if self.allow_exec is not None:
            return bool(self.allow_exec)
        env = os.environ if environ is None else environ
        return truthy(env.get(ALLOW_EXEC_ENV))


_POLICY = CredentialPolicy()


def truthy(value) -> bool:
    """An environment variable or flag value meaning yes (``1``, ``true``, ``yes``, ``on``)."""
    if isinstance(value, bool):
        return value
    return str(value or "").strip().lower() in ("1", "true", "yes", "on")


def configure(kubeconfig_dir: str | os.PathLike | None = None, allow_exec=None) -> CredentialPolicy:
    """Set the process's :class:`CredentialPolicy` from the global flags (``--kubeconfig-dir``,
    ``--allow-exec-plugins``; the CLI calls this for every command). None (or "") leaves a
    setting to the environment and the default. Returns the policy."""
    global _POLICY
    _POLICY = CredentialPolicy(str(kubeconfig_dir) if kubeconfig_dir not in (None, "") else None,
                               None if allow_exec in (None, "", False) else truthy(allow_exec))
    return _POLICY


def current_policy() -> CredentialPolicy:
    """The policy :func:`configure` set (the default until then)."""
    return _POLICY


def inside(path: str, directory: str) -> bool:
    """Whether ``path`` (real, absolute) is ``directory`` or under it."""
    try:
        return os.path.commonpath([path, directory]) == directory
    except ValueError:
        return False


@dataclass(frozen=True)
class ClusterAccess:
    """Where a member is reached.

    Attributes:
        cluster: the Cluster's name.
        paths: kubeconfig files, merged in order (first wins, as with kubectl).
        context: the context to use.
        confined_to: for a kubeconfig the Cluster's annotation named, the kubeconfig directory
            (real path) the files it names must resolve inside; None for the operator's fallback.
        allow_exec: whether ``exec`` plugins and ``auth-provider`` s may be used.
    """

    cluster: str
    paths: tuple[str, ...]
    context: str
    confined_to: str | None = None
    allow_exec: bool = False


def resolve_access(cluster: dict, state_dir: Path | str, kubeconfig: str | None = None,
                   environ: dict | None = None, policy: CredentialPolicy | None = None) -> ClusterAccess:
    """The kubeconfig and context of a Cluster object.

    Args:
        cluster: the Cluster (user object; only ``metadata`` is read).
        state_dir: relative annotation paths are resolved against it.
        kubeconfig: the ``--kubeconfig`` fallback (a path or an ``os.pathsep`` list), or None.
        environ: environment for ``KUBECONFIG``/``HOME`` and the policy's variables (default ``os.environ``).
        policy: the operator's :class:`CredentialPolicy` (default :func:`current_policy`).

    Raises:
        AccessError: the annotated file does not exist or resolves outside the kubeconfig
            directory, or no fallback kubeconfig exists.
    """
    env = os.environ if environ is None else environ
    policy = policy or _POLICY
    md = cluster.get("metadata") or {}
    name = md.get("name") or ""
    ann = md.get("annotations") or {}
    context = ann.get(CONTEXT_ANNOTATION) or name
    annotated = ann.get(KUBECONFIG_ANNOTATION)
    allow_exec = policy.exec_allowed(env)
    if annotated:
        path = Path(os.path.expanduser(str(annotated)))
        if not path.is_absolute():
            path = Path(state_dir) / path
        directory = policy.directory(state_dir, env)
        real = os.path.realpath(path)
        if not inside(real, directory):
            raise AccessError(
                f"the kubeconfig of Cluster {name} (annotation {KUBECONFIG_ANNOTATION}: {annotated}) resolves to "
                f"{real}, outside the kubeconfig directory {directory}; karmactl reads member kubeconfigs only "
                f"inside it (place the file there, or name a directory holding it with --kubeconfig-dir or "
                f"{KUBECONFIG_DIR_ENV})")
        if not os.path.isfile(real):
            raise AccessError(f"kubeconfig {path} (annotation {KUBECONFIG_ANNOTATION}) does not exist")
        return ClusterAccess(name, (str(path),), context, directory, allow_exec)
    listed = kubeconfig or env.get("KUBECONFIG") or ""
    paths = tuple(p for p in listed.split(os.pathsep) if p and os.path.isfile(os.path.expanduser(p)))
    if not paths and not listed:
        home = os.path.join(os.path.expanduser(env.get("HOME") or "~"), ".kube", "config")
        if os.path.isfile(home):
            paths = (home,)
    if not paths:
        raise AccessError(f"no kubeconfig: set annotation {KUBECONFIG_ANNOTATION} on the Cluster "
                          f"(karmactl join does) or KUBECONFIG with a context named {name}")
    return ClusterAccess(name, tuple(os.path.expanduser(p) for p in paths), context, None, allow_exec)


# (node holding the field, field, node whose file the relative path is resolved against), as
# kubernetes.config.kube_config.KubeConfigLoader reads them (client-certificate and client-key are
# resolved against the cluster entry's file there)
_FILE_FIELDS = (("user", "tokenFile", "user"), ("cluster", "certificate-authority", "cluster"),
                ("user", "client-certificate", "cluster"), ("user", "client-key", "cluster"))


def load_configuration(access: ClusterAccess, configuration, temp_file_path: str | None = None) -> None:
    """Load ``access``'s context into a ``kubernetes.client.Configuration`` as the client's
    ``load_kube_config(persist_config=False)`` does, after :func:`check_credentials`.

    Args:
        temp_file_path: the directory the client writes inline certificates and keys to.

    Raises:
        AccessError: a refused plugin or file (see the module docstring).
        Exception: the kubernetes config loader's (a missing context, a malformed file...).
    """
    from kubernetes.config import kube_config

    merged = kube_config.KubeConfigMerger(os.pathsep.join(access.paths))
    if merged.config is None:
        raise kube_config.ConfigException("Invalid kube-config file. No configuration found.")
    loader = kube_config.KubeConfigLoader(config_dict=merged.config, active_context=access.context,
                                          config_base_path=None, temp_file_path=temp_file_path)
    check_credentials(access, getattr(loader, "_user", None), getattr(loader, "_cluster", None))
    loader.load_and_set(configuration)


def check_access(access: ClusterAccess) -> None:
    """Check ``access``'s context as :func:`load_configuration` does, without loading it: for a program
    that reads the kubeconfig itself (the real ``kubectl`` of ``karmactl logs``/``exec``), which must
    be refused the same plugins and files a run is refused.

    Raises:
        AccessError: a refused plugin or file.
        Exception: the kubernetes config loader's (a missing context, a malformed file...).
    """
    from kubernetes.config import kube_config

    merged = kube_config.KubeConfigMerger(os.pathsep.join(access.paths))
    if merged.config is None:
        raise kube_config.ConfigException("Invalid kube-config file. No configuration found.")
    loader = kube_config.KubeConfigLoader(config_dict=merged.config, active_context=access.context,
                                          config_base_path=None)
    check_credentials(access, getattr(loader, "_user", None), getattr(loader, "_cluster", None))


def _field(node, key):
    """``node[key]`` of a loader ``ConfigNode`` or a dict, None when absent or not a mapping."""
    getter = getattr(node, "safe_get", None) or getattr(node, "get", None)
    try:
        return getter(key) if getter else None
    except (AttributeError, TypeError):
        return None


def check_credentials(access: ClusterAccess, user, cluster) -> None:
    """Refuse what a kubeconfig context may not do under ``access`` (module docstring).

    Args:
        user / cluster: the context's user and cluster entries (the loader's ``ConfigNode`` s,
            whose ``path`` is the file they came from; plain dicts are read with no path).

    Raises:
        AccessError: naming the Cluster, the file, the field and how to allow it.
    """
    where = f"the kubeconfig of Cluster {access.cluster} ({', '.join(access.paths)}, context {access.context})"
    if user and not access.allow_exec:
        if "exec" in user:
            command = _field(user["exec"], "command")
            raise AccessError(f"{where} uses an exec credential plugin ({command or 'no command'}); karmactl runs "
                              f"none unless the operator allows it with --allow-exec-plugins or {ALLOW_EXEC_ENV}=1")
        if "auth-provider" in user:
            pname = _field(user["auth-provider"], "name")
            raise AccessError(f"{where} uses auth-provider {pname or '?'} (it may run its cmd-path or call its "
                              f"issuer); karmactl uses none unless the operator allows it with --allow-exec-plugins "
                              f"or {ALLOW_EXEC_ENV}=1")
    if access.confined_to is None:
        return
    nodes = {"user": user, "cluster": cluster}
    for holder, field, base_of in _FILE_FIELDS:
        node = nodes[holder]
        if not node or field not in node or not node[field]:
            continue
        base_path = getattr(nodes[base_of], "path", None)
        base = os.path.abspath(os.path.dirname(base_path)) if base_path else ""
        named = os.path.realpath(os.path.normpath(os.path.join(base, os.path.expanduser(str(node[field])))))
        if not inside(named, access.confined_to):
            raise AccessError(f"{where}: {field} {node[field]} resolves to {named}, outside the kubeconfig directory "
                              f"{access.confined_to}; the files a member kubeconfig names must be inside it too")


__all__ = ["AccessError", "ClusterAccess", "CONTEXT_ANNOTATION", "CredentialPolicy", "KUBECONFIG_ANNOTATION",
           "KUBECONFIG_DIR_ENV", "ALLOW_EXEC_ENV", "check_access", "check_credentials", "configure", "current_policy",
           "load_configuration", "resolve_access"]


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
