"""Lua as Karmada runs it (gopher-lua and its ``kube`` library, issue 26 item 3): what arrives as
nil, globals set to nil, ``pairs`` order, and the ``kube`` helpers' output formats. Each case is
a difference karmactl's Lua 5.1 sandbox had and Karmada's scripts notice."""
from __future__ import annotations

import pytest

from karmactl.interpreter import Interpreter, InterpreterError
from karmactl.interpreter.luavm import LuaVM


@pytest.fixture(scope="module")
def vm():
    return LuaVM(now="2026-01-01T00:00:00Z")


def kube(vm, expression: str):
    (out,) = vm.call(f"local kube = require('kube')\nfunction F()\n  local r = {expression}\n  return r\nend", "F", 1)
    return out


def customization(**scripts) -> dict:
    return {"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
            "metadata": {"name": "task"},
            "spec": {"target": {"apiVersion": "batch.example.io/v1alpha1", "kind": "Task"},
                     "customizations": {k: {"luaScript": v} for k, v in scripts.items()}}}


TASK = {"apiVersion": "batch.example.io/v1alpha1", "kind": "Task", "metadata": {"name": "t", "namespace": "default"}}

NIL_ITEMS = """
function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil then
    desiredObj.status = {phase = "NoItems"}
    return desiredObj
  end
  desiredObj.status = {phase = "Items", count = #statusItems}
  return desiredObj
end
"""


@pytest.mark.parametrize("items, in_run, in_rule", [
    pytest.param(None, "NoItems", "NoItems", id="no items: nil"),
    pytest.param([], "NoItems", "Items", id="an empty list: nil in a run (the binding leaves it out), "
                                             "a table when given to the rule (Go's empty slice)"),
    pytest.param([{"clusterName": "m1", "status": {"ok": True}}], "Items", "Items", id="items: a table"),
])
def test_absent_status_items_arrive_as_nil(items, in_run, in_rule):
    interpreter = Interpreter([customization(statusAggregation=NIL_ITEMS)])
    assert interpreter.aggregate_status(TASK, items)["phase"] == in_run
    (name, value), = interpreter.run_rule("AggregateStatus", desired=TASK, status=items)
    assert name == "aggregatedStatus" and value["status"]["phase"] == in_rule


def test_a_global_set_to_nil_stays_nil(vm):
    script = """
function ReflectStatus(observedObj)
  local status = {}
  error = observedObj.status.error
  status.hasError = error ~= nil
  return status
end
"""
    (out,) = vm.call(script, "ReflectStatus", 1, {"status": {}})
    assert out == {"hasError": False}
    # the next call has its builtin error again (a fresh global table per call)
    with pytest.raises(InterpreterError, match="luaScript:1: boom"):
        vm.call("function F() error('boom') end", "F", 1)


def test_null_elements_of_a_list_are_left_out(vm):
    count, second = vm.call("function F(v) return #v.items, v.items[2] end", "F", 2, {"items": ["a", None, "b"]})
    assert (count, second) == (2, "b")


@pytest.mark.parametrize("expression, expected", [
    pytest.param("kube.resourceAdd('0', '3072Mi')", "3Gi", id="zero first: the format of the next"),
    pytest.param("kube.resourceAdd(nil, '3072Mi')", "3Gi", id="nil first"),
    pytest.param("kube.resourceAdd('1Gi', '500Mi')", "1524Mi", id="binary"),
    pytest.param("kube.resourceAdd('1', '1Gi')", "1073741825", id="decimal first stays decimal"),
    pytest.param("kube.resourceAdd('1Gi', '1')", "1073741825", id="binary not divisible: plain number"),
    pytest.param("kube.resourceAdd('1e3', '2e3')", "3e3", id="decimal exponent"),
    pytest.param("kube.resourceAdd('1Gi', '-1Gi', '500m')", "500m", id="back to zero: the next format"),
    pytest.param("kube.resourceAdd('100m', '0.2')", "300m", id="milli"),
    pytest.param("kube.resourceAdd()", "0", id="nothing"),
    pytest.param("kube.resourceAdd(nil, nil)", "0", id="only nils"),
])
def test_resource_add_prints_as_resource_quantity(vm, expression, expected):
    assert kube(vm, expression) == expected


