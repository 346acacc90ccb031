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

The connection fields of a Cluster's ``spec`` (untrusted too, semantics §1; Karmada reads them in
``pkg/util/membercluster_client.go: BuildClusterConfig``) are acted on against the kubeconfig, which
stays the one source of where credentials go (:func:`apply_connection`, ``docs/member-connections.md``):

* ``apiEndpoint`` must be the kubeconfig's ``server`` (scheme, host and port, ``https`` and its
  port by default; path without a trailing ``/``): a mismatch fails the member, because connecting to
  the endpoint a state file names would send the kubeconfig's credentials there;
* ``proxyURL`` is used (every request goes through it: ``CONNECT`` for an https member) only when the
  operator consented to that proxy: the kubeconfig's own ``proxy-url`` names it, or it is listed in
  ``--allow-proxy`` / ``KARMACTL_ALLOWED_PROXIES``; ``proxyHeader`` goes to that proxy only (the
  ``CONNECT`` request, or each request a plain-http member's proxy forwards); ``socks5`` proxies are
  refused (no maintained SOCKS client here);
* ``insecureSkipTLSVerification: true`` holds only where the kubeconfig skips verification too
  (``insecure-skip-tls-verify``): a state file never turns TLS verification off;
* ``secretRef`` / ``impersonatorSecretRef`` are refused: karmactl reads no Secrets, the kubeconfig
  named by ``karmactl.io/kubeconfig`` is the member's credential.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

KUBECONFIG_ANNOTATION = "karmactl.io/kubeconfig"
CONTEXT_ANNOTATION = "karmactl.io/context"
KUBECONFIG_DIR_ENV = "KARMACTL_KUBECONFIG_DIR"
ALLOW_EXEC_ENV = "KARMACTL_ALLOW_EXEC_PLUGINS"
ALLOWED_PROXIES_ENV = "KARMACTL_ALLOWED_PROXIES"
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
        allowed_proxies: proxy URLs a Cluster's ``spec.proxyURL`` may name (None: the environment's
            ``KARMACTL_ALLOWED_PROXIES``, comma-separated).
    """

    kubeconfig_dir: str | None = None
    allow_exec: bool | None = None
    allowed_proxies: tuple[str, ...] | None = None

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

    def proxies(self, environ=None) -> tuple[str, ...]:
        """The proxy URLs the operator allows Clusters to name (``--allow-proxy``, else the environment)."""
        if self.allowed_proxies is not None:
            return self.allowed_proxies
        env = os.environ if environ is None else environ
        return split_list(env.get(ALLOWED_PROXIES_ENV))


_POLICY = CredentialPolicy()


def truthy(value) -> bool:
    """An environment variable or flag value meaning yes (``1``, ``true``, ``yes``, ``on``)."""
    if isinstance(value, bool):
        return value
    return str(value or "").strip().lower() in ("1", "true", "yes", "on")


def split_list(value) -> tuple[str, ...]:
    """The non-empty items of a comma-separated flag or variable value (spaces around items dropped)."""
    return tuple(part.strip() for part in str(value or "").split(",") if part.strip())


def configure(kubeconfig_dir: str | os.PathLike | None = None, allow_exec=None,
              allow_proxy: str | None = None) -> CredentialPolicy:
    """Set the process's :class:`CredentialPolicy` from the global flags (``--kubeconfig-dir``,
    ``--allow-exec-plugins``, ``--allow-proxy`` URL[,URL...]; the CLI calls this for every command).
    None (or "") leaves a setting to the environment and the default. Returns the policy."""
    global _POLICY
    _POLICY = CredentialPolicy(str(kubeconfig_dir) if kubeconfig_dir not in (None, "") else None,
                               None if allow_exec in (None, "", False) else truthy(allow_exec),
                               split_list(allow_proxy) if allow_proxy not in (None, "") else None)
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
class Connection:
    """The connection fields of a Cluster's ``spec`` (``pkg/apis/cluster/v1alpha1/types.go``).

    Attributes:
        api_endpoint: ``spec.apiEndpoint`` ("" when unset).
        proxy_url: ``spec.proxyURL`` ("" when unset).
        proxy_header: ``spec.proxyHeader`` as ``((name, value), ...)`` in the file's order.
        insecure: ``spec.insecureSkipTLSVerification``.
    """

    api_endpoint: str = ""
    proxy_url: str = ""
    proxy_header: tuple = ()
    insecure: bool = False

    @classmethod
    def of(cls, cluster: dict) -> "Connection":
        """The fields of a Cluster object (values of the wrong type count as unset: validation
        refused them at load)."""
        spec = cluster.get("spec") or {}
        headers = spec.get("proxyHeader") if isinstance(spec.get("proxyHeader"), dict) else {}
        return cls(str(spec.get("apiEndpoint") or ""), str(spec.get("proxyURL") or ""),
                   tuple((str(k), str(v)) for k, v in headers.items()), spec.get("insecureSkipTLSVerification") is True)


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
        connection: the Cluster's connection fields (:class:`Connection`).
        allowed_proxies: the proxy URLs the operator allows (``--allow-proxy``).
    """

    cluster: str
    paths: tuple[str, ...]
    context: str
    confined_to: str | None = None
    allow_exec: bool = False
    connection: Connection = Connection()
    allowed_proxies: tuple[str, ...] = ()


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
        AccessError: the Cluster names a ``secretRef`` or ``impersonatorSecretRef`` (:func:`refuse_secret_refs`),
            the annotated file does not exist or resolves outside the kubeconfig directory, or no
            fallback kubeconfig exists.
    """
    env = os.environ if environ is None else environ
    policy = policy or _POLICY
    md = cluster.get("metadata") or {}
    name = md.get("name") or ""
    refuse_secret_refs(cluster)
    extra = {"connection": Connection.of(cluster), "allowed_proxies": policy.proxies(env)}
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
        return ClusterAccess(name, (str(path),), context, directory, allow_exec, **extra)
    listed = kubeconfig or env.get("KUBECONFIG") or ""
    paths = tuple(p for p in listed.split(os.pathsep) if p and os.path.isfile(os.path.expanduser(p)))
    if not paths and not listed:
        home = os.path.join(os.path.expanduser(env.get("HOME") or "~"), ".kube", "config")
        if os.path.isfile(home):
            paths = (home,)
    if not paths:
        raise AccessError(f"no kubeconfig: set annotation {KUBECONFIG_ANNOTATION} on the Cluster "
                          f"(karmactl join does) or KUBECONFIG with a context named {name}")
    return ClusterAccess(name, tuple(os.path.expanduser(p) for p in paths), context, None, allow_exec, **extra)


def refuse_secret_refs(cluster: dict) -> None:
    """Refuse a Cluster whose ``spec`` names ``secretRef`` or ``impersonatorSecretRef``.

    Karmada reads the member's token and CA from that Secret (``BuildClusterConfig``) and the
    impersonation token of its cluster proxy from the other; karmactl keeps no Secret (credentials
    never enter the state directory) and has no cluster proxy: the kubeconfig named by
    ``karmactl.io/kubeconfig`` in the kubeconfig directory is the member's credential.

    Raises:
        AccessError: naming the Cluster, the field, the Secret and what to do instead.
    """
    md = cluster.get("metadata") or {}
    spec = cluster.get("spec") or {}
    for field, use in (("secretRef", "the token and CA Karmada reads from it"),
                       ("impersonatorSecretRef", "karmactl has no cluster proxy to impersonate through")):
        ref = spec.get(field)
        if ref:
            secret = f"{(ref or {}).get('namespace', '')}/{(ref or {}).get('name', '')}" if isinstance(ref, dict) else ref
            raise AccessError(
                f"Cluster {md.get('name') or ''}: spec.{field} ({secret}) is not used by karmactl, which reads no "
                f"Secrets ({use}): remove spec.{field} and name the member's kubeconfig with annotation "
                f"{KUBECONFIG_ANNOTATION} inside the kubeconfig directory (`karmactl join {md.get('name') or 'NAME'} "
                f"--kubeconfig FILE` writes it; see docs/security.md)")



# (node holding the field, field, node whose file the relative path is resolved against), as
# kubernetes.config.kube_config.KubeConfigLoader reads them (client-certificate and client-key are
# resolved against the cluster entry's file there)
_FILE_FIELDS = (("user", "tokenFile", "user"), ("cluster", "certificate-authority", "cluster"),
                ("user", "client-certificate", "cluster"), ("user", "client-key", "cluster"))


def load_configuration(access: ClusterAccess, configuration, temp_file_path: str | None = None) -> dict:
    """Load ``access``'s context into a ``kubernetes.client.Configuration`` as the client's
    ``load_kube_config(persist_config=False)`` does, after :func:`check_credentials`, then the
    Cluster's connection fields (:func:`apply_connection`).

    Args:
        temp_file_path: the directory the client writes inline certificates and keys to.

    Returns:
        The headers to send to the proxy (``{name: value}``; empty without one).

    Raises:
        AccessError: a refused plugin, file or connection field (see the module docstring).
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
    return apply_connection(access, configuration)


