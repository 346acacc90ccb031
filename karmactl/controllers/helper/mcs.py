"""CrossCluster MultiClusterServices and the claim they put on the Service of their name
(``pkg/util/helper/mcs.go``, ``pkg/controllers/multiclusterservice/mcs_controller.go``)."""
from __future__ import annotations

from karmactl.api import constants as C
from karmactl.api.objects import permanent_id

GROUP, KIND = "networking.karmada.io", "MultiClusterService"
CROSS_CLUSTER = "CrossCluster"
PERMANENT_ID_LABEL = "multiclusterservice.karmada.io/permanent-id"
# the same keys serve as labels on Works and as annotations on the Service and its binding
NAME_LABEL = "multiclusterservice.karmada.io/name"
NAMESPACE_LABEL = "multiclusterservice.karmada.io/namespace"


def is_cross_cluster(mcs: dict) -> bool:
    """``helper.MultiClusterServiceCrossClusterEnabled``: ``spec.types`` contains CrossCluster."""
    return CROSS_CLUSTER in ((mcs.get("spec") or {}).get("types") or [])


def mcs_id(mcs: dict) -> str:
    """The MCS's permanent id (label set when loading, as Karmada's mutating webhook does)."""
    md = mcs.get("metadata") or {}
    return (md.get("labels") or {}).get(PERMANENT_ID_LABEL) or permanent_id(KIND, md.get("namespace") or "",
                                                                             md.get("name") or "")


def live_mcs(snap) -> dict:
    """``{(namespace, name): MCS}`` of the CrossCluster MultiClusterServices of ``snap``."""
    return {(k[2], k[3]): snap.user[k] for k in snap.keys_of_kind(GROUP, KIND) if is_cross_cluster(snap.user[k])}


def service_claims(snap) -> dict:
    """``{Service key: {"labels": ..., "annotations": ...}}``: the claim each CrossCluster MCS puts on
    the Service of its name (``claimMultiClusterServiceForService``); the detector keeps those
    Services away from policies (``pkg/detector/detector.go``: a template with
    ``resourcetemplate.karmada.io/claimed-by`` is not propagated by a policy)."""
    out = {}
    for (ns, name), mcs in live_mcs(snap).items():
        key = ("", "Service", ns, name)
        if key in snap.user:
            out[key] = {"labels": {C.CLAIMED_BY_LABEL: KIND, PERMANENT_ID_LABEL: mcs_id(mcs)},
                        "annotations": {NAME_LABEL: name, NAMESPACE_LABEL: ns}}
    return out
