"""The run's resource interpreter: ResourceInterpreterCustomization Lua scripts, then the built-in
third-party rules (:mod:`karmactl.interpreter.thirdparty`), then the native ones.

Follows ``pkg/resourceinterpreter/interpreter.go`` (customized, then third-party, then native, per
operation; webhooks are not supported by karmactl) and ``pkg/resourceinterpreter/customized/declarative/configurable.go``
(which customization answers). A customization (``config.karmada.io/v1alpha1``) targets one kind
(``spec.target.apiVersion``/``kind``) and defines any of the operations in :data:`OPERATIONS`; for
those it replaces the built-in rules, for the others the built-in rules stay. Several
customizations of one kind are read in name order: the first that defines an operation answers it,
and every ``dependencyInterpretation`` contributes (their results joined).
"""
from __future__ import annotations

import threading

from karmactl.interpreter import aggregate, dependencies, health, prune, reflect, replica
from karmactl.interpreter.retain import _retain_cluster_fields, has_retain_hook as _has_retain_hook
from karmactl.interpreter.retain import retain as _native_retain
from karmactl.interpreter._common import InterpreterError, describe, gvk

_VM_LOCK = threading.Lock()

# spec.customizations field -> (karmadactl operation name, Lua function the script defines)
OPERATIONS = {
    "retention": ("Retain", "Retain"),
    "replicaResource": ("InterpretReplica", "GetReplicas"),
    "replicaRevision": ("ReviseReplica", "ReviseReplica"),
    "statusReflection": ("InterpretStatus", "ReflectStatus"),
    "statusAggregation": ("AggregateStatus", "AggregateStatus"),
    "healthInterpretation": ("InterpretHealth", "InterpretHealth"),
    "dependencyInterpretation": ("InterpretDependency", "GetDependencies"),
    "componentResource": ("InterpretComponent", "GetComponents"),
}
# spec.customizations field -> the operation's name in the built-in third-party rules (thirdparty.Rules)
_THIRDPARTY = {"retention": "retain", "replicaResource": "replica", "replicaRevision": "revise",
               "statusReflection": "reflect", "statusAggregation": "aggregate", "healthInterpretation": "health",
               "dependencyInterpretation": "dependencies", "componentResource": "components"}
GROUP, KIND = "config.karmada.io", "ResourceInterpreterCustomization"

# the fields of Karmada's typed results (what json.Unmarshal into the Go struct keeps)
_ITEM_FIELDS = ("clusterName", "status", "applied", "appliedMessage", "health")
_DEPENDENCY_FIELDS = ("apiVersion", "kind", "namespace", "name", "labelSelector")
_NODE_CLAIM_FIELDS = ("hardNodeAffinity", "nodeSelector", "tolerations")


def _third(api_version: str, kind: str, field: str):
    """The built-in third-party rule of a kind for a ``spec.customizations`` field, or None."""
    from karmactl.interpreter import thirdparty

    return thirdparty.rule(api_version, kind, _THIRDPARTY[field])


def _run_third(fn, field: str, obj: dict, *args):
    from karmactl.interpreter import thirdparty

    return thirdparty.run(fn, _THIRDPARTY[field], obj, *args)


