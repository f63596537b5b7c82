"""The Lua scripts behind RedisState: each protocol step is one script, so it is atomic across processes.

Every key of a job shares the hash tag `{job}`, so a job lives in one Cluster slot and a script may build the
names of a host's queue or a page's edge set from the prefix it is given (they hash to the same slot).

    <prefix>rec        hash: canonical key -> "depth plan progress served crawl body seed hop lease host url"
    <prefix>n          hash: unfinished, queued, refetched, pages (PAGE plans granted)
    <prefix>open       sorted set: processes still adding inputs (the job isn't over while one is), scored
                       by the server time (ms) their claim to be open ends unless renewed (a process that
                       died, or lost Redis, is not waited for once it lapsed)
    <prefix>q:<host>   sorted set: the host's queued keys, scored by depth (shallowest claimed first)
    <prefix>hosts      set: hosts whose queue holds a key
    <prefix>leases     sorted set: in-flight keys, scored by the server time (ms) their lease ends
    <prefix>cut        sorted set: crawlable keys not granted a PAGE plan, scored by depth (for cut_by)
    <prefix>e:<key>    set: the keys a crawled page links to (a shorter path to it moves them up too)
    <prefix>log        list: what each finished claim found (references, results, pages: one JSON array of
                       entries a claim), appended by DONE only while the claim's lease holds: a claim that
                       lost its lease logs nothing

Every script ends with `finish`, which writes the records it changed in one HSET and answers
{counters, {host, queue size, ...}, {changed records}, its own answer}: the caller's view of the job.
Per URL, a crawl costs three scripts: ADD (in a batch of its page's links), CLAIM and DONE.
"""

from __future__ import annotations

_PRELUDE = r"""
local P, MAXD, MAXP = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local REC, CNT, HOSTS, CUT, LEASES = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local QUEUED, FLIGHT, DONE, PAGE = 0, 1, 2, 2
local c = redis.call('HMGET', CNT, 'unfinished', 'queued', 'refetched', 'pages')
local n = {unfinished = tonumber(c[1]) or 0, queued = tonumber(c[2]) or 0, refetched = tonumber(c[3]) or 0,
           pages = tonumber(c[4]) or 0}
local recs, dirty, touched = {}, {}, {}

local function get(key)
  local r = recs[key]
  if r then return r end
  local s = redis.call('HGET', REC, key)
  if not s then return nil end
  local d, plan, prog, served, crawl, body, seed, hop, lease, host, url =
    string.match(s, '^(%d+) (%d) (%d) (%-?%d) (%d) (%d) (%d) (%d+) (%d+) (%S+) (.*)$')
  r = {key = key, depth = tonumber(d), plan = tonumber(plan), prog = tonumber(prog), served = tonumber(served),
       crawl = tonumber(crawl), body = tonumber(body), seed = tonumber(seed), hop = tonumber(hop),
       lease = tonumber(lease), host = host, url = url}
  recs[key] = r
  return r
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function claim_of(r)
  return {r.key, r.url, r.host, r.depth, r.plan, r.seed}
end

local function push(r)
  redis.call('ZADD', P .. 'q:' .. r.host, r.depth, r.key)
  touched[r.host] = true
end

-- the plan r's references ask for, within the limits; a PAGE plan, once granted, is kept
local function wanted(r)
  if r.plan == PAGE then return PAGE end
  if r.seed == 1 or (r.crawl == 1 and (MAXD < 0 or r.depth <= MAXD) and (MAXP < 0 or n.pages < MAXP)) then
    n.pages = n.pages + 1
    return PAGE
  end
  return r.body
end

local function raise(r, changed)
  local w = wanted(r)
  if w <= r.plan then return end
  r.plan = w
  dirty[r.key] = true
  changed[#changed + 1] = claim_of(r)
  if r.prog == DONE and r.served < w then  -- fetched for less: once more, for the new plan
    n.refetched = n.refetched + 1
    n.queued = n.queued + 1
    n.unfinished = n.unfinished + 1
    r.prog = QUEUED
    push(r)
  end
end

-- a shorter path to r: r and everything crawled below it move up (no refetch: the edges are kept)
local function lower(r, depth, changed)
  local work = {{r.key, depth}}
  while #work > 0 do
    local item = table.remove(work)
    local x, d = get(item[1]), item[2]
    if x and d < x.depth then
      x.depth = d
      dirty[x.key] = true
      if x.prog == QUEUED then push(x) end  -- ZADD moves it to its new depth
      raise(x, changed)
      for _, kid in ipairs(redis.call('SMEMBERS', P .. 'e:' .. x.key)) do
        work[#work + 1] = {kid, d + x.hop}
      end
    end
  end
end

local function update(r, depth, crawl, body, seed, changed)
  r.crawl, r.body, r.seed = math.max(r.crawl, crawl), math.max(r.body, body), math.max(r.seed, seed)
  dirty[r.key] = true
  if depth < r.depth then lower(r, depth, changed) else raise(r, changed) end
end

local function new(key, url, host, depth, crawl, body, seed)
  local r = {key = key, url = url, host = host, depth = depth, plan = 0, prog = QUEUED, served = -1,
             crawl = crawl, body = body, seed = seed, hop = 1, lease = 0}
  recs[key] = r
  dirty[key] = true
  return r
end

-- a lease past its deadline: the worker holding it is gone (or too slow), the key is queued again
local function reclaim(now)
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', LEASES, '-inf', now, 'LIMIT', 0, 100)) do
    redis.call('ZREM', LEASES, key)
    local r = get(key)
    if r and r.prog == FLIGHT then
      r.prog = QUEUED
      n.queued = n.queued + 1
      dirty[key] = true
      push(r)
    end
  end
end

local function finish(answer)
  local args, views = {}, {}
  for key in pairs(dirty) do
    local r = recs[key]
    args[#args + 1] = key
    args[#args + 1] = string.format('%d %d %d %d %d %d %d %d %d %s %s', r.depth, r.plan, r.prog, r.served,
                                    r.crawl, r.body, r.seed, r.hop, r.lease, r.host, r.url)
    if #args >= 1000 then redis.call('HSET', REC, unpack(args)); args = {} end
    if r.crawl == 1 then
      if r.plan < PAGE then redis.call('ZADD', CUT, r.depth, key) else redis.call('ZREM', CUT, key) end
    end
    views[#views + 1] = {key, r.url, r.depth, r.plan, r.prog, r.served}
  end
  if #args > 0 then redis.call('HSET', REC, unpack(args)) end
  redis.call('HSET', CNT, 'unfinished', n.unfinished, 'queued', n.queued, 'refetched', n.refetched,
             'pages', n.pages)
  local sizes = {}
  for host in pairs(touched) do
    local size = redis.call('ZCARD', P .. 'q:' .. host)
    if size > 0 then redis.call('SADD', HOSTS, host) else redis.call('SREM', HOSTS, host) end
    sizes[#sizes + 1] = host
    sizes[#sizes + 1] = size
  end
  local cut_depth, cut_pages = 0, 0
  if MAXD >= 0 then
    cut_depth = redis.call('ZCOUNT', CUT, '(' .. MAXD, '+inf')
    cut_pages = redis.call('ZCOUNT', CUT, '-inf', MAXD)
  else
    cut_pages = redis.call('ZCARD', CUT)
  end
  local opened = redis.call('ZCOUNT', P .. 'open', now_ms(), '+inf')
  return {{n.unfinished, n.queued, n.refetched, cut_depth, cut_pages, opened}, sizes, views, answer}
end
"""

