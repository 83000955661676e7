// The Lua scripts the Redis store runs, each with what it promises: every
// check-and-write a replica needs to be atomic happens inside one of them.

// Appends ARGV[3 .. 2 + ARGV[2]] (writes) to the log if it still holds
// ARGV[1] entries: the replica's view was whole when it decided. Returns
// the new length, or -1 - the length (another replica wrote first, or the
// log was lost). Lengths and places count every entry ever appended:
// KEYS[3] holds how many were dropped from the front. The ARGV after the
// writes come in threes, one per record created, for the current
// generation's keys: its JSON, pushed to its account's list (KEYS[6] on);
// the digest of its secret (a token's, else ''), indexed to its account in
// KEYS[4]; its account, listed in KEYS[5].
// @note Each script that writes starts `#!lua`: Redis 7 then refuses it
// whole when out of memory, where it could fail halfway.
export const APPEND = `#!lua
local base = tonumber(redis.call('GET', KEYS[3]) or '0')
local length = base + redis.call('LLEN', KEYS[1])
if length ~= tonumber(ARGV[1]) then return -1 - length end
local n = tonumber(ARGV[2])
for i = 3, 2 + n do redis.call('RPUSH', KEYS[1], ARGV[i]) end
local list = 6
for i = 3 + n, #ARGV, 3 do
  redis.call('RPUSH', KEYS[list], ARGV[i])
  if ARGV[i + 1] ~= '' then redis.call('HSET', KEYS[4], ARGV[i + 1], ARGV[i + 2]) end
  redis.call('SADD', KEYS[5], ARGV[i + 2])
  list = list + 1
end
return base + redis.call('LLEN', KEYS[1])
`

// Appends the whole state ARGV[2] if the log still holds ARGV[1] entries,
// as APPEND does; with ARGV[1] empty, wherever the log ends (a state that
// owes nothing to what came before it: a reset). With ARGV[5] '1', wherever
// the log ends too unless an entry after ARGV[1] changed the scenarios (a
// state that kept the ones it was decided on, a restore: it owes them to
// those entries) or is a state (a compaction holds them too); a false
// match of a record's text costs a retry, never a lost change. With a
// generation ARGV[3] other than the current one (KEYS[4]), the state's
// records are that generation's keys, written just before with an expiry
// (a replica that stops halfway leaves nothing for good): they are kept,
// and the previous generation's go. A state makes the entries before the
// previous state useless, so they go too: the log holds what a replica
// that is one state behind still needs, and no more.
// KEYS[5] lists the new generation's accounts, KEYS[6] indexes its
// tokens, KEYS[7] says that it was written whole; ARGV[4] is the prefix of
// every generation's keys. The lists of the previous generation that sit
// under their accounts' own hash tags (other slots of a Redis Cluster) go
// after the state is stored: the generation is added to KEYS[8], with the
// set that names its accounts, for the replica that drops them. KEYS[9]
// counts the new generation's records (`limits.records`). ARGV[6] is the
// generation the appending replica follows: the one left when KEYS[4] is
// gone (deleted by hand).
export const APPEND_STATE = `#!lua
local base = tonumber(redis.call('GET', KEYS[3]) or '0')
local length = base + redis.call('LLEN', KEYS[1])
if ARGV[1] ~= '' and length ~= tonumber(ARGV[1]) then
  local from = tonumber(ARGV[1]) - base
  if ARGV[5] ~= '1' or from < 0 or length < tonumber(ARGV[1]) then return -1 - length end
  for _, entry in ipairs(redis.call('LRANGE', KEYS[1], from, -1)) do
    if string.sub(entry, 1, 9) == '{"state":' or string.find(entry, '"scenarios":', 1, true) or string.find(entry, '"taken":', 1, true) then
      return -1 - length
    end
  end
end
local gen = ARGV[3]
local old = redis.call('GET', KEYS[4])
if not old and ARGV[6] and ARGV[6] ~= '' and ARGV[6] ~= gen then old = ARGV[6] end
if gen ~= '' and old ~= gen then
  if redis.call('EXISTS', KEYS[7]) == 0 then
    return redis.error_reply('CTSEXPIRED the records written for this state expired before it was stored')
  end
  local prefix = ARGV[4]
  for _, account in ipairs(redis.call('SMEMBERS', KEYS[5])) do
    redis.call('PERSIST', prefix .. gen .. ':a:' .. account)
  end
  redis.call('PERSIST', KEYS[5])
  redis.call('PERSIST', KEYS[6])
  redis.call('PERSIST', KEYS[7])
  if KEYS[9] then redis.call('PERSIST', KEYS[9]) end
  if old then
    local accounts = prefix .. old .. ':accounts'
    for _, account in ipairs(redis.call('SMEMBERS', accounts)) do
      redis.call('UNLINK', prefix .. old .. ':a:' .. account)
    end
    redis.call('UNLINK', prefix .. old .. ':tokens', prefix .. old .. ':written', prefix .. old .. ':records')
    redis.call('SADD', KEYS[8], old)
  end
  redis.call('SET', KEYS[4], gen)
end
local previous = tonumber(redis.call('GET', KEYS[2]) or '-1')
if previous > base then
  redis.call('LTRIM', KEYS[1], previous - base, -1)
  base = previous
  redis.call('SET', KEYS[3], base)
end
redis.call('SET', KEYS[2], length)
redis.call('RPUSH', KEYS[1], ARGV[2])
return base + redis.call('LLEN', KEYS[1])
`

