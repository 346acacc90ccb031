"""The control plane of one reconcile pass, composed from the controllers.

``karmactl.controllers`` holds one module per Karmada controller, none importing another; this
package is the level that knows them all:

* :mod:`karmactl.pipeline.registry`: ``PIPELINE``, the ordered tuple of steps (and ``wake_times``);
* :mod:`karmactl.pipeline.scheduling`: the scheduler's step, which feeds ``karmactl.scheduler`` the
  Clusters as the controllers left them and passes its answer through the FederatedResourceQuota
  admission (two controllers' results and the scheduler composed: not a controller of its own);
* :mod:`karmactl.pipeline.events`: Karmada's Events, derived after the pass from what it changed
  (the ``EventRecorder`` every controller would call, applied to the whole pass).

It sits between the orchestration (``reconcile``, ``store``, ``members``) and the controllers in the
layers contract of ``pyproject.toml``. This file imports nothing, so ``karmactl get`` can read
:func:`karmactl.pipeline.events.last_seen` without loading the pipeline.
"""
