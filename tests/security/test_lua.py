"""Hostile ResourceInterpreterCustomization Lua scripts (issue 23): a merge request's script runs in
an offline ``plan`` and in ``karmactl interpret``; it must not run code outside Lua, read a file,
hang the run, or end it with exit 70.

The end-to-end cases run karmactl in a separate process (:mod:`tests.security.mr`); the many
small sandbox cases call the machine directly (:class:`karmactl.interpreter.luavm.LuaVM`), each
also proving with a canary that nothing ran.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from karmactl.interpreter import InterpreterError
from karmactl.interpreter.luavm import LuaVM
from tests.security.mr import SECRET, assert_no_secret, assert_refused, canary, run, secret_file

POLICY = """apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [m1, m2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
"""


def deployment(name: str) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: default}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: c, image: nginx}}]
"""


def customization(script: str, name: str = "evil", field: str = "replicaResource") -> str:
    return yaml.safe_dump({
        "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": name},
        "spec": {"target": {"apiVersion": "apps/v1", "kind": "Deployment"},
                 "customizations": {field: {"luaScript": script}}},
    })


def make_state(base: Path, script: str, objects: int = 1) -> Path:
    """A state directory: a policy, ``objects`` Deployments and a customization with ``script``."""
    state = base / "state"
    state.mkdir()
    (state / "policy.yaml").write_text(POLICY)
    (state / "deployments.yaml").write_text("---\n".join(deployment(f"app{i}") for i in range(objects)))
    (state / "customization.yaml").write_text(customization(script))
    return state


def interpret(base: Path, state: Path, *extra: str):
    """``karmactl interpret --operation InterpretReplica`` of the state's customization on app0."""
    (base / "obj.yaml").write_text(deployment("app0"))
    return run(state, "interpret", "-f", str(state / "customization.yaml"), "--operation", "InterpretReplica",
               "--desired-file", str(base / "obj.yaml"), *extra)


def escape_script(base: Path) -> str:
    """GetReplicas that reaches Python through os.time, touches the canary and returns the secret."""
    return f"""
function GetReplicas(obj)
  local b = os.time.__func__.__globals__["__builtins__"]
  b["__import__"]("os").system("touch {canary(base)}")
  local secret = b["open"]("{base / 'ci-secret'}").read()
  return 1, {{namespace = secret}}
end
"""


# --------------------------------------------------------------------------- code execution

@pytest.mark.parametrize("command", ["plan", "interpret"])
def test_os_time_is_no_way_into_python(tmp_path, command):
    secret_file(tmp_path)
    state = make_state(tmp_path, escape_script(tmp_path))
    result = run(state, "plan") if command == "plan" else interpret(tmp_path, state)
    assert not canary(tmp_path).exists()
    assert_no_secret(result, state)
    assert result.code != 70, result.err
    # the script failed as a script: the run names the customization and the Lua error
    assert "ResourceInterpreterCustomization evil" in result.err, result.err
    assert "attempt to index field 'time' (a function value)" in result.err, result.err
    if command == "interpret":
        assert_refused(result, "replicaResource (GetReplicas)")


@pytest.fixture
def vm():
    """A fresh machine per test: the time-limit tests would use up a shared one's budget."""
    return LuaVM(now="2026-01-01T00:00:00Z")