// Adds ARGV[3 ..] to KEYS[1] with the command ARGV[2] (RPUSH, SADD, HSET)
// and gives the key the expiry ARGV[1] (ms), in one: a new generation's
// key is never left without one.
export const ADD_EXPIRING = `#!lua
redis.call(ARGV[2], KEYS[1], unpack(ARGV, 3))
return redis.call('PEXPIRE', KEYS[1], ARGV[1])
`

// Reads one account's records (the list KEYS[5]) of the generation ARGV[2]
// with the log's entries from place ARGV[1] on, as of one moment: the
// entries a replica applies before it adds the records. Answers 'moved'
// when another generation is current, 'behind' when more than ARGV[3]
// entries follow the place (the replica reads those first); 'ok' is
// followed by how many entries come, and whether the list exists.
export const LOAD = `#!lua flags=no-writes
if redis.call('GET', KEYS[4]) ~= ARGV[2] then return { 'moved' } end
local base = tonumber(redis.call('GET', KEYS[2]) or '0')
local length = base + redis.call('LLEN', KEYS[1])
local from = tonumber(ARGV[1])
if from < base or from > length or length - from > tonumber(ARGV[3]) then return { 'behind' } end
local out = { 'ok', tostring(length - from), tostring(redis.call('EXISTS', KEYS[5])) }
for _, entry in ipairs(redis.call('LRANGE', KEYS[1], from - base, -1)) do out[#out + 1] = entry end
for _, record in ipairs(redis.call('LRANGE', KEYS[5], 0, -1)) do out[#out + 1] = record end
return out
`

// Finds the account of the token whose secret's digest is ARGV[2] in the
// index KEYS[2] of the generation ARGV[1], as of one moment: 'moved' when
// another generation is current (KEYS[1]); else 'ok' and the account, or
// 'ok', '', whether the index exists at all, and whether it holds the
// field '' that a generation's index begins with.
export const LOOKUP = `#!lua flags=no-writes
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return { 'moved' } end
local account = redis.call('HGET', KEYS[2], ARGV[2])
if account then return { 'ok', account } end
return { 'ok', '', tostring(redis.call('EXISTS', KEYS[2])), tostring(redis.call('HEXISTS', KEYS[2], '')) }
`