# ARGV: prefix, max_depth, max_pages, parent key ('' for none), hop, then the found links as one JSON array of
# [key, url, host, depth, crawl, body, seed] (one argument: far less to encode than seven a link).
# Answer: the claims of the records that entered a queue.
ADD = _PRELUDE + r"""
local parent, hop, changed, kids = ARGV[4], tonumber(ARGV[5]), {}, {}
local page = parent ~= '' and get(parent) or nil
if page and page.hop ~= hop then
  page.hop = hop
  dirty[parent] = true
end
-- the caller took the page's depth from its own view, which another process may have lowered since
local floor = page and page.depth + hop or nil
for _, f in ipairs(cjson.decode(ARGV[6])) do
  local key, depth, crawl, body, seed = f[1], f[4], f[5], f[6], f[7]
  if floor and floor < depth then depth = floor end
  local r = get(key)
  if not r then  -- the check and the mark of dedup at enqueue, in one step
    r = new(key, f[2], f[3], depth, crawl, body, seed)
    r.plan = wanted(r)
    n.unfinished = n.unfinished + 1
    n.queued = n.queued + 1
    push(r)
    changed[#changed + 1] = claim_of(r)
  -- (as in MemoryState: a PAGE record's flags change nothing, so they are not saved)
  elseif depth < r.depth or seed > r.seed or r.plan ~= PAGE and (crawl > r.crawl or body > r.body) then
    update(r, depth, crawl, body, seed, changed)
  end
  if page then kids[#kids + 1] = key end
end
for i = 1, #kids, 500 do
  redis.call('SADD', P .. 'e:' .. parent, unpack(kids, i, math.min(i + 499, #kids)))
end
return finish(changed)
"""

