"""The ResourceBinding webhook's FederatedResourceQuota check (``QuotaAdmission``), as a table of cases."""
from __future__ import annotations

import pytest

from karmactl.controllers.federated_resource_quota import QuotaAdmission

NOW = "2026-01-01T00:00:00Z"


def rb(name: str, replicas: dict, requests: dict | None = None, ns: str = "default") -> tuple:
    spec = {"replicaRequirements": {"resourceRequest": requests or {"cpu": "500m", "memory": "128Mi"}}}
    if replicas:
        spec["clusters"] = [{"name": c, "replicas": n} for c, n in replicas.items()]
    key = ("work.karmada.io", "ResourceBinding", ns, name)
    return key, {"kind": "ResourceBinding", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def quota(name: str, overall: dict, ns: str = "default") -> tuple:
    return ("policy.karmada.io", "FederatedResourceQuota", ns, name), {"spec": {"overall": overall}}


OTHER = rb("other", {"m1": 2})  # 1 CPU, 256Mi already placed
CASES = [
    # id, quotas, new placement of "app" (from nothing), denial message or None
    ("fits", [quota("q", {"cpu": "2"})], {"m1": 1, "m2": 1}, None),
    ("one CPU too many", [quota("q", {"cpu": "2"})], {"m1": 2, "m2": 1},
     "FederatedResourceQuota(default/q) exceeded for resource cpu: requested sum 2500m, limit 2."),
    ("memory in BinarySI", [quota("q", {"memory": "500Mi"})], {"m1": 2},
     "FederatedResourceQuota(default/q) exceeded for resource memory: requested sum 512Mi, limit 500Mi."),
    ("resources the quota does not name are free", [quota("q", {"pods": "1"})], {"m1": 40}, None),
    ("a quota of another namespace does not apply", [quota("q", {"cpu": "1"}, ns="team")], {"m1": 40}, None),
    ("the first quota by name that is exceeded answers",
     [quota("b", {"cpu": "1"}), quota("a", {"cpu": "1", "memory": "1Gi"})], {"m1": 1},
     "FederatedResourceQuota(default/a) exceeded for resource cpu: requested sum 1500m, limit 1."),
]


@pytest.mark.parametrize("quotas, placement, denied", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_new_placement_is_admitted_or_denied_with_the_webhooks_message(quotas, placement, denied):
    bkey, old = rb("app", {})
    admission = QuotaAdmission(dict(quotas), dict([OTHER, (bkey, old)]))
    new = rb("app", placement)[1]
    got = admission.admit(old, new, NOW)
    if denied is None:
        assert got is new
        return
    assert got["spec"] == old["spec"]  # the placement was not written
    cond = got["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Scheduled", "False", "QuotaExceeded")
    assert cond["message"] == f'admission webhook "resourcebinding.karmada.io" denied the request: {denied}'


def test_admitted_placements_count_for_the_next_and_scaling_down_is_always_admitted():
    quotas = dict([quota("q", {"cpu": "2"})])
    a_key, a_old = rb("a", {})
    b_key, b_old = rb("b", {})
    admission = QuotaAdmission(quotas, {a_key: a_old, b_key: b_old})
    a_new = rb("a", {"m1": 3})[1]
    assert admission.admit(a_old, a_new, NOW) is a_new  # 1500m of 2
    assert admission.admit(b_old, rb("b", {"m1": 2})[1], NOW)["status"]["conditions"][0]["reason"] == "QuotaExceeded"
    smaller = rb("a", {"m1": 1})[1]
    assert admission.admit(a_new, smaller, NOW) is smaller  # 500m now
    b_new = rb("b", {"m1": 2})[1]
    assert admission.admit(b_old, b_new, NOW) is b_new  # 500m + 1 fits
    same_total = rb("b", {"m2": 2})[1]
    assert admission.admit(b_new, same_total, NOW) is same_total  # moved, same replicas: nothing to check


def test_a_quota_lowered_below_its_usage_denies_any_growth_but_not_a_move():
    key, placed = rb("a", {"m1": 4})  # 2 CPU
    admission = QuotaAdmission(dict([quota("q", {"cpu": "1"})]), {key: placed})
    grown = rb("a", {"m1": 5})[1]
    assert admission.admit(placed, grown, NOW)["status"]["conditions"][0]["message"].endswith(
        "requested sum 2500m, limit 1.")
    shrunk = rb("a", {"m1": 3})[1]  # still above 1: the webhook checks the sum, not the direction
    assert admission.admit(placed, shrunk, NOW)["status"]["conditions"][0]["reason"] == "QuotaExceeded"
