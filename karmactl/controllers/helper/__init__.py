"""What two or more controllers share, as Karmada's ``pkg/util/helper/`` (and the binding
helpers of ``binding_types_helper.go`` of the work.karmada.io v1alpha2 API).

Every module of ``karmactl.controllers`` is one Karmada controller and never imports another
(the import-linter contract *Controllers are independent* in ``pyproject.toml``); what more than one
of them reads or writes lives here, the one package they may all import:

* :mod:`.binding`: a binding's identity and display name, the Works of each binding, aggregated
  status items, attached bindings of the dependencies distributor, the spec fields other
  controllers own;
* :mod:`.eviction`: graceful eviction tasks (``GracefulEvictCluster``) and state preservation, as
  the taint manager and application failover produce them;
* :mod:`.work`: the Works in execution namespaces (records, deletion, the binding a Work belongs
  to) and what rendering a Work needs (interpreter, overrides, clusters);
* :mod:`.cluster`: the Clusters as the control plane sees them (status and taints merged);
* :mod:`.template`: which objects are resource templates and the inputs the detector and the
  binding controller read from them;
* :mod:`.mcs`: the CrossCluster MultiClusterServices and the claim they put on their Services.

A package rather than one ``util.py``: the shared concepts are six, each with its Karmada
counterpart file, and a reader looking for "how does a controller find a binding's Works" finds
``helper/work.py`` as in Karmada. Nothing here imports a controller (import-linter counts imports
through this package as the controllers' own), and ``__init__`` imports nothing.
"""
