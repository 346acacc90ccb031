"""HTTP handling and :class:`MemberServer`, the emulated member cluster.

Served on the standard library's ThreadingHTTPServer with HTTP/1.1 keep-alive. Routes:
``/version``, ``/healthz`` ``/readyz`` ``/livez``, discovery (``/api``, ``/apis``...), ``/openapi/v2`` and ``/openapi/v3``,
the resource paths (``/api/v1/namespaces/<ns>/<plural>/<name>[/status|/scale]``), and the test hooks
under ``/_emulator/`` (see :meth:`Handler._hook`).
"""
from __future__ import annotations

import base64
import copy
import io
import json
import os
import socket
import ssl
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

import orjson

from . import tables
from .hooks import FakeController, HookState, RequestLog, describe, node_object
from .podlogs import PodLogs
from .resources import SERVER_VERSION, Catalogue, ResourceType
from .store import ApiError, Store

PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
MAX_WATCH_SECONDS = 1800


def _load_yaml(text: str) -> Any:
    from ruamel.yaml import YAML
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


class _HTTPServer(ThreadingHTTPServer):
    """Tracks open connections so stop() can cut keep-alive sockets (clients then see a refused or
    reset connection instead of a server that silently stopped answering)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, handler, member: "MemberServer") -> None:
        self.member = member
        self.connections: set = set()
        self.conn_lock = threading.Lock()
        super().__init__(addr, handler)

    def process_request(self, request, client_address) -> None:
        with self.conn_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def finish_request(self, request, client_address) -> None:
        if isinstance(request, ssl.SSLSocket):
            try:
                request.do_handshake()
            except (ssl.SSLError, OSError):
                return
        super().finish_request(request, client_address)

    def shutdown_request(self, request) -> None:
        with self.conn_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def get_request(self):
        sock, addr = super().get_request()
        ctx = self.member._ssl_context
        if ctx is not None:
            # The handshake runs in the request thread (finish_request) so a slow client cannot
            # block the accept loop.
            sock = ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address) -> None:
        pass  # a client hung up; nothing to report

    def cut_connections(self) -> None:
        with self.conn_lock:
            conns = list(self.connections)
            self.connections.clear()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                c.close()
            except OSError:
                pass


def _not_found() -> ApiError:
    """kube-apiserver's 404 for a path it does not serve."""
    return ApiError(404, "NotFound", "the server could not find the requested resource")


def _found(doc: Any) -> Any:
    """``doc``, a discovery or OpenAPI document the catalogue looked up; raises the 404 of
    :func:`_not_found` when it is None (no such group, version or path)."""
    if doc is None:
        raise _not_found()
    return doc


