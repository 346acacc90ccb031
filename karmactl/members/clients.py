"""A small REST client per member cluster, built from a kubeconfig context by the official client.

The ``kubernetes`` package reads the kubeconfig (auth, TLS, exec plugins, token refresh) and owns
the connection pool; requests go through that pool directly, so karmactl controls what the
generated client does not let it: no retries of a failed connection (a down member fails at
once; an answer 429/5xx with ``Retry-After`` is sent again within the timeout, as client-go does),
a per-request total timeout, raw JSON bodies (orjson), a per-member rate limit (:class:`TokenBucket`, off by default)
and a connection pool as large as the member's request workers, so concurrent requests each keep
their connection alive.

Discovery (``/api``, ``/apis`` and each group-version) is fetched once per run per member
(:class:`Discovery`), used for ``apiEnablements`` and to map a kind to its REST path.
"""
from __future__ import annotations

import functools
import http.client
import io
import shutil
import socket
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

import orjson

from karmactl.members.kubeconfig import ClusterAccess, load_configuration, redact, register_secret

DEFAULT_TIMEOUT = 5.0
DEFAULT_QPS = 0.0
"""Requests per second per member; 0 is no client-side limit. Karmada's controller-manager defaults
to ``--cluster-api-qps=40`` for a process that syncs Works one event at a time and reads from
watch caches; a karmactl run sends its whole batch at once and reads by LIST, as ``kubectl apply``
does, which sets no limit either (README, "Member requests")."""
DEFAULT_BURST = 60
"""Tokens saved up when ``qps`` > 0: Karmada's ``--cluster-api-burst`` default."""
DEFAULT_WORKERS = 5
"""Requests in flight per member: Karmada's ``--concurrent-work-syncs`` default."""
MAX_RETRY_AFTER = 10
"""How often one request is sent again when the member answers 429/5xx with ``Retry-After``
(client-go's default ``maxRetries``)."""
AUTH_REFRESH_SECONDS = 1.0
"""How often the kubeconfig loader's token refresh hook runs at most (it renews tokens five
minutes before they expire, so a second's delay never sends an expired one)."""


class MemberUnreachable(Exception):
    """A transport failure: connection refused, timeout, TLS or protocol error (message says which)."""


class MemberApiError(Exception):
    """A Kubernetes ``Status`` error from the member.

    Attributes:
        code: HTTP status; reason: the Status reason (``NotFound``, ``Conflict``, ...); message: its message.
    """

    def __init__(self, code: int, reason: str, message: str):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


class TokenBucket:
    """A thread-safe token bucket, as client-go's ``flowcontrol.NewTokenBucketRateLimiter``:
    ``rate`` tokens per second, at most ``burst`` saved up, full at start.

    :meth:`take` reserves a token and sleeps until it is due, so concurrent callers are admitted in
    the order they asked, ``burst`` at once and then ``rate`` per second. ``rate`` <= 0 disables the
    limit (client-go's negative QPS).

    Args:
        rate: tokens per second (float).
        burst: bucket size (>= 1; default ``max(rate, 1)``).
        clock, sleep: ``time.monotonic`` and ``time.sleep`` (tests pass fakes).

    Follows ``k8s.io/client-go/util/flowcontrol/throttle.go`` (a ``golang.org/x/time/rate`` limiter).
    """

    def __init__(self, rate: float, burst: float | None = None, clock=time.monotonic, sleep=time.sleep):
        self.rate = float(rate)
        self.burst = max(1.0, float(burst if burst is not None else max(rate, 1.0)))
        self.tokens = self.burst
        self._clock, self._sleep = clock, sleep
        self._last = clock()
        self._lock = threading.Lock()

    def take(self) -> float:
        """Take one token, sleeping until it is due; returns the seconds waited."""
        if self.rate <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            self.tokens = min(self.burst, self.tokens + (now - self._last) * self.rate)
            self._last = now
            self.tokens -= 1.0
            wait = -self.tokens / self.rate if self.tokens < 0 else 0.0
        if wait > 0:
            self._sleep(wait)
        return wait


