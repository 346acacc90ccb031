"""The Lua side of the sandbox of :mod:`karmactl.interpreter.luavm`: the base library scripts see,
the limits' hook, and the library functions whose C versions could run unbounded.

:data:`SOURCE` is a Lua 5.1 chunk run once per machine. It takes ``(clock, now, kube_impl, STEP,
CHEAP)``: ``clock`` a function returning monotonic seconds, ``now`` the run's clock as Unix seconds
(or nil), ``kube_impl`` the table of the ``kube`` helpers implemented in Python
(:mod:`karmactl.interpreter.luakube`), ``STEP`` the instructions between two checks of the limits,
``CHEAP`` the largest work estimate a pattern may have to run in Lua's C matcher. Those Python
callables end up as upvalues of Lua closures: no script can reach them (``debug`` and
``getfenv`` are not in the sandbox), and the machine's attribute filter refuses every attribute
of a Python object anyway. It returns ``run, finish, syntax``:

* ``run(deadline, max_instructions, time_message, instructions_message, script, marked, fname, ...)``
  loads ``script`` (source only: a binary chunk is refused) into a fresh global table, calls its
  ``fname(...)`` and returns ``{n = count, results...}, instructions used``; the count hook
  (installed once, idle between runs) stops it with the message once ``clock()`` passes
  ``deadline`` or it ran ``max_instructions``. ``marked`` is the script with its table
  constructors marked (:mod:`karmactl.interpreter.luaorder`); it runs in place of the script
  (called with the chunk's ``marker``) unless it does not compile.
* ``finish()`` disarms the limits after a ``run`` that failed and returns the instructions it used.
* ``syntax(script)`` the compile error of a script, or nil.

What scripts can call that could otherwise escape the count hook (it only fires between Lua
instructions, never inside a C function):

* ``string.find``/``match``/``gmatch``: Lua's C matcher backtracks without a bound
  (``string.find(("a"):rep(30), ".-.-.-.-.-b")`` runs for hours). A pattern runs in C only when
  a bound on its work is below ``CHEAP`` (subject length ``n``, pattern length ``m``, ``k``
  quantifiers, ``%b`` and back references: ``starts * (n + 1) ^ k * (m + 1) ^ 2``, with
  ``starts`` 1 for an anchored pattern, ``n + 1`` otherwise); any other runs in the Lua port of
  the same matcher below (``lstrlib.c``'s ``match``, same results and errors), whose every step
  the hook counts. Karmada's scripts match short fields with few quantifiers: they stay in C.
* ``table.sort``: Lua 5.1's quicksort is quadratic on crafted input and compares strings in C;
  it always gets a Lua comparator, so the hook sees every comparison.
* ``pcall``/``xpcall``: once a limit has passed, every return from them raises the limit again,
  so no ``pcall`` can swallow it; an ``xpcall`` handler is not run for a passed limit (Lua 5.1
  calls it before unwinding, with hooks off when the error came from the hook: a looping handler
  would run unwatched), and one that loops on another error is stopped by the hook as any code.
* ``pairs``/``next`` follow gopher-lua's order (``table.go``): positive integer keys below 2^26
  in numeric order, then the other keys in the order they were first set, which the metatables of
  the tables a script builds record (``__newindex``; invisible to scripts, which have no
  ``getmetatable``/``rawset``); ``pairs`` iterates a snapshot of the keys, skipping those cleared
  meanwhile, so clearing fields during a traversal works as in Lua.
* ``os.time``/``os.date`` read the run's clock (``now``), never the machine's, and use UTC;
  ``os.time{...}`` normalises out-of-range fields as Go's ``time.Date`` (gopher-lua).

The libraries ``string``, ``table``, ``math``, ``os``, ``package`` and ``kube`` are read-only to
scripts, so one customization cannot change what another one calls.
"""

