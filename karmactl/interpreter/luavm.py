"""A sandboxed Lua 5.1 machine for ResourceInterpreterCustomization scripts.

Follows ``pkg/resourceinterpreter/customized/declarative/luavm/lua.go`` (the sandbox and the calls),
``lua_convert.go`` (tables back into objects) and ``pkg/util/lifted/lua/`` (the safe ``os``,
``string`` and ``package`` libraries). The runtime is lupa's bundled Lua 5.1 (``lupa.lua51``), the
language version of Karmada's gopher-lua.

The sandbox: ``base``, ``table``, ``string`` (without ``rep`` and ``gsub``, as Karmada), ``math``,
``os`` with only ``time`` and ``date`` (both read the run's clock, never the machine's), ``require``
that serves only the ``kube`` library (:mod:`karmactl.interpreter.luakube`); ``io``, ``debug``,
``coroutine``, ``load*``, ``dofile``, ``setfenv``/``getfenv``, ``set``/``getmetatable``, ``raw*``,
``module``, ``newproxy`` and ``collectgarbage`` raise "not supported". ``print`` prints nothing (core
code does no I/O). Each call runs in a fresh global table, so customizations cannot see each other.
Limits: :data:`CALL_TIMEOUT` seconds of running per call (Karmada's luavm timeout; a count hook
checks a monotonic deadline every :data:`_HOOK_INSTRUCTIONS` instructions and ``pcall`` cannot
swallow it) and :data:`MAX_MEMORY` bytes per machine.
"""
from __future__ import annotations

import calendar
import math
import threading
import time

from karmactl.interpreter._common import InterpreterError

CALL_TIMEOUT = 1.0
MAX_MEMORY = 64 << 20
_HOOK_INSTRUCTIONS = 1000
_TIMEOUT_MESSAGE = "the script ran longer than the 1s time limit"

_BLOCKED = ("collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring",
            "rawequal", "rawget", "rawset", "setfenv", "setmetatable", "module", "newproxy")

# Runs once per machine with (deadline_passed, os_time, os_date, kube_table, timeout_message):
# captures what the sandbox needs before taking it away from scripts.
_SETUP = r"""
local deadline_passed, os_time, os_date, kube, TIMEOUT = ...
local sethook, loadstring, setfenv, setmetatable = debug.sethook, loadstring, setfenv, setmetatable
local rawpcall, rawxpcall, error, select, type, tostring = pcall, xpcall, error, select, type, tostring

sethook(function() if deadline_passed() then error(TIMEOUT, 0) end end, "", %d)

local function rethrow(ok, ...)
  if not ok and (...) == TIMEOUT then error(TIMEOUT, 0) end
  return ok, ...
end

local G = {}
for _, name in ipairs({"assert", "error", "ipairs", "next", "pairs", "select", "tonumber", "tostring",
                       "type", "unpack", "_VERSION"}) do G[name] = _G[name] end
G.pcall = function(f, ...) return rethrow(rawpcall(f, ...)) end
G.xpcall = function(f, h) return rethrow(rawxpcall(f, h)) end
G.print = function() end
for _, name in ipairs({%s}) do
  G[name] = function()
    error("call function " .. name .. " is not supported in karmada customized resourceinterpreter.", 2)
  end
end
for _, name in ipairs({"rep", "gsub"}) do
  string[name] = function()
    error("The Lua function string." .. name .. " is not supported by Karmada.", 2)
  end
end
string.dump = nil
G.string, G.table, G.math = string, table, math
G.os = {time = os_time, date = os_date}
G.package = {loaded = {kube = kube}, preload = {},
             loadlib = function() error("loadlib is not supported", 2) end}
G.require = function(name)
  if name == "kube" then return kube end
  error("module '" .. tostring(name) .. "' not found: only 'kube' can be required", 2)
end
G._G = G

local chunks = {}
local function pack(...) return {n = select("#", ...), ...} end

local collect = collectgarbage
-- run(script, function name, args...) -> {n, results...}; collect() frees what a failed run left
return function(script, fname, ...)
  local chunk = chunks[script]
  if chunk == nil then
    local err
    chunk, err = loadstring(script, "=luaScript")
    if chunk == nil then error(err, 0) end
    chunks[script] = chunk
  end
  local env = setmetatable({}, {__index = G})
  env._G = env
  setfenv(chunk, env)
  chunk()
  local f = rawget(env, fname)
  if f == nil then error("not found function " .. fname, 0) end
  if type(f) ~= "function" then error(fname .. " is not a function: " .. type(f), 0) end
  return pack(f(...))
end, function() collect("collect") end
""" % (_HOOK_INSTRUCTIONS, ", ".join(f'"{n}"' for n in _BLOCKED))