@dataclass
class Resource:
    """One served resource: REST path pieces and scope."""

    group_version: str
    name: str
    kind: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = "/api/" + self.group_version if "/" not in self.group_version else "/apis/" + self.group_version
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += "/" + self.name
        if name:
            base += "/" + name
        return base


@dataclass
class Discovery:
    """What a member serves.

    Attributes:
        group_versions: ``groupVersion -> [Resource]`` (sub-resources excluded), every version of
            every group.
        failed: group-versions whose resource list could not be read (partial discovery).
    """

    group_versions: dict = field(default_factory=dict)
    failed: list = field(default_factory=list)

    def lookup(self, api_version: str, kind: str) -> Resource | None:
        for r in self.group_versions.get(api_version) or []:
            if r.kind == kind:
                return r
        return None

    def api_enablements(self) -> list[dict]:
        """``status.apiEnablements``: ``[{groupVersion, resources: [{name, kind}]}]`` sorted by
        groupVersion then resource name (``pkg/util/helper/cluster.go`` order)."""
        out = []
        for gv in sorted(self.group_versions):
            resources = sorted(({"name": r.name, "kind": r.kind} for r in self.group_versions[gv]),
                               key=lambda r: r["name"])
            out.append({"groupVersion": gv, "resources": resources})
        return out


