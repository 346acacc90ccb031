"""The emulator's object store: Kubernetes write semantics, watch fan-out and JSON persistence.

Objects are kept per storage key ``(group, plural)`` and ``(namespace, name)``. Stored dicts are never
mutated in place (every write stores a fresh dict), so snapshots for persistence and readers only need
the lock for the moment they take references.
"""
from __future__ import annotations

import base64
import collections
import copy
import datetime as _dt
import json
import os
import queue
import random
import re
import string
import tempfile
import threading
import uuid
from typing import Any, Callable

import orjson

from karmactl.api import openapi as schemas

from . import defaults, patching
from .resources import Catalogue, ResourceType

STATE_FILE = "objects.json"
HISTORY = 5000
NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


def now_rfc3339() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class ApiError(Exception):
    """An error answered as a Kubernetes ``Status`` (``code`` is the HTTP status, ``reason`` the
    StatusReason such as NotFound, AlreadyExists, Conflict, Invalid, BadRequest)."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self) -> dict:
        out = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": self.message, "reason": self.reason, "code": self.code}
        if self.details is not None:
            out["details"] = self.details
        return out


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{rt.qualified} "{name}" not found', _details(rt, name))


def _details(rt: ResourceType, name: str, kind: str | None = None) -> dict:
    """Status details as kube-apiserver writes them: ``group`` is left out for the core group."""
    out = {"name": name, "group": rt.group, "kind": kind or rt.plural}
    if not rt.group:
        del out["group"]
    return out


def _invalid_details(rt: ResourceType, name: str, causes: list[tuple[str, str, str]]) -> dict:
    """Details of a 422 Invalid: the kind (not the resource), causes as (reason, field, message)."""
    out = _details(rt, name, rt.kind)
    if not name:
        del out["name"]
    out["causes"] = [{"reason": reason, "message": message, "field": field} for reason, field, message in causes]
    return out


# Resources whose registry strategy keeps metadata.generation (kube-apiserver v1.31): the others
# (ConfigMap, Secret, Service, Namespace...) have none.
GENERATION = {("apps", "deployments"), ("apps", "statefulsets"), ("apps", "daemonsets"), ("apps", "replicasets"),
              ("batch", "jobs"), ("batch", "cronjobs"), ("networking.k8s.io", "ingresses"),
              ("networking.k8s.io", "networkpolicies"), ("policy", "poddisruptionbudgets"),
              ("autoscaling", "horizontalpodautoscalers"), ("apiextensions.k8s.io", "customresourcedefinitions")}


def _has_generation(rt: ResourceType) -> bool:
    return rt.crd or rt.key in GENERATION


# ---- selectors ------------------------------------------------------------------------------------

def parse_label_selector(text: str | None) -> Callable[[dict], bool]:
    """A predicate over label dicts for ``a=b,c!=d,e in (x,y),f notin (z),g,!h``; raises ApiError 400."""
    if not text:
        return lambda labels: True
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    reqs: list[Callable[[dict], bool]] = []
    for raw in parts:
        p = raw.strip()
        if not p:
            continue
        m = re.match(r"^([\w./-]+)\s+(in|notin)\s+\((.*)\)$", p)
        if m:
            key, op, vals = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",") if v.strip()}
            if op == "in":
                reqs.append(lambda l, k=key, vs=vals: k in l and l[k] in vs)
            else:
                reqs.append(lambda l, k=key, vs=vals: k not in l or l[k] not in vs)
            continue
        m = re.match(r"^([\w./-]+)\s*(==|!=|=)\s*([\w./-]*)$", p)
        if m:
            key, op, val = m.groups()
            if op == "!=":
                reqs.append(lambda l, k=key, v=val: l.get(k) != v)
            else:
                reqs.append(lambda l, k=key, v=val: l.get(k) == v)
            continue
        m = re.match(r"^(!?)\s*([\w./-]+)$", p)
        if m:
            neg, key = m.groups()
            reqs.append((lambda l, k=key: k not in l) if neg else (lambda l, k=key: k in l))
            continue
        raise ApiError(400, "BadRequest", f"unable to parse requirement: {p!r}")
    return lambda labels: all(r(labels or {}) for r in reqs)


def _dotted(obj: Any, path: str) -> str:
    node = obj
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return ""
        node = node[part]
    if isinstance(node, bool):
        return str(node).lower()
    return "" if node is None else str(node)


def parse_field_selector(text: str | None) -> Callable[[dict], bool]:
    """A predicate over objects for ``metadata.name=x,status.phase!=Running`` (any dotted path)."""
    if not text:
        return lambda obj: True
    reqs = []
    for p in text.split(","):
        p = p.strip()
        if not p:
            continue
        m = re.match(r"^([\w.-]+)\s*(==|!=|=)\s*(.*)$", p)
        if not m:
            raise ApiError(400, "BadRequest", f"invalid field selector: {p!r}")
        path, op, val = m.groups()
        reqs.append((path, op == "!=", val))
    return lambda obj: all((_dotted(obj, path) != val) if neg else (_dotted(obj, path) == val)
                           for path, neg, val in reqs)


# ---- watch ----------------------------------------------------------------------------------------

class Watcher:
    """A subscription: ``next(timeout)`` returns ``{"type", "object"}`` or None on timeout."""

    def __init__(self, store: "Store", key: tuple[str, str], match: Callable[[dict], bool]) -> None:
        self.store, self.key, self.match = store, key, match
        self.queue: "queue.Queue[dict]" = queue.Queue()

    def offer(self, key: tuple[str, str], etype: str, obj: dict) -> None:
        if key == self.key and self.match(obj):
            self.queue.put({"type": etype, "object": obj})

    def next(self, timeout: float) -> dict | None:
        try:
            return self.queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        self.store._unwatch(self)


# ---- the store ------------------------------------------------------------------------------------

class Store:
    """Objects of one member with Kubernetes write semantics; raises :class:`ApiError`.

    ``data_dir`` (optional) holds ``objects.json``, rewritten atomically shortly after each change.
    """

    def __init__(self, catalogue: Catalogue, data_dir: str | None = None) -> None:
        self.catalogue = catalogue
        self.data_dir = data_dir
        self.lock = threading.RLock()
        self._objects: dict[tuple[str, str], dict[tuple[str, str], dict]] = {}
        self._rv = 0
        self._history: collections.deque = collections.deque(maxlen=HISTORY)
        self._history_floor = 0
        self._watchers: list[Watcher] = []
        self._dirty = threading.Event()
        self._flush_lock = threading.Lock()
        self._writer: threading.Thread | None = None
        self._closed = False
        self.on_change: list[Callable[[str, tuple[str, str], dict], None]] = []
        if data_dir and os.path.exists(os.path.join(data_dir, STATE_FILE)):
            self._load()
        else:
            for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
                self._bootstrap_namespace(ns)
        self._history_floor = self._rv

    @property
    def resource_version(self) -> str:
        with self.lock:
            return str(self._rv)

    def _bootstrap_namespace(self, name: str) -> None:
        rt = self.catalogue.lookup("", "v1", "namespaces")
        self.create(rt, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    # ---- persistence -----------------------------------------------------------------------------

    def _load(self) -> None:
        with open(os.path.join(self.data_dir, STATE_FILE), encoding="utf-8") as f:
            data = json.load(f)
        self._rv = int(data.get("resourceVersion", 0))
        objects = data.get("objects", {})
        for crd in objects.get("apiextensions.k8s.io/customresourcedefinitions", []):
            self.catalogue.add_crd(crd)
        for skey, items in objects.items():
            group, _, plural = skey.rpartition("/")
            bucket = self._objects.setdefault((group, plural), {})
            for obj in items:
                md = obj.get("metadata", {})
                bucket[(md.get("namespace", ""), md["name"])] = obj

    def _mark_dirty(self) -> None:
        if not self.data_dir:
            return
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="emulator-persist", daemon=True)
            self._writer.start()
        self._dirty.set()

    def _write_loop(self) -> None:
        while not self._closed:
            self._dirty.wait()
            if self._closed:
                break
            # Debounce: a burst of writes (kubectl apply of a directory) becomes one file write.
            threading.Event().wait(0.05)
            self.flush()

    def flush(self) -> None:
        """Write the state file now if anything changed (atomic: temp file + rename)."""
        if not self.data_dir:
            return
        # Flushes are serialised so an older snapshot can never replace a newer one; the store lock is
        # held only while taking references (stored dicts are immutable), not while encoding.
        with self._flush_lock:
            with self.lock:
                if not self._dirty.is_set():
                    return
                self._dirty.clear()
                snapshot = {"resourceVersion": self._rv,
                            "objects": {f"{g}/{p}": [bucket[k] for k in sorted(bucket)]
                                        for (g, p), bucket in sorted(self._objects.items()) if bucket}}
            try:  # orjson: a tenth of json's time, and the writer thread holds the GIL while encoding
                data = orjson.dumps(snapshot, option=orjson.OPT_SORT_KEYS)
            except (orjson.JSONEncodeError, TypeError):  # e.g. an integer beyond 64 bits
                data = json.dumps(snapshot, sort_keys=True).encode()
            os.makedirs(self.data_dir, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.data_dir, prefix=".objects-", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(self.data_dir, STATE_FILE))

    def close(self) -> None:
        self.flush()
        self._closed = True
        self._dirty.set()

    # ---- reads -----------------------------------------------------------------------------------

    def _out(self, rt: ResourceType, obj: dict) -> dict:
        out = copy.deepcopy(obj)
        out["apiVersion"] = rt.api_version
        return out

    def get(self, rt: ResourceType, namespace: str | None, name: str) -> dict:
        """A copy of one object (apiVersion as ``rt`` serves it); raises ApiError 404."""
        with self.lock:
            obj = self._objects.get(rt.key, {}).get((namespace or "", name))
            if obj is None:
                raise not_found(rt, name)
            return self._out(rt, obj)

    def find(self, rt: ResourceType, namespace: str | None, name: str) -> dict | None:
        with self.lock:
            obj = self._objects.get(rt.key, {}).get((namespace or "", name))
            return self._out(rt, obj) if obj is not None else None

    def list(self, rt: ResourceType, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> tuple[list[dict], str]:
        """(matching objects sorted by namespace/name, list resourceVersion)."""
        match = self._matcher(namespace, label_selector, field_selector)
        with self.lock:
            bucket = self._objects.get(rt.key, {})
            items = [self._out(rt, bucket[k]) for k in sorted(bucket) if match(bucket[k])]
            return items, str(self._rv)

    def _matcher(self, namespace, label_selector, field_selector) -> Callable[[dict], bool]:
        lab = parse_label_selector(label_selector)
        fld = parse_field_selector(field_selector)

        def match(obj: dict) -> bool:
            md = obj.get("metadata", {})
            if namespace and md.get("namespace") != namespace:
                return False
            return lab(md.get("labels") or {}) and fld(obj)
        return match

    # ---- watch -----------------------------------------------------------------------------------

    def watch(self, rt: ResourceType, namespace: str | None, label_selector: str | None,
              field_selector: str | None, resource_version: str | None) -> Watcher:
        """Subscribe to changes. With no (or "0") resourceVersion the current objects come first as
        ADDED; otherwise history after that version is replayed. Raises ApiError 410 when the version
        is older than the kept history."""
        match = self._matcher(namespace, label_selector, field_selector)
        w = Watcher(self, rt.key, match)
        with self.lock:
            if resource_version in (None, "", "0"):
                bucket = self._objects.get(rt.key, {})
                for k in sorted(bucket):
                    w.offer(rt.key, "ADDED", bucket[k])
            else:
                try:
                    since = int(resource_version)
                except ValueError:
                    raise ApiError(400, "BadRequest", f"invalid resourceVersion {resource_version!r}")
                if since < self._history_floor:
                    raise ApiError(410, "Expired", f"too old resource version: {since} ({self._history_floor})")
                for rv, key, etype, obj in self._history:
                    if rv > since:
                        w.offer(key, etype, obj)
            self._watchers.append(w)
        return w

    def _unwatch(self, w: Watcher) -> None:
        with self.lock:
            if w in self._watchers:
                self._watchers.remove(w)

    def _emit(self, key: tuple[str, str], etype: str, obj: dict) -> None:
        if len(self._history) == self._history.maxlen:
            self._history_floor = self._history[0][0]
        self._history.append((self._rv, key, etype, obj))
        for w in list(self._watchers):
            w.offer(key, etype, obj)
        for cb in self.on_change:
            cb(etype, key, obj)

    # ---- writes ----------------------------------------------------------------------------------

    def _next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def _check_namespace(self, rt: ResourceType, namespace: str | None) -> str:
        if not rt.namespaced:
            return ""
        if not namespace:
            raise ApiError(400, "BadRequest", "the namespace of the object is required")
        if ("", namespace) not in self._objects.get(("", "namespaces"), {}):
            raise ApiError(404, "NotFound", f'namespaces "{namespace}" not found',
                           {"name": namespace, "kind": "namespaces"})
        return namespace

    def _admit(self, rt: ResourceType, obj: dict, old: dict | None, field_validation: str = "Warn",
               warnings: list[str] | None = None) -> None:
        """What kube-apiserver does to a written object between decoding and storage, in place:
        built-in kinds are pruned of undeclared fields, type-checked and defaulted through their
        OpenAPI schemas (:mod:`.schemas`, :mod:`.defaults`); then the registry strategies' own
        fields (Service IPs, Job selectors, the namespace name label...).

        ``field_validation`` is the request's ``fieldValidation``: ``Strict`` refuses undeclared
        fields, ``Warn`` (the default) drops them and adds one message each to ``warnings``,
        ``Ignore`` drops them silently. Raises ApiError 400 (wrong types, Strict) or 422 (missing
        required fields)."""
        definition = None if rt.crd else schemas.definition_name(rt.group, rt.version, rt.kind)
        name = (obj.get("metadata") or {}).get("name") or ""
        if definition is not None:
            self._decode_builtin(rt, obj, definition, name, field_validation, warnings)
        strategy = _STRATEGIES.get(rt.key)
        if strategy is not None:
            strategy(self, rt, obj, old, name)

    def _decode_builtin(self, rt: ResourceType, obj: dict, definition: str, name: str,
                        field_validation: str, warnings: list[str] | None) -> None:
        """The decoding half of :meth:`_admit` for a built-in kind: Secret ``stringData`` folded into
        ``data``, undeclared fields pruned (per ``field_validation``), types and required fields
        checked against the OpenAPI definition, then its defaults applied."""
        if rt.key == ("", "secrets") and isinstance(obj.get("stringData"), dict):
            data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
            for key, value in obj.pop("stringData").items():
                data[key] = base64.b64encode(str(value).encode()).decode()
            obj["data"] = data
        dropped = schemas.prune(obj, definition)
        if dropped and field_validation == "Strict":
            raise self._undecodable(rt, "strict decoding error: " + ", ".join(
                f'unknown field "{p}"' for p in dropped))
        if dropped and field_validation != "Ignore" and warnings is not None:
            warnings.extend(f'unknown field "{p}"' for p in dropped)
        type_errors, required = schemas.check(obj, definition)
        if type_errors:
            path, message = type_errors[0]
            raise self._undecodable(rt, f"{path}: {message}")
        if required:
            raise ApiError(422, "Invalid", f'{rt.kind}{"." + rt.group if rt.group else ""} "{name}" is invalid: '
                           + ", ".join(f"{p}: Required value" for p in required),
                           _invalid_details(rt, name, [("FieldValueRequired", p, "Required value")
                                                       for p in required]))
        defaults.apply_defaults(obj, definition)

    # The registry strategies' own fields (pkg/registry/<group>/<kind>/strategy.go), one per kind;
    # each takes (rt, obj, old, name) and edits obj in place. Dispatched by _STRATEGIES below.

    def _namespace_strategy(self, rt: ResourceType, obj: dict, old: dict | None, name: str) -> None:
        md = obj["metadata"]
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {}).setdefault("phase", "Active")
        md["labels"] = {**(md.get("labels") or {}), "kubernetes.io/metadata.name": name}

    def _service_strategy(self, rt: ResourceType, obj: dict, old: dict | None, name: str) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            used = {p.get("nodePort") for svc in self._objects.get(rt.key, {}).values()
                    for p in (svc.get("spec") or {}).get("ports") or [] if isinstance(p, dict)}
            defaults.allocate_service(spec, (old or {}).get("spec"), used, random.Random())

    def _pod_strategy(self, rt: ResourceType, obj: dict, old: dict | None, name: str) -> None:
        if not old:
            obj.setdefault("status", {}).setdefault("phase", "Pending")

    def _job_strategy(self, rt: ResourceType, obj: dict, old: dict | None, name: str) -> None:
        # pkg/registry/batch/job/strategy.go generateSelector: the Job's uid selects its pods.
        spec = obj.get("spec")
        md = obj["metadata"]
        if old or not isinstance(spec, dict) or spec.get("manualSelector"):
            return
        uid = md["uid"]
        template_md = spec.setdefault("template", {}).setdefault("metadata", {})
        labels = template_md.get("labels") or {}
        labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                       "controller-uid": uid, "job-name": name})
        template_md["labels"] = labels
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        if not md.get("labels"):
            md["labels"] = dict(labels)

    def _daemonset_strategy(self, rt: ResourceType, obj: dict, old: dict | None, name: str) -> None:
        # pkg/registry/apps/daemonset/strategy.go: a template generation, bumped on template changes.
        spec = obj.get("spec")
        md = obj["metadata"]
        if not isinstance(spec, dict):
            return
        annotations = md["annotations"] = dict(md.get("annotations") or {})
        key = "deprecated.daemonset.template.generation"
        if old is None:
            annotations[key] = "1"
        else:
            before = int((old["metadata"].get("annotations") or {}).get(key, "1"))
            changed = (old.get("spec") or {}).get("template") != spec.get("template")
            annotations[key] = str(before + 1 if changed else before)

    @staticmethod
    def _undecodable(rt: ResourceType, reason: str) -> ApiError:
        return ApiError(400, "BadRequest", f'{rt.kind} in version "{rt.version}" cannot be handled as a '
                        f"{rt.kind}: {reason}")

    def _validate_name(self, rt: ResourceType, name: Any) -> None:
        kind = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
        if not name or not isinstance(name, str):
            raise ApiError(422, "Invalid", f"{kind} is invalid: metadata.name: "
                           "Required value: name or generateName is required",
                           _invalid_details(rt, "", [("FieldValueRequired", "metadata.name", "Required value: name or "
                                                      "generateName is required")]))
        if len(name) > 253 or not NAME_RE.match(name):
            why = (f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
                   "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
                   "'example.com', regex used for validation is "
                   "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
            raise ApiError(422, "Invalid", f'{kind} "{name}" is invalid: metadata.name: {why}',
                           _invalid_details(rt, name, [("FieldValueInvalid", "metadata.name", why)]))

    def create(self, rt: ResourceType, namespace: str | None, body: dict, dry_run: bool = False,
               keep_status: bool = False, field_validation: str = "Warn",
               warnings: list[str] | None = None) -> dict:
        """Create an object; raises ApiError 400 (bad body / namespace mismatch / wrong field types),
        404 (namespace missing), 409 AlreadyExists, 422 Invalid (name, required fields). See
        :meth:`_admit` for ``field_validation`` and ``warnings``."""
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body of the request must be an object")
        obj = copy.deepcopy(body)
        md = obj.setdefault("metadata", {})
        if not isinstance(md, dict):
            raise ApiError(400, "BadRequest", "metadata must be an object")
        if obj.get("kind") not in (None, rt.kind):
            raise ApiError(400, "BadRequest", f"the kind {obj.get('kind')!r} does not match {rt.kind!r}")
        body_ns = md.get("namespace")
        if rt.namespaced and namespace and body_ns and body_ns != namespace:
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the "
                           "namespace sent on the request")
        with self.lock:
            ns = self._check_namespace(rt, namespace or body_ns)
            if not md.get("name") and md.get("generateName"):
                md["name"] = md["generateName"] + "".join(random.choices(string.ascii_lowercase + string.digits, k=5))
            self._validate_name(rt, md.get("name"))
            name = md["name"]
            bucket = self._objects.setdefault(rt.key, {})
            if (ns, name) in bucket:
                raise ApiError(409, "AlreadyExists", f'{rt.qualified} "{name}" already exists', _details(rt, name))
            obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
            if rt.namespaced:
                md["namespace"] = ns
            else:
                md.pop("namespace", None)
            for k in ("resourceVersion", "deletionTimestamp", "selfLink"):
                md.pop(k, None)
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = now_rfc3339()
            if _has_generation(rt):
                md["generation"] = 1
            else:
                md.pop("generation", None)
            if rt.status and not keep_status:
                obj.pop("status", None)
            self._admit(rt, obj, None, field_validation, warnings)
            if rt.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
                self._crd_status(obj)
            if dry_run:
                return self._out(rt, obj)
            md["resourceVersion"] = self._next_rv()
            bucket[(ns, name)] = obj
            if rt.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
                self.catalogue.add_crd(obj)
            self._emit(rt.key, "ADDED", obj)
            self._mark_dirty()
            return self._out(rt, obj)

    def _crd_status(self, crd: dict) -> None:
        spec = crd.get("spec") or {}
        names = dict(spec.get("names") or {})
        names.setdefault("singular", names.get("kind", "").lower())
        names.setdefault("listKind", names.get("kind", "") + "List")
        storage = [v.get("name") for v in spec.get("versions") or [] if v.get("storage")]
        ts = now_rfc3339()
        crd["status"] = {
            "acceptedNames": names, "storedVersions": storage,
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                 "message": "no conflicts found", "lastTransitionTime": ts},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted", "lastTransitionTime": ts}]}

    def _stripped(self, obj: dict) -> dict:
        return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}

    def replace(self, rt: ResourceType, namespace: str | None, name: str, body: dict,
                subresource: str = "", dry_run: bool = False, check_rv: bool = True,
                field_validation: str = "Warn", warnings: list[str] | None = None) -> dict:
        """PUT semantics on the main resource or ``status``. Only ``status`` writes .status when the
        resource has that subresource. An identical result is a no-op (resourceVersion unchanged).
        Raises ApiError 400 (name mismatch), 404, 409 Conflict (stale resourceVersion)."""
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body of the request must be an object")
        bmd = body.get("metadata") or {}
        if bmd.get("name") not in (None, name):
            raise ApiError(400, "BadRequest", f'the name of the object ({bmd.get("name")}) does not match the '
                           f"name on the URL ({name})")
        with self.lock:
            ns = namespace or "" if rt.namespaced else ""
            old = self._objects.get(rt.key, {}).get((ns, name))
            if old is None:
                raise not_found(rt, name)
            if check_rv and bmd.get("resourceVersion") and bmd["resourceVersion"] != old["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {rt.qualified} "{name}": the '
                               "object has been modified; please apply your changes to the latest version and "
                               "try again", _details(rt, name))
            if subresource == "status":
                new = copy.deepcopy(old)
                if "status" in body:
                    new["status"] = copy.deepcopy(body["status"])
                else:
                    new.pop("status", None)
                self._admit(rt, new, old, field_validation, warnings)
            else:
                new = copy.deepcopy(body)
                new["apiVersion"], new["kind"] = old["apiVersion"], old["kind"]
                md = new.setdefault("metadata", {})
                omd = old["metadata"]
                for k in ("name", "namespace", "uid", "creationTimestamp", "generation", "resourceVersion",
                          "deletionTimestamp"):
                    if k in omd:
                        md[k] = omd[k]
                    else:
                        md.pop(k, None)
                if "managedFields" not in md and "managedFields" in omd:
                    md["managedFields"] = omd["managedFields"]
                if rt.status:
                    if "status" in old:
                        new["status"] = copy.deepcopy(old["status"])
                    else:
                        new.pop("status", None)
                self._admit(rt, new, old, field_validation, warnings)
                if rt.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
                    self._crd_status(new)
                    new["status"]["conditions"] = old.get("status", {}).get("conditions", new["status"]["conditions"])
            return self._commit(rt, old, new, dry_run)

    def _commit(self, rt: ResourceType, old: dict, new: dict, dry_run: bool) -> dict:
        if new == old:
            return self._out(rt, old)
        md = new["metadata"]
        spec_changed = self._stripped(new) != self._stripped(old)
        if _has_generation(rt) and (spec_changed or (not rt.status and new.get("status") != old.get("status"))):
            md["generation"] = int(old["metadata"].get("generation", 1)) + 1
        if dry_run:
            return self._out(rt, new)
        md["resourceVersion"] = self._next_rv()
        self._objects[rt.key][(md.get("namespace", ""), md["name"])] = new
        if rt.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
            self.catalogue.add_crd(new)
        self._emit(rt.key, "MODIFIED", new)
        self._mark_dirty()
        return self._out(rt, new)

    def patch(self, rt: ResourceType, namespace: str | None, name: str, patch_type: str, patch: Any,
              subresource: str = "", manager: str | None = None, force: bool = False,
              dry_run: bool = False, field_validation: str = "Warn", warnings: list[str] | None = None) -> dict:
        """PATCH with ``patch_type`` one of merge, json, strategic, apply. Apply creates when absent and
        needs ``manager``. Raises ApiError (400, 404, 409 conflicts, 415, 422)."""
        if patch_type == "apply":
            return self._apply(rt, namespace, name, patch, subresource, manager, force, dry_run,
                               field_validation, warnings)
        with self.lock:
            ns = namespace or "" if rt.namespaced else ""
            old = self._objects.get(rt.key, {}).get((ns, name))
            if old is None:
                raise not_found(rt, name)
            current = self._out(rt, old)
            try:
                if patch_type == "merge":
                    result = patching.merge_patch(current, patch)
                elif patch_type == "json":
                    result = patching.json_patch(current, patch)
                elif patch_type == "strategic":
                    if rt.crd:
                        raise ApiError(415, "UnsupportedMediaType", "strategic merge patch is not supported "
                                       "for custom resources; use merge or json patch")
                    result = patching.strategic_merge(current, patch)
                else:
                    raise ApiError(415, "UnsupportedMediaType", f"unsupported patch type {patch_type!r}")
            except patching.PatchError as e:
                if e.code == 422:  # kube-apiserver's wording for a JSON patch that does not apply
                    raise ApiError(422, "Invalid", "the server rejected our request due to an error in our "
                                   "request", {}) from e
                raise ApiError(e.code, "BadRequest", str(e)) from e
            if not isinstance(result, dict):
                raise ApiError(422, "Invalid", "the patch did not produce an object")
            return self.replace(rt, namespace, name, result, subresource, dry_run,
                                field_validation=field_validation, warnings=warnings)

    @staticmethod
    def _applied_configuration(rt: ResourceType, name: str, applied: Any, subresource: str) -> dict:
        """The configuration a server-side apply request owns: ``applied`` checked (an object, of the
        URL's name and the resource's kind; ApiError 400 otherwise), without type meta and the
        server-set metadata, cut to ``status`` for the status subresource and without it elsewhere
        when the resource has that subresource."""
        if not isinstance(applied, dict):
            raise ApiError(400, "BadRequest", "the applied configuration must be an object")
        amd = applied.get("metadata") or {}
        if amd.get("name") not in (None, name):
            raise ApiError(400, "BadRequest", f"the name of the object ({amd.get('name')}) does not match the "
                           f"name on the URL ({name})")
        if applied.get("kind") not in (None, rt.kind):
            raise ApiError(400, "BadRequest", f"the kind {applied.get('kind')!r} does not match {rt.kind!r}")
        cfg = copy.deepcopy(applied)
        cfg.pop("apiVersion", None)
        cfg.pop("kind", None)
        cmd = cfg.get("metadata") or {}
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "generation",
                  "managedFields", "selfLink", "deletionTimestamp"):
            cmd.pop(k, None)
        if not cmd:
            cfg.pop("metadata", None)
        if subresource == "status":
            cfg = {"status": cfg["status"]} if "status" in cfg else {}
        elif rt.status:
            cfg.pop("status", None)
        return cfg

    def _apply(self, rt, namespace, name, applied, subresource, manager, force, dry_run,
               field_validation="Warn", warnings=None) -> dict:
        if not manager:
            raise ApiError(400, "BadRequest", "PATCH request for apply must set the fieldManager parameter")
        cfg = self._applied_configuration(rt, name, applied, subresource)
        with self.lock:
            ns = namespace or "" if rt.namespaced else ""
            old = self._objects.get(rt.key, {}).get((ns, name))
            if old is None and subresource:
                raise not_found(rt, name)
            live = copy.deepcopy(old) if old else {"metadata": {}}
            try:
                definition = None if rt.crd else schemas.definition_name(rt.group, rt.version, rt.kind)
                result = patching.server_side_apply(live, cfg, manager, rt.api_version, force, now_rfc3339(),
                                                    subresource,
                                                    {"$ref": "#/$defs/" + definition} if definition else None)
            except patching.ApplyConflict as e:
                raise ApiError(409, "Conflict", str(e), {
                    "causes": [{"reason": "FieldManagerConflict", "message": f'conflict with "{m}"',
                                "field": p} for m, _v, p in e.conflicts]}) from e
            if old is None:
                result["apiVersion"], result["kind"] = rt.api_version, rt.kind
                result["metadata"]["name"] = name
                if rt.namespaced:
                    result["metadata"]["namespace"] = namespace or ""
                return self.create(rt, namespace, result, dry_run, field_validation=field_validation,
                                   warnings=warnings)
            result["apiVersion"], result["kind"] = old["apiVersion"], old["kind"]
            for k in ("name", "namespace"):
                if k in old["metadata"]:
                    result["metadata"][k] = old["metadata"][k]
            if subresource == "status":
                new = copy.deepcopy(old)
                if "status" in result:
                    new["status"] = result["status"]
                new["metadata"]["managedFields"] = result["metadata"]["managedFields"]
                return self._commit(rt, old, new, dry_run)
            return self.replace(rt, namespace, name, result, "", dry_run, check_rv=False,
                                field_validation=field_validation, warnings=warnings)

    def delete(self, rt: ResourceType, namespace: str | None, name: str, dry_run: bool = False) -> dict:
        """Delete at once (finalizers are not honoured); a namespace takes its objects with it and a
        CRD its custom resources. Returns the deleted object; raises ApiError 404."""
        with self.lock:
            ns = namespace or "" if rt.namespaced else ""
            bucket = self._objects.get(rt.key, {})
            old = bucket.get((ns, name))
            if old is None:
                raise not_found(rt, name)
            if rt.key == ("", "namespaces") and name in ("default", "kube-system", "kube-public"):
                raise ApiError(403, "Forbidden", f'namespaces "{name}" is forbidden: this namespace may not be '
                               "deleted", {"name": name, "kind": "namespaces"})
            if dry_run:
                return self._out(rt, old)
            if rt.key == ("", "namespaces"):
                for key, objs in list(self._objects.items()):
                    for k in [k for k in objs if k[0] == name and key != ("", "namespaces")]:
                        self._remove(key, k)
            if rt.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
                ckey = self.catalogue.crd_storage_key(name)
                if ckey:
                    for k in list(self._objects.get(ckey, {})):
                        self._remove(ckey, k)
                self.catalogue.remove_crd(name)
            gone = self._remove(rt.key, (ns, name))
            return self._out(rt, gone)

    def _remove(self, key: tuple[str, str], k: tuple[str, str]) -> dict:
        old = self._objects[key].pop(k)
        gone = copy.deepcopy(old)
        gone["metadata"]["resourceVersion"] = self._next_rv()
        self._emit(key, "DELETED", gone)
        self._mark_dirty()
        return gone

    # ---- hooks -----------------------------------------------------------------------------------

    def set_status(self, rt: ResourceType, namespace: str | None, name: str, status: dict) -> dict:
        """Replace .status (what a kubelet or controller would do); emits MODIFIED unless unchanged."""
        return self.replace(rt, namespace, name, {"status": status}, "status", check_rv=False)

    def all_objects(self, key: tuple[str, str]) -> list[dict]:
        with self.lock:
            return [copy.deepcopy(o) for o in self._objects.get(key, {}).values()]


# kube-apiserver's registry strategies that set fields of their own, by (group, plural): Store._admit.
_STRATEGIES: dict[tuple[str, str], Callable[[Store, ResourceType, dict, dict | None, str], None]] = {
    ("", "namespaces"): Store._namespace_strategy,
    ("", "services"): Store._service_strategy,
    ("", "pods"): Store._pod_strategy,
    ("batch", "jobs"): Store._job_strategy,
    ("apps", "daemonsets"): Store._daemonset_strategy,
}