class Handler(BaseHTTPRequestHandler):
    """One HTTP connection; every method goes through :meth:`_dispatch`."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without this, Nagle plus delayed ACKs add ~40 ms
    # to every request.
    disable_nagle_algorithm = True
    server_version = "karmactl-emulator"
    sys_version = ""
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # ---- plumbing --------------------------------------------------------------------------------

    @property
    def member(self) -> "MemberServer":
        return self.server.member

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, code: int, body: Any, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else (
            body.encode() if isinstance(body, str) else orjson.dumps(body))
        self._status = code
        if getattr(self, "_pending_log", None) is not None:
            self._log_request()
        self.send_response(code)
        for warning in getattr(self, "_warnings", ()):
            self.send_header("Warning", '299 - "%s"' % warning.replace('"', '\\"'))
        for name, value in getattr(self, "_extra_headers", ()):
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_error(self, err: ApiError) -> None:
        self._send(err.code, err.status())

    def _dispatch(self, method: str) -> None:
        self._status = 0
        self._warnings: list[str] = []
        self._extra_headers: list[tuple[str, str]] = []
        self._pending_log: dict | None = None
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        if path.startswith("/_emulator"):
            try:
                self._hook(method, path, query)
            except (ValueError, KeyError, TypeError) as e:
                self._send(400, {"error": str(e)})
            except ApiError as e:
                self._send_error(e)
            return
        hooks = self.member.hooks
        self._pending_log = {"method": method, "path": path, "query": parts.query,
                             "content_type": self.headers.get("Content-Type", ""), "time": time.time()}
        self.member.request_log_obj.begin()
        try:
            hooks.delay()
            retry_after = hooks.take_throttle()
            if retry_after is not None:
                self._read_body()
                self._extra_headers.append(("Retry-After", str(retry_after)))
                raise ApiError(429, "TooManyRequests", "Too many requests, please try again later.",
                               {"retryAfterSeconds": retry_after})
            if hooks.health == "broken":
                self._read_body()
                raise ApiError(503, "ServiceUnavailable", "the server is currently unable to handle the request")
            self._route(method, path, query)
        except ApiError as e:
            self._send_error(e)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True
            raise
        except Exception as e:  # a bug in the emulator: answer like kube-apiserver would
            self._send_error(ApiError(500, "InternalError", f"Internal error occurred: {type(e).__name__}: {e}"))
        finally:
            self._log_request()
            self.member.request_log_obj.end()

    def _log_request(self) -> None:
        """Add this request to the member's request log, once: from :meth:`_send` before the
        response leaves (so a client that got its answer finds its request logged), else at the end."""
        entry, self._pending_log = self._pending_log, None
        if entry is not None:
            self.member.request_log_obj.add({**entry, "status": self._status})

    # ---- routing ---------------------------------------------------------------------------------

    def _route(self, method: str, path: str, query: dict) -> None:
        """Answer one request by its path: health checks, the discovery and OpenAPI documents, a
        group's or group version's resource list, else a resource (:meth:`_resource`). Raises
        ApiError 404 for a path the server does not serve."""
        if path in ("/healthz", "/readyz", "/livez") or path.startswith(("/healthz/", "/readyz/", "/livez/")):
            return self._health(path)
        document = _DOCUMENTS.get(path)
        if document is not None:
            return document(self)
        if path.startswith("/openapi/v3/"):
            return self._send(200, _found(self.member.catalogue.openapi_doc(path[len("/openapi/v3/"):])))
        segs = path.strip("/").split("/")
        if segs[0] == "api" and len(segs) >= 2:
            group, version, rest = "", segs[1], segs[2:]
        elif segs[0] == "apis" and len(segs) >= 2:
            if len(segs) == 2:
                return self._send(200, _found(self.member.catalogue.api_group(segs[1])))
            group, version, rest = segs[1], segs[2], segs[3:]
        else:
            raise _not_found()
        if not rest:
            if method != "GET":
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            return self._send(200, _found(self.member.catalogue.resource_list(group, version)))
        return self._resource(method, group, version, rest, query)

    def _health(self, path: str) -> None:
        """/healthz, /readyz, /livez and their checks: 503 unless the member is healthy (/livez
        answers ok whatever the health hook says)."""
        if self.member.hooks.health != "ok" and not path.startswith("/livez"):
            self._send(503, "[-]etcd failed: reason withheld\nhealthz check failed\n", "text/plain; charset=utf-8")
        else:
            self._send(200, "ok", "text/plain; charset=utf-8")

    def _version(self) -> None:
        return self._send(200, SERVER_VERSION)

    def _core_versions(self) -> None:
        return self._send(200, self.member.catalogue.api_versions(f"127.0.0.1:{self.member.port}"))

    def _group_list(self) -> None:
        return self._send(200, self.member.catalogue.api_group_list())

    def _openapi_v2(self) -> None:
        if "json" not in self.headers.get("Accept", "application/json") and "*/*" not in self.headers.get("Accept", ""):
            raise ApiError(406, "NotAcceptable", "only application/json is served for /openapi/v2")
        return self._send(200, self.member.catalogue.openapi_v2())

    def _openapi_index(self) -> None:
        return self._send(200, self.member.catalogue.openapi_index())

    def _resource(self, method: str, group: str, version: str, rest: list[str], query: dict) -> None:
        """A resource's path below its group version (``rest``: ``[namespaces, <ns>,] plural[, name[,
        subresource]]``) to its collection, scale or object handler. Raises ApiError 404 (unknown
        resource or subresource) or 405 (reviews are only created)."""
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        plural, name, sub = rest[0], (rest[1] if len(rest) > 1 else None), (rest[2] if len(rest) > 2 else "")
        rt = self.member.catalogue.lookup(group, version, plural)
        if rt is None or len(rest) > 3 or (namespace and not rt.namespaced):
            raise _not_found()
        if rt.review and (name is not None or method != "POST"):
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if sub == "finalize" and rt.key == ("", "namespaces"):
            sub = ""
        if sub in _POD_SUBRESOURCES and rt.key == ("", "pods"):  # name is set: sub is the third part
            return self._pod_subresource(method, namespace, name, sub, query)
        if sub and not ((sub == "status" and rt.status) or (sub == "scale" and rt.scale)):
            raise _not_found()
        if name is None:
            return self._collection(method, rt, namespace, query)
        if sub == "scale":
            return self._scale(method, rt, namespace, name, query)
        return self._object(method, rt, namespace, name, sub, query)

    def _pod_subresource(self, method: str, namespace: str | None, name: str, sub: str, query: dict) -> None:
        """``GET pods/<name>/log``: the recorded output of one container (:mod:`.podlogs`), text/plain;
        ``exec``, ``attach``, ``portforward``: 400, no container runs here (404 for a missing Pod first)."""
        pod = self.member.store.get(self.member.catalogue.lookup("", "v1", "pods"), namespace, name)
        if sub != "log":
            raise ApiError(400, "BadRequest", f"an emulated member runs no containers: pods/{sub} is not served "
                                              f"(a real member is needed)")
        if method != "GET":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        return self._send(200, self.member.pod_logs.read(pod, query), "text/plain")

    def _wants_table(self) -> bool:
        return "as=Table" in self.headers.get("Accept", "")

    def _body_json(self) -> Any:
        raw = self._read_body()
        ctype = self.headers.get("Content-Type", "application/json").split(";")[0].strip()
        if "protobuf" in ctype or "cbor" in ctype:
            raise ApiError(415, "UnsupportedMediaType", 'the body of the request was in an unknown format - '
                           'accepted media types include: application/json, application/yaml')
        if not raw:
            return None
        try:
            if ctype in ("application/yaml", "application/apply-patch+yaml"):
                # Most appliers send JSON (a YAML subset); the JSON parser is much faster.
                try:
                    return json.loads(raw)
                except ValueError:
                    return _load_yaml(raw.decode())
            return json.loads(raw)
        except Exception as e:
            raise ApiError(400, "BadRequest", f"the body of the request could not be decoded: {e}") from e

    def _patch_type(self) -> str:
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype not in PATCH_TYPES:
            raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - "
                           f"accepted media types include: {', '.join(PATCH_TYPES)}")
        return PATCH_TYPES[ctype]

    @staticmethod
    def _dry_run(query: dict, body: Any = None) -> bool:
        if query.get("dryRun") == "All":
            return True
        return isinstance(body, dict) and "All" in (body.get("dryRun") or [])

    def _validation(self, query: dict) -> dict:
        """Store keyword arguments for the request's ``fieldValidation`` (default Warn, as
        kube-apiserver since 1.27); raises ApiError 400 for another value."""
        mode = query.get("fieldValidation") or "Warn"
        if mode not in ("Ignore", "Warn", "Strict"):
            raise ApiError(400, "BadRequest", f'fieldValidation must be one of "Ignore", "Warn", or "Strict", '
                           f'got "{mode}"')
        return {"field_validation": mode, "warnings": self._warnings}

    @staticmethod
    def _review(rt: ResourceType, body: Any) -> dict:
        """Answer a SelfSubjectAccessReview or SelfSubjectRulesReview: the emulator has one user,
        an administrator (kube-apiserver's ``system:masters``), so everything is allowed."""
        if not isinstance(body, dict) or not isinstance(body.get("spec"), dict):
            raise ApiError(400, "BadRequest", f"the body of the request must be a {rt.kind} with a spec")
        out = {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": {"creationTimestamp": None},
               "spec": body["spec"]}
        if rt.kind == "SelfSubjectAccessReview":
            attrs = [k for k in ("resourceAttributes", "nonResourceAttributes") if body["spec"].get(k)]
            if len(attrs) != 1:
                raise ApiError(422, "Invalid", f'{rt.kind}.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
                               "Invalid value: \"null\": exactly one of nonResourceAttributes or "
                               "resourceAttributes must be specified",
                               {"group": "authorization.k8s.io", "kind": rt.kind,
                                "causes": [{"reason": "FieldValueInvalid", "field": "spec.resourceAttributes",
                                            "message": "exactly one of nonResourceAttributes or "
                                                       "resourceAttributes must be specified"}]})
            out["status"] = {"allowed": True}
        else:
            out["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                             "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                             "incomplete": False}
        return out

    def _collection(self, method: str, rt: ResourceType, namespace: str | None, query: dict) -> None:
        store = self.member.store
        if method == "GET":
            if query.get("watch") in ("true", "1"):
                return self._watch(rt, namespace, query)
            items, rv = store.list(rt, namespace, query.get("labelSelector"), query.get("fieldSelector"))
            if self._wants_table():
                return self._send(200, tables.table(rt, items, rv, query.get("includeObject", "Metadata")),
                                  "application/json;as=Table;v=v1;g=meta.k8s.io")
            return self._send(200, {"kind": rt.list_kind, "apiVersion": rt.api_version,
                                    "metadata": {"resourceVersion": rv}, "items": items})
        if method == "POST":
            body = self._body_json()
            if rt.review:
                return self._send(201, self._review(rt, body))
            obj = store.create(rt, namespace, body, self._dry_run(query), **self._validation(query))
            return self._send(201, obj)
        if method == "DELETE":
            body = self._body_json()
            items, rv = store.list(rt, namespace, query.get("labelSelector"), query.get("fieldSelector"))
            gone = []
            for obj in items:
                md = obj["metadata"]
                try:
                    gone.append(store.delete(rt, md.get("namespace"), md["name"], self._dry_run(query, body)))
                except ApiError:
                    pass  # removed concurrently (e.g. by a namespace cascade)
            return self._send(200, {"kind": rt.list_kind, "apiVersion": rt.api_version,
                                    "metadata": {"resourceVersion": store.resource_version}, "items": gone})
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def _object(self, method: str, rt: ResourceType, namespace: str | None, name: str, sub: str,
                query: dict) -> None:
        store = self.member.store
        if method == "GET":
            obj = store.get(rt, namespace, name)
            if self._wants_table():
                return self._send(200, tables.table(rt, [obj], obj["metadata"]["resourceVersion"],
                                                    query.get("includeObject", "Metadata")),
                                  "application/json;as=Table;v=v1;g=meta.k8s.io")
            return self._send(200, obj)
        if method == "PUT":
            body = self._body_json()
            return self._send(200, store.replace(rt, namespace, name, body, sub, self._dry_run(query),
                                                 **self._validation(query)))
        if method == "PATCH":
            ptype = self._patch_type()
            body = self._body_json()
            existed = store.find(rt, namespace, name) is not None
            obj = store.patch(rt, namespace, name, ptype, body, sub, query.get("fieldManager"),
                              query.get("force") in ("true", "1"), self._dry_run(query), **self._validation(query))
            return self._send(200 if existed else 201, obj)
        if method == "DELETE":
            body = self._body_json()
            if sub:
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            gone = store.delete(rt, namespace, name, self._dry_run(query, body))
            # kube-apiserver answers a delete that completed with a Status naming the object.
            details = {"name": name, "group": rt.group, "kind": rt.plural, "uid": gone["metadata"].get("uid")}
            if not rt.group:
                del details["group"]
            return self._send(200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                    "details": details})
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    # ---- scale -----------------------------------------------------------------------------------

    @staticmethod
    def _path_get(obj: dict, dotted: str) -> Any:
        node: Any = obj
        for part in dotted.strip(".").split("."):
            if not isinstance(node, dict):
                return None
            node = node.get(part)
        return node

    def _to_scale(self, rt: ResourceType, obj: dict) -> dict:
        spec_path, status_path, selector_path = rt.scale_paths
        md = obj["metadata"]
        selector = ""
        if selector_path:
            selector = self._path_get(obj, selector_path) or ""
        else:
            labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        scale = {"kind": "Scale", "apiVersion": "autoscaling/v1",
                 "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                              if k in md},
                 "spec": {"replicas": self._path_get(obj, spec_path) or 0},
                 "status": {"replicas": self._path_get(obj, status_path) or 0}}
        if selector:
            scale["status"]["selector"] = selector
        return scale

    def _scale(self, method: str, rt: ResourceType, namespace: str | None, name: str, query: dict) -> None:
        from . import patching
        store = self.member.store
        obj = store.get(rt, namespace, name)
        scale = self._to_scale(rt, obj)
        if method == "GET":
            return self._send(200, scale)
        if method not in ("PUT", "PATCH"):
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if method == "PUT":
            body = self._body_json() or {}
            rv = (body.get("metadata") or {}).get("resourceVersion")
            if rv and rv != obj["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {rt.qualified} "{name}": the '
                               "object has been modified; please apply your changes to the latest version and "
                               "try again", {"name": name, "group": rt.group, "kind": rt.plural})
            new_scale = body
        else:
            ptype = self._patch_type()
            body = self._body_json()
            try:
                if ptype == "json":
                    new_scale = patching.json_patch(scale, body)
                elif ptype == "strategic":
                    new_scale = patching.strategic_merge(scale, body)
                else:
                    new_scale = patching.merge_patch(scale, body)
            except patching.PatchError as e:
                raise ApiError(e.code, "Invalid", str(e)) from e
        replicas = (new_scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise ApiError(422, "Invalid", f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: '
                           f"{replicas!r}: must be greater than or equal to 0",
                           {"name": name, "group": "autoscaling", "kind": "Scale",
                            "causes": [{"reason": "FieldValueInvalid", "field": "spec.replicas"}]})
        node = obj
        parts = rt.scale_paths[0].strip(".").split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = replicas
        new = store.replace(rt, namespace, name, obj, "", self._dry_run(query), check_rv=False)
        return self._send(200, self._to_scale(rt, new))

    # ---- watch -----------------------------------------------------------------------------------

    def _watch(self, rt: ResourceType, namespace: str | None, query: dict) -> None:
        store = self.member.store
        try:
            w = store.watch(rt, namespace, query.get("labelSelector"), query.get("fieldSelector"),
                            query.get("resourceVersion"))
        except ApiError as e:
            if e.code != 410:
                raise
            # kube-apiserver reports an expired resourceVersion as an ERROR event on an open stream;
            # clients (reflectors, the Python Watch) then relist.
            line = json.dumps({"type": "ERROR", "object": e.status()}).encode() + b"\n"
            self._status = 200
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(line)))
            self.end_headers()
            self.wfile.write(line)
            return
        table = self._wants_table()
        try:
            timeout = min(float(query.get("timeoutSeconds") or MAX_WATCH_SECONDS), MAX_WATCH_SECONDS)
        except ValueError:
            timeout = MAX_WATCH_SECONDS
        deadline = time.monotonic() + timeout
        self._status = 200
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        generation = self.member._generation
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or self.member._generation != generation:
                    break
                ev = w.next(min(left, 0.25))
                if ev is None:
                    continue
                obj = copy.deepcopy(ev["object"])
                obj["apiVersion"] = rt.api_version
                if table:
                    obj = tables.table(rt, [obj], obj["metadata"].get("resourceVersion", ""),
                                       query.get("includeObject", "Metadata"))
                line = orjson.dumps({"type": ev["type"], "object": obj}) + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True
        finally:
            w.close()

    # ---- hooks -----------------------------------------------------------------------------------

    def _hook(self, method: str, path: str, query: dict) -> None:
        """Test hooks (JSON in, JSON out):

        GET  /_emulator/state                      -> {name, url, port, health, latency, hang, ...}
        POST /_emulator/health {"health": "ok|unready|broken"}
        POST /_emulator/latency {"seconds": 0.5}
        POST /_emulator/hang {"hang": true, "maxSeconds": 30}
        POST /_emulator/status {"apiVersion", "kind", "namespace", "name", "status"}
        POST /_emulator/nodes {"name", "cpu", "memory", "pods"}
        POST /_emulator/logs {"namespace", "pod", "container", "text"}  (lines a container printed: pods/log)
        GET  /_emulator/objects?apiVersion=&kind=[&namespace=][&name=]
        GET  /_emulator/requests -> {"items": [...], "writeCount": n, "maxInFlight": n};  DELETE /_emulator/requests
        POST /_emulator/fake-controller {"enabled": true, "delay": 0.5}
        POST /_emulator/outage {"seconds": 2}      (stop listening, start again after the pause)
        POST /_emulator/throttle {"count": 3, "retryAfter": 1}  (the next API requests get 429)
        """
        raw = self._read_body() if method in ("POST", "PUT", "PATCH", "DELETE") else b""
        body = json.loads(raw) if raw else {}
        route = path[len("/_emulator"):] or "/"
        hook = _HOOKS.get((method, route))
        if hook is None:
            raise ApiError(404, "NotFound", f"no emulator hook {method} {route}")
        answer = hook(self, body, query)
        if answer is not None:
            self._send(200, answer)

    # One method per hook of :meth:`_hook`, each (body, query) -> the JSON to answer 200 with (None:
    # it answered itself). A hook that sets something answers with the member's state.

    def _hook_state(self, body: Any, query: dict) -> Any:
        return self.member.state()

    def _hook_health(self, body: Any, query: dict) -> Any:
        self.member.set_health(body["health"])
        return self.member.state()

    def _hook_latency(self, body: Any, query: dict) -> Any:
        self.member.set_latency(float(body.get("seconds", 0)))
        return self.member.state()

    def _hook_hang(self, body: Any, query: dict) -> Any:
        self.member.set_hang(bool(body.get("hang", True)), body.get("maxSeconds"))
        return self.member.state()

    def _hook_status(self, body: Any, query: dict) -> Any:
        return self.member.set_status(body["apiVersion"], body["kind"], body.get("namespace"), body["name"],
                                      body.get("status") or {})

    def _hook_nodes(self, body: Any, query: dict) -> Any:
        return self.member.add_node(body["name"], str(body.get("cpu", "8")), str(body.get("memory", "32Gi")),
                                    str(body.get("pods", "110")))

    def _hook_logs(self, body: Any, query: dict) -> Any:
        self.member.pod_logs.write(body.get("namespace") or "default", body["pod"], body["container"],
                                   str(body.get("text") or ""))
        return self.member.state()

    def _hook_objects(self, body: Any, query: dict) -> Any:
        m = self.member
        if query.get("name"):
            obj = m.get_object(query["apiVersion"], query["kind"], query.get("namespace"), query["name"])
            if obj is None:
                raise ApiError(404, "NotFound", f'{query["kind"]} "{query["name"]}" not found')
            return obj
        return {"items": m.list_objects(query["apiVersion"], query["kind"], query.get("namespace"))}

    def _hook_requests(self, body: Any, query: dict) -> Any:
        m = self.member
        return {"items": m.request_log, "writeCount": m.write_count(),
                "maxInFlight": m.request_log_obj.max_in_flight}

    def _hook_clear_requests(self, body: Any, query: dict) -> Any:
        self.member.clear_request_log()
        return self.member.state()

    def _hook_fake_controller(self, body: Any, query: dict) -> Any:
        self.member.set_fake_controller(bool(body.get("enabled", True)), body.get("delay"))
        return self.member.state()

    def _hook_throttle(self, body: Any, query: dict) -> Any:
        self.member.hooks.set_throttle(int(body.get("count", 1)), int(body.get("retryAfter", 1)))
        return self.member.state()

    def _hook_outage(self, body: Any, query: dict) -> Any:
        seconds = float(body.get("seconds", 1))
        self._send(200, {"ok": True, "seconds": seconds})
        self.close_connection = True
        threading.Thread(target=self.member._outage, args=(seconds,), daemon=True).start()
        return None