class MemberClient:
    """REST access to one member.

    Args:
        access: kubeconfig file(s) and context.
        timeout: total seconds per request (connect + read).
        qps: requests per second allowed to this member (<= 0: no limit).
        burst: requests the bucket lets through at once when ``qps`` > 0.
        workers: requests this client may have in flight at once (the pool keeps that many
            connections open); callers bound their own concurrency to it.
        retries: times one request is sent again when the member answers 429/5xx with
            ``Retry-After`` (default :data:`MAX_RETRY_AFTER`; 0: never), all within ``timeout``.

    The kubeconfig is loaded through :func:`karmactl.members.kubeconfig.load_configuration` (exec
    plugins, auth-providers and files outside the kubeconfig directory refused as ``access`` says);
    its TLS material is held in memory only (:func:`_in_memory_pool`); every answer, status line and
    headers included, is read within ``timeout`` (:class:`_DeadlineResponse`).

    Raises:
        AccessError: the kubeconfig asks for what ``access`` does not allow.
        Exception: from the kubernetes config loader when the context or its cluster is missing or
            malformed (the caller reports ``StatusCollectionFailed``).
    """

    def __init__(self, access: ClusterAccess, timeout: float = DEFAULT_TIMEOUT, qps: float = DEFAULT_QPS,
                 burst: float = DEFAULT_BURST, workers: int = DEFAULT_WORKERS, retries: int = MAX_RETRY_AFTER):
        from kubernetes import client as kclient

        self.access, self.timeout, self.retries = access, float(timeout), max(0, int(retries))
        cfg = kclient.Configuration()
        # inline certificates and keys (``*-data``) become files only in a private directory, read
        # into memory at once and removed before any request: no key file outlives this call,
        # even if the process is killed later
        keydir = tempfile.mkdtemp(prefix="karmactl-keys-")
        try:
            proxy_headers = load_configuration(access, cfg, keydir)
            for value in list((cfg.api_key or {}).values()) + [cfg.password]:
                register_secret(value)
            for value in (cfg.api_key or {}).values():
                if isinstance(value, str) and any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
                    raise ValueError(f"the token of context {access.context} holds a line break or another "
                                     f"control character (an HTTP header cannot carry it)")
            cfg.retries = 0  # read by the pool manager when the ApiClient is built
            self.workers = max(1, int(workers))
            cfg.connection_pool_maxsize = max(cfg.connection_pool_maxsize or 1, self.workers)
            self.api = kclient.ApiClient(configuration=cfg)
            self.api.rest_client.pool_manager = _in_memory_pool(cfg, proxy_headers)
        finally:
            _forget_temp_files(keydir)
            if keydir:
                shutil.rmtree(keydir, ignore_errors=True)
        self.bucket = TokenBucket(qps, burst)
        self._base = cfg.host.rstrip("/")
        self._auth_lock = threading.Lock()
        self._auth_at: float | None = None
        self._auth_header: str | None = None
        self.requests = 0
        self.writes = 0
        self.retried = 0  # requests sent again after a Retry-After
        self._discovery: Discovery | None = None
        self._discovery_lock = threading.RLock()
        self._lock = threading.Lock()

    @property
    def server(self) -> str:
        return self.api.configuration.host

    def close(self) -> None:
        try:
            self.api.rest_client.pool_manager.clear()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass

    # ---- raw requests ---------------------------------------------------------------------------

    def request(self, method: str, path: str, body=None, content_type: str = "application/json",
                query: list | None = None, timeout: float | None = None) -> tuple[int, object]:
        """One request; returns ``(status, parsed JSON body or text)`` for any HTTP status.

        An answer 429 (or 5xx) with ``Retry-After: <seconds>`` is sent again after that wait, as
        client-go's ``rest.Request`` does (``checkWait``), at most ``retries`` times and
        only while the wait ends within this request's ``timeout``; otherwise that answer is returned.

        Raises:
            MemberUnreachable: transport failure or timeout (``timeout`` covers every attempt).
        """
        import urllib3

        headers = {"Accept": "application/json", "Content-Type": content_type, "User-Agent": "karmactl"}
        auth = self._authorization()
        if auth:
            headers["Authorization"] = auth
        url = self._base + path  # paths are built from DNS-1123 names; query values are quoted
        if query:
            url += "?" + urlencode(list(query), quote_via=quote)
        data = None if body is None else (body if isinstance(body, bytes) else orjson.dumps(body))
        total = timeout or self.timeout
        deadline = time.monotonic() + total
        for attempt in range(self.retries + 1):
            self.bucket.take()
            with self._lock:
                self.requests += 1
                if method != "GET" and ("dryRun", "All") not in (query or []):
                    self.writes += 1
            left = deadline - time.monotonic()
            if left <= 0:
                raise MemberUnreachable(f"request timed out after {total:g}s (the member kept asking to retry)")
            try:
                resp = self.api.rest_client.pool_manager.request(
                    method, url, body=data, headers=headers, retries=False, preload_content=False,
                    timeout=urllib3.Timeout(total=left))
                raw = _read_body(resp, deadline, total)
            except urllib3.exceptions.HTTPError as exc:
                raise MemberUnreachable(_transport_message(exc, total)) from None
            except (OSError, ValueError) as exc:  # ValueError: a header http.client refuses
                raise MemberUnreachable(redact(str(exc))) from None
            wait = _retry_after(resp.status, resp.headers.get("Retry-After"))
            if wait is None or attempt == self.retries or time.monotonic() + wait >= deadline:
                break
            with self._lock:
                self.retried += 1
            time.sleep(wait)
        try:
            return resp.status, orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            return resp.status, raw.decode("utf-8", "replace")

    def watch_lines(self, path: str, query: list, read_timeout: float, stop=None):
        """The lines of one watch request (``GET path?watch=1...``), one JSON event each, as they
        arrive, until the server ends the stream, ``read_timeout`` seconds have passed, or ``stop``
        (a ``threading.Event``) is set when a line arrives (``karmactl/members/watching.py``).

        Raises:
            MemberUnreachable: transport failure or the deadline.
            MemberApiError: an answer other than 200 (410 Gone included).
        """
        import urllib3

        headers = {"Accept": "application/json", "User-Agent": "karmactl"}
        auth = self._authorization()
        if auth:
            headers["Authorization"] = auth
        url = self._base + path + "?" + urlencode(list(query), quote_via=quote)
        self.bucket.take()
        with self._lock:
            self.requests += 1
        try:
            resp = self.api.rest_client.pool_manager.request(
                "GET", url, headers=headers, retries=False, preload_content=False,
                timeout=urllib3.Timeout(total=read_timeout))
        except urllib3.exceptions.HTTPError as exc:
            raise MemberUnreachable(_transport_message(exc, read_timeout)) from None
        except (OSError, ValueError) as exc:
            raise MemberUnreachable(redact(str(exc))) from None
        try:
            if resp.status != 200:
                body = resp.read(4096)
                raise MemberApiError(resp.status, "", body.decode("utf-8", "replace")[:200])
            pending = b""
            for chunk in resp.stream(65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield line
                if stop is not None and stop.is_set():
                    return
            if pending.strip():
                yield pending
        except urllib3.exceptions.HTTPError as exc:
            raise MemberUnreachable(_transport_message(exc, read_timeout)) from None
        except OSError as exc:
            raise MemberUnreachable(redact(str(exc))) from None
        finally:  # a watch connection is not reused (it may be cut mid-stream)
            resp.close()
            resp.release_conn()

    def _authorization(self) -> str | None:
        """The ``Authorization`` header (bearer token), refreshed through the kubeconfig loader's hook
        (exec plugins, expiring tokens) at most every :data:`AUTH_REFRESH_SECONDS`."""
        cfg = self.api.configuration
        with self._auth_lock:
            now = time.monotonic()
            if self._auth_at is None or now - self._auth_at >= AUTH_REFRESH_SECONDS:
                self._auth_header = (cfg.auth_settings().get("BearerToken") or {}).get("value")
                self._auth_at = now
            return self._auth_header

    def call(self, method: str, path: str, body=None, content_type: str = "application/json",
             query: list | None = None, ok_missing: bool = False):
        """A request that must succeed: returns the parsed body (None for a tolerated 404).

        Raises:
            MemberUnreachable: transport failure.
            MemberApiError: any other non-2xx answer.
        """
        status, data = self.request(method, path, body, content_type, query)
        if 200 <= status < 300:
            if data is not None and not isinstance(data, dict):
                raise MemberUnreachable(f"malformed answer to {method} {path}: HTTP {status} without a JSON "
                                        f"object ({str(data)[:80]!r})")
            return data
        if status == 404 and ok_missing:
            return None
        if isinstance(data, dict) and data.get("kind") == "Status":
            raise MemberApiError(status, data.get("reason") or "", data.get("message") or str(data))
        raise MemberApiError(status, "", f"the server responded with {status}: {str(data)[:200]}")

    # ---- discovery ------------------------------------------------------------------------------

    def discovery(self, refresh: bool = False) -> Discovery:
        """Every group-version the member serves (cached; ``refresh`` re-reads).

        Raises:
            MemberUnreachable / MemberApiError: ``/api`` or ``/apis`` could not be read.
        """
        if self._discovery is not None and not refresh:
            return self._discovery
        with self._discovery_lock:
            if self._discovery is not None and not refresh:
                return self._discovery
            return self._discover()

    def _discover(self) -> Discovery:
        d = Discovery()
        try:
            gvs = [v for v in (self.call("GET", "/api") or {}).get("versions") or []]
            for group in (self.call("GET", "/apis") or {}).get("groups") or []:
                gvs += [v["groupVersion"] for v in group.get("versions") or []]
            if not all(isinstance(gv, str) for gv in gvs):
                raise TypeError("a groupVersion is not a string")
            docs = self._read_group_versions(gvs)
            for gv, doc in zip(gvs, docs):
                self._record_group_version(d, gv, doc)
        except (AttributeError, TypeError, KeyError) as exc:
            raise MemberUnreachable(f"malformed discovery answer: {exc}") from None
        self._discovery = d
        return d

    def _read_group_versions(self, gvs: list) -> list:
        """:meth:`_read_group_version` of each, ``workers`` at a time, in order. The first transport
        failure cancels the reads not yet sent (a hanging member costs one timeout, not one per
        group-version) and is raised."""
        if self.workers <= 1 or len(gvs) <= 1:
            return [self._read_group_version(gv) for gv in gvs]
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(min(self.workers, len(gvs)), thread_name_prefix="discovery")
        try:
            futures = [pool.submit(self._read_group_version, gv) for gv in gvs]
            return [f.result() for f in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _discover_group_version(self, d: Discovery, gv: str) -> None:
        self._record_group_version(d, gv, self._read_group_version(gv))

    def _read_group_version(self, gv: str) -> dict | None:
        """The resource list of one group-version, None when the member answers with an error."""
        path = "/api/" + gv if "/" not in gv else "/apis/" + gv
        try:
            return self.call("GET", path) or {}
        except MemberApiError:
            return None

    @staticmethod
    def _record_group_version(d: Discovery, gv: str, doc: dict | None) -> None:
        if doc is None:
            if gv not in d.failed:
                d.failed.append(gv)
            return
        d.group_versions[gv] = [Resource(gv, r["name"], r.get("kind", ""), bool(r.get("namespaced")))
                                for r in doc.get("resources") or [] if "/" not in r.get("name", "")]
        if gv in d.failed:
            d.failed.remove(gv)

    def resource_for(self, api_version: str, kind: str) -> Resource | None:
        """The REST resource of a kind; re-reads that group-version once when unknown (a CRD
        applied in this run adds resources).

        Raises:
            MemberUnreachable: transport failure.
        """
        d = self.discovery()
        found = d.lookup(api_version, kind)
        if found is None:
            with self._discovery_lock:  # workers meeting one new kind read its group-version once
                found = d.lookup(api_version, kind)
                if found is None:
                    self._discover_group_version(d, api_version)
                    found = d.lookup(api_version, kind)
        return found


def _in_memory_pool(cfg, proxy_headers: dict | None = None):
    """A urllib3 pool manager for ``cfg`` whose TLS material (CA, client certificate and key) is
    loaded into one ``SSLContext`` now, so the files may be removed. With ``cfg.proxy`` (an http or
    https URL, checked by :func:`karmactl.members.kubeconfig.apply_connection`) it is a
    ``ProxyManager``: an https member is reached through a ``CONNECT`` tunnel carrying
    ``proxy_headers``, a plain-http member's requests are forwarded by the proxy with them, as
    Go's ``http.Transport`` does with Karmada's ``ProxyConnectHeader``."""
    import ssl

    import urllib3

    ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None)
    if cfg.ca_cert_data:
        ctx.load_verify_locations(cadata=cfg.ca_cert_data)
    if not cfg.verify_ssl:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if cfg.cert_file:
        ctx.load_cert_chain(cfg.cert_file, cfg.key_file)
    args = {"cert_reqs": ssl.CERT_REQUIRED if cfg.verify_ssl else ssl.CERT_NONE, "ssl_context": ctx, "retries": 0}
    if cfg.assert_hostname is not None:
        args["assert_hostname"] = cfg.assert_hostname
    if cfg.tls_server_name:
        args["server_hostname"] = cfg.tls_server_name
    if cfg.connection_pool_maxsize is not None:
        args["maxsize"] = cfg.connection_pool_maxsize
    if cfg.proxy:
        return _bound_answers(urllib3.ProxyManager(cfg.proxy, proxy_headers=dict(proxy_headers or {}), **args))
    return _bound_answers(urllib3.PoolManager(**args))


# ---------------------------------------------------------------------------- bounded answers
class _DeadlineReader(io.RawIOBase):
    """A socket read so that the whole answer ends by ``deadline`` (``time.monotonic()``): every
    ``recv`` waits at most what is left, so a member sending a byte now and then cannot stretch
    the status line or the headers past the request's timeout (a socket timeout restarts at every
    byte). It reads through the socket's own unbuffered ``makefile``, which keeps the socket open
    until the answer is closed, as ``http.client`` expects when the connection hands it over."""

    def __init__(self, sock, deadline: float):
        super().__init__()
        self._sock, self._deadline = sock, deadline
        self._raw = sock.makefile("rb", buffering=0)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out (answer still arriving)")
        self._sock.settimeout(left)
        return self._raw.readinto(buffer)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _DeadlineSocket:
    """What ``http.client.HTTPResponse`` asks of its socket (``makefile``), over a :class:`_DeadlineReader`."""

    def __init__(self, sock, deadline: float):
        self._sock, self._deadline = sock, deadline

    def makefile(self, mode: str = "rb", *args, **kwargs):
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))


