"""Kubernetes watches of the member copies karmactl manages, for the continuous loop
(``karmactl/continuous.py``): a change on a member (a workload getting ready, an edit by hand, a
deletion) triggers a pass within moments instead of at the next resync.

One watch per member and resource (every kind its Works dispatch), cluster-wide, limited to the
objects Karmada manages (label ``karmada.io/managed=true``), as an informer runs it
(``k8s.io/client-go/tools/cache/reflector.go``): it starts from the resourceVersion of a LIST
(``limit=1``: only the version is needed, the passes read the objects), resumes from the last
version seen (events and ``BOOKMARK``s, ``allowWatchBookmarks``) when the server ends the stream
(``timeoutSeconds``), and lists again on ``410 Gone`` (the version expired), firing a trigger then
since events may have been missed. A member that fails is retried with a backoff (1 s doubling to
30 s); it never stops the loop.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

import orjson

from karmactl.api.constants import MANAGED_LABEL

WATCH_SECONDS = 290
"""``timeoutSeconds`` asked of the server per watch request (kube-apiserver's own limit is about 5 minutes)."""

BACKOFF_MAX = 30.0
MIN_STREAM_SECONDS = 1.0
"""A watch stream that ends sooner, with no event, counts as a failure (backoff before the next)."""


class ResourceWatch(threading.Thread):
    """One watch: ``client`` (``karmactl.members.clients.MemberClient``), the resource's collection
    ``path`` (``/apis/apps/v1/deployments``), ``fire(reason)`` on each event of a managed object.
    A daemon thread; :meth:`stop` ends it within a second or two."""

    def __init__(self, cluster: str, kind: str, client, path: str, fire: Callable[[str], None]):
        super().__init__(name=f"watch-{cluster}-{kind}", daemon=True)
        self.cluster, self.kind, self.client, self.path, self.fire = cluster, kind, client, path, fire
        self.version: str | None = None
        self.events = 0
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        backoff = 1.0
        listed_once = False
        while not self._halt.is_set():
            started, events = time.monotonic(), self.events
            try:
                if self.version is None:
                    self.version = self._list_version()
                    if listed_once:  # a re-list after 410 Gone or a failure: events may be lost
                        self.fire(f"member: {self.cluster} {self.kind} re-listed")
                    listed_once = True
                self._stream()
                healthy = self.events > events or time.monotonic() - started >= MIN_STREAM_SECONDS
            except _Gone:
                self.version = None
                healthy = time.monotonic() - started >= MIN_STREAM_SECONDS
            except Exception:  # noqa: BLE001 - a member that fails is retried; the passes report it
                healthy = False
            if healthy:
                backoff = 1.0
                continue
            # failed, or ended at once with nothing (a member answering empty streams or 410 to
            # every version): never a busy loop of requests and re-list triggers
            if self._halt.wait(backoff):
                return
            backoff = min(backoff * 2, BACKOFF_MAX)

    def _list_version(self) -> str:
        status, body = self.client.request("GET", self.path, query=[("limit", "1"),
                                                                    ("labelSelector", f"{MANAGED_LABEL}=true")])
        if status != 200 or not isinstance(body, dict):
            raise RuntimeError(f"LIST {self.path}: HTTP {status}")
        return str((body.get("metadata") or {}).get("resourceVersion") or "")

    def _stream(self) -> None:
        query = [("watch", "1"), ("allowWatchBookmarks", "true"), ("timeoutSeconds", str(WATCH_SECONDS)),
                 ("labelSelector", f"{MANAGED_LABEL}=true")]
        if self.version:
            query.append(("resourceVersion", self.version))
        for line in self.client.watch_lines(self.path, query, read_timeout=WATCH_SECONDS + 30, stop=self._halt):
            event = orjson.loads(line)
            kind, obj = event.get("type"), event.get("object") or {}
            meta = obj.get("metadata") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise _Gone()
                raise RuntimeError(f"watch {self.path}: {obj.get('message')}")
            if meta.get("resourceVersion"):
                self.version = str(meta["resourceVersion"])
            if kind in ("ADDED", "MODIFIED", "DELETED"):
                self.events += 1
                ref = f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else meta.get("name")
                self.fire(f"member: {self.cluster} {self.kind} {ref}")


class _Gone(Exception):
    """The watch's resourceVersion expired (HTTP 410): list again."""


class MemberWatches:
    """The set of :class:`ResourceWatch` threads the loop keeps, one per (cluster, apiVersion, kind).

    Args:
        fire: ``f(reason)``, called from the watch threads (``karmactl.continuous.Triggers.fire``).
    """

    def __init__(self, fire: Callable[[str], None]):
        self.fire = fire
        self.watches: dict[tuple, ResourceWatch] = {}

    def update(self, wanted: dict) -> None:
        """Watch exactly ``wanted``: ``{(cluster, apiVersion, kind): (client, collection path)}``;
        watches no longer wanted are stopped, new ones started. A client or path of None (the member
        unreachable, the kind not served) leaves that watch out until the next update."""
        for key in list(self.watches):
            w = self.watches[key]
            if key not in wanted or wanted[key][0] is not w.client or not w.is_alive():
                w.stop()
                del self.watches[key]
        for key, (client, path) in wanted.items():
            if key not in self.watches and client is not None and path:
                w = ResourceWatch(key[0], key[2], client, path, self.fire)
                self.watches[key] = w
                w.start()

    def stop(self) -> None:
        for w in self.watches.values():
            w.stop()
        deadline = time.monotonic() + 2
        for w in self.watches.values():
            w.join(max(0.0, deadline - time.monotonic()))
        self.watches.clear()


__all__ = ["MemberWatches", "ResourceWatch", "WATCH_SECONDS"]