# Each expression tries to reach Python (or a file) and run `touch CANARY`; none may succeed.
ESCAPES = {
    "python global": 'python.eval("__import__(\'os\').system(\'touch CANARY\')")',
    "python builtins": 'python.builtins.__import__("os").system("touch CANARY")',
    "os.date.__self__": 'os.date.__self__.__class__',
    "os.time.__func__": 'os.time.__func__.__globals__',
    "kube function attributes": 'require("kube").resourceAdd.__globals__',
    "kube error object": 'select(2, pcall(require("kube").getResourceQuantity, {})).__traceback__',
    "getmetatable": 'getmetatable("").__index.rep("x", 2)',
    "string.dump": 'string.dump(function() end)',
    "string metatable dump": '("x").dump(function() end)',
    "loadstring": 'loadstring("os.execute(\'touch CANARY\')")()',
    "load": 'load(function() return nil end)',
    "loadfile": 'loadfile("/etc/passwd")',
    "dofile": 'dofile("/etc/passwd")',
    "collectgarbage": 'collectgarbage("count")',
    "debug": 'debug.getregistry()',
    "io": 'io.open("CANARY", "w")',
    "os.execute": 'os.execute("touch CANARY")',
    "os.getenv": 'os.getenv("HOME")',
    "require os": 'require("os").execute("touch CANARY")',
    "require io": 'require("io")',
    "package.loadlib": 'package.loadlib("libc.so.6", "system")',
    "package.loaded": 'package.loaded.os',
    "coroutine": 'coroutine.create(function() end)',
    "setfenv": 'setfenv(1, {})',
    "getfenv": 'getfenv(0).os',
    "newproxy": 'newproxy(true)',
    "rawget of the sandbox": 'rawget(_G, "python")',
    "library changed for others": 'string.find == nil or error("x")',
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_no_python_object_or_file_is_reachable(vm, tmp_path, name):
    target = canary(tmp_path)
    script = "function F()\n  return " + ESCAPES[name].replace("CANARY", str(target)) + "\nend"
    try:
        (out,) = vm.call(script, "F", 1)
    except InterpreterError as exc:
        message = str(exc)  # a Lua error: no Python exception or object showed through
        assert "Python objects are not accessible" not in message or name.endswith("attributes"), message
        assert "Traceback" not in message and "<" not in message, message
    else:
        # the few that run return plain values only (a refused or absent path), never an object
        assert out is None or isinstance(out, (bool, int, float, str)), out
    assert not target.exists()


def test_libraries_are_read_only_so_one_customization_cannot_change_another(vm):
    with pytest.raises(InterpreterError, match="the string library cannot be changed"):
        vm.call("function F() string.find = function() return 42 end end", "F", 1)
    with pytest.raises(InterpreterError, match="the os library cannot be changed"):
        vm.call("function F() os.time = function() return 42 end end", "F", 1)
    assert vm.call("function F() return string.find('abc', 'c'), os.time() end", "F", 2) == [3, 1767225600]


def test_bytecode_is_refused(vm):
    """Lua 5.1 runs precompiled chunks without verifying them: a script must be source."""
    bytecode = "\x1bLua\x51\x00\x01\x04\x08\x04\x08\x00"
    with pytest.raises(InterpreterError, match=r"precompiled \(binary\) chunk is refused"):
        vm.call(bytecode, "F", 1)
    assert "chunk is refused" in vm.syntax_error(bytecode)


def test_bytecode_script_in_the_state_is_refused(tmp_path):
    state = make_state(tmp_path, "\x1bLua\x51\x00" + "\x00" * 40)
    result = interpret(tmp_path, state)
    assert_refused(result, "ResourceInterpreterCustomization evil", "precompiled (binary) chunk is refused")


# --------------------------------------------------------------------------- hangs

def text(unit: str, doublings: int) -> str:
    """Lua statements making ``s`` = ``unit`` repeated 14 * 2^doublings times (string.rep is refused)."""
    return f"local s = ''\n  for i = 1, 14 do s = s .. '{unit}' end\n  for i = 1, {doublings} do s = s .. s end\n"


BLOWUP = text("a", 11)  # 28 KiB of "a"


@pytest.mark.parametrize("call", [
    pytest.param("string.find(s, '.-.-.-.-.-.-b')", id="find"),
    pytest.param("s:match('(.-)(.-)(.-)(.-)b')", id="match as a method"),
    pytest.param("string.find(s, '^.-.-.-.-.-.-b')", id="anchored find"),
    pytest.param("(function() for x in string.gmatch(s, '.-.-.-.-b') do end end)()", id="gmatch"),
    pytest.param("string.find(s, '%b()x')", id="balanced"),
    pytest.param("string.find(s .. s, s:sub(1, #s / 2) .. 'b', 1, true)", id="plain find of a long needle"),
])
def test_pattern_blowups_stop_at_the_time_limit(vm, call):
    """Lua's C matcher backtracks for hours on these; the bounded one stops at the limit."""
    make = text("(", 11) if "%b" in call else text("a", 17) if "true)" in call else BLOWUP
    started = time.monotonic()
    with pytest.raises(InterpreterError, match="time limit"):
        vm.call(f"function F()\n  {make}  return {call}\nend", "F", 1)
    assert time.monotonic() - started < 30  # only detects a hang
    assert vm.call("function F() return ('k=v'):match('^(%w+)=(%w+)$') end", "F", 2) == ["k", "v"]


def test_pattern_blowup_in_plan_is_a_failed_object_not_a_hang(tmp_path):
    state = make_state(tmp_path, f"function GetReplicas(obj)\n  {BLOWUP}  return string.find(s, '.-.-.-.-.-.-b'), {{}}\nend")
    result = run(state, "plan")
    assert result.code in (0, 1), result.err
    assert "ResourceInterpreterCustomization evil: replicaResource (GetReplicas) of Deployment default/app0: " \
           "the script ran longer than the 1s time limit of a call" in result.err, result.err


@pytest.mark.parametrize("script", [
    pytest.param("xpcall(function() while true do end end, function() while true do end end)",
                 id="handler loops after the limit"),
    pytest.param("xpcall(function() error('x') end, function() while true do end end)",
                 id="handler loops on an ordinary error"),
    pytest.param("while true do xpcall(function() while true do end end, function(e) return e end) end",
                 id="xpcall in a loop"),
    pytest.param("while true do pcall(function() while true do end end) end", id="pcall in a loop"),
    pytest.param(BLOWUP + " while true do pcall(string.find, s, '.-.-.-.-.-.-b') end", id="pcall of a library function"),
    pytest.param("local t = {} for i = 1, 3000 do t[i] = 3000 - i end "
                 "while true do table.sort(t, function(a, b) while true do end end) end", id="sort comparator"),
])
def test_error_handlers_and_protected_calls_cannot_outrun_the_limit(vm, script):
    started = time.monotonic()
    with pytest.raises(InterpreterError, match="time limit"):
        vm.call(f"function F()\n  {script}\nend", "F", 1)
    assert time.monotonic() - started < 30


def test_total_budget_bounds_many_slow_objects(tmp_path):
    """40 objects whose script runs to the 1 s limit each: the run's budget (10 s) stops them."""
    state = make_state(tmp_path, "function GetReplicas(obj)\n  while true do end\nend", objects=40)
    result = run(state, "plan")
    assert result.code in (0, 1), result.err
    assert result.seconds < 40, result.seconds  # unbounded: 40 s and more
    assert "used up this run's Lua budget (10 s" in result.err, result.err
    assert "1s time limit of a call" in result.err


def test_total_budget_in_the_machine():
    vm = LuaVM(total_time=1.5)
    messages = set()
    for _ in range(6):
        with pytest.raises(InterpreterError) as err:
            vm.call("function F() while true do end end", "F", 1)
        messages.add(str(err.value))
    assert any("used up this run's Lua budget (1.5 s" in m for m in messages), messages
    with pytest.raises(InterpreterError, match="budget"):
        vm.call("function F() return 1 end", "F", 1)


# --------------------------------------------------------------------------- results too large

@pytest.mark.parametrize("body, phrase", [
    pytest.param("local t = {} for i = 1, 200000 do t = {t} end return 1, t", "nested deeper than 100 levels",
                 id="200,000 levels"),
    pytest.param("local t = {} t.self = t return 1, t", "nested deeper than 100 levels", id="cycle"),
    pytest.param("local s = 'x' for i = 1, 23 do s = s .. s end return 1, {namespace = s}", "longer than 3 MiB",
                 id="8 MiB string"),
    pytest.param("local s = 'x' for i = 1, 40 do s = s .. s end return 1, {}", "memory limit",
                 id="string to gigabytes"),
    pytest.param("return 1, {namespace = '\\255\\254'}", "not valid UTF-8", id="invalid UTF-8"),
    pytest.param("error('\\255')", "not valid UTF-8", id="error with invalid UTF-8"),
])
def test_oversized_results_are_bad_input_naming_the_customization(tmp_path, body, phrase):
    state = make_state(tmp_path, f"function GetReplicas(obj)\n  {body}\nend")
    result = interpret(tmp_path, state)
    assert_refused(result, "ResourceInterpreterCustomization evil: replicaResource (GetReplicas)", phrase)
    if "nested" in phrase or "memory" in phrase:  # in a plan the object fails as for any script error
        planned = run(state, "plan")
        assert planned.code in (0, 1), planned.err
        assert "ResourceInterpreterCustomization evil" in planned.err and phrase in planned.err, planned.err


def test_shared_subtables_are_bounded_by_the_count_of_values(vm, monkeypatch):
    """{a = t, b = t} sixty times is 2^60 values once written out: the count stops it."""
    from karmactl.interpreter import luavm

    monkeypatch.setattr(luavm, "MAX_NODES", 10_000)
    with pytest.raises(InterpreterError, match="more than 10,000 values"):
        vm.call("function F() local t = {1} for i = 1, 60 do t = {a = t, b = t} end return t end", "F", 1)


def test_huge_error_message_is_cut(vm):
    with pytest.raises(InterpreterError) as err:
        vm.call("function F() local s = 'x' for i = 1, 20 do s = s .. s end error(s) end", "F", 1)
    assert len(str(err.value)) < 3000


def test_kube_helpers_refuse_deep_input_as_a_script_error(vm):
    with pytest.raises(InterpreterError, match=r"accuratePodRequirements|nested deeper"):
        vm.call("local kube = require('kube')\nfunction F()\n  local t = {} for i = 1, 500 do t = {spec = t} end "
                "return kube.accuratePodRequirements(t)\nend", "F", 1)


def test_input_that_is_not_json_is_refused(vm):
    with pytest.raises(InterpreterError, match="cannot pass a object"):
        vm.call("function F(o) return o end", "F", 1, {"x": object()})
    assert vm.call("function F(o) return o.n end", "F", 1, {"n": 2 ** 70}) == [2 ** 70]
    assert json.dumps(vm.call("function F(o) return o end", "F", 1, {"a": [1, "x", True]})) == \
        '[{"a": [1, "x", true]}]'
    assert SECRET not in json.dumps(vm.call("function F() return os.date('!%Y') end", "F", 1))
