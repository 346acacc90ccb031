"""Test hooks: health, latency and hangs, the request log, Nodes, and a fake workload controller."""
from __future__ import annotations

import threading
import time
from typing import Any

from .store import Store, now_rfc3339

HEALTH_STATES = ("ok", "unready", "broken")
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


class HookState:
    """Fault injection shared by every request: ``health`` (ok | unready | broken), per-request
    ``latency`` seconds, ``hang`` (requests block until cleared or ``hang_max`` seconds pass), and
    throttling (the next ``throttle_count`` API requests are answered 429 with ``Retry-After``, as
    kube-apiserver's API Priority and Fairness does when a client sends more than its share)."""

    def __init__(self) -> None:
        self.health = "ok"
        self.latency = 0.0
        self.hang_max = 60.0
        self._released = threading.Event()
        self._released.set()
        self.throttle_count = 0
        self.throttle_retry_after = 1
        self._throttle_lock = threading.Lock()

    def set_throttle(self, count: int, retry_after: int = 1) -> None:
        """Answer the next ``count`` API requests 429 TooManyRequests, ``Retry-After: retry_after``."""
        with self._throttle_lock:
            self.throttle_count, self.throttle_retry_after = max(0, int(count)), max(0, int(retry_after))

    def take_throttle(self) -> int | None:
        """For an API request being served: the Retry-After seconds when it is to be throttled, else None."""
        with self._throttle_lock:
            if self.throttle_count <= 0:
                return None
            self.throttle_count -= 1
            return self.throttle_retry_after

    @property
    def hang(self) -> bool:
        return not self._released.is_set()

    def set_health(self, state: str) -> None:
        if state not in HEALTH_STATES:
            raise ValueError(f"health must be one of {HEALTH_STATES}, not {state!r}")
        self.health = state

    def set_hang(self, hang: bool, max_seconds: float | None = None) -> None:
        if max_seconds is not None:
            self.hang_max = float(max_seconds)
        if hang:
            self._released.clear()
        else:
            self._released.set()

    def delay(self) -> None:
        """Called before serving an API request: sleeps the latency, then waits out a hang."""
        if self.latency > 0:
            time.sleep(self.latency)
        if self.hang:
            self._released.wait(self.hang_max)


class RequestLog:
    """API requests served (hook requests excluded): dicts with method, path, query, content_type,
    status and time (epoch seconds). Keeps the last ``limit`` entries.

    Also counts the API requests being served at once (:meth:`begin`/:meth:`end`):
    ``max_in_flight`` is the most since the log was last cleared (a client's concurrency as the
    server saw it)."""

    def __init__(self, limit: int = 20000) -> None:
        self._lock = threading.Lock()
        self._items: list[dict] = []
        self.limit = limit
        self.in_flight = 0
        self.max_in_flight = 0

    def begin(self) -> None:
        """An API request starts being served."""
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def end(self) -> None:
        """An API request has been answered (or failed)."""
        with self._lock:
            self.in_flight -= 1

    def add(self, entry: dict) -> None:
        with self._lock:
            self._items.append(entry)
            if len(self._items) > self.limit:
                del self._items[: len(self._items) - self.limit]

    def items(self) -> list[dict]:
        with self._lock:
            return [dict(e) for e in self._items]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.max_in_flight = self.in_flight

    def write_count(self) -> int:
        with self._lock:
            return sum(1 for e in self._items if e["method"] in WRITE_METHODS)


def node_object(name: str, cpu: str = "8", memory: str = "32Gi", pods: str = "110",
                labels: dict | None = None) -> dict:
    """A Ready v1 Node with the given capacity (allocatable equal to capacity)."""
    res = {"cpu": str(cpu), "memory": str(memory), "pods": str(pods), "ephemeral-storage": "100Gi"}
    ts = now_rfc3339()
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                              "kubernetes.io/arch": "amd64", **(labels or {})}},
        "spec": {},
        "status": {
            "capacity": dict(res), "allocatable": dict(res),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status", "lastHeartbeatTime": ts,
                            "lastTransitionTime": ts}],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.31.0", "kubeProxyVersion": "v1.31.0", "operatingSystem": "linux",
                         "architecture": "amd64", "containerRuntimeVersion": "containerd://1.7.0",
                         "osImage": "karmactl emulator", "kernelVersion": "6.0.0", "machineID": name,
                         "systemUUID": name, "bootID": name},
        },
    }


WORKLOADS = {("apps", "deployments"), ("apps", "statefulsets"), ("apps", "replicasets"), ("apps", "daemonsets"),
             ("", "pods"), ("batch", "jobs")}


def _counters(n: int, *names: str) -> dict:
    """``{name: n}`` for the status counters the API types mark ``omitempty``; at 0 ``{name: None}``:
    the counter is removed (a JSON merge patch's null), as a real controller's status leaves it out
    (found by ``tests/cluster/test_emulator_referee.py``)."""
    return {name: n or None for name in names}


