"""The default (native) resource interpreter for built-in kinds.

Karmada asks an interpreter how to read and adapt each kind: replicas and their requirements,
replica revision, health, status reflection and aggregation, retention on update, dependencies and
manifest pruning. This package is the native layer of that chain
(``pkg/resourceinterpreter/default/native/``); customizations (Lua, webhooks) would sit in front of it.

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

__all__ = [
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
