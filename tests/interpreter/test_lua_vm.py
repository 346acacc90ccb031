"""The sandboxed Lua 5.1 machine: conversions as Karmada's luavm, the sandbox, the limits."""
from __future__ import annotations

import time

import pytest

from karmactl.interpreter import InterpreterError
from karmactl.interpreter.luavm import LuaVM, resolve_empty


@pytest.fixture(scope="module")
def vm():
    return LuaVM(now="2026-01-01T00:00:00Z")


def echo(vm, value, *references, root_is_object=True):
    (out,) = vm.call("function Echo(v) return v end", "Echo", 1, value)
    return resolve_empty(out, root_is_object, *references)


@pytest.mark.parametrize("value, expected", [
    pytest.param({"a": 1, "b": "x", "c": True}, {"a": 1, "b": "x", "c": True}, id="scalars"),
    pytest.param({"n": 2.0}, {"n": 2}, id="integral float is an int (JSON round trip)"),
    pytest.param({"n": 2.5}, {"n": 2.5}, id="fraction stays a float"),
    pytest.param({"l": [1, {"x": "y"}, [2, 3]]}, {"l": [1, {"x": "y"}, [2, 3]]}, id="nested arrays keep order"),
    pytest.param({"a": None, "b": 1}, {"b": 1}, id="None is nil: the key disappears"),
    pytest.param({"e": {}}, {}, id="empty table without reference: dropped"),
])
def test_round_trip_without_references(vm, value, expected):
    assert echo(vm, value) == expected


def test_empty_tables_follow_the_references(vm):
    """An empty Lua table is an object or a list as it was in the call's inputs (lua_convert.go)."""
    ref = {"spec": {"selector": {}, "ports": [], "template": {"containers": [{"env": [], "resources": {}}]}}}
    assert echo(vm, ref, ref) == ref
    assert echo(vm, {}, root_is_object=True) == {}
    assert echo(vm, {}, root_is_object=False) == []


def test_table_keys_decide_list_or_object(vm):
    (out,) = vm.call("function F() return {[1]='a', [2]='b'}, nil end", "F", 1)
    assert out == ["a", "b"]
    (out,) = vm.call("function F() return {[1]='a', [3]='c'} end", "F", 1)
    assert out == {"1": "a", "3": "c"}
    (out,) = vm.call("function F() return {x=1, [2]='b'} end", "F", 1)
    assert out == {"x": 1, "2": "b"}


@pytest.mark.parametrize("script, message", [
    pytest.param("function F() os.execute('touch /tmp/pwned') end", "luaScript:1: attempt to call field 'execute'",
                 id="os.execute"),
    pytest.param("function F()\n  return io.open('/etc/passwd')\nend", "luaScript:2: attempt to index global 'io'",
                 id="io.open"),
    pytest.param("function F() return require('os') end", "module 'os' not found", id="require of a library"),
    pytest.param("function F() return loadstring('return 1') end", "loadstring is not supported", id="loadstring"),
    pytest.param("function F() return dofile('/etc/passwd') end", "dofile is not supported", id="dofile"),
    pytest.param("function F() return debug.getinfo(1) end", "attempt to index global 'debug'", id="debug"),
    pytest.param("function F() return setmetatable({}, {}) end", "setmetatable is not supported", id="setmetatable"),
    pytest.param("function F() return collectgarbage('count') end", "collectgarbage is not supported",
                 id="collectgarbage"),
    pytest.param("function F() return string.rep('x', 10) end", "string.rep is not supported", id="string.rep"),
    pytest.param("function F() return ('x'):gsub('x', 'y') end", "string.gsub is not supported", id="gsub as method"),
    pytest.param("function F() return python.eval('1') end", "attempt to index global 'python'", id="no python"),
    pytest.param("function F( end", "luaScript:1:", id="syntax error"),
    pytest.param("x = 1", "not found function F", id="function missing"),
    pytest.param("F = 3", "F is not a function: number", id="not a function"),
])
def test_sandbox_refuses(vm, script, message):
    with pytest.raises(InterpreterError, match=None) as err:
        vm.call(script, "F", 1)
    assert message in str(err.value)


@pytest.mark.parametrize("script", [
    pytest.param("function F() while true do end end", id="busy loop"),
    pytest.param("function F() while true do pcall(function() while true do end end) end end",
                 id="pcall cannot swallow the time limit"),
    pytest.param("while true do end", id="loop at load"),
])
def test_endless_scripts_stop_within_about_a_second(vm, script):
    started = time.monotonic()
    with pytest.raises(InterpreterError, match="longer than the 1s time limit"):
        vm.call(script, "F", 1)
    # generous bound: the point is that it ends, not how fast (noisy shared machines)
    assert time.monotonic() - started < 30
    assert vm.call("function F() return 'still serving' end", "F", 1) == ["still serving"]