_EMPTY = object()  # an empty Lua table: a list or an object, decided by the references


class LuaVM:
    """One sandboxed Lua 5.1 runtime; calls are serialised (a lock), so it may be shared by threads.

    Args:
        now: the run's clock (RFC 3339) that ``os.time()``/``os.date()`` read; None makes them fail
            when called without an explicit time.
        timeout: seconds of running per call.
        max_memory: bytes the runtime may allocate.

    Raises:
        InterpreterError: lupa is not installed.
    """

    def __init__(self, now: str | None = None, timeout: float = CALL_TIMEOUT, max_memory: int = MAX_MEMORY):
        try:
            import lupa.lua51 as lua51
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise InterpreterError(f"Lua customizations need the lupa package (Lua 5.1): {exc}") from None
        from karmactl.interpreter import luakube

        self._lua51 = lua51
        self._now = now
        self._timeout = timeout
        self._deadline = math.inf
        self._lock = threading.Lock()
        self._syntax = None
        self.runtime = lua51.LuaRuntime(register_eval=False, register_builtins=False,
                                        unpack_returned_tuples=False, max_memory=max_memory)
        self.runtime.globals().python = None
        kube = luakube.library(self)
        self._max_memory = max_memory
        self._run, self._collect = self.runtime.execute(_SETUP, self._deadline_passed, self._os_time, self._os_date, kube,
                                         _TIMEOUT_MESSAGE)

    # ------------------------------------------------------------------ calls

    def call(self, script: str, fname: str, nrets: int, *args) -> list:
        """Run ``script`` and call its global ``fname(*args)``; the first ``nrets`` results, converted
        by :meth:`to_python` without references (the caller resolves empty tables).

        ``args`` are JSON-like Python values (dict, list, str, int, float, bool, None).

        Raises:
            InterpreterError: syntax or runtime error (``luaScript:LINE: message``), time or memory
                limit, missing function.
        """
        with self._lock:
            lua_args = [self.to_lua(a) for a in args]
            self._deadline = time.monotonic() + self._timeout
            try:
                packed = self._run(script, fname, *lua_args)
            except self._lua51.LuaMemoryError:
                # free what the script left before anything else runs in this runtime
                self.runtime.set_max_memory(0)
                self._collect()
                self.runtime.set_max_memory(self._max_memory)
                raise InterpreterError(f"the script used more than its memory limit ({self._max_memory >> 20} MiB)") from None
            except self._lua51.LuaError as exc:
                raise InterpreterError(_clean(str(exc))) from None
            except _ScriptError as exc:
                raise InterpreterError(str(exc)) from None
            finally:
                self._deadline = math.inf
            return [self.to_python(packed[i + 1]) for i in range(nrets)]

    def syntax_error(self, script: str) -> str | None:
        """The compile error of ``script`` (``luaScript:LINE: message``), or None when it loads."""
        with self._lock:
            if self._syntax is None:
                self._syntax = self.runtime.eval("function(s) local f, e = loadstring(s, '=luaScript'); return e end")
            return self._syntax(script)

    def _deadline_passed(self) -> bool:
        return time.monotonic() > self._deadline

    # ------------------------------------------------------------------ the run's clock

    def _clock(self, t) -> float:
        if t is not None:
            return float(t)
        if self._now is None:
            raise_lua("os.time()/os.date() need the run's clock, which this interpretation has none of")
        from karmactl.api.objects import parse_time

        return parse_time(self._now).timestamp()

    def _os_time(self, table=None):
        if table is None:
            return int(self._clock(None))
        get = lambda k, d: table[k] if table[k] is not None else d  # noqa: E731
        return calendar.timegm((int(get("year", 1970)), int(get("month", 1)), int(get("day", 1)),
                                int(get("hour", 12)), int(get("min", 0)), int(get("sec", 0)), 0, 0, 0))

    def _os_date(self, fmt="%c", t=None):
        fmt = fmt or "%c"
        fmt = fmt[1:] if fmt.startswith("!") else fmt  # always UTC: the run's clock has no local zone
        tm = time.gmtime(self._clock(t))
        if fmt.startswith("*t"):
            return self.to_lua({"year": tm.tm_year, "month": tm.tm_mon, "day": tm.tm_mday, "hour": tm.tm_hour,
                                "min": tm.tm_min, "sec": tm.tm_sec, "wday": (tm.tm_wday + 1) % 7 + 1,
                                "yday": tm.tm_yday, "isdst": False})
        return time.strftime(fmt, tm)

    # ------------------------------------------------------------------ conversions

    def to_lua(self, value):
        """A JSON-like value as a Lua value: dicts and lists become tables (lists 1-based), None nil."""
        if isinstance(value, (dict, list, tuple)):
            return self.runtime.table_from(_drop_none(value), recursive=True)
        return value

    def to_python(self, value):
        """A Lua value as JSON-like Python (gopher-json's encoding, as Karmada's ``luajson.Encode``):
        a table whose keys are 1..n is a list, other tables objects (keys as strings); integral
        numbers are ints. An empty table is :data:`_EMPTY` until :func:`resolve_empty` decides.

        Raises:
            InterpreterError: a function, userdata or non-finite number in the result.
        """
        kind = self._lua51.lua_type(value)
        if kind == "table":
            items = list(value.items())
            if not items:
                return _EMPTY
            keys = [k for k, _ in items]
            if all(isinstance(k, int) and not isinstance(k, bool) for k in keys) and \
                    sorted(keys) == list(range(1, len(keys) + 1)):
                return [self.to_python(v) for _, v in sorted(items, key=lambda kv: kv[0])]
            out = {}
            for k, v in items:
                if not isinstance(k, (str, int, float)) or isinstance(k, bool):
                    raise InterpreterError("cannot encode mixed or invalid key types")
                out[_key_text(k)] = self.to_python(v)
            return out
        if kind is not None:
            raise InterpreterError(f"cannot encode a Lua {kind} into JSON")
        if isinstance(value, float):
            if not math.isfinite(value):
                raise InterpreterError(f"cannot encode the number {value} into JSON")
            return int(value) if value.is_integer() else value
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        return value


