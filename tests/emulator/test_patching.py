"""Patch semantics without HTTP: merge, strategic merge, JSON patch, server-side apply, selectors."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from karmactl.emulator import patching
from karmactl.emulator.store import ApiError, parse_field_selector, parse_label_selector


def test_merge_patch_rfc7386():
    assert patching.merge_patch({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": None, "e": 4}, "f": [1]}) == \
        {"a": 1, "b": {"d": 3, "e": 4}, "f": [1]}


def test_json_patch_and_errors():
    assert patching.json_patch({"a": [1]}, [{"op": "add", "path": "/a/-", "value": 2}]) == {"a": [1, 2]}
    with pytest.raises(patching.PatchError) as e:
        patching.json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    assert e.value.code == 422
    with pytest.raises(patching.PatchError) as e:
        patching.json_patch({"a": 1}, {"op": "add"})
    assert e.value.code == 400


def test_strategic_merge_by_keys_and_directives():
    pod = {"spec": {"containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80}]},
                                   {"name": "b", "image": "y"}],
                    "tolerations": [{"key": "k"}]}}
    patch = {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}, {"name": "c"}],
                      "containers": [{"name": "a", "image": "x2", "ports": [{"containerPort": 81}]},
                                     {"name": "c", "image": "z"}],
                      "tolerations": [{"key": "j"}]}}
    out = patching.strategic_merge(pod, patch)
    assert [c["name"] for c in out["spec"]["containers"]] == ["b", "a", "c"]
    a = out["spec"]["containers"][1]
    # without $setElementOrder, items new to the list come first (as kube-apiserver orders them)
    assert a["image"] == "x2" and a["ports"] == [{"containerPort": 81}, {"containerPort": 80}]
    assert out["spec"]["tolerations"] == [{"key": "j"}]  # no merge key: replaced
    out = patching.strategic_merge(out, {"spec": {"containers": [{"name": "c", "$patch": "delete"}]}})
    assert [c["name"] for c in out["spec"]["containers"]] == ["b", "a"]
    out = patching.strategic_merge({"m": {"x": 1, "y": 2}}, {"m": {"$patch": "replace", "z": 3}})
    assert out == {"m": {"z": 3}}
    out = patching.strategic_merge({"f": ["a", "b"]}, {"$deleteFromPrimitiveList/f": ["a"]})
    assert out == {"f": ["b"]}


def test_field_set_roundtrip():
    cfg = {"spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}},
           "metadata": {"labels": {"l": "1"}}}
    fs = patching.field_set(cfg)
    assert ("f:spec", "f:replicas") in fs
    assert ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"a"}') in fs
    assert patching.from_fields_v1(patching.to_fields_v1(fs)) == fs


def test_ssa_conflict_force_and_removal():
    live = {"metadata": {}}
    a = patching.server_side_apply(live, {"spec": {"replicas": 2, "paused": False}, "metadata": {"labels": {"x": "1"}}},
                                   "a", "apps/v1", False, "t1")
    b = patching.server_side_apply(a, {"spec": {"replicas": 2}}, "b", "apps/v1", False, "t2")  # same value: shared
    with pytest.raises(patching.ApplyConflict) as e:
        patching.server_side_apply(b, {"spec": {"replicas": 3}}, "b", "apps/v1", False, "t3")
    assert e.value.conflicts == [("a", "apps/v1", ".spec.replicas")]
    c = patching.server_side_apply(b, {"spec": {"replicas": 3}}, "b", "apps/v1", True, "t3")
    assert c["spec"]["replicas"] == 3
    owners = {m["manager"]: patching.from_fields_v1(m["fieldsV1"]) for m in c["metadata"]["managedFields"]}
    assert ("f:spec", "f:replicas") not in owners["a"] and ("f:spec", "f:replicas") in owners["b"]
    # a stops applying its label and paused: they go; replicas stays (b owns it)
    d = patching.server_side_apply(c, {"spec": {"replicas": 3}}, "a", "apps/v1", False, "t4")
    assert "paused" not in d["spec"] and "labels" not in d["metadata"]
    entry = d["metadata"]["managedFields"][0]
    assert set(entry) >= {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"}


def test_ssa_removes_keyed_list_elements():
    live = patching.server_side_apply({"metadata": {}}, {"spec": {"containers": [
        {"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}, "m", "v1", False, "t")
    out = patching.server_side_apply(live, {"spec": {"containers": [{"name": "a", "image": "x"}]}}, "m", "v1",
                                     False, "t")
    assert out["spec"]["containers"] == [{"name": "a", "image": "x"}]


def test_label_selectors():
    labels = {"app": "web", "tier": "fe"}
    for sel, want in [("app=web", True), ("app==web", True), ("app!=web", False), ("app in (web,db)", True),
                      ("app notin (web)", False), ("tier", True), ("!tier", False), ("!zone", True),
                      ("app=web,tier in (be)", False), ("", True)]:
        assert parse_label_selector(sel)(labels) is want, sel
    with pytest.raises(ApiError):
        parse_label_selector("a b c")


def test_field_selectors():
    obj = {"metadata": {"name": "p", "namespace": "ns"}, "status": {"phase": "Running"}}
    assert parse_field_selector("metadata.name=p,status.phase!=Pending")(obj)
    assert not parse_field_selector("status.phase=Pending")(obj)


@given(st.recursive(st.none() | st.integers() | st.text(max_size=3),
                    lambda c: st.dictionaries(st.text("ab", max_size=2), c, max_size=3), max_leaves=8),
       st.recursive(st.none() | st.integers() | st.text(max_size=3),
                    lambda c: st.dictionaries(st.text("ab", max_size=2), c, max_size=3), max_leaves=8))
def test_merge_patch_matches_jsonmergepatch_laws(target, patch):
    # RFC 7386: applying a patch twice is the same as applying it once.
    once = patching.merge_patch(target, patch)
    assert patching.merge_patch(once, patch) == once
