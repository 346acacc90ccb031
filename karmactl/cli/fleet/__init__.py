"""``karmactl fleet``: the fleet at a glance (workloads × member clusters with replicas and health, the
failover timeline from the Events, the propagation tree policy → template → binding → Work → member
object of a workload) as a terminal view (:mod:`.terminal`), one self-contained HTML page
(:mod:`.page`) or JSON, all three from the same data (:mod:`.data`)."""