def raise_lua(message: str):
    """Raise a Lua error with ``message`` from a Python function called by a script."""
    raise _ScriptError(message)


class _ScriptError(Exception):
    pass


def _key_text(k) -> str:
    if isinstance(k, float) and k.is_integer():
        k = int(k)
    return str(k)


def _drop_none(value):
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_drop_none(v) for v in value]
    return value


def _clean(message: str) -> str:
    """A LuaError's text without lupa's traceback and Python exception wrapping."""
    message = message.split("\nstack traceback:", 1)[0].strip()
    for marker in ("_ScriptError: ",):
        if marker in message:
            message = message.split(marker, 1)[1]
    return message


# --------------------------------------------------------------------------- empty tables

def _empty_paths(value, path: tuple, lists: set, objects: set) -> None:
    """Record the field paths (array indices left out) of empty lists and objects in ``value``."""
    if isinstance(value, dict):
        for k, v in value.items():
            p = path + (k,)
            if v == {} and isinstance(v, dict):
                objects.add(p)
            elif v == [] and isinstance(v, list):
                lists.add(p)
            else:
                _empty_paths(v, p, lists, objects)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, (dict, list)):
                _empty_paths(v, path, lists, objects)


def resolve_empty(result, root_is_object: bool, *references):
    """Decide every empty table of a converted Lua result as Karmada's
    ``convertEmptySliceToEmptyStructPartly`` (``lua_convert.go``): an empty field that is an empty
    object at the same path of a reference (the call's inputs) becomes ``{}``, one that is an empty
    list there stays ``[]``, any other is dropped. The root itself becomes ``{}`` or ``[]``."""
    if result is _EMPTY:
        return {} if root_is_object else []
    lists: set = set()
    objects: set = set()
    for ref in references:
        if ref is not None:
            _empty_paths(ref, (), lists, objects)
    return _resolve(result, (), lists, objects)


def _resolve(value, path, lists, objects):
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            p = path + (k,)
            if v is _EMPTY:
                if p in objects:
                    out[k] = {}
                elif p in lists:
                    out[k] = []
                continue
            out[k] = _resolve(v, p, lists, objects)
        return out
    if isinstance(value, list):
        out = []
        for v in value:
            if v is _EMPTY:
                # an empty element of a list: kept as Karmada (only object fields are decided)
                out.append([] if path not in objects else {})
                continue
            out.append(_resolve(v, path, lists, objects))
        return out
    return value
