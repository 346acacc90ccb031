"""Remedy controller rules (semantics §7.1, §1.6): selection, firing, union, overlay writing."""
from __future__ import annotations

from hypothesis import given, strategies as st

from karmactl.api.kinds import KindRegistry
from karmactl.api.snapshot import Settings, Snapshot, StepContext
from karmactl.controllers import remedy

KEY1 = ("cluster.karmada.io", "Cluster", "", "member1")


def rem(name, actions=("TrafficControl",), affinity=..., matches=...):
    spec = {"actions": list(actions)}
    if affinity is not ...:
        spec["clusterAffinity"] = affinity
    if matches is not ...:
        spec["decisionMatches"] = matches
    return {"apiVersion": "remedy.karmada.io/v1alpha1", "kind": "Remedy", "metadata": {"name": name}, "spec": spec}


def match(ctype="ServiceDomainNameResolutionReady", op="Equal", status="False"):
    return {"clusterConditionMatch": {"conditionType": ctype, "operator": op, "conditionStatus": status}}


def cond(ctype="ServiceDomainNameResolutionReady", status="False"):
    return {"type": ctype, "status": status, "reason": "R", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}


# --------------------------------------------------------------------------- selection


def test_nil_affinity_selects_every_cluster():
    assert remedy.remedy_selects(rem("a"), "member1")
    assert remedy.remedy_selects(rem("a", affinity=None), "anything")


def test_affinity_with_names_selects_those():
    r = rem("a", affinity={"clusterNames": ["member1", "member3"]})
    assert remedy.remedy_selects(r, "member1")
    assert not remedy.remedy_selects(r, "member2")


def test_present_empty_affinity_selects_none():
    assert not remedy.remedy_selects(rem("a", affinity={}), "member1")
    assert not remedy.remedy_selects(rem("a", affinity={"clusterNames": []}), "member1")


# --------------------------------------------------------------------------- firing


def test_absent_decision_matches_fire_immediately_even_without_conditions():
    assert remedy.decision_matches(None, None)
    assert remedy.remedy_actions("member1", None, [rem("a")]) == ["TrafficControl"]


def test_explicit_empty_decision_matches_never_fire():
    assert not remedy.decision_matches([], [cond()])
    assert remedy.remedy_actions("member1", [cond()], [rem("a", matches=[])]) == []


def test_no_conditions_never_fire_a_conditional_remedy():
    assert not remedy.decision_matches([match()], None)
    assert not remedy.decision_matches([match()], [])


def test_equal_operator():
    assert remedy.decision_matches([match(status="False")], [cond(status="False")])
    assert not remedy.decision_matches([match(status="False")], [cond(status="True")])


def test_not_equal_operator():
    assert remedy.decision_matches([match(op="NotEqual", status="True")], [cond(status="False")])
    assert remedy.decision_matches([match(op="NotEqual", status="True")], [cond(status="Unknown")])
    assert not remedy.decision_matches([match(op="NotEqual", status="True")], [cond(status="True")])


def test_missing_condition_type_never_matches_even_not_equal():
    assert not remedy.decision_matches([match(ctype="Other", op="NotEqual", status="True")], [cond()])


def test_any_match_fires_and_entries_without_requirement_are_skipped():
    matches = [{}, {"clusterConditionMatch": None}, match(ctype="Ready", status="False"), match(status="False")]
    assert remedy.decision_matches(matches, [cond("Ready", "True"), cond(status="False")])
    assert not remedy.decision_matches(matches[:3], [cond("Ready", "True"), cond(status="False")])


def test_unknown_operator_never_matches():
    assert not remedy.decision_matches([match(op="In", status="False")], [cond(status="False")])


def test_condition_types_are_free_strings():
    assert remedy.decision_matches([match(ctype="example.com/Upgrading", status="True")],
                                   [cond("example.com/Upgrading", "True")])


# --------------------------------------------------------------------------- union


def test_union_sorted_deduplicated_with_sources():
    remedies = [rem("z", actions=["TrafficControl", "B"]), rem("a", actions=["TrafficControl"]),
                rem("other", actions=["C"], affinity={"clusterNames": ["member2"]}),
                rem("never", actions=["D"], matches=[])]
    assert remedy.remedy_sources("member1", None, remedies) == {"B": ["z"], "TrafficControl": ["a", "z"]}
    assert remedy.remedy_actions("member1", None, remedies) == ["B", "TrafficControl"]