// Reads up to ARGV[2] entries from place ARGV[1] on, after four items: the
// count of entries dropped from the front (is the place still held?), the
// log's length, the place of its last whole state and the mark of the entry
// just before the place (is it still the log the reader followed, or one
// that Redis lost and began again, perhaps as long?).
export const READ = `#!lua flags=no-writes
local base = tonumber(redis.call('GET', KEYS[2]) or '0')
local length = base + redis.call('LLEN', KEYS[1])
local last = redis.call('GET', KEYS[3]) or '-1'
local head = { tostring(base), tostring(length), last, '' }
local from = tonumber(ARGV[1]) - base
if from < 0 or from > length - base then return head end
if from > 0 then
  local before = redis.call('LINDEX', KEYS[1], from - 1) or ''
  head[4] = string.match(string.sub(before, -100), '"by":"([^"]*)"}$') or ''
end
local entries = redis.call('LRANGE', KEYS[1], from, from + tonumber(ARGV[2]) - 1)
for i = 1, #entries do head[i + 4] = entries[i] end
return head
`

// The log's length, counting the entries dropped from its front.
export const LENGTH = `#!lua flags=no-writes
return tonumber(redis.call('GET', KEYS[2]) or '0') + redis.call('LLEN', KEYS[1])
`

// The place of the log's last whole state (KEYS[2]); when the mark is
// gone, found again as the newest entry of the log (KEYS[1], KEYS[3] its
// dropped count) that is a whole state, and marked. Nil when there is none.
export const REMARK = `#!lua
local marked = redis.call('GET', KEYS[2])
if marked then return marked end
local base = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
for i = redis.call('LLEN', KEYS[1]) - 1, 0, -1 do
  local entry = redis.call('LINDEX', KEYS[1], i)
  if string.sub(entry, 1, 9) == '{"state":' then
    redis.call('SET', KEYS[2], base + i)
    return tostring(base + i)
  end
end
return false
`

// Appends journal entries (ARGV[2..]) and keeps the newest ARGV[1].
export const JOURNAL = `#!lua
for i = 2, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[1]), -1)
return 1
`

// Reads what a replica checks before it follows the log: the type of each
// key (KEYS), and the first bytes of those that hold a string.
export const INSPECT = `#!lua flags=no-writes
local out = {}
for i = 1, #KEYS do
  local kind = redis.call('TYPE', KEYS[i])['ok']
  out[#out + 1] = kind
  out[#out + 1] = kind == 'string' and string.sub(redis.call('GET', KEYS[i]), 1, 40) or ''
end
return out
`

// The fleet's options (KEYS[1]), kept first by the replica that finds none:
// all of them (ARGV[1]) when the log (KEYS[2], KEYS[3] its dropped count)
// is empty, as it seeds it; its rules alone (ARGV[2]) when the log holds
// what others seeded. Returns the options kept.
export const JOIN = `#!lua
local held = redis.call('GET', KEYS[1])
if held then return held end
local length = (tonumber(redis.call('GET', KEYS[3]) or '0') or 0) + redis.call('LLEN', KEYS[2])
local kept = ARGV[length == 0 and 1 or 2]
redis.call('SET', KEYS[1], kept)
return kept
`

// Keeps a snapshot: its description ARGV[2] and data ARGV[3] under the
// name ARGV[1] (KEYS[1], KEYS[2]), the name listed in the order taken
// (KEYS[3]); 0, keeping nothing, when it is new and ARGV[4] are kept.
export const TAKE_SNAPSHOT = `#!lua
local new = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0
if new and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
if new then redis.call('RPUSH', KEYS[3], ARGV[1]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
`

// Counts a hit in a fixed window: INCR, and the window's end as its expiry.
export const HIT = `#!lua
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
`