def ready_status(key: tuple[str, str], obj: dict, node_count: int) -> dict:
    """The status fields a healthy controller would report for a workload (merged over its status;
    a None value removes that field)."""
    spec = obj.get("spec") or {}
    gen = obj.get("metadata", {}).get("generation", 1)
    ts = now_rfc3339()
    n = int(spec.get("replicas", 1) or 0)
    if key == ("apps", "deployments"):
        return {"observedGeneration": gen, **_counters(n, "replicas", "updatedReplicas", "readyReplicas",
                                                         "availableReplicas"),
                "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                     "message": "Deployment has minimum availability.", "lastUpdateTime": ts,
                     "lastTransitionTime": ts},
                    {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                     "message": "ReplicaSet has successfully progressed.", "lastUpdateTime": ts,
                     "lastTransitionTime": ts}]}
    if key == ("apps", "statefulsets"):
        return {"observedGeneration": gen, "replicas": n, "availableReplicas": n,
                **_counters(n, "readyReplicas", "currentReplicas", "updatedReplicas")}
    if key == ("apps", "replicasets"):
        return {"observedGeneration": gen, "replicas": n,
                **_counters(n, "readyReplicas", "availableReplicas", "fullyLabeledReplicas")}
    if key == ("apps", "daemonsets"):
        d = max(node_count, 1)
        return {"observedGeneration": gen, "currentNumberScheduled": d, "desiredNumberScheduled": d,
                "numberReady": d, "numberAvailable": d, "updatedNumberScheduled": d, "numberMisscheduled": 0}
    if key == ("", "pods"):
        containers = [{"name": c.get("name", ""), "image": c.get("image", ""), "ready": True, "started": True,
                       "restartCount": 0, "state": {"running": {"startedAt": ts}}}
                      for c in spec.get("containers") or []]
        return {"phase": "Running", "podIP": "10.244.0.10", "hostIP": "127.0.0.1", "startTime": ts,
                "containerStatuses": containers,
                "conditions": [{"type": t, "status": "True", "lastTransitionTime": ts}
                               for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]}
    if key == ("batch", "jobs"):
        done = int(spec.get("completions", 1) or 1)
        return {"startTime": ts, "completionTime": ts, "succeeded": done, "active": 0, "ready": 0,
                "conditions": [{"type": t, "status": "True", "lastProbeTime": ts, "lastTransitionTime": ts}
                               for t in ("SuccessCriteriaMet", "Complete")]}
    return {}


def _already(status: dict, want: dict) -> bool:
    # Timestamps and condition details differ every call; readiness is judged by the counters, the
    # phase and the condition types/statuses.
    for k, v in want.items():
        if k.endswith("Time") or k == "containerStatuses":
            continue
        if k == "conditions":
            have = {(c.get("type"), c.get("status")) for c in status.get("conditions") or []}
            if not {(c["type"], c["status"]) for c in v} <= have:
                return False
        elif status.get(k) != v:
            return False
    return True


class FakeController:
    """Marks workloads ready ``delay`` seconds after they are created or their spec changes.

    Reacts to store changes (no polling of every object); ``enabled`` can be flipped at run time.
    """

    def __init__(self, store: Store, delay: float = 0.5, enabled: bool = False) -> None:
        self.store, self.delay, self.enabled = store, delay, enabled
        self._pending: dict[tuple, float] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = False
        store.on_change.append(self._on_change)
        with store.lock:
            for key in WORKLOADS:
                for obj in store.all_objects(key):
                    self._on_change("ADDED", key, obj)
        self._thread = threading.Thread(target=self._run, name="emulator-fake-controller", daemon=True)
        self._thread.start()

    def _on_change(self, etype: str, key: tuple[str, str], obj: dict) -> None:
        if key not in WORKLOADS:
            return
        md = obj.get("metadata", {})
        ident = (key, md.get("namespace", ""), md.get("name", ""))
        with self._lock:
            if etype == "DELETED":
                self._pending.pop(ident, None)
            elif ident not in self._pending:
                self._pending[ident] = time.monotonic() + self.delay
        self._wake.set()

    def _run(self) -> None:
        while not self._stop:
            self._wake.wait(0.1)
            self._wake.clear()
            if not self.enabled:
                continue
            now = time.monotonic()
            with self._lock:
                due = [i for i, t in self._pending.items() if t <= now]
                for i in due:
                    del self._pending[i]
            for ident in due:
                self._reconcile(*ident)

    def _reconcile(self, key: tuple[str, str], namespace: str, name: str) -> None:
        rt = self.store.catalogue.by_key(key)
        if rt is None:
            return
        obj = self.store.find(rt, namespace, name)
        if obj is None:
            return
        status = obj.get("status") or {}
        want = ready_status(key, obj, len(self.store.all_objects(("", "nodes"))))
        if _already(status, want):
            return
        try:
            self.store.set_status(rt, namespace, name, {k: v for k, v in {**status, **want}.items() if v is not None})
        except Exception:  # the object went away in between; nothing to mark
            pass

    def close(self) -> None:
        self._stop = True
        self._wake.set()
        if self.store.on_change and self._on_change in self.store.on_change:
            self.store.on_change.remove(self._on_change)


def describe(hooks: HookState, **extra: Any) -> dict:
    return {"health": hooks.health, "latency": hooks.latency, "hang": hooks.hang, "hangMaxSeconds": hooks.hang_max,
            **extra}