@given(st.lists(st.tuples(st.booleans(), st.lists(st.sampled_from(["A", "B", "TrafficControl"]), max_size=4)),
                max_size=6))
def test_actions_are_the_sorted_set_of_firing_remedies_actions(spec):
    remedies = [rem(f"r{i}", actions=acts, matches=(... if fires else [])) for i, (fires, acts) in enumerate(spec)]
    expected = sorted({a for fires, acts in spec if fires for a in acts})
    assert remedy.remedy_actions("member1", [cond()], remedies) == expected


# --------------------------------------------------------------------------- the step


def snapshot(cluster_status=None, remedies=(), overlay=None):
    snap = Snapshot(KindRegistry.default())
    cluster = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"},
               "spec": {"syncMode": "Push"}}
    if cluster_status is not None:
        cluster["status"] = cluster_status
    snap.user[KEY1] = cluster
    for r in remedies:
        snap.user[("remedy.karmada.io", "Remedy", "", r["metadata"]["name"])] = r
    if overlay is not None:
        snap.overlays[KEY1] = overlay
    return snap


def run_step(snap):
    out = snap.copy_computed()
    changed = remedy.step(snap, out, "2026-01-01T00:00:00Z", StepContext(settings=Settings()))
    return changed, out


def test_step_writes_actions_and_sources_and_is_idempotent():
    snap = snapshot({"conditions": [cond("Ready", "True")]}, [rem("upgrade", affinity={"clusterNames": ["member1"]})])
    changed, out = run_step(snap)
    assert changed
    ov = out.overlays[KEY1]
    assert ov["status"]["remedyActions"] == ["TrafficControl"]
    assert ov["status"]["conditions"][0]["type"] == "Ready"  # the file's status stays visible
    assert ov["observed"]["remedySources"] == {"TrafficControl": ["upgrade"]}
    snap.overlays = dict(out.overlays)
    changed, out2 = run_step(snap)
    assert not changed and out2.overlays[KEY1] is ov


def test_step_removes_actions_when_the_remedy_goes():
    overlay = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"},
               "status": {"conditions": [cond("Ready", "True")], "remedyActions": ["TrafficControl"]},
               "observed": {"remedySources": {"TrafficControl": ["upgrade"]}, "fileStatusHash": "x"}}
    changed, out = run_step(snapshot(overlay=overlay))
    assert changed
    ov = out.overlays[KEY1]
    assert "remedyActions" not in ov["status"]
    assert ov["observed"] == {"fileStatusHash": "x"}


def test_step_reads_conditions_from_the_overlay():
    overlay = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"},
               "status": {"conditions": [cond(status="False")]}}
    snap = snapshot({"conditions": [cond(status="True")]}, [rem("dns", matches=[match()])], overlay=overlay)
    _, out = run_step(snap)
    assert out.overlays[KEY1]["status"]["remedyActions"] == ["TrafficControl"]


def test_step_writes_nothing_without_actions():
    changed, out = run_step(snapshot(remedies=[rem("dns", matches=[match()])]))
    assert not changed and KEY1 not in out.overlays


def test_step_leaves_a_deleting_cluster_alone():
    snap = snapshot(remedies=[rem("now")])
    snap.user[KEY1] = dict(snap.user[KEY1], metadata={"name": "member1", "deletionTimestamp": "2026-01-01T00:00:00Z"})
    changed, out = run_step(snap)
    assert not changed and KEY1 not in out.overlays


def test_quirks_are_warned_once_per_run():
    remedies = [rem("no-names", affinity={}), rem("empty-matches", matches=[]), rem("idle", actions=()), rem("fine")]
    snap = snapshot(remedies=remedies)
    out = snap.copy_computed()
    ctx = StepContext(settings=Settings())
    remedy.step(snap, out, "2026-01-01T00:00:00Z", ctx)
    remedy.step(snap, out, "2026-01-01T00:00:00Z", ctx)
    assert ctx.warnings == [
        "Remedy empty-matches: spec.decisionMatches: [] never fires (omit decisionMatches to act at once)",
        "Remedy idle: no spec.actions, nothing to perform",
        "Remedy no-names: spec.clusterAffinity without clusterNames selects no cluster "
        "(omit clusterAffinity to select every cluster)",
    ]