// Appends ARGV[2 ..] (writes) to one account's list of records and writes
// (KEYS[1], under the account's own hash tag) if it still holds ARGV[1]
// entries: this replica's view of the account was whole when it decided.
// Returns the new length, or -1 - the length. A list is never empty (its
// first entry names its account and generation): one gone (a reset or a
// restore left its generation, or Redis lost it) answers -1.
export const ACCOUNT_APPEND = `#!lua
local length = redis.call('LLEN', KEYS[1])
if length ~= tonumber(ARGV[1]) then return -1 - length end
for i = 2, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
return length + #ARGV - 1
`

// Reads one account's list (KEYS[1]) from place ARGV[1] on, after its
// length, as of one moment.
export const ACCOUNT_READ = `#!lua flags=no-writes
local length = redis.call('LLEN', KEYS[1])
local out = { tostring(length) }
for _, entry in ipairs(redis.call('LRANGE', KEYS[1], tonumber(ARGV[1]), -1)) do out[#out + 1] = entry end
return out
`

// Reserves up to ARGV[1] records of the ARGV[2] that `limits.records`
// allows, on the count of a generation's records (KEYS[1]: those stored,
// and those replicas reserved and have not used yet): never more than an
// eighth of the room left (at least one), so that near the limit no replica
// holds room that another needs; with ARGV[3] '1', all of them or none.
// Returns what it reserved (0: none is left) and the count; -1 when the
// count is gone, -2 when the generation ARGV[4] is no longer the current
// one (KEYS[2]): the write is decided again.
export const RESERVE = `#!lua
if redis.call('GET', KEYS[2]) ~= ARGV[4] then return { -2, 0 } end
local held = redis.call('GET', KEYS[1])
if not held then return { -1, 0 } end
local count = tonumber(held)
local room = tonumber(ARGV[2]) - count
local grant = math.min(tonumber(ARGV[1]), math.max(math.min(room, 1), math.floor(room / 8)))
if ARGV[3] == '1' then grant = room >= tonumber(ARGV[1]) and tonumber(ARGV[1]) or 0 end
if grant <= 0 then return { 0, count } end
redis.call('INCRBY', KEYS[1], grant)
return { grant, count + grant }
`

// Adds ARGV[1] (less than 0: gives back) to the count of a generation's
// records (KEYS[1]), if that count is still there: a generation left has
// none, and no count may begin again from nothing.
export const COUNT_RECORDS = `#!lua
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`

// Indexes tokens (ARGV[2 ..], digest and account in pairs) in KEYS[2], the
// index of the generation ARGV[1], if that generation is current (KEYS[1])
// and its index holds the field '' it began with: 1; 0 when another is
// current (the write is decided again), -1 when Redis lost the index (it
// is not made anew, which would hide the loss).
export const INDEX = `#!lua
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('HEXISTS', KEYS[2], '') == 0 then return -1 end
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
return 1
`

// Sets the key naming the current generation (KEYS[1]) again, when it is
// gone (deleted by hand), to the generation of the log's (KEYS[2]) last
// whole state, whose place KEYS[3] marks (KEYS[4]: entries dropped from the
// log's front): every script that checks a generation reads that key.
// Returns the current generation, or false when the log names none.
export const REGAIN_GEN = `#!lua
local current = redis.call('GET', KEYS[1])
if current then return current end
local mark = tonumber(redis.call('GET', KEYS[3]) or '')
if not mark then return false end
local base = tonumber(redis.call('GET', KEYS[4]) or '0')
local entry = redis.call('LINDEX', KEYS[2], mark - base)
if not entry then return false end
local ok, decoded = pcall(cjson.decode, entry)
if not ok or type(decoded) ~= 'table' or type(decoded.gen) ~= 'string' then return false end
redis.call('SET', KEYS[1], decoded.gen)
return decoded.gen
`

// Marks the lists of the generation ARGV[1] as lasting (KEYS[2]) if it is
// still the current one (KEYS[1]): a mark for one a reset left would stay.
export const MARK_PERSISTED = `#!lua
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], '1')
return 1
`
