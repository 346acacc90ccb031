"""A sandboxed Lua 5.1 machine for ResourceInterpreterCustomization scripts.

Follows ``pkg/resourceinterpreter/customized/declarative/luavm/lua.go`` (the sandbox and the calls),
``lua_convert.go`` (tables back into objects) and ``pkg/util/lifted/lua/`` (the safe ``os``,
``string`` and ``package`` libraries). The runtime is lupa's bundled Lua 5.1 (``lupa.lua51``), the
language version of Karmada's gopher-lua.

Scripts are untrusted: they come from the state directory, i.e. from whoever wrote a merge
request, and run in an offline ``plan``. So:

* **Nothing Python is reachable.** Every function a script can reach is a Lua function or one of
  Lua's own C functions (:mod:`karmactl.interpreter.luasandbox`): ``os.time``/``os.date`` and the
  ``kube`` wrappers are Lua; the Python helpers behind ``kube`` are upvalues of those wrappers
  only. As a second wall the runtime has no ``python`` module, no ``eval``, and an attribute
  filter that refuses every attribute and item of any Python object (a Python exception that
  reaches a script's ``pcall`` is such an object). Data goes in as Lua tables built from plain
  JSON values (anything else is refused), never as Python proxies.
* **The sandbox:** ``base``, ``table``, ``string`` (without ``rep``, ``gsub`` and ``dump``, as
  Karmada), ``math``, ``os`` with only ``time`` and ``date`` (the run's clock, never the
  machine's), ``require`` that serves only ``kube`` (:mod:`karmactl.interpreter.luakube`);
  ``io``, ``debug``, ``coroutine``, ``load*``, ``dofile``, ``setfenv``/``getfenv``,
  ``set``/``getmetatable``, ``raw*``, ``module``, ``newproxy`` and ``collectgarbage`` raise "not
  supported"; a precompiled (binary) chunk is refused (Lua 5.1 does not verify bytecode).
  ``print`` prints nothing. Each call runs in a fresh global table (a copy of the sandbox's
  globals, so a global the script sets to nil stays nil, as in gopher-lua) and the libraries
  are read-only, so customizations cannot see or change each other.
* **Values as gopher-lua gives them.** An absent argument is nil (no aggregated status items:
  nil, not an empty table); a null in a list is left out (gopher-lua's ``Append`` skips nil);
  ``pairs`` and ``next`` go through a table's keys in gopher-lua's order (integer keys first, then
  the others as they were first set: :mod:`karmactl.interpreter.luaorder`); the tables given to a
  script (Go maps in Karmada, in no order) list their fields in Lua's order.
* **Limits no script escapes.** Per call :data:`CALL_TIMEOUT` seconds and
  :data:`CALL_INSTRUCTIONS` Lua instructions; per machine (one per run's interpreter)
  :data:`TOTAL_TIME` seconds and :data:`TOTAL_INSTRUCTIONS` instructions over all calls, after
  which every call fails at once; :data:`MAX_MEMORY` bytes. A count hook checks the limits every
  :data:`_HOOK_INSTRUCTIONS` instructions, in error handlers too, and ``pcall``/``xpcall`` rethrow
  a passed limit. The C functions that could run long between two hooks are replaced
  (:mod:`karmactl.interpreter.luasandbox`: pattern matching, ``table.sort``). Results are
  bounded on the way back: :data:`MAX_DEPTH` levels of nesting, :data:`MAX_NODES` values,
  :data:`MAX_STRING` bytes per string.

Why in this process rather than a worker process killed at the deadline (with ``RLIMIT_CPU``/
``RLIMIT_AS``): interpretation is on the hot path of offline runs (every customized object, every
pass); an in-process call costs tens of microseconds, a worker would add a pipe round trip and a
serialisation of the object per call, a fork per run (from a process whose member layer runs
threads), and its own failure modes. Inside the process, the only work Lua does outside the
instruction hook is in C library functions; the unbounded ones are replaced, and what remains
(string concatenation, ``table.insert``, ``string.upper``...) is linear in data that
:data:`MAX_MEMORY` bounds, so a limit is noticed at most a few thousand instructions late.
"""
from __future__ import annotations

