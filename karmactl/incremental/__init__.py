"""The incremental engine: an offline run does only the work whose result can have changed
(issue 15), and a large one is computed by several processes. Karmada's informers and work
queues, for a tool without watches.

Its front doors, in the order ``karmactl.reconcile`` (which keeps the choice of run and the loop
of DESIGN §1) calls them:

* ``engine.plan_run(store, now) -> RunPlan``: ``unchanged``, ``partial`` or ``full`` (why), from
  the last run's index (``runindex.py``: its files, signatures, owners, wake times);
* ``partial.PartialRun.prepare(store, index, plan)``: the sub-snapshot of the templates that
  changed (what to compute), then ``.commit(after, report, now, started_ns)``: their files written,
  the index updated;
* ``sharded.load_for_shards(store, owners, load)`` and ``sharded.run_large(...)``: a full run,
  in shards of ``shards.py`` computed by two processes (``shard_inputs.py``: the computed files
  each shard reads itself), its index recorded; ``engine.record_full_run`` when computed whole.

Imports only point down: ``karmactl.store``, ``karmactl.controllers`` and below, never
``karmactl.reconcile``; the control plane (``reconcile.compute``) is passed in.
"""
