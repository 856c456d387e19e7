-- Takes a request for sending: the only way into `sending`, one atomic compare-and-set.
-- KEYS: request, batch, sending set, register. ARGV: now, worker id, seq, the worker's service
-- address ('' = not checked), prefix, cutoff, batch id.
-- Replies: { 'ok', HGETALL of the request as it now is } | { 'missing' } | { 'state', state }
-- | { 'batch', batch state } | { 'service', the batch's service address }
-- | { 'payee', key, entry, holder's state } (a request sent again whose payee another payout holds).
--@lifecycle
local PREFIX = ARGV[5]
local CUTOFF = ARGV[6]
--@payees
local rs = redis.call('HGET', KEYS[1], 'state')
if not rs then return { 'missing' } end
if not CLAIMABLE[rs] then return { 'state', rs } end
local st = redis.call('HGET', KEYS[2], 'state')
if not st then return { 'missing' } end
-- A batch is sent only to the service it was imported for.
local url = redis.call('HGET', KEYS[2], 'service_url')
if ARGV[4] ~= '' and url and url ~= '' and url ~= ARGV[4] then return { 'service', url } end
if rs == 'not_sent' then
  if st ~= 'queued' and st ~= 'finished' and st ~= 'needs_reconciliation' then return { 'batch', st } end
  -- A batch stopped because the token was refused sends nothing more.
  if redis.call('HEXISTS', KEYS[2], 'halt_reason') == 1 then return { 'batch', 'halted' } end
elseif st ~= 'queued' then
  return { 'batch', st }
end
if rs ~= 'pending' then
  -- Sent again after a proven non-creation: the payee keys were released meanwhile, and a later
  -- payout may hold them now. Take them all back, or send nothing.
  local own = ARGV[7] .. ':' .. ARGV[3]
  local payees = redis.call('HGET', KEYS[1], 'payees') or ''
  local entries = {}
  for key in string.gmatch(payees, '%d+\t([^\n]+)\n') do
    local cur = redis.call('HGET', KEYS[4], key)
    if cur and cur ~= own then
      local h = payee_holder(cur, key)
      if h then return { 'payee', key, h[4], h[1] } end
    end
    entries[#entries + 1] = key
    entries[#entries + 1] = own
  end
  hset_all(KEYS[4], entries)
end
if rs == 'not_sent' then
  redis.call('HINCRBY', KEYS[2], 'req_not_sent', -1)
  redis.call('HINCRBY', KEYS[2], 'open', 1)
  redis.call('HSET', KEYS[2], 'state', 'queued')
  redis.call('HDEL', KEYS[2], 'finished_at')
end
redis.call('HSET', KEYS[1], 'state', 'sending', 'sending_at', ARGV[1], 'sent_by', ARGV[2])
redis.call('HDEL', KEYS[1], 'finished_at', 'message', 'http_status')
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('SADD', KEYS[3], ARGV[3])
return { 'ok', redis.call('HGETALL', KEYS[1]) }