@pytest.mark.parametrize("expression, message", [
    pytest.param("kube.resourceAdd('1', 2)", "bad argument #2 to resourceAdd (string expected, got number)",
                 id="a number"),
    pytest.param("kube.resourceAdd('lots')", "invalid quantity", id="not a quantity"),
    pytest.param("kube.getResourceQuantity('-1Gi')", "negative value", id="negative getResourceQuantity"),
])
def test_kube_helper_errors(vm, expression, message):
    with pytest.raises(InterpreterError, match=r"luaScript:3: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        kube(vm, expression)


def test_helpers_return_nil_when_go_returns_nil(vm):
    template = "{spec = {containers = {{name = 'a', image = 'nginx'}}}}"
    assert kube(vm, f"kube.accuratePodRequirements({template}) == nil") is True
    assert kube(vm, f"kube.getPodDependencies({template}, 'ns') == nil") is True
    assert kube(vm, f"kube.getPodDependencies({template}, 'ns') or 'none'") == "none"


def test_get_pod_dependencies_takes_a_number_namespace(vm):
    out = kube(vm, "kube.getPodDependencies({spec = {serviceAccountName = 'sa'}}, 7)")
    assert out == [{"apiVersion": "v1", "kind": "ServiceAccount", "namespace": "7", "name": "sa"}]


def test_get_resource_quantity_is_a_number(vm):
    assert kube(vm, "kube.getResourceQuantity('2Gi')") == 2147483648
    assert kube(vm, "kube.getResourceQuantity(nil)") == 0


# --------------------------------------------------------------------------- pairs in gopher-lua's order

ORDER_SCRIPT = """
function ReflectStatus(observedObj)
  local t = {zeta = 1, alpha = 2, [3] = "x", mid = 3}
  t.beta = 4
  t[1] = "a"
  t.alpha = nil
  t.alpha = 5          -- set again: keeps its first place
  local seen = {}
  for k in pairs(t) do seen[#seen + 1] = tostring(k) end
  local clusters = {}
  for _, name in ipairs({"member3", "member1", "member2"}) do clusters[name] = true end
  local names = {}
  for name in pairs(clusters) do names[#names + 1] = name end
  return {order = table.concat(seen, ","), clusters = table.concat(names, ",")}
end
"""


def test_pairs_follows_gopher_lua_order(vm):
    """Array keys in numeric order, then every other key in the order it was first set
    (gopher-lua's table.go); Lua 5.1 alone gives its hash order."""
    (out,) = vm.call(ORDER_SCRIPT, "ReflectStatus", 1, {})
    assert out == {"order": "1,3,zeta,alpha,mid,beta", "clusters": "member3,member1,member2"}


def test_pairs_order_through_tricky_source(vm):
    script = '''
local fmt = string.format
local function id(t) return t end
function F()
  local s = "{ not = 'a', table }" .. [[ { also = not } ]] .. [==[ }} ]==]  -- { nor = this }
  --[[ { a block = comment } ]]
  local t = id{ yankee = 1, ["x-ray"] = 2, whiskey = {victor = 3}, uniform = id { tango = 4 } }
  t.sierra = fmt("%s", s:sub(1, 1))
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  local inner = {}
  for k in pairs(t.whiskey) do inner[#inner + 1] = k end
  return table.concat(keys, ","), #s
end
'''
    keys, length = vm.call(script, "F", 2)
    assert keys == "yankee,x-ray,whiskey,uniform,sierra" and length == 40


def test_lines_stay_where_they_were(vm):
    with pytest.raises(InterpreterError, match=r"luaScript:4: boom"):
        vm.call("local function f(t) return t end\nfunction F()\n  local t = {a = {b = {}}, f{c = 1}}\n  error('boom')\nend", "F", 1)


@pytest.mark.parametrize("script, expected", [
    pytest.param("local t = {a = 1, b = 2, c = 3, [1] = 'x'} for k in pairs(t) do t[k] = nil end "
                 "return next(t) == nil", True, id="clearing during pairs"),
    pytest.param("local t = {a = 1, b = 2, 7} local n = 0 local k = next(t) "
                 "while k ~= nil do local nk = next(t, k) t[k] = nil n = n + 1 k = nk end return n", 3,
                 id="next over a table being cleared"),
    pytest.param("local t = {} t.z = 1 t.y = 2 local a = next(t) return a", "z", id="next starts where pairs does"),
    pytest.param("local t = {x = nil, y = 1} t.x = 2 local s = '' for k in pairs(t) do s = s .. k end return s", "yx",
                 id="a nil field of a constructor is not set"),
])
def test_next_and_pairs_as_lua(vm, script, expected):
    (out,) = vm.call(f"function F()\n  {script}\nend", "F", 1)
    assert out == expected


def test_pairs_over_input_objects_sees_every_key(vm):
    (out,) = vm.call("function F(o) local n = 0 for k, v in pairs(o.spec) do n = n + v end return n end", "F", 1,
                     {"spec": {"a": 1, "b": 2, "c": 4}})
    assert out == 7


@pytest.mark.parametrize("call, name", [("pairs(nil)", "pairs"), ("next(5)", "next")])
def test_pairs_and_next_errors_name_the_line(vm, call, name):
    with pytest.raises(InterpreterError, match=rf"luaScript:2: bad argument #1 to '{name}' \(table expected"):
        vm.call(f"function F()\n  local x = {call}\n  return x\nend", "F", 1)
