"""Karmada's naming rules for bindings, Works and execution namespaces (``pkg/util/names/names.go``)."""
from __future__ import annotations

from functools import lru_cache

from karmactl.api.constants import EXECUTION_SPACE_PREFIX

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def fnv1a_32(data: bytes) -> int:
    """32-bit FNV-1a hash of ``data``."""
    h = 0x811C9DC5
    for byte in data:
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """Map the decimal digits of a hash onto Kubernetes' "safe" alphabet (``rand.SafeEncodeString``)."""
    return "".join(_ALPHABET[ord(c) % len(_ALPHABET)] for c in text)


def binding_name(name: str, kind: str) -> str:
    """``<name>-<kind>`` lowercased, ``:`` replaced by ``.``: ``nginx-deployment``."""
    return f"{name.replace(':', '.')}-{kind}".lower()


@lru_cache(maxsize=65536)
def work_name(namespace: str, name: str, kind: str) -> str:
    """The Work name Karmada generates for a resource: Deployment ``default/nginx`` -> ``nginx-687f7fb96f``.

    The hash is FNV-1a 32 of ``lower("<namespace>-<name>-<kind>")`` (``lower("<name>-<kind>")`` for
    cluster-scoped objects), printed in decimal and safe-encoded.
    """
    seed = f"{namespace}-{name}-{kind}" if namespace else f"{name}-{kind}"
    digest = safe_encode(str(fnv1a_32(seed.lower().encode("utf-8"))))
    return f"{name.replace(':', '.').lower()}-{digest}"


def policy_name(namespace: str, name: str, gvk: str) -> str:
    """The name ``karmadactl apply --all-clusters|-C`` gives the policy it generates for an object
    (``GeneratePolicyName``): ``<name>-<hash>`` lowercased, ``:`` replaced by ``.``, the hash FNV-1a 32 of
    ``<namespace><gvk>`` (``gvk`` as Go prints a GroupVersionKind: ``apps/v1, Kind=Deployment``,
    ``v1, Kind=ConfigMap``), decimal, safe-encoded."""
    digest = safe_encode(str(fnv1a_32(f"{namespace}{gvk}".encode("utf-8"))))
    return f"{name.replace(':', '.')}-{digest}".lower()


def execution_namespace(cluster: str) -> str:
    """``karmada-es-<cluster>``."""
    return f"{EXECUTION_SPACE_PREFIX}{cluster}"


def cluster_of_execution_namespace(namespace: str) -> str | None:
    """The cluster name of an execution namespace, or None."""
    if namespace.startswith(EXECUTION_SPACE_PREFIX):
        return namespace[len(EXECUTION_SPACE_PREFIX):]
    return None
