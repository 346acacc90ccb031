"""Cluster controller taints from Ready (§4.2 + DESIGN §3.4) and ClusterTaintPolicy (§4.4), per rule."""
from __future__ import annotations

import pytest

from karmactl.controllers import cluster_taints as ct
from karmactl.controllers.cluster_taints import controller_taints, reconcile_cluster, sorted_policies
from karmactl.controllers.helper.cluster import effective_taints

from tests.failover.helpers import T0, at, cluster, ctx, ready, snapshot, taint, taint_policy

NR, UR, US = "cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable", "cluster.karmada.io/unschedulable"
NS, NE = "NoSchedule", "NoExecute"
KEY = ("cluster.karmada.io", "Cluster", "", "member1")


def ids(taints):
    return sorted((t["key"], t["effect"]) for t in taints)


@pytest.mark.parametrize("ready_status, failover, current, expected", [
    # Ready False: not-ready NoSchedule (+ NoExecute with failover), unreachable removed
    ("False", True, [], [(NR, NE), (NR, NS)]),
    ("False", False, [], [(NR, NS)]),
    ("False", True, [taint(UR, NS, T0), taint(UR, NE, T0)], [(NR, NE), (NR, NS)]),
    # Ready Unknown: unreachable, not-ready removed
    ("Unknown", True, [taint(NR, NS, T0), taint(NR, NE, T0)], [(UR, NE), (UR, NS)]),
    ("Unknown", False, [], [(UR, NS)]),
    # Ready True: both keys, both effects removed; other controller taints stay
    ("True", True, [taint(NR, NS, T0), taint(NR, NE, T0), taint("x", NS, T0)], [("x", NS)]),
    # failover off: NoExecute of the condition taints still cleaned up, never added
    ("True", False, [taint(NR, NE, T0)], []),
    ("False", False, [taint(NR, NE, T0)], [(NR, NS)]),
    # missing Ready (but some status): not-ready NoSchedule only
    (None, True, [], [(NR, NS)]),
])
def test_ready_rules(ready_status, failover, current, expected):
    got = controller_taints([], current, ready(ready_status), cluster("member1"), [], at(60), failover)
    assert ids(got) == sorted(expected)


def test_added_taints_get_time_added_now_and_no_value():
    got = controller_taints([], [], ready("False"), cluster("member1"), [], at(60), True)
    assert got == [{"key": NR, "effect": NS, "timeAdded": at(60)}, {"key": NR, "effect": NE, "timeAdded": at(60)}]


def test_no_status_at_all_means_no_taint():
    # a freshly written Cluster is not tainted before its first probe or report
    assert controller_taints([], [], {}, cluster("member1"), [], T0, True) == []


def test_existing_taints_keep_time_added_and_unchanged_list_is_the_same_object():
    current = [taint(NR, NS, T0), taint(NR, NE, T0)]
    got = controller_taints([], current, ready("False"), cluster("member1"), [], at(600), True)
    assert got is current


def test_user_taint_with_same_key_effect_is_not_added_again_nor_removed():
    user = [taint(NR, NE, T0)]
    got = controller_taints(user, [], ready("False"), cluster("member1"), [], at(60), True)
    assert ids(got) == [(NR, NS)]
    # Ready again: the user's taint is in the file, the controller never touches it
    assert controller_taints(user, got, ready("True"), cluster("member1"), [], at(120), True) == []


POLICY_READY = dict(add_on=[{"conditionType": "Ready", "operator": "NotIn", "statusValues": ["True"]}],
                    remove_on=[{"conditionType": "Ready", "operator": "In", "statusValues": ["True"]}])


@pytest.mark.parametrize("policy, status, current, expected", [
    # adds when all addOnConditions match
    (taint_policy("p", [{"key": "k", "effect": NE}], **POLICY_READY), ready("False"), [], [("k", NE)]),
    # removes when all removeOnConditions match
    (taint_policy("p", [{"key": "k", "effect": NE}], **POLICY_READY), ready("True"), [taint("k", NE, T0)], []),
    # empty addOnConditions never add, empty removeOnConditions never remove
    (taint_policy("p", [{"key": "k", "effect": NS}], add_on=[], remove_on=[]), ready("True"), [taint("k", NS, T0)],
     [("k", NS)]),
    # a missing condition never matches (neither In nor NotIn)
    (taint_policy("p", [{"key": "k", "effect": NS}],
                  add_on=[{"conditionType": "Foo", "operator": "NotIn", "statusValues": ["True"]}]),
     ready("True"), [], []),
    # all conditions ANDed
    (taint_policy("p", [{"key": "k", "effect": NS}],
                  add_on=[{"conditionType": "Ready", "operator": "In", "statusValues": ["True"]},
                          {"conditionType": "Foo", "operator": "In", "statusValues": ["True"]}]),
     ready("True"), [], []),
    # targetClusters that do not match: policy ignored
    (taint_policy("p", [{"key": "k", "effect": NE}], targets={"clusterNames": ["member2"]}, **POLICY_READY),
     ready("False"), [], []),
    (taint_policy("p", [{"key": "k", "effect": NE}], targets={"labelSelector": {"matchLabels": {"env": "prod"}}},
                  **POLICY_READY), ready("False"), [], [("k", NE)]),
])
def test_cluster_taint_policy_rules(policy, status, current, expected):
    # failover off, so only the policy acts on NoExecute
    got = controller_taints([], current, status, cluster("member1", labels={"env": "prod"}), [policy], at(60), False)
    assert ids([t for t in got if t["key"] == "k"]) == expected


