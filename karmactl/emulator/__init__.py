"""Local member clusters: a small Kubernetes API server for the official client and kubectl.

``MemberServer`` is the in-process API (see :mod:`karmactl.emulator.server`);
``python -m karmactl.emulator serve`` runs one as a background process. :mod:`karmactl.emulator.local`
supervises ``local-up``'s member processes: emulators, or real kube-apiservers on etcd with
:mod:`karmactl.emulator.status_writer` writing workload status and creating Nodes as the fake
controller does.

Known limits (deliberate simplifications):

- JSON only: protobuf and CBOR request bodies get 415 (kubectl 1.32 sends JSON to this server, typed
  generators such as ``kubectl create configmap`` included).
- No admission, defaulting or schema validation beyond names, namespaces and a few defaults
  (replicas, Service clusterIP, Namespace phase); every field is accepted.
- Deletes are immediate: finalizers and ``deletionTimestamp`` are not honoured, propagationPolicy is
  accepted and ignored (a namespace or CRD takes its objects with it at once).
- Server-side apply tracks only ``Apply`` managers; PUT/PATCH writers do not own fields, so they never
  cause apply conflicts. Lists of objects are keyed by name/port/containerPort/ip (mountPath for
  volumeMounts) without a schema; other lists are atomic.
- Lists ignore ``limit``/``continue`` (everything in one page); watches send no bookmarks; history for
  watch resumption is the last 5000 events of this process (older versions get a 410 ERROR event).
- State is flushed ~50 ms after a change (and on stop/close); a SIGKILL can lose that window.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .server import MemberServer

__all__ = ["MemberServer"]


def __getattr__(name: str):
    # Lazy so that importing the package (e.g. for the CLI's --help) stays cheap.
    if name == "MemberServer":
        from .server import MemberServer
        return MemberServer
    raise AttributeError(name)
