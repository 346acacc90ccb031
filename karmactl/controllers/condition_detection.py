"""Cluster condition detection with success/failure thresholds (pure).

Follows the design document ``docs/proposals/remedy-cluster-status-based-policy.md`` ("Cluster status
detection", "Domain name resolution function detection") and Karmada's sample detector
``pkg/servicenameresolutiondetector/coredns/detector.go`` (condition type, reasons, messages) with
its ``store/condition_cache.go`` (thresholds).

A probe (I/O, :mod:`karmactl.members.detection`) observes one outcome per cluster and condition type
per run: success (True), failure (False) or unknown (None: nothing is written, the detector state is
kept). The detector state persisted in the Cluster overlay under
``observed.conditionDetection.<conditionType>`` is::

    {"detected": bool, "contraryObservedSince": RFC 3339 time or None}

``detected`` is the state the condition reports; ``contraryObservedSince`` is when observations
started to contradict it. Rules (the design document's ``detectionFlag`` cases, with the threshold
names karmactl's settings use):

* no state yet (first observation): ``detected`` = the observation, the condition is set at once;
* observation agrees with ``detected``: ``contraryObservedSince`` is cleared;
* ``detected`` True, failure observed: the time is recorded at the first failure; once failures have
  lasted ``failure_threshold`` seconds (``settings.detect_failure_threshold``, 30), ``detected``
  becomes False;
* ``detected`` False, success observed: likewise with ``success_threshold``
  (``settings.detect_success_threshold``, 30) before ``detected`` becomes True.

The condition is then written on the overlay status with ``SetStatusCondition`` semantics:
True/``ServiceDomainNameResolutionReady``/"service domain name resolution is ready (<probe>)" or
False/``ServiceDomainNameResolutionFailed``/"service domain name resolution is unready (<probe>:
<detail>)".
"""
from __future__ import annotations

from dataclasses import dataclass

from karmactl.api import constants as C
from karmactl.api.objects import deepcopy, seconds_between, set_condition
from karmactl.api.templates import new_overlay

STATE_KEY = "conditionDetection"
REASON_READY = "ServiceDomainNameResolutionReady"
REASON_FAILED = "ServiceDomainNameResolutionFailed"
MSG_READY = "service domain name resolution is ready"
MSG_FAILED = "service domain name resolution is unready"


@dataclass(frozen=True)
class Observation:
    """One probe outcome.

    Attributes:
        success: True (healthy), False (failed) or None (unknown: nothing is concluded).
        probe: the probe's name for messages (``kube-dns workload``, ``command "..."``).
        detail: why, for messages and logs ("" when nothing to add).
    """

    success: bool | None
    probe: str
    detail: str = ""


def advance(state: dict | None, success: bool, now: str, failure_threshold: float,
            success_threshold: float) -> dict:
    """The detector state after one observation (rules in the module docstring).

    Args:
        state: ``{"detected": bool, "contraryObservedSince": str | None}`` or None (first observation).
        success: what the probe observed.
        now: the run's clock (RFC 3339).
        failure_threshold / success_threshold: seconds a contrary observation must last.

    Returns:
        A new state dict (``state`` is not modified).
    """
    if not state or not isinstance(state.get("detected"), bool):
        return {"detected": success, "contraryObservedSince": None}
    detected = state["detected"]
    if success == detected:
        return {"detected": detected, "contraryObservedSince": None}
    since = state.get("contraryObservedSince") or now
    threshold = failure_threshold if detected else success_threshold
    try:
        held = seconds_between(since, now)
    except ValueError:  # an unreadable time in the file: start counting again
        since, held = now, 0.0
    if held >= threshold:
        return {"detected": success, "contraryObservedSince": None}
    return {"detected": detected, "contraryObservedSince": since}


def condition_for(detected: bool, observation: Observation) -> tuple[str, str, str]:
    """(status, reason, message) of the condition reporting ``detected``.

    The message names the probe; the detail of the latest observation is added while it agrees
    with ``detected`` (a failure still within the threshold does not change the message).
    """
    agrees = observation.success == detected
    detail = f": {observation.detail}" if agrees and observation.detail else ""
    if detected:
        return "True", REASON_READY, f"{MSG_READY} ({observation.probe}{detail})"
    return "False", REASON_FAILED, f"{MSG_FAILED} ({observation.probe}{detail})"


def apply_observation(key, cluster: dict, overlay: dict | None, observation: Observation, now: str,
                      failure_threshold: float = 30.0, success_threshold: float = 30.0,
                      ctype: str = C.COND_SERVICE_DNS_READY) -> dict | None:
    """The Cluster overlay after one observation of condition type ``ctype``.

    Args:
        key: the Cluster's key ``("cluster.karmada.io", "Cluster", "", name)``.
        cluster: the user-written Cluster.
        overlay: its overlay (None when none yet). Callers fold the file's status in first
            (``cluster_status.ingest_file_status``).
        observation: the probe's outcome; ``success`` None returns ``overlay`` unchanged.
        now: the run's clock.
        failure_threshold / success_threshold: seconds.
        ctype: the condition type written.

    Returns:
        The new overlay (``overlay`` itself when nothing changed).
    """
    if observation.success is None:
        return overlay
    states = ((overlay or {}).get("observed") or {}).get(STATE_KEY) or {}
    state = states.get(ctype)
    new_state = advance(state, observation.success, now, failure_threshold, success_threshold)
    status, reason, message = condition_for(new_state["detected"], observation)

    new = deepcopy(overlay) if overlay is not None else new_overlay(key, cluster)
    if "status" not in new:
        new["status"] = deepcopy(cluster.get("status") or {})
    set_condition(new, ctype, status, reason, message, now)
    observed = new.setdefault("observed", {})
    observed[STATE_KEY] = dict(observed.get(STATE_KEY) or {}, **{ctype: new_state})
    if overlay is not None and new == overlay:
        return overlay
    return new