# ARGV: prefix, max_depth, max_pages, host, lease (ms). Answer: {claim, lease id} or nil.
CLAIM = _PRELUDE + r"""
local host, now = ARGV[4], now_ms()
reclaim(now)
touched[host] = true
local top = redis.call('ZPOPMIN', P .. 'q:' .. host)
if #top == 0 then return finish(false) end
local r = get(top[1])
r.prog = FLIGHT
r.lease = r.lease + 1
n.queued = n.queued - 1
dirty[r.key] = true
redis.call('ZADD', LEASES, now + tonumber(ARGV[5]), r.key)
return finish({claim_of(r), r.lease})
"""

# ARGV: prefix, max_depth, max_pages, key, lease id, the claim's plan, served, and what it found for the log
# ('' for nothing). Answer: 1, or 0 for a lease that was lost (it expired and another claim holds the key
# now): what it found is dropped.
DONE = _PRELUDE + r"""
local r = get(ARGV[4])
if not r or r.lease ~= tonumber(ARGV[5]) or r.prog == DONE then return finish(0) end
if r.prog == FLIGHT then
  redis.call('ZREM', LEASES, r.key)
else  -- its lease ran out and it was queued again, but nobody took it yet: it is done after all
  redis.call('ZREM', P .. 'q:' .. r.host, r.key)
  touched[r.host] = true
  n.queued = n.queued - 1
end
-- a fetch made for a plan satisfies it, whatever it got: asking again the same way would get the same
r.served = math.max(r.served, tonumber(ARGV[6]), tonumber(ARGV[7]))
dirty[r.key] = true
if ARGV[8] ~= '' then redis.call('RPUSH', P .. 'log', ARGV[8]) end
if r.plan > r.served then  -- the plan rose while it was in flight: fetch it again, for the new plan
  n.refetched = n.refetched + 1
  n.queued = n.queued + 1
  r.prog = QUEUED
  push(r)
else
  r.prog = DONE
  n.unfinished = n.unfinished - 1
end
return finish(1)
"""

# ARGV: prefix, max_depth, max_pages, the found link's 7 fields, then the key of the claim that redirected to
# it ('' for none). Answer: 1 when the key was new. The redirect is an edge of no hop: the end of a redirect
# is as deep as its start, now and after a shorter path to the start is found.
ADOPT = _PRELUDE + r"""
local key, depth = ARGV[4], tonumber(ARGV[7])
local crawl, body, seed = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local start = ARGV[11] ~= '' and get(ARGV[11]) or nil
if start then
  if start.depth < depth then depth = start.depth end  -- the claim's depth may be older than the record's
  start.hop = 0
  dirty[start.key] = true
  redis.call('SADD', P .. 'e:' .. start.key, key)
end
local r = get(key)
if r then
  update(r, depth, crawl, body, seed, {})
  return finish(0)
end
r = new(key, ARGV[5], ARGV[6], depth, crawl, body, seed)
r.plan, r.served, r.prog = PAGE, PAGE, DONE
n.pages = n.pages + 1
return finish(1)
"""

# ARGV: prefix, max_depth, max_pages, lease (ms), then key, lease id pairs: the leases still held move on.
# Expired leases of other workers are reclaimed on the way. Answer: how many were renewed.
RENEW = _PRELUDE + r"""
local now = now_ms()
reclaim(now)
local renewed = 0
for i = 5, #ARGV, 2 do
  local r = get(ARGV[i])
  if r and r.prog == FLIGHT and r.lease == tonumber(ARGV[i + 1]) then
    redis.call('ZADD', LEASES, 'XX', now + tonumber(ARGV[4]), r.key)
    renewed = renewed + 1
  end
end
return finish(renewed)
"""

# ARGV: prefix, max_depth, max_pages, most hosts to answer, then this process's sources still open ('' for none)
# and how long (ms) they stay open unless renewed. Reclaims expired leases, renews the sources and answers the
# sizes of (a sample of) the hosts with queued work: how a process learns of work that others queued.
SWEEP = _PRELUDE + r"""
local now = now_ms()
reclaim(now)
redis.call('ZREMRANGEBYSCORE', P .. 'open', '-inf', now)
if ARGV[5] ~= '' then redis.call('ZADD', P .. 'open', now + tonumber(ARGV[6]), ARGV[5]) end
for _, host in ipairs(redis.call('SRANDMEMBER', HOSTS, tonumber(ARGV[4]))) do touched[host] = true end
return finish(0)
"""

# KEYS: the job's open sources. ARGV: a source's id, how long (ms) it stays open unless renewed; a lease of 0
# closes it. Answer: how many sources are open.
OPEN = r"""
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(ARGV[2]) > 0 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return redis.call('ZCOUNT', KEYS[1], now, '+inf')
"""