class Interpreter:
    """The resource interpreter of one run: customizations first, then the built-in third-party
    rules, the native rules otherwise (per operation).

    Exposes the names of the :mod:`karmactl.interpreter` module (``interpret_replica``,
    ``revise_replica``, ``retain``, ``reflect_status``, ``aggregate_status``, ``interpret_health``,
    ``get_dependencies``, ``has_*_hook``, ``prune_manifest``, ``split_job_completions``,
    ``InterpreterError``) with the same shapes; without customizations it answers exactly as the
    module does.

    Args:
        customizations: ResourceInterpreterCustomization objects (dicts as in YAML), already
            validated.
        now: the run's clock (RFC 3339) for scripts that call ``os.time()``/``os.date()``.

    Attributes:
        failures: one line per failed script call (customization, operation, object, Lua error),
            in order, without duplicates; the run prints them as warnings.
    """

    InterpreterError = InterpreterError
    prune_manifest = staticmethod(prune.prune_manifest)
    split_job_completions = staticmethod(replica.split_job_completions)
    pod_resource_request = staticmethod(replica.pod_resource_request)

    def __init__(self, customizations=(), now: str | None = None):
        self._now = now
        self._vm = None
        self.failures: list[str] = []
        # (apiVersion, kind) -> field -> [(customization name, script)] in name order
        self._rules: dict = {}
        for c in sorted(customizations, key=lambda c: (c.get("metadata") or {}).get("name") or ""):
            spec = c.get("spec") or {}
            target = spec.get("target") or {}
            key = (target.get("apiVersion") or "", target.get("kind") or "")
            for field, rule in (spec.get("customizations") or {}).items():
                script = (rule or {}).get("luaScript") if isinstance(rule, dict) else None
                if field in OPERATIONS and script:
                    self._rules.setdefault(key, {}).setdefault(field, []).append(
                        ((c.get("metadata") or {}).get("name") or "", script))

    @classmethod
    def of(cls, ctx) -> "Interpreter":
        """The interpreter of a step context (``StepContext.interpreter``), or the native rules
        when the context has none."""
        found = getattr(ctx, "interpreter", None)
        if found is None:
            found = ctx.interpreter = cls()
        return found

    @classmethod
    def for_snapshot(cls, snap, now: str | None = None) -> "Interpreter":
        """The interpreter for a :class:`karmactl.api.snapshot.Snapshot` (its customizations that are
        not being deleted)."""
        found = [o for o in snap.of_kind(GROUP, KIND) if not (o.get("metadata") or {}).get("deletionTimestamp")]
        return cls(found, now)

    # ------------------------------------------------------------------ lookups

    def _custom(self, api_version: str, kind: str, field: str):
        rules = self._rules.get((api_version, kind))
        return rules[field][0] if rules and field in rules else None

    def customized(self, api_version: str, kind: str) -> list[str]:
        """The customization fields (``replicaResource``, ...) that answer for a kind."""
        return sorted(self._rules.get((api_version, kind)) or {})

    def has_replica_hook(self, api_version: str, kind: str) -> bool:
        """Whether replicas are interpreted for the kind (customized ``replicaResource``, third-party or native; ``HookEnabled``)."""
        return self._custom(api_version, kind, "replicaResource") is not None or \
            _third(api_version, kind, "replicaResource") is not None or replica.has_replica_hook(api_version, kind)

    def has_revise_replica(self, obj: dict) -> bool:
        """Whether the object's replicas can be revised (customized ``replicaRevision``, third-party or native)."""
        return self._custom(*gvk(obj), "replicaRevision") is not None or \
            _third(*gvk(obj), "replicaRevision") is not None or replica.has_revise_replica(obj)

    def has_retain_hook(self, api_version: str, kind: str) -> bool:
        """Whether a retain rule beyond the generic merge exists (customized ``retention``, third-party or native)."""
        return self._custom(api_version, kind, "retention") is not None or \
            _third(api_version, kind, "retention") is not None or _has_retain_hook(api_version, kind)

    def has_aggregate_hook(self, api_version: str, kind: str) -> bool:
        """Whether status is aggregated into templates of the kind (customized ``statusAggregation``, third-party or native)."""
        return self._custom(api_version, kind, "statusAggregation") is not None or \
            _third(api_version, kind, "statusAggregation") is not None or aggregate.has_aggregate_hook(api_version, kind)

    def has_health_hook(self, api_version: str, kind: str) -> bool:
        """Whether health is interpreted for the kind (customized ``healthInterpretation``, third-party or native)."""
        return self._custom(api_version, kind, "healthInterpretation") is not None or \
            _third(api_version, kind, "healthInterpretation") is not None or health.has_health_hook(api_version, kind)

    def has_dependencies_hook(self, api_version: str, kind: str) -> bool:
        """Whether dependencies are interpreted (customized ``dependencyInterpretation``, third-party or native)."""
        return self._custom(api_version, kind, "dependencyInterpretation") is not None or \
            _third(api_version, kind, "dependencyInterpretation") is not None or \
            dependencies.has_dependencies_hook(api_version, kind)

    def has_component_hook(self, api_version: str, kind: str) -> bool:
        """Whether components are interpreted (customized ``componentResource`` or third-party;
        the native layer has none)."""
        return self._custom(api_version, kind, "componentResource") is not None or \
            _third(api_version, kind, "componentResource") is not None

    # ------------------------------------------------------------------ running scripts

    def _call(self, rule, field: str, obj: dict, nrets: int, *args) -> list:
        name, script = rule
        if self._vm is None:
            from karmactl.interpreter.luavm import LuaVM

            with _VM_LOCK:  # the member layer calls from a thread pool: one machine per interpreter
                if self._vm is None:
                    self._vm = LuaVM(now=self._now)
        try:
            return self._vm.call(script, OPERATIONS[field][1], nrets, *args)
        except InterpreterError as exc:
            raise self._failure(name, field, obj, str(exc)) from None

    def _failure(self, name: str, field: str, obj: dict, message: str) -> InterpreterError:
        line = (f"{KIND} {name}: {field} ({OPERATIONS[field][1]}) of {describe(obj)}: {message}")
        if line not in self.failures:
            self.failures.append(line)
        return InterpreterError(line)

    def _object(self, rule, field, obj, value, *references) -> dict:
        from karmactl.interpreter.luavm import resolve_empty

        if not isinstance(value, dict) and value is not _empty():
            raise self._failure(rule[0], field, obj, f"expect the returned type is table but got {_lua_type(value)}")
        return resolve_empty(value, True, *references)

    # ------------------------------------------------------------------ operations

    def interpret_replica(self, obj: dict, *, resource_quota_estimate: bool = False) -> tuple[int, dict | None]:
        """``(replicas, replicaRequirements | None)``: Lua ``GetReplicas(obj)`` when customized
        (``luavm.GetReplicas``), else the built-in third-party rule, else
        :func:`karmactl.interpreter.interpret_replica`.

        Raises:
            InterpreterError: the script fails or returns a non-number replica count.
        """
        rule = self._custom(*gvk(obj), "replicaResource")
        if rule is None:
            third = _third(*gvk(obj), "replicaResource")
            if third is not None:
                count, requires = _run_third(third, "replicaResource", obj)
                return int(count), _requirements(requires or {})
            return replica.interpret_replica(obj, resource_quota_estimate=resource_quota_estimate)
        count, requires = self._call(rule, "replicaResource", obj, 2, obj)
        if isinstance(count, bool) or not isinstance(count, (int, float)):
            raise self._failure(rule[0], "replicaResource", obj, f"result type {_lua_type(count)} is not number")
        if requires is None:
            return int(count), None
        if not isinstance(requires, dict) and requires is not _empty():
            raise self._failure(rule[0], "replicaResource", obj,
                                f"expect the returned requires type is table but got {_lua_type(requires)}")
        try:
            return int(count), _requirements(self._object(rule, "replicaResource", obj, requires))
        except InterpreterError as exc:
            raise self._failure(rule[0], "replicaResource", obj, str(exc)) from None

    def revise_replica(self, obj: dict, replicas: int) -> dict:
        """``obj`` with ``replicas``: Lua ``ReviseReplica(obj, replicas)`` when customized, else third-party, else native."""
        rule = self._custom(*gvk(obj), "replicaRevision")
        if rule is None:
            third = _third(*gvk(obj), "replicaRevision")
            if third is not None:
                return _run_third(third, "replicaRevision", obj, int(replicas))
            return replica.revise_replica(obj, replicas)
        (out,) = self._call(rule, "replicaRevision", obj, 1, obj, int(replicas))
        return self._object(rule, "replicaRevision", obj, out, obj)

    def retain(self, desired: dict, observed: dict) -> dict:
        """The object to write over ``observed``: the generic merge every kind gets
        (``objectwatcher.retainClusterFields``), then Lua ``Retain(desired, observed)`` when
        customized, else the built-in third-party rule, else the native retain rules."""
        rule = self._custom(*gvk(desired), "retention")
        third = _third(*gvk(desired), "retention") if rule is None else None
        if rule is None and third is None:
            return _native_retain(desired, observed)
        from karmactl.api.objects import deepcopy

        merged = deepcopy(desired)
        _retain_cluster_fields(merged, observed)
        if rule is None:
            return _run_third(third, "retention", merged, observed)
        return self._lua_retain(rule, merged, observed)

    def _lua_retain(self, rule, desired: dict, observed: dict) -> dict:
        (out,) = self._call(rule, "retention", desired, 1, desired, observed)
        return self._object(rule, "retention", desired, out, desired, observed)

    def reflect_status(self, obj: dict) -> dict | None:
        """What a member object reports into ``manifestStatuses[].status``: Lua ``ReflectStatus(obj)``
        when customized (a table; ``{}`` when empty), else third-party, else native."""
        rule = self._custom(*gvk(obj), "statusReflection")
        if rule is None:
            third = _third(*gvk(obj), "statusReflection")
            if third is not None:
                return _run_third(third, "statusReflection", obj)
            return reflect.reflect_status(obj)
        (out,) = self._call(rule, "statusReflection", obj, 1, obj)
        return self._object(rule, "statusReflection", obj, out)

    def aggregate_status(self, template: dict, items: list[dict] | None, *, now: str | None = None) -> dict | None:
        """The template's new ``status``: the ``status`` of Lua ``AggregateStatus(template,
        statusItems)`` when customized (items as Karmada's AggregatedStatusItem: clusterName,
        status, applied, appliedMessage, health), else third-party, else native."""
        rule = self._custom(*gvk(template), "statusAggregation")
        if rule is None:
            third = _third(*gvk(template), "statusAggregation")
            if third is not None:
                return _run_third(third, "statusAggregation", template, items or [], now)
            return aggregate.aggregate_status(template, items, now=now)
        # no items is nil, as Karmada's (an empty aggregatedStatus is left out of the binding)
        return self._lua_aggregate(rule, template, items or None).get("status") or {}

    def _lua_aggregate(self, rule, template: dict, items) -> dict:
        # None is nil, a list (even empty) a table: what Go's nil and empty slices decode to
        lua_items = None if items is None else [{k: i[k] for k in _ITEM_FIELDS if k in i} for i in items]
        (out,) = self._call(rule, "statusAggregation", template, 1, template, lua_items)
        return self._object(rule, "statusAggregation", template, out)

    def interpret_health(self, obj: dict) -> str | None:
        """``"Healthy"``/``"Unhealthy"`` from Lua ``InterpretHealth(obj)`` (a boolean) when
        customized, else third-party, else native (None: no hook)."""
        rule = self._custom(*gvk(obj), "healthInterpretation")
        if rule is None:
            third = _third(*gvk(obj), "healthInterpretation")
            if third is not None:
                return health.HEALTHY if _run_third(third, "healthInterpretation", obj) else health.UNHEALTHY
            return health.interpret_health(obj)
        (out,) = self._call(rule, "healthInterpretation", obj, 1, obj)
        if not isinstance(out, bool):
            raise self._failure(rule[0], "healthInterpretation", obj, f"result type {_lua_type(out)} is not bool")
        return health.HEALTHY if out else health.UNHEALTHY

    def get_dependencies(self, obj: dict) -> list[dict]:
        """The objects ``obj`` depends on: every customization's Lua ``GetDependencies(obj)``
        joined when customized, else third-party, else native. Same shape and order as
        :func:`karmactl.interpreter.get_dependencies`."""
        rules = (self._rules.get(gvk(obj)) or {}).get("dependencyInterpretation")
        if not rules:
            third = _third(*gvk(obj), "dependencyInterpretation")
            if third is None:
                return dependencies.get_dependencies(obj)
            return _unique_refs(_run_third(third, "dependencyInterpretation", obj))
        from karmactl.interpreter.luavm import resolve_empty

        refs = []
        for rule in rules:
            (out,) = self._call(rule, "dependencyInterpretation", obj, 1, obj)
            if not isinstance(out, list) and out is not _empty():
                raise self._failure(rule[0], "dependencyInterpretation", obj,
                                    f"expect the returned requires type is table but got {_lua_type(out)}")
            for i, ref in enumerate(resolve_empty(out, False)):
                if not isinstance(ref, dict):
                    raise self._failure(rule[0], "dependencyInterpretation", obj, f"dependencies[{i}] is not an object")
                ref = {k: ref[k] for k in _DEPENDENCY_FIELDS if ref.get(k) not in (None, "")}
                if not ref.get("name") and ref.get("labelSelector") is None:
                    raise self._failure(rule[0], "dependencyInterpretation", obj,
                                        f"dependencies[{i}]: dependency can not leave name and labelSelector all empty")
                refs.append(ref)
        return _unique_refs(refs)

    def interpret_components(self, obj: dict) -> list[dict]:
        """The components of a multi-component workload (``GetComponents``): Lua
        ``GetComponents(obj)`` when customized, else the built-in third-party rule; ``[]`` when
        neither (Karmada's native layer has none). Each is ``{name, replicas,
        replicaRequirements?: {nodeClaim?, resourceRequest?, priorityClassName?}}`` as
        ``workv1alpha2.Component``, quantities canonical.

        Raises:
            InterpreterError: the script or rule fails, returns something else than a list of
                components, or names a component twice or not at all (Karmada's binding webhook
                refuses those: ``pkg/webhook/resourcebinding/validating.go``).
        """
        rule = self._custom(*gvk(obj), "componentResource")
        if rule is None:
            third = _third(*gvk(obj), "componentResource")
            found = _run_third(third, "componentResource", obj) if third is not None else []
            return _components(found, lambda message: InterpreterError(f"{describe(obj)}: {message}"))
        from karmactl.interpreter.luavm import resolve_empty

        (out,) = self._call(rule, "componentResource", obj, 1, obj)
        if out is None:
            return []
        if not isinstance(out, list) and out is not _empty():
            raise self._failure(rule[0], "componentResource", obj,
                                f"expected result type 'table' or 'nil' from GetComponents, but got '{_lua_type(out)}'")
        return _components(resolve_empty(out, False),
                           lambda message: self._failure(rule[0], "componentResource", obj, message))


    # ------------------------------------------------------------------ karmadactl interpret

    def run_rule(self, operation: str, desired: dict | None = None, observed: dict | None = None,
                 status: list | None = None, replica: int = 0, *, builtin: bool = False) -> list[tuple[str, object]]:
        """One customized operation as ``karmadactl interpret --operation`` runs it
        (``pkg/util/interpreter/rule.go``): ``[(result name, value)]``, e.g.
        ``[("replica", 2), ("requires", None)]``, ``[("healthy", True)]``, ``[("retained", obj)]``.

        ``operation`` is a karmadactl operation name (``Retain``, ``InterpretReplica``,
        ``ReviseReplica``, ``InterpretStatus``, ``AggregateStatus``, ``InterpretHealth``,
        ``InterpretDependency``, ``InterpretComponent``; any case). Retain takes ``desired`` and
        ``observed``; the others one object, ``desired`` or ``observed``. With ``builtin`` the
        built-in layers answer (third-party rules, then native) instead of the customizations;
        ``InterpretComponent`` gives ``[("components", [...])]``.

        Raises:
            InterpreterError: unknown operation, missing or doubled inputs, the kind has no
                customization (``builtin``: no built-in rule) for the operation ("rule is not
                enabled"), or the script or rule fails.
        """
        field = operation_field(operation)
        if field == "retention":
            if desired is None:
                raise InterpreterError("desired, desired-file options are not set")
            if observed is None:
                raise InterpreterError("observed, observed-file options are not set")
            obj = desired
        else:
            if desired is None and observed is None:
                raise InterpreterError("desired-file, observed-file options are not set")
            if desired is not None and observed is not None:
                raise InterpreterError("you can not specify both desired-file and observed-file options")
            obj = desired if desired is not None else observed
        if builtin:
            return self._run_builtin(field, obj, observed, status, replica)
        rule = self._custom(*gvk(obj), field)
        if rule is None:
            raise InterpreterError("rule is not enabled")
        if field == "retention":
            return [("retained", self._lua_retain(rule, desired, observed))]
        if field == "statusAggregation":
            return [("aggregatedStatus", self._lua_aggregate(rule, obj, status))]
        return self._results(field, obj, replica)

    def _results(self, field: str, obj: dict, replica: int) -> list[tuple[str, object]]:
        """The named results of a one-object operation, through the interpreter's own chain."""
        if field == "replicaResource":
            count, requires = self.interpret_replica(obj)
            return [("replica", count), ("requires", requires)]
        if field == "replicaRevision":
            return [("revised", self.revise_replica(obj, replica))]
        if field == "statusReflection":
            return [("status", self.reflect_status(obj))]
        if field == "healthInterpretation":
            return [("healthy", self.interpret_health(obj) == health.HEALTHY)]
        if field == "componentResource":
            return [("components", self.interpret_components(obj))]
        return [("dependencies", self.get_dependencies(obj))]

    def _run_builtin(self, field: str, obj: dict, observed: dict | None, status, replicas: int) -> list:
        """One operation of the built-in layers (third-party, then native), for ``karmactl
        interpret`` without customizations."""
        api_version, kind = gvk(obj)
        builtin = Interpreter(now=self._now)
        enabled = {
            "retention": lambda: builtin.has_retain_hook(api_version, kind),
            "replicaResource": lambda: builtin.has_replica_hook(api_version, kind),
            "replicaRevision": lambda: builtin.has_revise_replica(obj),
            "statusReflection": lambda: True,  # the native layer reflects any kind's whole status
            "statusAggregation": lambda: builtin.has_aggregate_hook(api_version, kind),
            "healthInterpretation": lambda: builtin.has_health_hook(api_version, kind),
            "dependencyInterpretation": lambda: builtin.has_dependencies_hook(api_version, kind),
            "componentResource": lambda: builtin.has_component_hook(api_version, kind),
        }[field]
        if not enabled():
            raise InterpreterError("rule is not enabled")
        if field == "retention":
            return [("retained", builtin.retain(obj, observed))]
        if field == "statusAggregation":
            return [("aggregatedStatus", dict(obj, status=builtin.aggregate_status(obj, status, now=self._now)))]
        return builtin._results(field, obj, replicas)


