"""The Karmada scheduler as pure functions over binding and Cluster dicts (``pkg/scheduler/``).

Entry points: :func:`schedule_binding` (one binding, everything section 3 of the semantics reference
says the scheduler does) and :func:`needs_schedule` (the ``doScheduleBinding`` decision). The Webster
apportionment is exported for the binding controller (Job completions).
"""
from karmactl.scheduler.core import (ScheduleOutcome, explain_filters, is_eligible, needs_schedule, placement_changed,
                                     schedule_binding)
from karmactl.scheduler.webster import allocate_webster_seats

__all__ = ["ScheduleOutcome", "schedule_binding", "needs_schedule", "is_eligible", "placement_changed",
           "allocate_webster_seats", "explain_filters"]
