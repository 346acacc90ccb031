"""The ``pods/log`` subresource of the emulator: what the containers of emulated Pods printed.

An emulated member runs no containers, so a Pod's log is what a test recorded for it
(:meth:`PodLogs.write`, the hook ``POST /_emulator/logs``), each line stamped with the time it was
recorded. ``GET /api/v1/namespaces/<ns>/pods/<name>/log`` answers as the kubelet does through the
kube-apiserver (``pkg/registry/core/pod/rest/log.go``, ``pkg/kubelet/kuberuntime/logs``), for the
parameters of ``PodLogOptions``: ``container`` (required when the Pod has several), ``tailLines``,
``limitBytes``, ``sinceSeconds``/``sinceTime``, ``timestamps``, ``previous`` (no container of an
emulated Pod ever restarted: 400, as for a container that never terminated) and ``follow`` (the
stream ends after the recorded lines, as for a container that has exited).
"""
from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

from .store import ApiError


def _stamp(seconds: float) -> str:
    """RFC 3339 with nanoseconds, as ``kubectl logs --timestamps`` prints the kubelet's stamps."""
    dt = datetime.fromtimestamp(seconds, timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int((seconds % 1) * 1e9):09d}Z"


def _bad(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


class PodLogs:
    """Recorded container output: ``(namespace, pod, container) -> [(unix seconds, line)]``."""

    def __init__(self) -> None:
        self._lines: dict[tuple[str, str, str], list[tuple[float, str]]] = {}
        self._lock = threading.Lock()

    def write(self, namespace: str, pod: str, container: str, text: str, at: float | None = None) -> None:
        """Record ``text`` (one line per ``\\n``) as printed by ``container`` of ``pod`` at ``at`` (now)."""
        stamp = time.time() if at is None else float(at)
        with self._lock:
            self._lines.setdefault((namespace, pod, container), []).extend(
                (stamp, line) for line in text.splitlines())

    def read(self, pod: dict, query: dict) -> str:
        """The log text ``GET pods/<name>/log`` answers for the stored ``pod`` and the query parameters.

        Raises:
            ApiError: 400 for a missing or unknown container, ``previous``, or a malformed number.
        """
        md = pod["metadata"]
        names = [c.get("name") for c in ((pod.get("spec") or {}).get("containers") or [])]
        container = query.get("container") or ""
        if not container:
            if len(names) != 1:
                raise _bad(f"a container name must be specified for pod {md['name']}, choose one of: "
                           f"[{' '.join(n for n in names if n)}]")
            container = names[0]
        elif container not in names:
            raise _bad(f"container {container} is not valid for pod {md['name']}")
        if query.get("previous") in ("true", "1"):
            raise _bad(f'previous terminated container "{container}" in pod "{md["name"]}" not found')
        with self._lock:
            lines = list(self._lines.get((md.get("namespace") or "", md["name"], container), ()))
        since = self._since(query)
        if since is not None:
            lines = [(t, s) for t, s in lines if t >= since]
        tail = self._number(query, "tailLines")
        if tail is not None:
            lines = lines[len(lines) - tail:] if tail else []
        stamps = query.get("timestamps") in ("true", "1")
        text = "".join(f"{_stamp(t)} {s}\n" if stamps else f"{s}\n" for t, s in lines)
        limit = self._number(query, "limitBytes")
        return text if limit is None else text.encode()[:limit].decode("utf-8", "ignore")

    @staticmethod
    def _number(query: dict, name: str) -> int | None:
        raw = query.get(name)
        if raw in (None, ""):
            return None
        try:
            value = int(raw)
        except ValueError:
            raise _bad(f"{name}: Invalid value: {raw!r}: must be an integer") from None
        if value < 0:
            raise _bad(f"{name}: Invalid value: {value}: must be greater than or equal to 0")
        return value

    def _since(self, query: dict) -> float | None:
        seconds = self._number(query, "sinceSeconds")
        if seconds is not None:
            return time.time() - seconds
        raw = query.get("sinceTime")
        if not raw:
            return None
        try:
            return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise _bad(f"sinceTime: Invalid value: {raw!r}: must be RFC 3339") from None