SOURCE = r"""
local clock, NOW, kube_impl, STEP, CHEAP = ...
local type, tostring, tonumber, error, select, pcall, xpcall, ipairs, pairs, next, unpack =
      type, tostring, tonumber, error, select, pcall, xpcall, ipairs, pairs, next, unpack
local setmetatable, getmetatable, rawget, rawset, setfenv, loadstring =
      setmetatable, getmetatable, rawget, rawset, setfenv, loadstring
local sethook, getinfo, rawgetmeta, rawsetmeta = debug.sethook, debug.getinfo, debug.getmetatable, debug.setmetatable
local s_find, s_gsub = string.find, string.gsub
local byte, sub, char = string.byte, string.sub, string.char
local floor, huge = math.floor, math.huge
-- Lua's C functions, called through a field so that their argument errors name them ('find')
local C = {find = string.find, match = string.match, gmatch = string.gmatch, sort = table.sort, date = os.date}
local function cfind(...) return C.find(...) end
local function cmatch(...) return C.match(...) end
local function cgmatch(...) return C.gmatch(...) end
local function csort(...) return C.sort(...) end
local function cdate(...) return C.date(...) end
local collect = collectgarbage

-- ------------------------------------------------------------------ limits

local expired, deadline, limit, used = nil, huge, huge, 0
local time_message, instructions_message = "", ""

local function hook()
  used = used + STEP
  if expired == nil then
    if used > limit then expired = instructions_message
    elseif clock() > deadline then expired = time_message end
  end
  if expired ~= nil then error(expired, 0) end
end

-- every protected call returns through here: a passed limit cannot be swallowed
local function checked(ok, ...)
  if expired ~= nil then error(expired, 0) end
  return ok, ...
end

-- an error raised by a library function, at the script's line (as luaL_error's position)
local function raise(message)
  for level = 2, 40 do
    local info = getinfo(level, "Sl")
    if info == nil then break end
    if info.source == "=luaScript" then
      error("luaScript:" .. tostring(info.currentline) .. ": " .. message, 0)
    end
  end
  error(message, 0)
end

-- the error of a C function called by a wrapper here: its position named this chunk
local function rethrow(ok, ...)
  if ok then return ... end
  if expired ~= nil then error(expired, 0) end
  local e = ...
  if type(e) == "string" and sub(e, 1, 9) == "karmactl:" then
    local _, stop = s_find(e, ": ", 10, true)
    if stop then raise(sub(e, stop + 1)) end
  end
  error(e, 0)
end

-- ------------------------------------------------------------------ bounded patterns

local SPECIALS = "[%^%$%*%+%?%.%(%[%%%-]"
local CAP_UNFINISHED, CAP_POSITION = -1, -2
local CLASS = {}
for _, cl in ipairs({"a", "c", "d", "l", "p", "s", "u", "w", "x", "z"}) do
  local low, up = {}, {}
  for b = 0, 255 do
    local yes = s_find(char(b), "^%" .. cl) ~= nil
    low[b], up[b] = yes, not yes
  end
  CLASS[byte(cl)], CLASS[byte(cl) - 32] = low, up
end

-- the matcher's state: subject S (length SLEN), pattern P (length PLEN), captures
local S, SLEN, P, PLEN, level = "", 0, "", 0, 0
local cap_init, cap_len = {}, {}

local function perr(message) error({pattern_error = message}) end

local function match_class(c, cl)
  local set = CLASS[cl]
  if set then return set[c] end
  return cl == c
end

local function class_end(p)
  local c = byte(P, p)
  p = p + 1
  if c == 37 then
    if p > PLEN then perr("malformed pattern (ends with '%')") end
    return p + 1
  elseif c == 91 then
    if byte(P, p) == 94 then p = p + 1 end
    repeat
      if p > PLEN then perr("malformed pattern (missing ']')") end
      local cc = byte(P, p)
      p = p + 1
      if cc == 37 and p <= PLEN then p = p + 1 end
    until byte(P, p) == 93
    return p + 1
  end
  return p
end

local function match_bracket(c, p, ec)
  local sig = true
  if byte(P, p + 1) == 94 then sig = false; p = p + 1 end
  p = p + 1
  while p < ec do
    local pc = byte(P, p)
    if pc == 37 then
      p = p + 1
      if match_class(c, byte(P, p)) then return sig end
    elseif byte(P, p + 1) == 45 and p + 2 < ec then
      if pc <= c and c <= byte(P, p + 2) then return sig end
      p = p + 2
    elseif pc == c then
      return sig
    end
    p = p + 1
  end
  return not sig
end

local function single_match(c, p, ep)
  local pc = byte(P, p)
  if pc == 46 then return true
  elseif pc == 37 then return match_class(c, byte(P, p + 1))
  elseif pc == 91 then return match_bracket(c, p, ep - 1)
  end
  return pc == c
end

local do_match

local function max_expand(s, p, ep)
  local i = 0
  while s + i <= SLEN and single_match(byte(S, s + i), p, ep) do i = i + 1 end
  while i >= 0 do
    local res = do_match(s + i, ep + 1)
    if res then return res end
    i = i - 1
  end
  return nil
end

local function min_expand(s, p, ep)
  while true do
    local res = do_match(s, ep + 1)
    if res then return res end
    if s <= SLEN and single_match(byte(S, s), p, ep) then s = s + 1 else return nil end
  end
end

local function start_capture(s, p, what)
  if level >= 32 then perr("too many captures") end
  level = level + 1
  cap_init[level], cap_len[level] = s, what
  local res = do_match(s, p)
  if res == nil then level = level - 1 end
  return res
end

local function end_capture(s, p)
  local l
  for i = level, 1, -1 do
    if cap_len[i] == CAP_UNFINISHED then l = i; break end
  end
  if l == nil then perr("invalid pattern capture") end
  cap_len[l] = s - cap_init[l]
  local res = do_match(s, p)
  if res == nil then cap_len[l] = CAP_UNFINISHED end
  return res
end

local function match_balance(s, p)
  if p + 1 > PLEN then perr("unbalanced pattern") end
  local b, e = byte(P, p), byte(P, p + 1)
  if s > SLEN or byte(S, s) ~= b then return nil end
  local cont = 1
  s = s + 1
  while s <= SLEN do
    local c = byte(S, s)
    if c == e then
      cont = cont - 1
      if cont == 0 then return s + 1 end
    elseif c == b then
      cont = cont + 1
    end
    s = s + 1
  end
  return nil
end

local function match_capture(s, d)
  local l = d - 48
  if l < 1 or l > level or cap_len[l] == CAP_UNFINISHED then perr("invalid capture index") end
  local len = cap_len[l]
  if len < 0 then return nil end
  if SLEN - s + 1 >= len and sub(S, cap_init[l], cap_init[l] + len - 1) == sub(S, s, s + len - 1) then
    return s + len
  end
  return nil
end

do_match = function(s, p)
  while true do
    if p > PLEN then return s end
    local pc = byte(P, p)
    local nx = byte(P, p + 1)
    if pc == 40 then
      if nx == 41 then return start_capture(s, p + 2, CAP_POSITION) end
      return start_capture(s, p + 1, CAP_UNFINISHED)
    elseif pc == 41 then
      return end_capture(s, p + 1)
    elseif pc == 37 and nx == 98 then
      s = match_balance(s, p + 2)
      if s == nil then return nil end
      p = p + 4
    elseif pc == 37 and nx == 102 then
      p = p + 2
      if byte(P, p) ~= 91 then perr("missing '[' after '%f' in pattern") end
      local ep = class_end(p)
      local previous = s == 1 and 0 or byte(S, s - 1)
      local current = byte(S, s) or 0
      if match_bracket(previous, p, ep - 1) or not match_bracket(current, p, ep - 1) then return nil end
      p = ep
    elseif pc == 37 and nx ~= nil and nx >= 48 and nx <= 57 then
      s = match_capture(s, nx)
      if s == nil then return nil end
      p = p + 2
    elseif pc == 36 and p == PLEN then
      if s == SLEN + 1 then return s end
      return nil
    else
      local ep = class_end(p)
      local m = s <= SLEN and single_match(byte(S, s), p, ep)
      local q = byte(P, ep)
      if q == 63 then
        if m then
          local res = do_match(s + 1, ep + 1)
          if res then return res end
        end
        p = ep + 1
      elseif q == 42 then
        return max_expand(s, p, ep)
      elseif q == 43 then
        if m then return max_expand(s + 1, p, ep) end
        return nil
      elseif q == 45 then
        return min_expand(s, p, ep)
      else
        if not m then return nil end
        s = s + 1
        p = ep
      end
    end
  end
end

local function get_capture(i, s, e)
  if i > level then
    if i == 1 then return sub(S, s, e - 1) end
    perr("invalid capture index")
  end
  local l = cap_len[i]
  if l == CAP_UNFINISHED then perr("unfinished capture") end
  if l == CAP_POSITION then return cap_init[i] end
  return sub(S, cap_init[i], cap_init[i] + l - 1)
end

local function captures(s, e)
  local n = (level == 0 and s ~= nil) and 1 or level
  if n == 0 then return end
  if n == 1 then return get_capture(1, s, e) end
  local out = {}
  for i = 1, n do out[i] = get_capture(i, s, e) end
  return unpack(out, 1, n)
end

local function begin(s, p)
  local z = s_find(p, "\0", 1, true)  -- Lua 5.1's matcher stops at a zero byte of the pattern
  if z then p = sub(p, 1, z - 1) end
  S, SLEN, P, PLEN, level = s, #s, p, #p, 0
end

-- the Lua matcher behind find (find = true) and match, from byte offset off (0-based)
local function lua_find(find, s, p, off)
  begin(s, p)
  local pstart, anchor = 1, byte(P, 1) == 94
  if anchor then pstart = 2 end
  local s1 = off + 1
  repeat
    level = 0
    local e = do_match(s1, pstart)
    if e then
      if find then return s1, e - 1, captures(nil, 0) end
      return captures(s1, e)
    end
    s1 = s1 + 1
  until s1 > SLEN + 1 or anchor
  return nil
end

local function lua_plain_find(s, p, off)
  local n, m = #s, #p
  if m == 0 then return off + 1, off end
  local first = sub(p, 1, 1)
  local i = off + 1
  while i <= n - m + 1 do
    local at = s_find(s, first, i, true)
    if at == nil or at > n - m + 1 then return nil end
    if sub(s, at, at + m - 1) == p then return at, at + m - 1 end
    i = at + 1
  end
  return nil
end

local weights = {}
local weight_count = 0
-- quantifiers, %b and back references of a pattern (cached per pattern text)
local function weight(p)
  local w = weights[p]
  if w == nil then
    w = select(2, s_gsub(p, "[%*%+%-%?]", "")) + select(2, s_gsub(p, "%%[b0-9]", ""))
    if weight_count > 1000 then weights, weight_count = {}, 0 end
    weights[p], weight_count = w, weight_count + 1
  end
  return w
end

-- whether Lua's C matcher is bounded enough for (s, p) from offset off
local function cheap(n, p, plain)
  local m = #p
  if plain then return (n + 1) * (m + 1) <= CHEAP end
  local starts = byte(p, 1) == 94 and 1 or n + 1
  return starts * (n + 1) ^ weight(p) * (m + 1) * (m + 1) <= CHEAP
end

local function offset(s, init)
  local n = #s
  init = floor(init or 1)
  if init < 0 then init = init + n + 1 end
  if init < 0 then init = 0 end
  local off = init - 1
  if off < 0 then off = 0 elseif off > n then off = n end
  return off
end

local function pattern_call(f, ...)
  local function back(ok, ...)
    if ok then return ... end
    local e = ...
    if type(e) == "table" and e.pattern_error then raise(e.pattern_error) end
    error(e, 0)
  end
  return back(checked(pcall(f, ...)))
end

-- a call whose arguments are not what the Lua path takes: Lua's C function reports the error
-- (or converts them) on so little data that it cannot run long
local function odd(s, p, init)
  local ts, tp = type(s), type(p)
  return (ts ~= "string" and ts ~= "number") or (tp ~= "string" and tp ~= "number")
      or (init ~= nil and type(init) ~= "number")
end

local function find(s, p, init, plain)
  if odd(s, p, init) then return rethrow(pcall(cfind, s, p, init, plain)) end
  s, p = tostring(s), tostring(p)
  local off = offset(s, init)
  local literal = plain or not s_find(p, SPECIALS)
  if cheap(#s - off, p, literal) then return rethrow(pcall(cfind, s, p, init, plain)) end
  if literal then return lua_plain_find(s, p, off) end
  return pattern_call(lua_find, true, s, p, off)
end

local function match(s, p, init)
  if odd(s, p, init) then return rethrow(pcall(cmatch, s, p, init)) end
  s, p = tostring(s), tostring(p)
  local off = offset(s, init)
  if cheap(#s - off, p, false) then return rethrow(pcall(cmatch, s, p, init)) end
  return pattern_call(lua_find, false, s, p, off)
end

local function gmatch(s, p)
  if odd(s, p, nil) or cheap(#tostring(s), tostring(p), false) then
    return rethrow(pcall(cgmatch, s, p))
  end
  s, p = tostring(s), tostring(p)
  local pos = 1
  local function step()
    begin(s, p)
    for src = pos, SLEN + 1 do
      level = 0
      local e = do_match(src, 1)
      if e then
        pos = e == src and e + 1 or e
        return captures(src, e)
      end
    end
  end
  return function() return pattern_call(step) end
end

-- ------------------------------------------------------------------ table.sort

local function less(a, b) return a < b end

local function sort(t, comp)
  if comp == nil then comp = less end
  return rethrow(pcall(csort, t, comp))
end

-- ------------------------------------------------------------------ the run's clock

local function now_or_fail()
  if NOW == nil then raise("os.time()/os.date() need the run's clock, which this interpretation has none of") end
  return NOW
end

local function field(t, key, default)
  local v = t[key]
  if v == nil then return default end
  local n = tonumber(v)
  if n == nil then raise("field '" .. key .. "' is not a number in the date table") end
  if n >= 0 then return floor(n) end
  return -floor(-n)
end

local function days_from_civil(y, m, d)
  m = m - 1
  y = y + floor(m / 12)
  m = m % 12 + 1
  if m <= 2 then y = y - 1 end
  local era = floor(y / 400)
  local yoe = y - era * 400
  local mp = m > 2 and m - 3 or m + 9
  local doy = floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

local function os_time(t)
  if t == nil then return now_or_fail() end
  if type(t) ~= "table" then raise("bad argument #1 to 'time' (table expected, got " .. type(t) .. ")") end
  local days = days_from_civil(field(t, "year", 1970), field(t, "month", 1), field(t, "day", 1))
  return days * 86400 + field(t, "hour", 12) * 3600 + field(t, "min", 0) * 60 + field(t, "sec", 0)
end

local function os_date(fmt, t)
  if fmt == nil then fmt = "%c" end
  if type(fmt) ~= "string" and type(fmt) ~= "number" then
    raise("bad argument #1 to 'date' (string expected, got " .. type(fmt) .. ")")
  end
  fmt = tostring(fmt)
  if sub(fmt, 1, 1) == "!" then fmt = sub(fmt, 2) end  -- always UTC: the run's clock has no zone
  if t == nil then t = now_or_fail() end
  if tonumber(t) == nil then raise("bad argument #2 to 'date' (number expected, got " .. type(t) .. ")") end
  if sub(fmt, 1, 2) == "*t" then fmt = "*t" end
  return rethrow(pcall(cdate, "!" .. fmt, tonumber(t)))
end

-- ------------------------------------------------------------------ gopher-lua's table order

-- gopher-lua iterates a table's positive integer keys below 2^26 (its array part) in numeric
-- order, then every other key in the order it was first set. Tables a script builds are marked
-- (the rewritten constructors call the chunk's mark; luaorder.py) with a metatable whose
-- __newindex records every other key as it is first added, in the metatable's `seq` (seq[i] =
-- key, seq[key] = i: such keys are never positive integers below 2^26, so they cannot clash with
-- the positions). The tables of one constructor share a metatable (and its seq) until one of them
-- gets a key of its own: it then gets a copy (`own`). Other tables (the inputs: Go maps in
-- Karmada, in no order) list those keys in Lua's order.
local MAXARRAY = 67108864
local EMPTY = {}

local function array_key(k)
  return type(k) == "number" and k >= 1 and k < MAXARRAY and floor(k) == k
end

local function record(seq, k)
  if seq[k] == nil then
    local n = #seq + 1
    seq[n], seq[k] = k, n
  end
end

local newindex

local function ordered_meta(seq, own)
  return {__newindex = newindex, __metatable = false, seq = seq, own = own}
end

newindex = function(t, k, v)
  if k == nil then raise("table index is nil") end
  if k ~= k then raise("table index is NaN") end
  rawset(t, k, v)
  -- not array_key(k), inline: appends to a list come through here
  if v ~= nil and (type(k) ~= "number" or k < 1 or k >= MAXARRAY or floor(k) ~= k) then
    local mt = rawgetmeta(t)
    local seq = mt.seq
    if seq[k] ~= nil then return end
    if not mt.own then
      local copy = {}
      for i = 1, #seq do copy[i], copy[seq[i]] = seq[i], i end
      mt = ordered_meta(copy, true)
      rawsetmeta(t, mt)
    end
    record(mt.seq, k)
  end
end

local NOKEYS = ordered_meta(EMPTY, false)  -- the tables of constructors that write no key

-- the marking function of one chunk: `lists` holds its constructors' key lists (source order);
-- mark(t, id, computed) gives t the shared metatable of lists[id] (nil: no key), or, when a
-- listed key is nil in t or the constructor also wrote keys known only at run time
-- ([expr] = v, `computed`), a metatable of its own, those keys after the listed ones
local function marker(lists)
  local metas = {}
  for id = 1, #lists do
    local seq = {}
    for _, k in ipairs(lists[id]) do record(seq, k) end
    metas[id] = ordered_meta(seq, false)
  end
  return function(t, id, computed)
    if type(t) ~= "table" or rawgetmeta(t) ~= nil then return t end
    local mt = id == nil and NOKEYS or metas[id]
    local seq = mt.seq
    local whole = not computed
    for i = 1, #seq do
      if rawget(t, seq[i]) == nil then whole = false; break end
    end
    if not whole then
      local own = {}
      for i = 1, #seq do
        if rawget(t, seq[i]) ~= nil then record(own, seq[i]) end
      end
      for k in next, t do
        if not array_key(k) then record(own, k) end
      end
      mt = ordered_meta(own, true)
    end
    rawsetmeta(t, mt)
    return t
  end
end

local function order_of(t)
  local mt = rawgetmeta(t)
  return mt ~= nil and mt.__newindex == newindex and mt.seq or nil
end

-- the keys of t in gopher-lua's order; with dead, also recorded keys whose value is now nil
local function ordered_keys(t, dead)
  local keys, n, ascending, last = {}, 0, true, 0
  for k in next, t do
    if array_key(k) then
      n = n + 1
      keys[n] = k
      if k < last then ascending = false end
      last = k
    end
  end
  if not ascending then rethrow(pcall(C.sort, keys, less)) end
  local seq = order_of(t)
  if seq ~= nil then
    for i = 1, #seq do
      if dead or rawget(t, seq[i]) ~= nil then
        n = n + 1
        keys[n] = seq[i]
      end
    end
  else
    for k in next, t do
      if not array_key(k) then
        n = n + 1
        keys[n] = k
      end
    end
  end
  return keys, n
end

local function ordered_pairs(t)
  if type(t) ~= "table" then raise("bad argument #1 to 'pairs' (table expected, got " .. type(t) .. ")") end
  local keys, n = ordered_keys(t, false)
  local i = 0
  return function()
    while i < n do
      i = i + 1
      local k = keys[i]
      local v = rawget(t, k)
      if v ~= nil then return k, v end
    end
    return nil
  end, t, nil
end

local function ordered_next(t, k)
  if type(t) ~= "table" then raise("bad argument #1 to 'next' (table expected, got " .. type(t) .. ")") end
  local keys, n = ordered_keys(t, true)
  local start = 1
  if k ~= nil then
    start = nil
    for j = 1, n do
      if keys[j] == k then start = j + 1; break end
    end
    if start == nil then
      if array_key(k) then  -- an array key cleared during the traversal: the next larger one
        start = n + 1
        for j = 1, n do
          if not array_key(keys[j]) or keys[j] > k then start = j; break end
        end
      elseif order_of(t) == nil and rawget(t, k) == nil then
        -- a key of an unmarked table cleared during the traversal: Lua's own order goes on
        local ok, nk, nv = pcall(next, t, k)
        if not ok then raise("invalid key to 'next'") end
        while nk ~= nil and array_key(nk) do nk, nv = next(t, nk) end
        return nk, nv
      else
        raise("invalid key to 'next'")
      end
    end
  end
  for j = start, n do
    local v = rawget(t, keys[j])
    if v ~= nil then return keys[j], v end
  end
  return nil
end

-- ------------------------------------------------------------------ the sandbox

local function readonly(t, name)
  return setmetatable({}, {
    __index = t,
    __newindex = function() raise("the " .. name .. " library cannot be changed") end,
    __metatable = false,
  })
end

-- the string library (also the methods of strings: their metatable's __index is this table)
string.find, string.match, string.gmatch = find, match, gmatch
for _, name in ipairs({"rep", "gsub"}) do
  string[name] = function() raise("The Lua function string." .. name .. " is not supported by Karmada.") end
end
string.dump = nil

local tbl = {}
for k, v in pairs(table) do tbl[k] = v end
tbl.sort = sort

local kube = {}
for _, name in ipairs({"resourceAdd", "accuratePodRequirements", "getPodDependencies", "getResourceQuantity"}) do
  local f = kube_impl[name]
  kube[name] = function(...)
    local r = f(select("#", ...), ...)
    if r.err ~= nil then raise(r.err) end
    return r.value
  end
end
kube = readonly(kube, "kube")

local G = {}
for _, name in ipairs({"assert", "error", "ipairs", "next", "pairs", "select", "tonumber", "tostring",
                       "type", "unpack", "_VERSION"}) do G[name] = _G[name] end
G.pcall = function(f, ...) return checked(pcall(f, ...)) end
-- Lua 5.1 runs an error handler before unwinding, with hooks still off when the error came from
-- the hook: the script's handler never sees a passed limit (it could loop unwatched)
G.xpcall = function(f, h)
  return checked(xpcall(f, function(e)
    if expired ~= nil then return e end
    return h(e)
  end))
end
G.pairs, G.next = ordered_pairs, ordered_next
G.print = function() end
for _, name in ipairs({"collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring",
                       "rawequal", "rawget", "rawset", "setfenv", "setmetatable", "module", "newproxy"}) do
  G[name] = function()
    raise("call function " .. name .. " is not supported in karmada customized resourceinterpreter.")
  end
end
G.string = readonly(string, "string")
G.table = readonly(tbl, "table")
G.math = readonly(math, "math")
G.os = readonly({time = os_time, date = os_date}, "os")
G.package = readonly({loaded = readonly({kube = kube}, "package.loaded"), preload = readonly({}, "package.preload"),
                      loadlib = function() raise("loadlib is not supported") end}, "package")
G.require = function(name)
  if name == "kube" then return kube end
  raise("module '" .. tostring(name) .. "' not found: only 'kube' can be required")
end
G._G = G

local chunks = {}
local chunk_count = 0
local function pack(...) return {n = select("#", ...), ...} end

local function compile(script)
  if byte(script, 1) == 27 then return nil, "luaScript: a precompiled (binary) chunk is refused: give Lua source" end
  return loadstring(script, "=luaScript")
end

local function finish()
  local n = used
  expired, deadline, limit, used = nil, huge, huge, 0
  return n
end

local function run(deadline_, limit_, time_message_, instructions_message_, script, marked, fname, ...)
  expired, deadline, limit, used = nil, deadline_, limit_, 0
  time_message, instructions_message = time_message_, instructions_message_
  local entry = chunks[script]
  if entry == nil then
    local chunk, err = compile(script)
    if chunk == nil then error(err, 0) end
    -- the script with its constructors marked (luaorder.py); should the rewrite not compile,
    -- the script runs as written, in Lua's table order
    local ordered = marked ~= nil and loadstring(marked, "=luaScript") or nil
    entry = {ordered or chunk, ordered ~= nil}
    if chunk_count > 1000 then chunks, chunk_count = {}, 0 end
    chunks[script], chunk_count = entry, chunk_count + 1
  end
  local chunk = entry[1]
  -- the globals are a copy, not a fallback: a global the script sets to nil stays nil
  -- (`error = status.error` hides the builtin, as in gopher-lua's one global table)
  local env = {}
  for k, v in next, G do env[k] = v end
  env._G = env
  setfenv(chunk, env)
  if entry[2] then chunk(marker) else chunk() end
  local f = rawget(env, fname)
  if f == nil then error("not found function " .. fname, 0) end
  if type(f) ~= "function" then error(fname .. " is not a function: " .. type(f), 0) end
  local results = pack(f(...))
  return results, finish()
end

local function syntax(script)
  local _, err = compile(script)
  return err
end

sethook(hook, "", STEP)
return run, finish, syntax, function() collect("collect") end
"""
