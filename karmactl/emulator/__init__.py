"""Local member clusters: a small Kubernetes API server for the official client and kubectl.

``MemberServer`` is the in-process API (see :mod:`karmactl.emulator.server`);
``python -m karmactl.emulator serve`` runs one as a background process.
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
