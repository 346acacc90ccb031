"""Helpers the built-in third-party rules share: reading fields as Karmada's scripts read them,
pod-template requirements and dependencies, the generation report of member status, and the
status merges several projects use."""
from __future__ import annotations

from karmactl.api.constants import TEMPLATE_GENERATION_ANNOTATION
from karmactl.api.objects import deepcopy
from karmactl.interpreter._common import InterpreterError, parse_int64


def dig(obj, *path):
    """The value at ``path`` (keys of mappings, indexes of lists), None where a step is missing."""
    cur = obj
    for key in path:
        if isinstance(cur, dict):
            cur = cur.get(key)
        elif isinstance(cur, list) and isinstance(key, int) and 0 <= key < len(cur):
            cur = cur[key]
        else:
            return None
    return cur


def need(obj, *path):
    """The value at ``path``; a missing value raises :class:`InterpreterError` (where Karmada's
    script indexes or compares nil and fails)."""
    value = dig(obj, *path)
    if value is None:
        raise InterpreterError(f"{'.'.join(str(p) for p in path)} is not set")
    return value


def number(value, default=0):
    """A number field (``int`` when whole); ``default`` when absent or not a number (Lua ``tonumber``)."""
    if isinstance(value, bool) or value is None or value == "":
        return default
    if isinstance(value, (int, float)):
        return int(value) if float(value).is_integer() else value
    try:
        parsed = float(str(value).strip())
    except ValueError:
        return default
    return int(parsed) if parsed.is_integer() else parsed


def status_of(obj: dict) -> dict:
    """The object's ``status``; :class:`InterpreterError` when it has none."""
    status = obj.get("status")
    if not isinstance(status, dict):
        raise InterpreterError("status is not set")
    return status


def item_statuses(items) -> list[tuple[str, dict | None]]:
    """``[(clusterName, status | None)]`` of aggregated status items."""
    out = []
    for item in items or []:
        status = (item or {}).get("status")
        out.append(((item or {}).get("clusterName") or "", status if isinstance(status, dict) else None))
    return out


def template_status(template: dict) -> dict:
    """A private copy of the template's current ``status`` (``{}`` when it has none)."""
    return deepcopy(template.get("status") or {})


def pod_requirements(template) -> dict | None:
    """``kube.accuratePodRequirements``: the nodeClaim and resource request of a pod template
    (:func:`karmactl.interpreter.replica.pod_resource_request`), None when both are empty."""
    from karmactl.interpreter.replica import _replica_requirements

    spec = template.get("spec") if isinstance(template, dict) else None
    return _replica_requirements(spec if isinstance(spec, dict) else {}, False)


def pod_dependencies(pod_spec, namespace) -> list[dict]:
    """``kube.getPodDependencies`` of a pod spec: ConfigMaps, Secrets, the ServiceAccount (unless
    ``default``) and PersistentVolumeClaims it names, in ``namespace``."""
    from karmactl.interpreter.dependencies import _pod_dependencies

    return _pod_dependencies(pod_spec if isinstance(pod_spec, dict) else {}, namespace or "")


def template_dependencies(obj: dict, *path) -> list[dict]:
    """:func:`pod_dependencies` of the pod template at ``path`` (its ``spec``), in the object's namespace."""
    return pod_dependencies(dig(obj, *path, "spec"), dig(obj, "metadata", "namespace") or "default")


def named_refs(obj: dict, groups) -> list[dict]:
    """References in the object's namespace: ``groups`` is ``[(kind, names)]`` of core (``v1``)
    kinds; empty names are skipped, duplicates given once."""
    namespace = dig(obj, "metadata", "namespace")
    refs, seen = [], set()
    for kind, names in groups:
        for name in names:
            if not isinstance(name, str) or not name or (kind, name) in seen:
                continue
            seen.add((kind, name))
            ref = {"apiVersion": "v1", "kind": kind, "name": name}
            if namespace:
                ref["namespace"] = namespace
            refs.append(ref)
    return refs


