"""The scheduler framework: the plugin Protocols, filter/score runners and the scheduling errors.

Follows ``pkg/scheduler/framework/interface.go``, ``framework/types.go`` (``FitError``,
``UnschedulableError``) and ``framework/runtime/framework.go`` (``RunFilterPlugins`` stops at the first
failing plugin; ``RunScorePlugins`` sums the plugin scores, no weights).

Plugins see plain dicts: ``binding_spec`` / ``binding_status`` are the binding's ``spec`` / ``status``
(the status of the current attempt, i.e. with ``schedulerObservingAffinityName`` set to the
``clusterAffinities`` term being tried) and ``cluster`` is a Cluster object.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

MIN_CLUSTER_SCORE = 0
MAX_CLUSTER_SCORE = 100

_NO_CLUSTER_AVAILABLE = "0/{n} clusters are available: {reasons}."


@dataclass(frozen=True)
class FilterResult:
    """Outcome of one filter plugin on one cluster: ``ok`` or a human ``reason`` (exact upstream text)."""

    ok: bool
    reason: str = ""


SUCCESS = FilterResult(True)


@runtime_checkable
class FilterPlugin(Protocol):
    """A filter: ``name`` and ``filter(binding_spec, binding_status, cluster) -> FilterResult``."""

    name: str

    def filter(self, binding_spec: dict, binding_status: dict, cluster: dict) -> FilterResult: ...


@runtime_checkable
class ScorePlugin(Protocol):
    """A score plugin: ``name`` and ``score(binding_spec, cluster) -> int`` in [0, 100]."""

    name: str

    def score(self, binding_spec: dict, cluster: dict) -> int: ...


class SchedulingError(Exception):
    """A scheduling attempt failed; ``str(err)`` is the condition message (reason ``SchedulerError``)."""

    reason = "SchedulerError"

    def prefixed(self, prefix: str) -> "SchedulingError":
        """The same kind of error with ``prefix`` prepended (Go's ``fmt.Errorf("...: %w", err)``)."""
        return type(self)(prefix + str(self))


class UnschedulableError(SchedulingError):
    """Not enough capacity (upstream ``framework.UnschedulableError``); reason ``Unschedulable``."""

    reason = "Unschedulable"


class FitError(SchedulingError):
    """No cluster passed the filters (upstream ``framework.FitError``); reason ``NoClusterFit``.

    Args:
        num_all_clusters: clusters in the snapshot, deleting ones included.
        diagnosis: ``{cluster name: first failing filter reason}``.
    """

    reason = "NoClusterFit"

    def __init__(self, num_all_clusters: int, diagnosis: dict[str, str]):
        self.num_all_clusters = num_all_clusters
        self.diagnosis = dict(diagnosis)
        super().__init__(fit_error_message(num_all_clusters, diagnosis))

    def prefixed(self, prefix: str) -> "FitError":  # upstream never wraps a FitError
        return self


def fit_error_message(num_all_clusters: int, diagnosis: dict[str, str]) -> str:
    """``0/<N> clusters are available: <count reason, ...>.`` with the histogram sorted as strings."""
    if num_all_clusters == 0 or not diagnosis:
        return _NO_CLUSTER_AVAILABLE.format(n=num_all_clusters, reasons="no cluster exists")
    counts: dict[str, int] = {}
    for reason in diagnosis.values():
        counts[reason] = counts.get(reason, 0) + 1
    histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
    return _NO_CLUSTER_AVAILABLE.format(n=num_all_clusters, reasons=", ".join(histogram))


def run_filter_plugins(plugins, binding_spec: dict, binding_status: dict, cluster: dict) -> FilterResult:
    """Run ``plugins`` in order and return the first failure (or success)."""
    for plugin in plugins:
        result = plugin.filter(binding_spec, binding_status, cluster)
        if not result.ok:
            return result
    return SUCCESS


def run_score_plugins(plugins, binding_spec: dict, cluster: dict) -> int:
    """Sum of every score plugin's score for ``cluster`` (upstream configures no plugin weights)."""
    return sum(int(plugin.score(binding_spec, cluster)) for plugin in plugins)