class _DeadlineResponse(http.client.HTTPResponse):
    """An answer read within the timeout urllib3 set on the socket before reading it (what is left
    of the request's total timeout), headers included; no timeout set: no deadline."""

    def __init__(self, sock, *args, **kwargs):
        left = sock.gettimeout()
        if left is not None:
            sock = _DeadlineSocket(sock, time.monotonic() + left)
        super().__init__(sock, *args, **kwargs)


def _bound_answers(manager):
    """Make ``manager`` (a urllib3 ``PoolManager`` or ``ProxyManager``) read answers through
    :class:`_DeadlineResponse`; returns it."""
    manager.pool_classes_by_scheme = dict(_deadline_pools())
    return manager


@functools.lru_cache(maxsize=None)
def _deadline_pools() -> tuple:
    """``(("http", pool class), ("https", pool class))`` whose connections answer with :class:`_DeadlineResponse`."""
    import urllib3
    from urllib3 import connection

    http_conn = type("DeadlineHTTPConnection", (connection.HTTPConnection,), {"response_class": _DeadlineResponse})
    https_conn = type("DeadlineHTTPSConnection", (connection.HTTPSConnection,), {"response_class": _DeadlineResponse})
    return (("http", type("DeadlineHTTPPool", (urllib3.HTTPConnectionPool,), {"ConnectionCls": http_conn})),
            ("https", type("DeadlineHTTPSPool", (urllib3.HTTPSConnectionPool,), {"ConnectionCls": https_conn})))


