"""Type checks of the built-in workload kinds (Deployment, StatefulSet, ReplicaSet, DaemonSet, Job,
CronJob, Pod): the fields karmactl reads from them (replica counts, pod templates, containers,
resource requests and limits) must have the types the Kubernetes API server's OpenAPI schema gives
them, so that an object ``apply`` accepted never fails ``reconcile``.

Follows the Go types of ``k8s.io/api`` (``apps/v1``, ``batch/v1``, ``core/v1``): replica counts,
``parallelism`` and ``completions`` are ``*int32`` (at least 0), ``containers`` a list of Container
objects with a string ``name``, ``resources.requests``/``limits`` maps of quantities.
"""
from __future__ import annotations

from karmactl.api.quantity import QuantityError, parse_quantity
from karmactl.api.validation_fields import FieldError, invalid, required, wrong_type
from karmactl.api.validation_schema import INT32_MAX

# (group, kind) -> (path of int32 counts under spec, path of the pod spec as keys)
_WORKLOADS = {
    ("apps", "Deployment"): (("replicas",), ("spec", "template", "spec")),
    ("apps", "StatefulSet"): (("replicas",), ("spec", "template", "spec")),
    ("apps", "ReplicaSet"): (("replicas",), ("spec", "template", "spec")),
    ("apps", "DaemonSet"): ((), ("spec", "template", "spec")),
    ("batch", "Job"): (("parallelism", "completions"), ("spec", "template", "spec")),
    ("batch", "CronJob"): ((), ("spec", "jobTemplate", "spec", "template", "spec")),
    ("", "Pod"): ((), ("spec",)),
}


def workload_errors(obj: dict, group: str, kind: str) -> list[FieldError]:
    """Type errors in the fields karmactl reads from a built-in workload; ``[]`` for other kinds.

    Args:
        obj: the object as loaded (a dict).
        group, kind: its API group and kind.

    Returns:
        FieldErrors with their field paths (e.g. ``spec.template.spec.containers[0]``).
    """
    entry = _WORKLOADS.get((group, kind))
    if entry is None:
        return []
    counts, pod_path = entry
    errs: list[FieldError] = []
    spec = obj.get("spec")
    if spec is None:
        return errs
    if not isinstance(spec, dict):
        return [wrong_type("spec", spec, "object")]
    for name in counts:
        _int32(spec.get(name), f"spec.{name}", errs)
    node, path = obj, ""
    for part in pod_path:
        nxt = node.get(part)
        path = f"{path}.{part}" if path else part
        if nxt is None:
            return errs
        if not isinstance(nxt, dict):
            errs.append(wrong_type(path, nxt, "object"))
            return errs
        node = nxt
    _pod_spec(node, path, errs)
    if kind == "CronJob":
        job = (spec.get("jobTemplate") or {}).get("spec")
        if isinstance(job, dict):
            for name in ("parallelism", "completions"):
                _int32(job.get(name), f"spec.jobTemplate.spec.{name}", errs)
    return errs


def _int32(value, path: str, errs: list) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        errs.append(wrong_type(path, value, "integer"))
    elif value < 0:
        errs.append(invalid(path, value, "must be greater than or equal to 0"))
    elif value > INT32_MAX:
        errs.append(invalid(path, value, f"must be less than or equal to {INT32_MAX} (int32)"))


def _pod_spec(pod: dict, path: str, errs: list) -> None:
    for field in ("containers", "initContainers"):
        containers = pod.get(field)
        where = f"{path}.{field}"
        if containers is None:
            if field == "containers":
                errs.append(required(where))
            continue
        if not isinstance(containers, list):
            errs.append(wrong_type(where, containers, "array"))
            continue
        for i, c in enumerate(containers):
            _container(c, f"{where}[{i}]", errs)
    overhead = pod.get("overhead")
    if overhead is not None:
        _resource_list(overhead, f"{path}.overhead", errs)


def _container(c, path: str, errs: list) -> None:
    if not isinstance(c, dict):
        errs.append(wrong_type(path, c, "object"))
        return
    name = c.get("name")
    if not isinstance(name, str) or not name:
        errs.append(required(f"{path}.name") if name in (None, "") else wrong_type(f"{path}.name", name, "string"))
    image = c.get("image")
    if image is not None and not isinstance(image, str):
        errs.append(wrong_type(f"{path}.image", image, "string"))
    resources = c.get("resources")
    if resources is None:
        return
    if not isinstance(resources, dict):
        errs.append(wrong_type(f"{path}.resources", resources, "object"))
        return
    for part in ("requests", "limits"):
        if resources.get(part) is not None:
            _resource_list(resources[part], f"{path}.resources.{part}", errs)


def _resource_list(value, path: str, errs: list) -> None:
    if not isinstance(value, dict):
        errs.append(wrong_type(path, value, "object"))
        return
    for name, q in value.items():
        try:
            if isinstance(q, bool) or not isinstance(q, (str, int, float)):
                raise QuantityError("")
            parse_quantity(q)
        except (QuantityError, ValueError, ArithmeticError):
            errs.append(invalid(f"{path}.{name}", q, "must be a quantity, e.g. 500m, 1Gi"))
