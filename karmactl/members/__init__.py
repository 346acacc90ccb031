"""Member clusters: how they are reached, probed, and how Works are applied to them.

The orchestration layer's only user of the ``kubernetes`` client and HTTP (DESIGN §2), imported
lazily by the CLI: ``kubeconfig`` (which kubeconfig/context a Cluster uses), ``clients`` (REST
client, discovery, rate limit), ``probing`` (cluster status), ``executing`` (apply/delete/status of
Works on one member) and ``layer`` (:class:`MemberLayer`, what ``reconcile.run`` calls).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .layer import MemberLayer

__all__ = ["MemberLayer"]


def __getattr__(name: str):
    if name == "MemberLayer":
        from .layer import MemberLayer
        return MemberLayer
    raise AttributeError(name)