@contextmanager
def member_pool(workers: int, prefix: str):
    """A thread pool for member work that never outlives an interrupted caller: on an exception
    (SIGINT/SIGTERM in the main thread included) pending tasks are cancelled and running ones left
    behind (the CLI exits at once, DESIGN §5), else it waits for every task as ``with
    ThreadPoolExecutor`` does."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=prefix)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _forget_temp_files(keydir) -> None:
    """Drop the kubernetes client's memo of the temporary files it made in ``keydir`` (they are
    removed), so a later load writes them again."""
    if not keydir:
        return
    try:
        from kubernetes.config import kube_config

        for content, name in list(kube_config._temp_files.items()):
            if str(name).startswith(str(keydir)):
                del kube_config._temp_files[content]
    except (ImportError, AttributeError):  # pragma: no cover - another client version
        pass


MAX_BODY_BYTES = 256 * 1024 * 1024
"""Largest answer read from a member (a cluster-wide Pod list of a large member is tens of MiB)."""


def _read_body(resp, deadline: float, total: float) -> bytes:
    """Read an answer within ``deadline`` (``time.monotonic()``): a member trickling bytes cannot
    stretch a request past its total timeout (urllib3's read timeout restarts at every byte).

    Raises:
        MemberUnreachable: past the deadline, or over :data:`MAX_BODY_BYTES`.
    """
    chunks, size = [], 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise MemberUnreachable(f"request timed out after {total:g}s (answer still arriving)")
            sock = getattr(getattr(resp, "_connection", None) or getattr(resp, "connection", None), "sock", None)
            if sock is not None:
                sock.settimeout(left)
            chunk = resp.read1(1 << 16)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise MemberUnreachable(f"answer larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB")
            chunks.append(chunk)
    except BaseException:
        resp.close()  # never drain a trickling or oversized answer
        raise
    resp.release_conn()
    return b"".join(chunks)


def _retry_after(status: int, header: str | None) -> int | None:
    """Seconds to wait before sending a request again: an answer 429 or 5xx with a ``Retry-After``
    header of whole seconds (the form kube-apiserver sends; client-go reads no other), else None."""
    if status != 429 and not 500 <= status < 600:
        return None
    try:
        seconds = int(str(header).strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _transport_message(exc, timeout: float) -> str:
    import urllib3

    reason = getattr(exc, "reason", None) or exc
    text = str(reason)
    # urllib3 2 makes NewConnectionError a subclass of ConnectTimeoutError: look at the text first.
    if "refused" in text.lower():
        return "connection refused"
    if isinstance(reason, urllib3.exceptions.NewConnectionError):
        return text.split(": ", 1)[-1]
    if isinstance(reason, urllib3.exceptions.TimeoutError) or "timed out" in text.lower():
        return f"request timed out after {timeout:g}s"
    return text


__all__ = ["DEFAULT_BURST", "DEFAULT_QPS", "DEFAULT_TIMEOUT", "DEFAULT_WORKERS", "MAX_RETRY_AFTER", "Discovery", "MemberApiError", "MemberClient", "MemberUnreachable",
           "Resource", "TokenBucket", "member_pool"]
