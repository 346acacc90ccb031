"""A small HTTP proxy on localhost for the tests of a Cluster's ``proxyURL`` / ``proxyHeader``.

It does what a forward proxy in front of member clusters does, and records what it was asked:

* ``CONNECT host:port`` (an https member): answers ``200 Connection established`` and relays bytes
  both ways until either side closes; the TLS inside stays end to end;
* an absolute-URI request (``GET http://host:port/path``, a plain-http member): sends it on with the
  path only and ``Connection: close``, relays the answer, then closes the client connection.

``requests`` lists ``(method, target, headers)`` of every request the proxy received (headers as a
dict, names as sent). ``refuse`` makes it answer ``407`` to everything (a proxy wanting credentials).
"""
from __future__ import annotations

import select
import socket
import socketserver
import threading


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):  # noqa: D401 - socketserver's hook
        proxy: HttpProxy = self.server.proxy  # type: ignore[attr-defined]
        conn = self.request
        conn.settimeout(10)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(65536)
            if not chunk:
                return
            head += chunk
        head, _, rest = head.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _version = (lines[0].split(" ") + ["", ""])[:3]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip()] = value.strip()
        with proxy.lock:
            proxy.requests.append((method, target, headers))
        if proxy.refuse:
            conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = socket.create_connection((host, int(port)), timeout=10)
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            _relay(conn, upstream)
            return
        _forward(conn, method, target, headers, rest)


def _forward(conn, method: str, target: str, headers: dict, rest: bytes) -> None:
    """Send an absolute-URI request on to its server, relay the answer, close."""
    from urllib.parse import urlsplit

    u = urlsplit(target)
    upstream = socket.create_connection((u.hostname, u.port or 80), timeout=10)
    length = int(headers.get("Content-Length") or 0)
    body = rest
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    kept = {k: v for k, v in headers.items() if not k.lower().startswith("proxy-") and k.lower() != "connection"}
    path = u.path + (f"?{u.query}" if u.query else "")
    lines = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in kept.items()] + ["Connection: close", "", ""]
    upstream.sendall("\r\n".join(lines).encode("latin-1") + body)
    answer = b""
    while True:
        chunk = upstream.recv(65536)
        if not chunk:
            break
        answer += chunk
    upstream.close()
    status, _, rest = answer.partition(b"\r\n")  # the client must not reuse this connection
    conn.sendall(status + b"\r\nConnection: close\r\n" + rest)


def _relay(a, b) -> None:
    try:
        while True:
            ready, _, _ = select.select([a, b], [], [], 10)
            if not ready:
                return
            for src in ready:
                data = src.recv(65536)
                if not data:
                    return
                (b if src is a else a).sendall(data)
    except OSError:
        return
    finally:
        b.close()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class HttpProxy:
    """A forward proxy on ``127.0.0.1`` (any free port); ``url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self):
        self.requests: list = []
        self.refuse = False
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        daemon=True, name="test-http-proxy")
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "HttpProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def dead_port() -> int:
    """A localhost port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