def _unique_refs(refs: list[dict]) -> list[dict]:
    """Dependencies once each, in the native layer's order."""
    unique: dict = {}
    for ref in refs:
        unique.setdefault(repr(sorted(ref.items())), ref)
    return sorted(unique.values(), key=dependencies._sort_key)


def _components(found, failure) -> list[dict]:
    """Components as ``workv1alpha2.Component`` keeps them (``name``, ``replicas``,
    ``replicaRequirements`` with nodeClaim, resourceRequest and priorityClassName); ``failure(message)``
    makes the error raised for a malformed one or a missing or repeated name."""
    out, names = [], set()
    for i, comp in enumerate(found or []):
        if not isinstance(comp, dict):
            raise failure(f"components[{i}] is not an object")
        name = comp.get("name")
        if not isinstance(name, str) or not name:
            raise failure(f"components[{i}].name: component names must be non-empty")
        if name in names:
            raise failure(f"components[{i}].name: component names must be unique: {name}")
        if len(name) > 32:
            raise failure(f"components[{i}].name: {name}: must be no more than 32 characters")
        names.add(name)
        count = comp.get("replicas") or 0
        if isinstance(count, bool) or not isinstance(count, (int, float)):
            raise failure(f"components[{i}].replicas is not a number")
        entry = {"name": name, "replicas": int(count)}
        requires = comp.get("replicaRequirements")
        if isinstance(requires, dict):
            try:
                requirements = _requirements(requires)
            except InterpreterError as exc:
                raise failure(f"components[{i}].{exc}") from None
            requirements = {k: v for k, v in (requirements or {}).items() if k != "namespace"}
            if requirements:
                entry["replicaRequirements"] = requirements
        elif requires is not None and requires is not _empty():
            raise failure(f"components[{i}].replicaRequirements is not an object")
        out.append(entry)
    return out