def generation_report(obj: dict, status: dict) -> dict:
    """``status`` plus the member's ``generation`` and the ``resourceTemplateGeneration`` its
    ``resourcetemplate.karmada.io/generation`` annotation carries (left out when absent or not
    an integer), as the rules of generation-tracking kinds report them."""
    md = obj.get("metadata") or {}
    if md.get("generation") is not None:
        status["generation"] = md["generation"]
    text = (md.get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    if isinstance(text, str):
        try:
            status["resourceTemplateGeneration"] = parse_int64(text.strip())
        except ValueError:
            pass
    return status


def observed_generation(template: dict, items) -> int:
    """The aggregated ``observedGeneration``: the template's generation when every member reports
    ``resourceTemplateGeneration`` equal to it and its own ``generation`` equal to its
    ``observedGeneration``; otherwise the template's current ``status.observedGeneration``."""
    generation = number(dig(template, "metadata", "generation"))
    caught_up = 0
    statuses = item_statuses(items)
    for _cluster, status in statuses:
        status = status or {}
        if number(status.get("resourceTemplateGeneration")) == generation and \
                number(status.get("generation")) == number(status.get("observedGeneration")):
            caught_up += 1
    if caught_up == len(statuses):
        return generation
    return number(dig(template, "status", "observedGeneration"))


def pick(source: dict, keys) -> dict:
    """The present (non-None) ``keys`` of ``source``, copied."""
    return {k: deepcopy(source[k]) for k in keys if source.get(k) is not None}


def last_set(items, key, empty=("",)):
    """The last member's value of ``key`` that is present and not in ``empty`` (None when none)."""
    found = None
    for _cluster, status in item_statuses(items):
        value = (status or {}).get(key)
        if value is not None and value not in empty:
            found = value
    return found


def total(items, key) -> int | float:
    """The sum of ``key`` over the members' statuses (absent counts 0)."""
    return sum(number((status or {}).get(key)) for _cluster, status in item_statuses(items))


def merged_conditions(items) -> list[dict]:
    """Conditions of every member, each message prefixed ``<cluster>=``; conditions of equal
    type, status and reason are joined into one whose message lists every cluster's (``, ``),
    in the order they first appear (the Flux and Kyverno convention)."""
    merged: list[dict] = []
    for cluster, status in item_statuses(items):
        for condition in (status or {}).get("conditions") or []:
            if not isinstance(condition, dict):
                continue
            message = f"{cluster}={condition.get('message') or ''}"
            same = next((c for c in merged if (c.get("type"), c.get("status"), c.get("reason")) ==
                         (condition.get("type"), condition.get("status"), condition.get("reason"))), None)
            if same is not None:
                same["message"] = f"{same['message']}, {message}"
            else:
                merged.append(dict(deepcopy(condition), message=message))
    return merged


def has_condition(obj: dict, ctype: str, status: str = "True", reasons=None) -> bool:
    """Whether ``status.conditions`` has one of type ``ctype`` and status ``status`` (and, when
    given, a reason among ``reasons``)."""
    for condition in dig(obj, "status", "conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == ctype and condition.get("status") == status \
                and (reasons is None or condition.get("reason") in reasons):
            return True
    return False


def omit_empty(value, drop_zero: bool = True):
    """A status without empty parts: empty mappings and lists removed recursively, and (with
    ``drop_zero``) ``0``, ``""`` and ``"0s"`` too; None when nothing is left."""
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            kept = omit_empty(inner, drop_zero)
            if kept is not None:
                out[key] = kept
        return out or None
    if isinstance(value, list):
        out_list = [kept for kept in (omit_empty(v, drop_zero) for v in value) if kept is not None]
        return out_list or None
    if value is None or (drop_zero and not isinstance(value, bool) and value in (0, "", "0s")):
        return None
    return value


def with_path(obj: dict, value, *path) -> dict:
    """A copy of ``obj`` with ``value`` at ``path`` (mappings created on the way)."""
    new = deepcopy(obj)
    cur = new
    for key in path[:-1]:
        if not isinstance(cur.get(key), dict):
            cur[key] = {}
        cur = cur[key]
    cur[path[-1]] = value
    return new


def component(name: str, replicas, requirements: dict | None) -> dict:
    """A ``Component`` as Karmada records it on a binding (``replicaRequirements`` left out when empty)."""
    out = {"name": name, "replicas": int(number(replicas))}
    if requirements:
        out["replicaRequirements"] = requirements
    return out
