"""The rewrite that marks table constructors for gopher-lua's ``pairs`` order
(:mod:`karmactl.interpreter.luaorder`): it keeps lines, compiles wherever the script compiles,
and a script runs as written should the rewrite ever not compile."""
from __future__ import annotations

from pathlib import Path

import lupa.lua51
import pytest
import yaml

from karmactl.interpreter.luaorder import MARK, mark_constructors
from karmactl.interpreter.luavm import LuaVM

DATA = Path(__file__).parent / "data"
_LUA = lupa.lua51.LuaRuntime(register_eval=False, register_builtins=False)
_COMPILE = _LUA.eval("function(s) local f, e = loadstring(s, '=luaScript') return e end")

TRICKY = [
    "local t = {}",
    "local t = {a = 1, b = {c = {}}, 'x', [1] = 2, ['k'] = 3, [\"q\\\"\"] = 4; z = 5,}",
    "f{a = 1}",
    "f 'x' {a = 1}",
    "obj:method{a = {b = 1}}",
    "t[1]{a = 1}",
    "local s = '{' .. \"}\" .. [[{]] .. [==[ ]] } ]==]",
    "-- { comment\nlocal t = {a = 1} --[[ { ]] local u = {b = 2}",
    "--[==[ {\n} ]==] local t = {x = 1}",
    "local t = {a = 1 == 1, b = x >= 2, [f(1)] = 3, g(h{i = 1})}",
    "return {a = 1, function() return {b = 2} end}",
    "local n = 0x1e+1 local t = {e = 1e+3, f = .5, g = 3 ..''}",
    "local t = {[ [[long]] ] = 1}",
    "if x then return {} else return {y = 1} end",
    "local t = {\n  a = 1,\n  b = {\n    c = 2,\n  },\n}\nerror('line 7')",
]


@pytest.mark.parametrize("src", TRICKY)
def test_rewrite_compiles_and_keeps_lines(src):
    assert _COMPILE(src) is None
    marked = mark_constructors(src)
    assert _COMPILE(marked) is None, marked
    assert marked.count("\n") == src.count("\n")


@pytest.mark.parametrize("src, constructors", [
    ("local s = '{' .. \"}\" .. [[{]] .. [==[ ]] } ]==] -- {", 0),
    ("--[==[ {\n} ]==] local t = {x = {y = 1}} --[[ { ]]", 2),
    ("f{a = 1} g 'x' {b = 1}", 2),
])
def test_only_constructors_are_marked(src, constructors):
    assert mark_constructors(src).count(MARK + "(") == constructors


def test_customization_scripts_of_the_test_data_compile_marked():
    scripts = []
    for path in DATA.glob("*/*/*/customizations.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            for rule in (doc["spec"].get("customizations") or {}).values():
                scripts.append(rule["luaScript"])
    assert len(scripts) >= 15
    for script in scripts:
        assert _COMPILE(mark_constructors(script)) is None


def test_a_rewrite_that_does_not_compile_runs_the_script_as_written():
    vm = LuaVM(now="2026-01-01T00:00:00Z")
    vm._marked = lambda script: "this is not Lua ((("
    script = "function F()\n  local t = {b = 1, a = 2}\n  local n = 0\n  for k, v in pairs(t) do n = n + v end\n  return n\nend"
    assert vm.call(script, "F", 1) == [3]