def conflicts(customizations) -> list[tuple[dict, str, str]]:
    """Customizations Karmada's validating webhook would refuse
    (``pkg/webhook/resourceinterpretercustomization/helper.go``): two of the same target that both
    define an operation other than ``dependencyInterpretation``. In name order, the later one
    conflicts with the earlier.

    Returns:
        ``[(customization, field, name of the earlier customization)]``, one per conflicting object.
    """
    seen: dict = {}  # (apiVersion, kind, field) -> name
    found = []
    for c in sorted(customizations, key=lambda c: (c.get("metadata") or {}).get("name") or ""):
        spec = c.get("spec") or {}
        target = spec.get("target") or {}
        name = (c.get("metadata") or {}).get("name") or ""
        clash = None
        for field, rule in sorted((spec.get("customizations") or {}).items()):
            if field == "dependencyInterpretation" or not (isinstance(rule, dict) and rule.get("luaScript")):
                continue
            key = (target.get("apiVersion"), target.get("kind"), field)
            if key in seen and clash is None:
                clash = (c, field, seen[key])
            seen.setdefault(key, name)
        if clash:
            found.append(clash)
    return found


def operation_field(operation: str) -> str:
    """The ``spec.customizations`` field of a karmadactl operation name (any case).

    Raises:
        InterpreterError: not an operation, naming the supported ones.
    """
    for field, (name, _fn) in OPERATIONS.items():
        if name.lower() == (operation or "").lower():
            return field
    names = ", ".join(name for name, _fn in OPERATIONS.values())
    raise InterpreterError(f"operation {operation} is not supported. Use one of: {names}")


def _empty():
    from karmactl.interpreter.luavm import _EMPTY

    return _EMPTY


def _lua_type(value) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "table"


def _requirements(requires: dict) -> dict | None:
    """A ReplicaRequirements as Go's struct keeps it: known fields, quantities canonical, empties left out."""
    from karmactl.api.quantity import canonical_string

    out: dict = {}
    claim = requires.get("nodeClaim")
    if isinstance(claim, dict):
        claim = {k: claim[k] for k in _NODE_CLAIM_FIELDS if claim.get(k)}
        if claim:
            out["nodeClaim"] = claim
    request = requires.get("resourceRequest")
    if isinstance(request, dict) and request:
        try:
            out["resourceRequest"] = {k: canonical_string(v) for k, v in request.items()}
        except (ValueError, TypeError) as exc:
            raise InterpreterError(f"replicaRequirements.resourceRequest: {exc}") from None
    for key in ("namespace", "priorityClassName"):
        if requires.get(key):
            out[key] = requires[key]
    return out or None