# The Pod subresources the emulator answers itself (Handler._pod_subresource).
_POD_SUBRESOURCES = ("log", "exec", "attach", "portforward")


# The test hooks under /_emulator/, by (method, route): Handler._hook.
_HOOKS: dict[tuple[str, str], Callable[[Handler, Any, dict], Any]] = {
    ("GET", "/state"): Handler._hook_state,
    ("POST", "/health"): Handler._hook_health,
    ("POST", "/latency"): Handler._hook_latency,
    ("POST", "/hang"): Handler._hook_hang,
    ("POST", "/status"): Handler._hook_status,
    ("POST", "/nodes"): Handler._hook_nodes,
    ("POST", "/logs"): Handler._hook_logs,
    ("GET", "/objects"): Handler._hook_objects,
    ("GET", "/requests"): Handler._hook_requests,
    ("DELETE", "/requests"): Handler._hook_clear_requests,
    ("POST", "/fake-controller"): Handler._hook_fake_controller,
    ("POST", "/throttle"): Handler._hook_throttle,
    ("POST", "/outage"): Handler._hook_outage,
}


# The fixed paths of discovery and OpenAPI, each to its Handler method: Handler._route.
_DOCUMENTS: dict[str, Callable[[Handler], None]] = {
    "/version": Handler._version,
    "/api": Handler._core_versions,
    "/apis": Handler._group_list,
    "/openapi/v2": Handler._openapi_v2,
    "/openapi/v3": Handler._openapi_index,
}