import math
import threading
import time

from karmactl.interpreter._common import InterpreterError

CALL_TIMEOUT = 1.0
"""Seconds of running per call (Karmada's luavm timeout)."""
CALL_INSTRUCTIONS = 1_000_000_000
"""Lua instructions per call (a bound that does not depend on the machine's speed)."""
TOTAL_TIME = 10.0
"""Seconds of running over all calls of one machine (one interpreter of a run)."""
TOTAL_INSTRUCTIONS = 10_000_000_000
"""Lua instructions over all calls of one machine."""
MAX_MEMORY = 64 << 20
"""Bytes one machine may allocate."""
MAX_DEPTH = 100
"""Deepest nesting of tables in a result (and in what a script is given): the state's own bound
(``karmactl.store.yamlio.MAX_DEPTH``), so that a result can be written and read back."""
MAX_NODES = 1_000_000
"""Most values (tables, strings, numbers...) one result may hold."""
MAX_STRING = 3 << 20
"""Longest string in a result, in bytes: Kubernetes' request limit for a whole object is 3 MiB."""
_HOOK_INSTRUCTIONS = 1000
_CHEAP = 10_000_000  # work estimate up to which a pattern runs in Lua's C matcher (luasandbox)
_EXACT_FLOAT = 2 ** 53
_EMPTY = object()  # an empty Lua table: a list or an object, decided by the references


