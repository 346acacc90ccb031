"""Kyverno (``kyverno.io/v1`` Policy and ClusterPolicy).

Written from Kyverno's API: a policy reports ``status.ready`` (older releases) or a ``Ready``
condition with reason ``Succeeded``, the rules it generated for pod controllers
(``status.autogen``) and how many rules of each type it has (``status.rulecount``). Karmada's
rules: ``resourcecustomizations/kyverno.io/v1/``.
"""
from __future__ import annotations

from karmactl.api.objects import deepcopy

from . import Rules
from ._util import has_condition, item_statuses, last_set, merged_conditions, number, pick, template_status

_RULE_TYPES = ("validate", "generate", "mutate", "verifyimages")


def _health(obj: dict) -> bool:
    """``status.ready`` when the policy reports it, else a ``Ready`` condition True with reason Succeeded."""
    ready = (obj.get("status") or {}).get("ready") if isinstance(obj.get("status"), dict) else None
    if ready is not None:
        return bool(ready)
    return has_condition(obj, "Ready", "True", ("Succeeded",))


def _aggregate(template: dict, items, _now) -> dict:
    """A fresh status: the last member's ``autogen`` and ``ready``, rule counts summed, conditions merged."""
    if not items:
        return template_status(template)
    status: dict = {}
    for key in ("autogen", "ready"):
        value = last_set(items, key, empty=())
        if value is not None:
            status[key] = deepcopy(value)
    counts = dict.fromkeys(_RULE_TYPES, 0)
    for _cluster, member in item_statuses(items):
        for key in _RULE_TYPES:
            counts[key] += number(((member or {}).get("rulecount") or {}).get(key))
    status["rulecount"] = counts
    status["conditions"] = merged_conditions(items)
    return status


def _reflect(obj: dict) -> dict:
    status = obj.get("status")
    return pick(status, ("ready", "conditions", "autogen", "rulecount")) if isinstance(status, dict) else {}


POLICY = Rules(health=_health, aggregate=_aggregate, reflect=_reflect)

RULES = {
    ("kyverno.io/v1", "Policy"): POLICY,
    ("kyverno.io/v1", "ClusterPolicy"): POLICY,
}
