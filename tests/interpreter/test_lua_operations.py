"""Every customization operation through the run's Interpreter, and its precedence over the native rules."""
from __future__ import annotations

import pytest

from karmactl.interpreter import Interpreter, InterpreterError

NOW = "2026-01-01T00:00:00Z"
CRD = ("example.io/v1", "Widget")


def customization(name: str, api_version: str, kind: str, **scripts) -> dict:
    return {"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
            "metadata": {"name": name},
            "spec": {"target": {"apiVersion": api_version, "kind": kind},
                     "customizations": {field: {"luaScript": s} for field, s in scripts.items()}}}


def widget(**spec) -> dict:
    return {"apiVersion": CRD[0], "kind": CRD[1], "metadata": {"name": "w", "namespace": "ns"}, "spec": spec}


def deployment(replicas=2, status=None) -> dict:
    d = {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "d", "namespace": "ns", "generation": 1,
                      "annotations": {"resourcetemplate.karmada.io/generation": "1"}},
         "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    if status is not None:
        d["status"] = status
    return d


# (operation field, script, call(interp) -> result, expected)
CASES = [
    pytest.param("replicaResource",
                 "function GetReplicas(obj)\n  return obj.spec.count, {resourceRequest = {cpu = '0.5'}, "
                 "nodeClaim = {nodeSelector = {zone = 'a'}}}\nend",
                 lambda i: i.interpret_replica(widget(count=4)),
                 (4, {"nodeClaim": {"nodeSelector": {"zone": "a"}}, "resourceRequest": {"cpu": "500m"}}),
                 id="GetReplicas: replicas and requirements (quantities canonical)"),
    pytest.param("replicaResource", "function GetReplicas(obj) return obj.spec.count end",
                 lambda i: i.interpret_replica(widget(count=1)), (1, None), id="GetReplicas without requirements"),
    pytest.param("replicaRevision",
                 "function ReviseReplica(obj, replica)\n  obj.spec.count = replica\n  return obj\nend",
                 lambda i: i.revise_replica(widget(count=4, labels={}), 3),
                 widget(count=3, labels={}), id="ReviseReplica keeps empty objects of the input"),
    pytest.param("retention",
                 "function Retain(desired, observed)\n  desired.spec.token = observed.spec.token\n  return desired\nend",
                 lambda i: i.retain(widget(count=1), {**widget(token="t"), "metadata": {
                     "name": "w", "namespace": "ns", "resourceVersion": "7", "finalizers": ["f"]}}),
                 {**widget(count=1, token="t"), "metadata": {"name": "w", "namespace": "ns", "resourceVersion": "7",
                                                             "finalizers": ["f"]}},
                 id="Retain after the generic merge (resourceVersion, finalizers)"),
    pytest.param("statusReflection", "function ReflectStatus(obj) return {ready = obj.status.ready} end",
                 lambda i: i.reflect_status({**widget(), "status": {"ready": 2, "noise": "x"}}), {"ready": 2},
                 id="ReflectStatus"),
    pytest.param("statusReflection", "function ReflectStatus(obj) return {} end",
                 lambda i: i.reflect_status(widget()), {}, id="ReflectStatus empty table is an object"),
    pytest.param("statusAggregation",
                 "function AggregateStatus(desired, items)\n  local n = 0\n  for _, it in ipairs(items) do\n"
                 "    n = n + it.status.ready\n  end\n  desired.status = {ready = n, clusters = #items}\n"
                 "  return desired\nend",
                 lambda i: i.aggregate_status(widget(), [
                     {"clusterName": "m1", "status": {"ready": 1}, "applied": True, "health": "Healthy"},
                     {"clusterName": "m2", "status": {"ready": 2}, "applied": True, "settled": True}], now=NOW),
                 {"ready": 3, "clusters": 2}, id="AggregateStatus returns the template's new status"),
    pytest.param("healthInterpretation", "function InterpretHealth(obj) return obj.status.ready > 0 end",
                 lambda i: [i.interpret_health({**widget(), "status": {"ready": r}}) for r in (0, 1)],
                 ["Unhealthy", "Healthy"], id="InterpretHealth"),
    pytest.param("dependencyInterpretation",
                 "function GetDependencies(obj)\n  return {{apiVersion = 'v1', kind = 'Secret', "
                 "namespace = obj.metadata.namespace, name = obj.spec.secret}}\nend",
                 lambda i: i.get_dependencies(widget(secret="s")),
                 [{"apiVersion": "v1", "kind": "Secret", "namespace": "ns", "name": "s"}], id="GetDependencies"),
    pytest.param("dependencyInterpretation", "function GetDependencies(obj) return {} end",
                 lambda i: i.get_dependencies(widget()), [], id="GetDependencies empty is a list"),
]


@pytest.mark.parametrize("field, script, call, expected", CASES)
def test_operation(field, script, call, expected):
    interp = Interpreter([customization("c", *CRD, **{field: script})], now=NOW)
    assert call(interp) == expected
    assert interp.failures == []


