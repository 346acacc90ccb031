"""MultiClusterIngress status: backend Service locations and TrafficControl traffic blocking.

Karmada leaves this to the separate repository ``karmada-io/multicluster-cloud-provider``; karmactl
computes it as pure status (docs/karmada-semantics.md §7.2, DESIGN §3.2) following

* ``pkg/controllers/mciservicelocations/mci_service_locations.go`` (``calculateServiceLocations``,
  ``obtainBindingClusters``) and ``pkg/controllers/indexes/reference_indexer.go``
  (``BuildServiceRefIndexes``) for ``status.serviceLocations``;
* ``pkg/controllers/multiclusteringress/mci_controller.go`` and the design document
  ``docs/proposals/remedy-cluster-status-based-policy.md`` ("Controller logic") for
  ``status.trafficBlockClusters``.

For every MultiClusterIngress (``networking.karmada.io/v1alpha1``):

``status.serviceLocations``
    one ``{name, clusters}`` per backend Service name referenced by ``spec.defaultBackend`` and
    ``spec.rules[*].http.paths[*].backend`` (``service.name``; resource backends are skipped), sorted
    by name, whose ResourceBinding ``<svc>-service`` exists in the MCI's namespace; ``clusters`` is the
    sorted union of that binding's ``spec.clusters[*].name`` and ``spec.requiredBy[*].clusters[*].name``
    (omitted when empty). A Service without a binding has no entry (upstream skips NotFound).
``status.trafficBlockClusters``
    the sorted clusters appearing in any ``serviceLocations[*].clusters`` whose
    ``status.remedyActions`` contains ``TrafficControl``; omitted when empty, so it clears when the
    action goes.

Any other status a person wrote in the MCI's file (``status.loadBalancer``) is kept. Both fields are
omitted when empty; an MCI with nothing to record has no overlay. Overlays of MCIs that no longer
exist are dropped.
"""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.objects import deepcopy
from karmactl.api.names import binding_name
from karmactl.api.templates import new_overlay
from karmactl.controllers.helper.cluster import effective_status

MCI_GROUP, MCI_KIND = "networking.karmada.io", "MultiClusterIngress"
COMPUTED_FIELDS = ("serviceLocations", "trafficBlockClusters")


def backend_service_names(mci: dict) -> list[str]:
    """Sorted, de-duplicated Service names of the MCI's default backend and rule paths."""
    spec = mci.get("spec") or {}
    backends = []
    if isinstance(spec.get("defaultBackend"), dict):
        backends.append(spec["defaultBackend"])
    for rule in spec.get("rules") or []:
        http = rule.get("http") if isinstance(rule, dict) else None
        paths = (http.get("paths") or []) if isinstance(http, dict) else []
        for path in paths:
            if isinstance(path, dict) and isinstance(path.get("backend"), dict):
                backends.append(path["backend"])
    names = set()
    for backend in backends:
        svc = backend.get("service")
        if isinstance(svc, dict) and isinstance(svc.get("name"), str) and svc["name"]:
            names.add(svc["name"])
    return sorted(names)


def binding_clusters(binding: dict) -> list[str]:
    """Sorted union of ``spec.clusters[*].name`` and ``spec.requiredBy[*].clusters[*].name``."""
    spec = binding.get("spec") or {}
    names = {c.get("name") for c in spec.get("clusters") or [] if isinstance(c, dict)}
    for req in spec.get("requiredBy") or []:
        names |= {c.get("name") for c in (req or {}).get("clusters") or [] if isinstance(c, dict)}
    return sorted(n for n in names if n)


def service_locations(mci: dict, bindings: dict, namespace: str | None = None) -> list[dict]:
    """``status.serviceLocations`` of one MCI.

    Args:
        mci: the MultiClusterIngress.
        bindings: ResourceBindings by key ``("work.karmada.io", "ResourceBinding", ns, name)``.
        namespace: the MCI's namespace (default: its ``metadata.namespace``, else ``default``).

    Returns:
        ``[{"name": svc, "clusters": [...]}]`` sorted by name (``clusters`` omitted when empty).
    """
    ns = namespace or (mci.get("metadata") or {}).get("namespace") or "default"
    out = []
    for svc in backend_service_names(mci):
        rb = bindings.get(("work.karmada.io", "ResourceBinding", ns, binding_name(svc, "Service")))
        if rb is None:
            continue
        loc = {"name": svc}
        clusters = binding_clusters(rb)
        if clusters:
            loc["clusters"] = clusters
        out.append(loc)
    return out


def traffic_block_clusters(locations: list[dict], remedy_actions: dict[str, list[str]]) -> list[str]:
    """Sorted clusters of ``locations`` whose remedy actions contain ``TrafficControl``.

    Args:
        locations: ``status.serviceLocations``.
        remedy_actions: ``{cluster name: status.remedyActions}``.
    """
    seen = {c for loc in locations for c in loc.get("clusters") or []}
    return sorted(c for c in seen if C.ACTION_TRAFFIC_CONTROL in (remedy_actions.get(c) or []))


def mci_overlay(key, mci: dict, overlay: dict | None, locations: list[dict], blocked: list[str]) -> dict | None:
    """The MCI overlay holding the file's status plus the computed fields (``overlay`` when unchanged;
    None when there is nothing to record)."""
    status = {k: deepcopy(v) for k, v in (mci.get("status") or {}).items() if k not in COMPUTED_FIELDS}
    if locations:
        status["serviceLocations"] = locations
    if blocked:
        status["trafficBlockClusters"] = blocked
    if not locations and not blocked:
        return None
    new = new_overlay(key, mci)
    new["status"] = status
    if overlay is not None and new == overlay:
        return overlay
    return new


def step(loaded, out, now: str, ctx) -> bool:
    """Phase ``status``: recompute every MCI's status in ``out``; True when changed."""
    actions = {}
    for key in out.keys_of_kind("cluster.karmada.io", "Cluster"):
        actions[key[3]] = effective_status(out.user[key], out.overlays.get(key)).get("remedyActions") or []
    changed = False
    mci_keys = out.keys_of_kind(MCI_GROUP, MCI_KIND)
    for key in mci_keys:
        mci = out.user[key]
        locations = service_locations(mci, out.bindings, key[2])
        blocked = traffic_block_clusters(locations, actions)
        changed = out.set_overlay(key, mci_overlay(key, mci, out.overlays.get(key), locations, blocked)) or changed
    live = set(mci_keys)
    for key in [k for k in out.overlays if k[:2] == (MCI_GROUP, MCI_KIND) and k not in live]:
        changed = out.set_overlay(key, None) or changed
    return changed