class LuaVM:
    """One sandboxed Lua 5.1 runtime; calls are serialised (a lock), so it may be shared by threads.

    Args:
        now: the run's clock (RFC 3339) that ``os.time()``/``os.date()`` read; None makes them fail
            when called without an explicit time.
        timeout: seconds of running per call.
        max_memory: bytes the runtime may allocate.
        total_time: seconds of running over all calls (the run's budget).
        instructions: Lua instructions per call.
        total_instructions: Lua instructions over all calls.
        pattern_work: the work estimate up to which a pattern runs in Lua's C matcher
            (:mod:`karmactl.interpreter.luasandbox`); -1 runs every pattern in the Lua matcher.

    Raises:
        InterpreterError: lupa is not installed.
    """

    def __init__(self, now: str | None = None, timeout: float = CALL_TIMEOUT, max_memory: int = MAX_MEMORY,
                 total_time: float = TOTAL_TIME, instructions: int = CALL_INSTRUCTIONS,
                 total_instructions: int = TOTAL_INSTRUCTIONS, pattern_work: int = _CHEAP):
        try:
            import lupa.lua51 as lua51
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise InterpreterError(f"Lua customizations need the lupa package (Lua 5.1): {exc}") from None
        from karmactl.interpreter import luakube
        from karmactl.interpreter.luasandbox import SOURCE

        self._lua51 = lua51
        self._total_time = total_time
        self._total_instructions = total_instructions
        self._spent_time = 0.0
        self._spent_instructions = 0
        self._lock = threading.Lock()
        self._rewritten: dict[str, str] = {}
        self._max_memory = max_memory
        # (message, limit) per call, and the message once the run's budget is used up
        self._call_time = (f"the script ran longer than the {timeout:g}s time limit of a call", timeout)
        self._call_instructions = (f"the script ran more than {instructions:,} Lua instructions, its limit "
                                   "per call", instructions)
        self._budget = (f"the customizations' scripts used up this run's Lua budget ({total_time:g} s, "
                        f"{total_instructions:,} instructions over all calls)")
        self.runtime = lua51.LuaRuntime(register_eval=False, register_builtins=False,
                                        unpack_returned_tuples=False, max_memory=max_memory,
                                        attribute_filter=_no_attributes)
        self.runtime.globals().python = None
        clock = None
        if now is not None:
            from karmactl.api.objects import parse_time

            clock = int(parse_time(now).timestamp())
        loader = self.runtime.eval("function(src) return assert(loadstring(src, '=karmactl')) end")
        self._run, self._finish, self._syntax, self._collect = loader(SOURCE)(
            time.monotonic, clock, luakube.library(self), _HOOK_INSTRUCTIONS, pattern_work)

    # ------------------------------------------------------------------ calls

    def call(self, script: str, fname: str, nrets: int, *args) -> list:
        """Run ``script`` and call its global ``fname(*args)``; the first ``nrets`` results, converted
        by :meth:`to_python` without references (the caller resolves empty tables).

        ``args`` are JSON-like Python values (dict, list, str, int, float, bool, None).

        Raises:
            InterpreterError: syntax or runtime error (``luaScript:LINE: message``), a limit passed
                (the message names it), a result too deep or too large, missing function.
        """
        with self._lock:
            left_time = self._total_time - self._spent_time
            left_instructions = self._total_instructions - self._spent_instructions
            if left_time <= 0 or left_instructions <= 0:
                raise InterpreterError(self._budget)
            lua_args = [self.to_lua(a) for a in args]
            time_message, timeout = self._call_time
            if left_time < timeout:
                time_message, timeout = self._budget, left_time
            instructions_message, instructions = self._call_instructions
            if left_instructions < instructions:
                instructions_message, instructions = self._budget, left_instructions
            started = time.monotonic()
            used = None
            try:
                packed, used = self._run(started + timeout, instructions, time_message, instructions_message,
                                         script, self._marked(script), fname, *lua_args)
                return [self.to_python(packed[i + 1]) for i in range(nrets)]
            except self._lua51.LuaMemoryError:
                self._free()
                raise InterpreterError(self._memory_message()) from None
            except self._lua51.LuaError as exc:
                message = _clean(str(exc))
                if message == "not enough memory":  # rethrown by a pcall
                    self._free()
                    raise InterpreterError(self._memory_message()) from None
                raise InterpreterError(message) from None
            except UnicodeDecodeError:
                raise InterpreterError("the script passed or raised a string that is not valid UTF-8") from None
            finally:
                self._spent_instructions += self._finish() if used is None else used
                self._spent_time += time.monotonic() - started

    def _marked(self, script: str) -> str:
        """``script`` with its table constructors marked for gopher-lua's ``pairs`` order
        (:func:`karmactl.interpreter.luaorder.mark_constructors`), remembered per script."""
        from karmactl.interpreter.luaorder import mark_constructors

        marked = self._rewritten.get(script)
        if marked is None:
            if len(self._rewritten) > 1000:
                self._rewritten.clear()
            marked = self._rewritten[script] = mark_constructors(script)
        return marked

    def syntax_error(self, script: str) -> str | None:
        """The compile error of ``script`` (``luaScript:LINE: message``), or None when it loads."""
        with self._lock:
            try:
                return self._syntax(script)
            except UnicodeDecodeError:
                return "luaScript: the script is not valid UTF-8"

    def _memory_message(self) -> str:
        return f"the script used more than its memory limit ({self._max_memory >> 20} MiB)"

    def _free(self) -> None:
        """Free what a script left before anything else runs in this runtime."""
        self.runtime.set_max_memory(0)
        self._collect()
        self.runtime.set_max_memory(self._max_memory)

    # ------------------------------------------------------------------ conversions

    def to_lua(self, value):
        """A JSON-like value as a Lua value: dicts and lists become tables (lists 1-based), None nil.

        Raises:
            InterpreterError: a value that is not JSON-like, or nesting deeper than :data:`MAX_DEPTH`.
        """
        if isinstance(value, (dict, list, tuple)):
            return self.runtime.table_from(_plain(value, 0), recursive=True)
        return _plain(value, 0)

    def to_python(self, value):
        """A Lua value as JSON-like Python (gopher-json's encoding, as Karmada's ``luajson.Encode``):
        a table whose keys are 1..n is a list, other tables objects (keys as strings); integral
        numbers are ints. An empty table is :data:`_EMPTY` until :func:`resolve_empty` decides.

        Raises:
            InterpreterError: a function, userdata or non-finite number in the result; nesting
                deeper than :data:`MAX_DEPTH`, more than :data:`MAX_NODES` values, a string longer
                than :data:`MAX_STRING` bytes or not UTF-8.
        """
        lua_type = self._lua51.lua_type
        count = 0

        def convert(v, depth):
            t = type(v)
            if t is str:
                if len(v) > MAX_STRING // 4 and len(v.encode()) > MAX_STRING:
                    raise InterpreterError(f"the result holds a string longer than {MAX_STRING >> 20} MiB")
                return v
            if t is float:
                if not math.isfinite(v):
                    raise InterpreterError(f"cannot encode the number {v} into JSON")
                return int(v) if v.is_integer() else v
            if t is bool or t is int or v is None:
                return v
            kind = lua_type(v)
            if kind == "table":
                return table(v, depth)
            if kind is not None:
                raise InterpreterError(f"cannot encode a Lua {kind} into JSON")
            if t is bytes:
                return convert(v.decode("utf-8", "replace"), depth)
            raise InterpreterError(f"cannot encode a {t.__name__} into JSON")  # pragma: no cover

        def table(v, depth):
            nonlocal count
            if depth > MAX_DEPTH:
                raise InterpreterError(f"the result is nested deeper than {MAX_DEPTH} levels")
            try:
                items = list(v.items())
            except UnicodeDecodeError:
                raise InterpreterError("the result holds a string that is not valid UTF-8") from None
            if not items:
                return _EMPTY
            count += len(items)
            if count > MAX_NODES:
                raise InterpreterError(f"the result holds more than {MAX_NODES:,} values")
            keys = [k for k, _ in items]
            if all(type(k) is int for k in keys) and sorted(keys) == list(range(1, len(keys) + 1)):
                return [convert(x, depth + 1) for _, x in sorted(items, key=lambda kv: kv[0])]
            out = {}
            for k, x in items:
                if type(k) is not str and type(k) not in (int, float):
                    raise InterpreterError("cannot encode mixed or invalid key types")
                out[k if type(k) is str else _key_text(k)] = convert(x, depth + 1)
            return out

        return convert(value, 1)


