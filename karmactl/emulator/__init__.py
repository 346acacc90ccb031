"""Local member clusters: a small Kubernetes API server for the official client and kubectl.

``MemberServer`` is the in-process API (see :mod:`karmactl.emulator.server`);
``python -m karmactl.emulator serve`` runs one as a background process. :mod:`karmactl.emulator.local`
supervises ``local-up``'s member processes: emulators, or real kube-apiservers on etcd with
:mod:`karmactl.emulator.status_writer` writing workload status and creating Nodes as the fake
controller does.

Built-in kinds are pruned, type-checked and defaulted through the Kubernetes v1.31 OpenAPI schemas
(:mod:`.schemas`, :mod:`.defaults`). What the emulator deliberately does not do (controllers, garbage
collection, authorization, hand-written validation rules, custom resource schemas, protobuf...) and
every difference from a real kube-apiserver found by ``tests/emulator/test_differential.py`` are in
``docs/member-emulator.md``.
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
