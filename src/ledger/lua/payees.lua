-- The payout register's rule, shared by the scripts that read or take payee keys.
-- A register entry is "<batch id>:<request seq>": the request that last took the key (the file
-- line is found in that request's `payees` field when a holder is named).
-- Whether it still holds the key is read from that request's state and its batch's state, by the
-- lifecycle table's sets (HOLDING, PENDING_HOLDS_IN, WINDOWED). Needs PREFIX (the key prefix) and
-- CUTOFF (ISO time: an accepted payout whose key is a fingerprint, "f:…", holds it only when it
-- finished at or after CUTOFF).
-- Returns nil when the key is free, else { request state, batch state, finished_at or '',
-- "<batch>:<seq>:<line>" }.
local function payee_holder(entry, key)
  local b, s = string.match(entry, '^(%x+):(%d+)')
  if not b then return nil end
  local bk = PREFIX .. ':batch:' .. b
  local rk = bk .. ':req:' .. s
  local rs = redis.call('HGET', rk, 'state')
  if not rs then return nil end
  local bs = redis.call('HGET', bk, 'state') or 'missing'
  if rs == 'pending' then
    if not PENDING_HOLDS_IN[bs] then return nil end
  elseif not HOLDING[rs] then
    return nil
  end
  local fin = redis.call('HGET', rk, 'finished_at') or ''
  if WINDOWED[rs] and string.sub(key, 1, 2) == 'f:' and fin < CUTOFF then return nil end
  -- The line of the key's item, from the request's payee keys ("<line>\t<key>\n" per item).
  local line = '0'
  local p = redis.call('HGET', rk, 'payees') or ''
  local at = string.find(p, '\t' .. key .. '\n', 1, true)
  if at then
    local from = at - 1
    while from > 0 and string.sub(p, from, from) ~= '\n' do from = from - 1 end
    line = string.sub(p, from + 1, at - 1)
  end
  return { rs, bs, fin, b .. ':' .. s .. ':' .. line }
end

-- HSET of a flat key/value list into `key`, a thousand values at a time (Lua's unpack has a limit).
local function hset_all(key, list)
  for from = 1, #list, 1000 do
    redis.call('HSET', key, unpack(list, from, math.min(from + 999, #list)))
  end
end