_DEFAULT_PORTS = {"http": 80, "https": 443, "socks5": 1080}
_SECRET_HEADER_WORDS = ("auth", "token", "secret", "key", "cookie", "password", "credential")
_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def url_key(url: str, default_scheme: str = "https") -> tuple:
    """``(scheme, host, port, path)`` of a server or proxy URL, for comparing two spellings of one
    place: scheme and host lower-cased, the scheme's port when none is given, the path without a
    trailing ``/``, user info dropped. A URL without a scheme (``host:port``, as ``apiEndpoint``
    may be written) takes ``default_scheme``; one that does not parse gives ``("", url, 0, "")``."""
    from urllib.parse import urlsplit

    text = str(url or "").strip()
    if "://" not in text:
        text = f"{default_scheme}://{text}"
    try:
        u = urlsplit(text)
        scheme = u.scheme.lower()
        return scheme, (u.hostname or "").lower(), u.port or _DEFAULT_PORTS.get(scheme, 0), u.path.rstrip("/")
    except ValueError:
        return "", str(url), 0, ""


def shown_url(url: str) -> str:
    """``url`` without its user info (a proxy URL may carry a password) for messages."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        u = urlsplit(str(url))
        return urlunsplit(u._replace(netloc=u.netloc.rpartition("@")[2])) if "@" in u.netloc else str(url)
    except ValueError:
        return "<unparsable URL>"


def apply_connection(access: ClusterAccess, configuration) -> dict:
    """Act on the Cluster's connection fields against the loaded kubeconfig (module docstring):
    check ``apiEndpoint`` and ``insecureSkipTLSVerification``, and set ``configuration.proxy`` to a
    consented ``proxyURL``. Follows ``BuildClusterConfig`` (``pkg/util/membercluster_client.go``),
    with the kubeconfig in place of the Cluster's Secret.

    Returns:
        The proxy headers (``proxyHeader``, plus ``Proxy-Authorization`` from a proxy URL's user
        info), the values of those named like credentials (``auth``, ``token``, ``key``...)
        registered for redaction; empty without a proxy.

    Raises:
        AccessError: a mismatch, a proxy the operator did not configure, a socks5 proxy, or a header
            that HTTP cannot carry; the message names the Cluster, the field and the fix.
    """
    conn, name = access.connection, access.cluster
    where = f"its kubeconfig ({', '.join(access.paths)}, context {access.context})"
    host = str(configuration.host or "")
    if conn.api_endpoint and url_key(conn.api_endpoint) != url_key(host, "http" if host.startswith("http:") else "https"):
        raise AccessError(
            f"Cluster {name}: spec.apiEndpoint {conn.api_endpoint} is not the server of {where}, {host}; karmactl "
            f"connects only where the operator's kubeconfig points (a state file never chooses where member "
            f"credentials are sent): set spec.apiEndpoint to {host} (`karmactl patch cluster {name}` can) or fix the "
            f"kubeconfig")
    if conn.insecure and host.startswith("https") and configuration.verify_ssl:
        raise AccessError(
            f"Cluster {name}: spec.insecureSkipTLSVerification is true but {where} verifies the server's "
            f"certificate; karmactl turns TLS verification off only where the operator's kubeconfig does "
            f"(insecure-skip-tls-verify: true in its cluster entry): set it there, or remove the field")
    proxy = conn.proxy_url or str(configuration.proxy or "")
    if not proxy:
        return {}
    if conn.proxy_url:
        allowed = {url_key(p, "http") for p in access.allowed_proxies}
        if configuration.proxy:
            allowed.add(url_key(configuration.proxy, "http"))
        if url_key(conn.proxy_url, "http") not in allowed:
            raise AccessError(
                f"Cluster {name}: spec.proxyURL {shown_url(conn.proxy_url)} is not a proxy the operator configured; "
                f"karmactl sends a member's requests, and so its credentials, through a proxy only when "
                f"{where} names it (proxy-url) or the operator allows it with --allow-proxy URL or "
                f"{ALLOWED_PROXIES_ENV}")
    configuration.proxy = proxy
    return _proxy_headers(name, proxy, conn.proxy_header if conn.proxy_url else ())


def _proxy_headers(name: str, proxy: str, pairs: tuple) -> dict:
    """The headers for ``proxy`` (see :func:`apply_connection`).

    Raises:
        AccessError: a socks5 proxy, or a header name or value HTTP cannot carry.
    """
    from urllib.parse import unquote, urlsplit

    u = urlsplit(proxy if "://" in proxy else "http://" + proxy)
    if u.scheme.lower() not in ("http", "https"):
        raise AccessError(f"Cluster {name}: proxy {shown_url(proxy)}: karmactl speaks to HTTP proxies only (http:// or "
                          f"https://, CONNECT for an https member); a {u.scheme} proxy is not supported")
    headers: dict = {}
    if u.username is not None:
        import base64

        basic = base64.b64encode(f"{unquote(u.username)}:{unquote(u.password or '')}".encode()).decode()
        headers["Proxy-Authorization"] = f"Basic {basic}"
    for key, value in pairs:
        if not key or not set(key) <= _TOKEN_CHARS or any(ord(ch) < 32 and ch != "\t" or ord(ch) == 127 for ch in value):
            raise AccessError(f"Cluster {name}: spec.proxyHeader {key!r}: not an HTTP header name and value "
                              f"(a name is a token, a value holds no line break or control character)")
        headers[key] = value
    for key, value in headers.items():  # what may be a credential stays out of messages
        if any(word in key.lower() for word in _SECRET_HEADER_WORDS):
            register_secret(value)
    return headers


_CONNECTION_FIELDS = ("apiEndpoint", "secretRef", "impersonatorSecretRef", "insecureSkipTLSVerification",
                      "proxyURL", "proxyHeader")


def connection_warnings(cluster: dict) -> list[str]:
    """What a Cluster's connection fields ask that no request will do (run warnings): any of them on
    a Pull mode Cluster, which karmactl never contacts (Karmada's control plane uses them there only
    for its cluster proxy, which karmactl does not have), and a ``proxyHeader`` without ``proxyURL``
    (Karmada sends it only to the Cluster's proxy)."""
    conn = Connection.of(cluster)
    spec = cluster.get("spec") or {}
    name = (cluster.get("metadata") or {}).get("name") or ""
    if spec.get("syncMode") == "Pull":
        named = [f"spec.{f}" for f in _CONNECTION_FIELDS if spec.get(f)]
        return [f"Cluster {name} is a Pull mode member cluster, which karmactl never contacts: {', '.join(named)} "
                f"{'is' if len(named) == 1 else 'are'} not used (Karmada's control plane reaches a Pull member only "
                f"through its cluster proxy, which karmactl does not have)"] if named else []
    if conn.proxy_header and not conn.proxy_url:
        return [f"Cluster {name}: spec.proxyHeader is set without spec.proxyURL: it is sent to no proxy (Karmada "
                f"and karmactl send it only to the Cluster's own proxyURL)"]
    return []


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


__all__ = ["AccessError", "ClusterAccess", "Connection", "CONTEXT_ANNOTATION", "CredentialPolicy", "KUBECONFIG_ANNOTATION",
           "KUBECONFIG_DIR_ENV", "ALLOW_EXEC_ENV", "ALLOWED_PROXIES_ENV", "apply_connection", "check_access",
           "check_credentials", "configure", "connection_warnings", "current_policy", "load_configuration",
           "refuse_secret_refs", "resolve_access", "url_key"]


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
