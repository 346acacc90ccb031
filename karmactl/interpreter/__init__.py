"""The default (native) resource interpreter for built-in kinds.

Karmada asks an interpreter how to read and adapt each kind: replicas and their requirements,
replica revision, health, status reflection and aggregation, retention on update, dependencies and
manifest pruning. This package is the native layer of that chain
(``pkg/resourceinterpreter/default/native/``). :class:`Interpreter` (:mod:`.customized`) puts
ResourceInterpreterCustomization Lua scripts (:mod:`.luavm`, sandboxed Lua 5.1) and the built-in
third-party rules of 27 popular custom resource kinds (:mod:`.thirdparty`) in front of it with
the same names; the run builds one (``Interpreter.for_snapshot``) and every call site uses it.

All functions are pure: they take JSON-like dicts and return new ones, never mutating inputs.
"""
from ._common import InterpreterError
from .aggregate import aggregate_status, has_aggregate_hook
from .dependencies import get_dependencies, has_dependencies_hook
from .health import has_health_hook, interpret_health
from .prune import prune_manifest
from .reflect import reflect_status
from .replica import (has_replica_hook, has_revise_replica, interpret_replica, pod_resource_request,
                      revise_replica, split_job_completions)
from .retain import has_retain_hook, retain
from .customized import Interpreter  # noqa: E402 - after the native modules it builds on

__all__ = [
    "Interpreter",
    "InterpreterError",
    "aggregate_status",
    "get_dependencies",
    "has_aggregate_hook",
    "has_dependencies_hook",
    "has_health_hook",
    "has_replica_hook",
    "has_retain_hook",
    "has_revise_replica",
    "interpret_health",
    "interpret_replica",
    "pod_resource_request",
    "prune_manifest",
    "reflect_status",
    "retain",
    "revise_replica",
    "split_job_completions",
]
