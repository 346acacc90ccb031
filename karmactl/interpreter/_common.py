"""Shared pieces of the native interpreter: the error type, GVK keys and typed field readers.

Karmada converts every object to its typed Go struct before interpreting it
(``helper.ConvertToTypedObject``); a field of the wrong type makes the operation fail. The readers
here reproduce that: a missing or ``null`` field reads as the Go zero value, a field of the wrong
type raises :class:`InterpreterError`.
"""
from __future__ import annotations

import json
import re

# GroupVersionKinds the native hooks are registered for (``pkg/resourceinterpreter/default/native``).
DEPLOYMENT = ("apps/v1", "Deployment")
REPLICASET = ("apps/v1", "ReplicaSet")
STATEFULSET = ("apps/v1", "StatefulSet")
DAEMONSET = ("apps/v1", "DaemonSet")
JOB = ("batch/v1", "Job")
CRONJOB = ("batch/v1", "CronJob")
POD = ("v1", "Pod")
SERVICE = ("v1", "Service")
SERVICE_ACCOUNT = ("v1", "ServiceAccount")
SECRET = ("v1", "Secret")
PVC = ("v1", "PersistentVolumeClaim")
PV = ("v1", "PersistentVolume")
INGRESS = ("networking.k8s.io/v1", "Ingress")
PDB = ("policy/v1", "PodDisruptionBudget")
HPA = ("autoscaling/v2", "HorizontalPodAutoscaler")
SERVICE_IMPORT = ("multicluster.x-k8s.io/v1alpha1", "ServiceImport")

SA_TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token"


class InterpreterError(Exception):
    """An object could not be interpreted (a field has the wrong type, a required value is missing).

    Karmada's callers turn such errors into a failed operation: health ``Unknown``, a failed
    status reflection, a failed apply.
    """


def gvk(obj: dict) -> tuple[str, str]:
    """``(apiVersion, kind)`` of an object."""
    return obj.get("apiVersion") or "", obj.get("kind") or ""


def describe(obj: dict) -> str:
    """``Kind ns/name`` for error messages."""
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    name = md.get("name", "")
    return f"{obj.get('kind', '?')} {ns + '/' if ns else ''}{name}"


def get_path(obj, *path):
    """The value at ``path`` (dict keys), or None when any step is missing or null.

    Raises:
        InterpreterError: an intermediate value is not a mapping.
    """
    cur = obj
    for i, key in enumerate(path):
        if cur is None:
            return None
        if not isinstance(cur, dict):
            raise InterpreterError(f".{'.'.join(path[:i])} is not an object")
        cur = cur.get(key)
    return cur


def get_int(obj, *path) -> int:
    """An integer field; missing/null -> 0 (Go zero value).

    Raises:
        InterpreterError: the value is not an integer (JSON numbers with an integral value pass).
    """
    value = get_path(obj, *path)
    if value is None:
        return 0
    if isinstance(value, bool):
        raise InterpreterError(f".{'.'.join(path)} must be an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise InterpreterError(f".{'.'.join(path)} must be an integer, got {value!r}")


def get_opt_int(obj, *path) -> int | None:
    """Like :func:`get_int` but None for a missing field (Go ``*int32``)."""
    if get_path(obj, *path) is None:
        return None
    return get_int(obj, *path)


def get_str(obj, *path) -> str:
    """A string field; missing/null -> ``""``.

    Raises:
        InterpreterError: the value is not a string.
    """
    value = get_path(obj, *path)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InterpreterError(f".{'.'.join(path)} must be a string, got {value!r}")
    return value


def get_dict(obj, *path) -> dict | None:
    """A mapping field or None.

    Raises:
        InterpreterError: the value exists but is not a mapping.
    """
    value = get_path(obj, *path)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InterpreterError(f".{'.'.join(path)} must be an object")
    return value


def get_list(obj, *path) -> list:
    """A list field; missing/null -> ``[]``.

    Raises:
        InterpreterError: the value exists but is not a list.
    """
    value = get_path(obj, *path)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InterpreterError(f".{'.'.join(path)} must be a list")
    return value


def set_path(obj: dict, value, *path) -> None:
    """``unstructured.SetNestedField``: create intermediate maps, then set the leaf."""
    cur = obj
    for key in path[:-1]:
        nxt = cur.get(key)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[key] = nxt
        cur = nxt
    cur[path[-1]] = value


def remove_path(obj: dict, *path) -> None:
    """``unstructured.RemoveNestedField``: drop the leaf if every step exists."""
    cur = obj
    for key in path[:-1]:
        cur = cur.get(key) if isinstance(cur, dict) else None
        if cur is None:
            return
    if isinstance(cur, dict):
        cur.pop(path[-1], None)


def canonical_json(value) -> str:
    """A canonical text form used to compare JSON-like values regardless of key order."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def omit_zero(status: dict, required: tuple[str, ...], optional: tuple[str, ...], values: dict) -> None:
    """Write integer ``values`` into ``status`` the way Go's ``omitempty`` serializes them.

    Fields in ``required`` are always written; fields in ``optional`` are removed when zero.
    """
    for key in required:
        status[key] = values.get(key, 0)
    for key in optional:
        if values.get(key, 0):
            status[key] = values[key]
        else:
            status.pop(key, None)


_INT64_RE = re.compile(r"^[+-]?[0-9]+$")


def parse_int64(text: str) -> int:
    """``strconv.ParseInt(text, 10, 64)``: optional sign and decimal digits only.

    Raises:
        ValueError: anything else (including the empty string).
    """
    if not _INT64_RE.match(text):
        raise ValueError(f"invalid syntax: {text!r}")
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"value out of range: {text!r}")
    return value