@pytest.mark.parametrize("field, script, call, message", [
    pytest.param("replicaResource", "function GetReplicas(obj) return 'two' end",
                 lambda i: i.interpret_replica(widget()), "result type string is not number", id="replicas not a number"),
    pytest.param("healthInterpretation", "function InterpretHealth(obj) return 1 end",
                 lambda i: i.interpret_health(widget()), "result type number is not bool", id="health not a bool"),
    pytest.param("statusReflection", "function ReflectStatus(obj) return nil end",
                 lambda i: i.reflect_status(widget()), "expect the returned type is table but got nil",
                 id="status not a table"),
    pytest.param("dependencyInterpretation", "function GetDependencies(obj) return {{kind = 'Secret'}} end",
                 lambda i: i.get_dependencies(widget()), "can not leave name and labelSelector all empty",
                 id="dependency without a name"),
    pytest.param("healthInterpretation", "function InterpretHealth(obj)\n  return obj.status.ready\nend",
                 lambda i: i.interpret_health(widget()), "luaScript:2: attempt to index field 'status'",
                 id="runtime error names the line"),
])
def test_failure_names_customization_operation_and_object(field, script, call, message):
    interp = Interpreter([customization("my-widgets", *CRD, **{field: script})], now=NOW)
    with pytest.raises(InterpreterError) as err:
        call(interp)
    text = str(err.value)
    assert text.startswith(f"ResourceInterpreterCustomization my-widgets: {field} (")
    assert "Widget ns/w" in text and message in text
    assert interp.failures == [text]


def test_customization_takes_precedence_over_native_rules_for_its_operations_only():
    """A Deployment customization with only a health rule: health from Lua, replicas still native."""
    interp = Interpreter([customization("deploy-health", "apps/v1", "Deployment",
                                        healthInterpretation="function InterpretHealth(obj) return true end")])
    unhealthy_natively = deployment(status={"observedGeneration": 0})
    from karmactl import interpreter as native

    assert native.interpret_health(unhealthy_natively) == "Unhealthy"
    assert interp.interpret_health(unhealthy_natively) == "Healthy"
    assert interp.interpret_replica(deployment(replicas=5)) == native.interpret_replica(deployment(replicas=5))
    assert interp.has_health_hook("apps/v1", "Deployment") and interp.has_replica_hook("apps/v1", "Deployment")
    assert interp.customized("apps/v1", "Deployment") == ["healthInterpretation"]


def test_without_customizations_it_is_the_native_interpreter():
    from karmactl import interpreter as native

    interp = Interpreter()
    d = deployment(status={"observedGeneration": 1, "updatedReplicas": 2, "availableReplicas": 2, "replicas": 2})
    assert interp.interpret_health(d) == native.interpret_health(d)
    assert interp.reflect_status(d) == native.reflect_status(d)
    assert interp.revise_replica(d, 1) == native.revise_replica(d, 1)
    assert interp.get_dependencies(d) == native.get_dependencies(d)
    assert not interp.has_health_hook(*CRD) and interp.interpret_health(widget()) is None


def test_several_customizations_of_a_kind():
    """Name order decides who answers an operation; every dependency rule contributes."""
    first = customization("a-first", *CRD, healthInterpretation="function InterpretHealth(o) return true end",
                          dependencyInterpretation="function GetDependencies(o) return "
                                                   "{{apiVersion='v1', kind='Secret', namespace='ns', name='s'}} end")
    second = customization("b-second", *CRD, healthInterpretation="function InterpretHealth(o) return false end",
                           dependencyInterpretation="function GetDependencies(o) return "
                                                    "{{apiVersion='v1', kind='ConfigMap', namespace='ns', name='c'}} end")
    interp = Interpreter([second, first])
    assert interp.interpret_health(widget()) == "Healthy"
    assert [d["kind"] for d in interp.get_dependencies(widget())] == ["ConfigMap", "Secret"]


def test_one_failing_object_does_not_stop_others():
    interp = Interpreter([customization("picky", *CRD, healthInterpretation=(
        "function InterpretHealth(o)\n  if o.metadata.name == 'bad' then\n    while true do end\n  end\n"
        "  return true\nend"))])
    bad = {**widget(), "metadata": {"name": "bad", "namespace": "ns"}}
    with pytest.raises(InterpreterError, match="picky: healthInterpretation .*bad.*time limit"):
        interp.interpret_health(bad)
    assert interp.interpret_health(widget()) == "Healthy"


@pytest.mark.parametrize("second, expected", [
    pytest.param({"dependencyInterpretation": "function GetDependencies(o) return {} end"}, [],
                 id="dependency rules of one kind may be several"),
    pytest.param({"retention": "function Retain(d, o) return d end"}, [("b", "retention", "a")],
                 id="the later by name conflicts"),
])
def test_conflicting_customizations(second, expected):
    from karmactl.interpreter.customized import conflicts

    first = customization("a", *CRD, retention="function Retain(d, o) return d end",
                          dependencyInterpretation="function GetDependencies(o) return {} end")
    other_kind = customization("c", "example.io/v1", "Gadget", retention="function Retain(d, o) return d end")
    found = conflicts([customization("b", *CRD, **second), first, other_kind])
    assert [(c["metadata"]["name"], field, earlier) for c, field, earlier in found] == expected