def _no_attributes(obj, name, is_setting):
    """lupa's attribute filter: no attribute or item of a Python object is reachable from Lua."""
    raise AttributeError("Python objects are not accessible from Lua")


def _plain(value, depth: int):
    """``value`` with None dropped from mappings and sequences (as Karmada's ``decodeValue``: a
    nil field is not set, a nil element not appended), checked to be JSON-like; integers
    beyond float precision become floats (Lua 5.1 numbers are doubles, as gopher-lua's).

    Raises:
        InterpreterError: a value that is not JSON-like, nesting deeper than :data:`MAX_DEPTH`.
    """
    t = type(value)
    if t is dict or t is list or t is tuple:
        if depth >= MAX_DEPTH:
            raise InterpreterError(f"the input is nested deeper than {MAX_DEPTH} levels")
        if t is dict:
            out = {}
            for k, v in value.items():
                if v is None:
                    continue
                if type(k) is not str:
                    k = _leaf(k)
                tv = type(v)
                out[k] = v if tv is str or tv is bool or tv is float else _plain(v, depth + 1)
            return out
        return [v if type(v) is str else _plain(v, depth + 1) for v in value if v is not None]
    return _leaf(value)


def _leaf(value):
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, int):
        return value if -_EXACT_FLOAT <= value <= _EXACT_FLOAT else float(value)
    raise InterpreterError(f"cannot pass a {type(value).__name__} to a Lua script")


def _key_text(k) -> str:
    if isinstance(k, float) and k.is_integer():
        k = int(k)
    return str(k)


def _clean(message: str) -> str:
    """A LuaError's text without lupa's traceback and Python exception wrapping."""
    message = message.split("\nstack traceback:", 1)[0].strip()
    if len(message) > 2000:  # error(huge string): the warning stays readable
        message = message[:2000] + f"... ({len(message) - 2000} more characters)"
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