def test_memory_limit_then_the_machine_still_serves():
    vm = LuaVM(now="2026-01-01T00:00:00Z", timeout=60)  # the memory limit, not the time limit (a loaded machine)
    with pytest.raises(InterpreterError, match="memory limit"):
        vm.call("function F() local t = {} while true do t[#t + 1] = {1, 2, 3, 4, 5, 6, 7, 8} end end", "F", 1)
    assert vm.call("function F() local t = {} for i = 1, 1000 do t[i] = i end return #t end", "F", 1) == [1000]


def test_each_call_gets_fresh_globals(vm):
    vm.call("leaked = 'secret' function F() return leaked end", "F", 1)
    assert vm.call("function F() return leaked end", "F", 1) == [None]


def test_clock_is_the_runs():
    vm = LuaVM(now="2026-03-04T05:06:07Z")
    assert vm.call("function F() return os.date('!%Y-%m-%dT%H:%M:%SZ') end", "F", 1) == ["2026-03-04T05:06:07Z"]
    assert vm.call("function F() return os.time() end", "F", 1) == [1772600767]
    assert vm.call("function F() return os.time({year=2026, month=1, day=1, hour=0}) end", "F", 1) == [1767225600]
    with pytest.raises(InterpreterError, match="run's clock"):
        LuaVM(now=None).call("function F() return os.time() end", "F", 1)


@pytest.mark.parametrize("expr, expected", [
    pytest.param("kube.resourceAdd('100m', '1', nil)", "1100m", id="resourceAdd cpu"),
    pytest.param("kube.resourceAdd('512Mi', '512Mi')", "1Gi", id="resourceAdd binary"),
    pytest.param("kube.getResourceQuantity('1500m')", 1.5, id="getResourceQuantity"),
    pytest.param("kube.accuratePodRequirements({spec = {containers = {{name = 'a', resources = {requests = "
                 "{cpu = '1', memory = '1Gi'}}}}, nodeSelector = {zone = 'a'}}})",
                 {"nodeClaim": {"nodeSelector": {"zone": "a"}}, "resourceRequest": {"cpu": "1", "memory": "1Gi"}},
                 id="accuratePodRequirements"),
    pytest.param("kube.getPodDependencies({spec = {serviceAccountName = 'sa', containers = {{name = 'a', "
                 "envFrom = {{configMapRef = {name = 'cm'}}}}}}}, nil)",
                 [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "cm"},
                  {"apiVersion": "v1", "kind": "ServiceAccount", "namespace": "default", "name": "sa"}],
                 id="getPodDependencies (nil namespace is default)"),
])
def test_kube_library(vm, expr, expected):
    (out,) = vm.call(f"local kube = require('kube')\nfunction F() return {expr} end", "F", 1)
    assert out == expected


def test_kube_library_errors_name_the_script_line(vm):
    with pytest.raises(InterpreterError, match=r"luaScript:3: .*only accepts one argument"):
        vm.call("local kube = require('kube')\nfunction F()\n  local r = kube.accuratePodRequirements({}, {})\n  return r\nend",
                "F", 1)


def test_bounded_matcher_agrees_with_lua_c_matcher():
    """The Lua port of the pattern matcher (used when a pattern could backtrack without bound) gives
    Lua's own results for find, match and gmatch: random patterns over every pattern item, compared
    with lupa's unmodified Lua 5.1 (errors compared as errors)."""
    import random

    import lupa.lua51

    ported = LuaVM(pattern_work=-1)  # every pattern through the Lua port
    reference = lupa.lua51.LuaRuntime(register_eval=False)
    probe = ("function F(f, s, p, init) local r\n"
             "  if f == 'gmatch' then r = {pcall(function() local out = {} for a, b in string.gmatch(s, p) do\n"
             "      out[#out + 1] = tostring(a) .. '/' .. tostring(b) if #out > 20 then break end end\n"
             "      return table.concat(out, ',') end)}\n"
             "  else r = {pcall(string[f], s, p, init)} end\n"
             "  if not r[1] then return 'error' end\n"
             "  local out = {} for i = 2, table.maxn(r) do out[#out + 1] = tostring(r[i]) end\n"
             "  return table.concat(out, ',') .. '#' .. (table.maxn(r) - 1)\nend")
    reference.execute(probe)
    expected = reference.globals().F
    atoms = ["a", "b", ".", "%a", "%d", "%s", "%W", "[ab]", "[^a]", "[a-c]", "[%d-]", "%b()", "%f[%a]", "(", ")",
             "()", "%1", "^", "$", "*", "+", "-", "?", "%", "[", "]", "%.", "[]]"]
    rnd = random.Random(23)
    for _ in range(1500):
        p = "".join(rnd.choice(atoms) for _ in range(rnd.randint(1, 6)))
        s = "".join(rnd.choice("aab(b)c1 2-.x]") for _ in range(rnd.randint(0, 12)))
        init = rnd.choice([None, 1, 2, -3, 0, 20])
        for f in ("find", "match", "gmatch"):
            assert ported.call(probe, "F", 1, f, s, p, init) == [expected(f, s, p, init)], (f, s, p, init)