def test_policy_taint_value_and_time_added():
    policy = taint_policy("p", [{"key": "k", "value": "v", "effect": NE}], **POLICY_READY)
    got = controller_taints([], [], ready("False"), cluster("member1"), [policy], at(5), False)
    assert {"key": "k", "value": "v", "effect": NE, "timeAdded": at(5)} in got


def test_policy_readding_what_the_ready_rule_removed_keeps_time_added():
    # the policy wants not-ready:NoExecute on Foo=True while Ready is True: the pass is stable
    policy = taint_policy("p", [{"key": NR, "effect": NE}],
                          add_on=[{"conditionType": "Foo", "operator": "In", "statusValues": ["True"]}])
    status = {"conditions": ready("True")["conditions"] + [{"type": "Foo", "status": "True"}]}
    current = [taint(NR, NE, T0)]
    assert controller_taints([], current, status, cluster("member1"), [policy], at(60), True) is current


def test_policies_sorted_by_creation_then_name():
    ps = [taint_policy("b", []), taint_policy("a", [], created=at(10)), taint_policy("c", [], created=T0),
          taint_policy("a0", [])]
    assert [p["metadata"]["name"] for p in sorted_policies(ps)] == ["a0", "b", "c", "a"]


def test_first_policy_adds_later_policy_removes_first_matching_only():
    add = taint_policy("add", [{"key": "k", "effect": NS}], add_on=[{"conditionType": "Ready", "operator": "In",
                                                                   "statusValues": ["True"]}], created=T0)
    rem = taint_policy("rem", [{"key": "k", "effect": NS}], remove_on=[{"conditionType": "Ready", "operator": "In",
                                                                      "statusValues": ["True"]}], created=at(1))
    got = controller_taints([], [], ready("True"), cluster("member1"), sorted_policies([rem, add]), at(60), True)
    assert got == []


# ------------------------------------------------------------------ overlay handling


def test_overlay_holds_controller_taints_never_the_file():
    c = cluster("member1", status=ready("False"), taints=[taint("user", NS)])
    new = reconcile_cluster(KEY, c, None, [], at(60), True)
    assert ids(new["spec"]["taints"]) == [(NR, NE), (NR, NS)]
    assert c["spec"]["taints"] == [taint("user", NS)]
    # Ready again: taints gone, the overlay's spec with them
    back = reconcile_cluster(KEY, dict(c, status=ready("True")), dict(new, status=ready("True")), [], at(120), True)
    assert "spec" not in back


def test_no_status_no_overlay_created():
    assert reconcile_cluster(KEY, cluster("member1"), None, [], T0, True) is None


def test_unchanged_overlay_is_returned_as_is():
    c = cluster("member1", status=ready("False"))
    new = reconcile_cluster(KEY, c, None, [], at(60), True)
    assert reconcile_cluster(KEY, c, new, [], at(600), True) is new


def test_user_no_execute_taint_without_time_added_is_stamped_once():
    c = cluster("member1", status=ready("True"), taints=[taint("maintenance", NE)])
    new = reconcile_cluster(KEY, c, None, [], at(60), True)
    assert new["observed"]["taintsTimeAdded"] == {"maintenance:NoExecute": at(60)}
    assert reconcile_cluster(KEY, c, new, [], at(600), True) is new
    assert effective_taints(c, new) == [{"key": "maintenance", "effect": NE, "timeAdded": at(60)}]
    # the taint removed from the file: the record goes
    gone = reconcile_cluster(KEY, cluster("member1", status=ready("True")), new, [], at(700), True)
    assert "taintsTimeAdded" not in (gone.get("observed") or {})


def test_step_writes_overlays_and_reports_change_once():
    snap = snapshot(clusters=[cluster("member1", status=ready("Unknown")), cluster("member2", status=ready("True"))])
    c = ctx()
    assert ct.step(snap, snap, at(60), c) is True
    assert ids(snap.overlays[KEY]["spec"]["taints"]) == [(UR, NE), (UR, NS)]
    assert ("cluster.karmada.io", "Cluster", "", "member2") not in snap.overlays
    assert ct.step(snap, snap, at(60), c) is False


def test_step_with_cluster_failover_off_adds_no_execute_never():
    snap = snapshot(clusters=[cluster("member1", status=ready("False"))])
    ct.step(snap, snap, at(60), ctx(cluster_failover=False))
    assert ids(snap.overlays[KEY]["spec"]["taints"]) == [(NR, NS)]


def test_merged_view_shows_user_then_controller_taints():
    from karmactl.controllers.helper.cluster import clusters_of

    snap = snapshot(clusters=[cluster("member1", status=ready("False"), taints=[taint(US, NS)])])
    ct.step(snap, snap, at(60), ctx())
    (view,) = clusters_of(snap)
    assert [(t["key"], t["effect"]) for t in view["spec"]["taints"]] == [(US, NS), (NR, NS), (NR, NE)]