class MemberServer:
    """An emulated member cluster serving the Kubernetes API on ``127.0.0.1:<port>``.

    Args:
        name: member name (kubeconfig cluster/user/context names).
        port: TCP port, 0 for any free one (kept across stop/start).
        data_dir: where ``objects.json`` (and TLS material) live; None keeps state in memory only.
        tls: serve HTTPS with a self-signed CA (written into the kubeconfig).
        fake_controller: mark workloads ready after ``fake_delay`` seconds.
        nodes: a count of Nodes to create (``<name>-node-<i>``, cpu 8, memory 32Gi, pods 110) or a list
            of node names; existing Nodes are kept.

    Raises OSError from :meth:`start` when the port is taken.
    """

    def __init__(self, name: str = "member1", port: int = 0, data_dir: str | None = None, tls: bool = False,
                 fake_controller: bool = False, nodes: int | list[str] | None = None, host: str = "127.0.0.1",
                 fake_delay: float = 0.5) -> None:
        self.name, self.port, self.host, self.data_dir, self.tls = name, port, host, data_dir, tls
        self.catalogue = Catalogue()
        self.store = Store(self.catalogue, data_dir)
        self.hooks = HookState()
        self.pod_logs = PodLogs()
        self.request_log_obj = RequestLog()
        self.controller = FakeController(self.store, fake_delay, fake_controller)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._ssl_context: ssl.SSLContext | None = None
        self._generation = 0
        self._lifecycle = threading.Lock()
        self._tmpdir: str | None = None
        self.ca_file: str | None = None
        if isinstance(nodes, int):
            nodes = [f"{name}-node-{i + 1}" for i in range(nodes)]
        rt = self.catalogue.lookup("", "v1", "nodes")
        for node in nodes or []:
            if self.store.find(rt, None, node) is None:
                self.add_node(node)

    # ---- lifecycle -------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._httpd is not None

    def _make_ssl(self) -> ssl.SSLContext:
        from .tls import ensure_certs
        directory = self.data_dir
        if directory is None:
            self._tmpdir = self._tmpdir or tempfile.mkdtemp(prefix=f"karmactl-emulator-{self.name}-")
            directory = self._tmpdir
        ca, crt, key = ensure_certs(directory, self.name)
        self.ca_file = ca
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        return ctx

    def start(self) -> "MemberServer":
        """Listen and serve in a daemon thread (no-op when already running); sets ``port``/``url``."""
        with self._lifecycle:
            if self._httpd is not None:
                return self
            if self.tls and self._ssl_context is None:
                self._ssl_context = self._make_ssl()
            httpd = _HTTPServer((self.host, self.port), Handler, self)
            self.port = httpd.server_address[1]
            self._httpd = httpd
            self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                            name=f"emulator-{self.name}", daemon=True)
            self._thread.start()
            return self

    def stop(self) -> None:
        """Stop listening and cut open connections (clients then get connection refused); state is
        kept in memory (and flushed to ``data_dir``) for a later :meth:`start` on the same port."""
        with self._lifecycle:
            httpd, self._httpd = self._httpd, None
            if httpd is None:
                return
            self._generation += 1  # ends open watches
            httpd.shutdown()
            httpd.server_close()
            httpd.cut_connections()
            if self._thread:
                self._thread.join(timeout=5)
            self.store.flush()

    def close(self) -> None:
        """Stop for good: stop serving, stop the fake controller, flush and close the store."""
        self.stop()
        self.controller.close()
        self.store.close()

    def _outage(self, seconds: float) -> None:
        time.sleep(0.05)  # let the hook's own response leave first
        self.stop()
        time.sleep(seconds)
        self.start()

    def __enter__(self) -> "MemberServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def write_kubeconfig(self, path: str, context: str | None = None) -> str:
        """Write a kubeconfig (cluster and user named after the member, a dummy token, the CA when TLS)
        whose current-context is ``context`` (default: the member name). Returns ``path``."""
        if not self.port:
            raise RuntimeError("start() the member before writing its kubeconfig")
        context = context or self.name
        cluster: dict = {"server": self.url}
        if self.tls:
            if self.ca_file is None:
                self._ssl_context = self._ssl_context or self._make_ssl()
            with open(self.ca_file, "rb") as f:
                cluster["certificate-authority-data"] = base64.b64encode(f.read()).decode()
        cfg = {"apiVersion": "v1", "kind": "Config", "preferences": {},
               "clusters": [{"name": self.name, "cluster": cluster}],
               "users": [{"name": self.name, "user": {"token": f"emulator-{self.name}"}}],
               "contexts": [{"name": context, "context": {"cluster": self.name, "user": self.name}}],
               "current-context": context}
        from ruamel.yaml import YAML
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = path + ".tmp"
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
            YAML(typ="safe", pure=True).dump(cfg, f)  # a bearer token: mode 0600, as kubectl writes
        os.replace(tmp, path)
        return path

    # ---- hooks -----------------------------------------------------------------------------------

    def state(self) -> dict:
        return describe(self.hooks, name=self.name, url=self.url, port=self.port, running=self.running,
                        fakeController=self.controller.enabled, resourceVersion=self.store.resource_version)

    def set_health(self, state: str) -> None:
        """``ok``, ``unready`` (/readyz and /healthz answer 503, the API works) or ``broken`` (every API
        request answers 503). Raises ValueError for other values."""
        self.hooks.set_health(state)

    def set_latency(self, seconds: float) -> None:
        """Delay every API request by ``seconds``."""
        self.hooks.latency = max(0.0, float(seconds))

    def set_hang(self, hang: bool, max_seconds: float | None = None) -> None:
        """While hanging, API requests block until the hang is cleared or ``max_seconds`` (default 60)
        pass, then are served normally."""
        self.hooks.set_hang(hang, max_seconds)

    def set_fake_controller(self, enabled: bool, delay: float | None = None) -> None:
        if delay is not None:
            self.controller.delay = float(delay)
        self.controller.enabled = enabled
        self.controller._wake.set()

    def _type(self, api_version: str, kind: str) -> ResourceType:
        rt = self.catalogue.by_kind(api_version, kind)
        if rt is None:
            raise ApiError(404, "NotFound", f"no resource for {api_version} {kind}")
        return rt

    def set_status(self, api_version: str, kind: str, namespace: str | None, name: str, status: dict) -> dict:
        """Replace an object's .status (a MODIFIED watch event follows). Raises ApiError 404."""
        rt = self._type(api_version, kind)
        return self.store.set_status(rt, namespace, name, status)

    def add_node(self, name: str, cpu: str = "8", memory: str = "32Gi", pods: str = "110") -> dict:
        """Create (or replace the status of) a Ready Node with that capacity and allocatable."""
        rt = self.catalogue.lookup("", "v1", "nodes")
        node = node_object(name, cpu, memory, pods)
        if self.store.find(rt, None, name) is not None:
            return self.store.set_status(rt, None, name, node["status"])
        return self.store.create(rt, None, node, keep_status=True)

    def get_object(self, api_version: str, kind: str, namespace: str | None, name: str) -> dict | None:
        """The object or None (ApiError 404 for an unknown kind)."""
        return self.store.find(self._type(api_version, kind), namespace, name)

    def list_objects(self, api_version: str, kind: str, namespace: str | None = None) -> list[dict]:
        return self.store.list(self._type(api_version, kind), namespace)[0]

    @property
    def request_log(self) -> list[dict]:
        """API requests served: dicts with method, path, query, content_type, status, time."""
        return self.request_log_obj.items()

    def clear_request_log(self) -> None:
        self.request_log_obj.clear()

    def write_count(self) -> int:
        """Number of logged POST/PUT/PATCH/DELETE API requests."""
        return self.request_log_obj.write_count()

    @property
    def max_in_flight(self) -> int:
        """The most API requests served at once since the request log was last cleared."""
        return self.request_log_obj.max_in_flight


__all__ = ["MemberServer", "ApiError"]
