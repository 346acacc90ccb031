"""The controller steps one reconcile pass runs, by phase, in a fixed order (semantics §15.1).

A step is ``step(loaded: Snapshot, out: Snapshot, now: str, ctx: StepContext) -> bool``: it reads
``out`` (the snapshot being computed; ``loaded`` is what was read from disk), replaces objects in
``out`` through ``out.set_overlay/set_binding/set_work``, and returns True when it changed
anything. Steps are pure: no files, no network, time only from ``now``.

Phases of one pass:

``clusters``   after cluster status reports are folded in, before the detector
               (cluster taints from conditions, ClusterTaintPolicy, remedy actions);
``bindings``   after the detector, before the scheduler (taint manager, application failover);
``scheduled``  after the scheduler, before the binding controller (graceful eviction);
``status``     after the binding controller (binding status, template status, MultiClusterIngress).
"""
from __future__ import annotations

PHASES: dict[str, list] = {"clusters": [], "bindings": [], "scheduled": [], "status": []}


def register(phase: str, step) -> None:
    """Add ``step`` at the end of ``phase`` (called once per module, at import)."""
    if step not in PHASES[phase]:
        PHASES[phase].append(step)


# Modules whose steps run in a pass, in order. Importing one registers its steps.
STEP_MODULES = (
    "karmactl.controllers.remedy",
    "karmactl.controllers.multicluster_ingress",
    "karmactl.controllers.cluster_taints",
    "karmactl.controllers.taint_manager",
    "karmactl.controllers.application_failover",
    "karmactl.controllers.graceful_eviction",
    "karmactl.controllers.binding_status",
    "karmactl.controllers.template_status",
)


def load_steps() -> dict[str, list]:
    """Import every step module (once) and return the phase table."""
    import importlib

    for name in STEP_MODULES:
        importlib.import_module(name)
    return PHASES
