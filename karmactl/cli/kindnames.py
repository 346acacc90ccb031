"""Command-line resource names -> kinds, without importing the store (completion uses it too)."""
from __future__ import annotations

from karmactl.api.kinds import KindInfo, KindRegistry


def lookup_kind(registry: KindRegistry, name: str) -> KindInfo | None:
    """The kind a command-line resource name means, as kubectl's RESTMapper reads it: ``deploy``,
    ``deployments``, ``Deployment``, ``deployments.apps``, ``deployment.v1.apps`` (None: unknown)."""
    info = registry.resolve(name)
    if info is None and name.count(".") >= 2:  # resource.version.group, e.g. deployment.v1.apps
        resource, version, group = name.split(".", 2)
        found = registry.resolve(f"{resource}.{group}")
        info = found if found is not None and version in (found.versions or (found.version,)) else None
    return info
