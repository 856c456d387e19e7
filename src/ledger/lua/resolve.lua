-- A person's finding on an unknown request.
-- KEYS: request, batch, resolutions list. ARGV: finding ('created' | 'not_created'), resolution
-- json, now, seq. Replies { 'ok' } | { 'missing' } | { 'state', state }.
--@lifecycle
local rs = redis.call('HGET', KEYS[1], 'state')
if not rs then return { 'missing' } end
if not RESOLVABLE[rs] then return { 'state', rs } end
redis.call('HINCRBY', KEYS[2], 'req_unknown', -1)
redis.call('HSET', KEYS[1], 'resolution', ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[4] .. ' ' .. ARGV[2])
if ARGV[1] == 'created' then
  redis.call('HSET', KEYS[1], 'state', 'reconciled_created')
  redis.call('HINCRBY', KEYS[2], 'req_reconciled_created', 1)
  local unknown = tonumber(redis.call('HGET', KEYS[2], 'req_unknown') or '0')
  local open = tonumber(redis.call('HGET', KEYS[2], 'open') or '0')
  if unknown <= 0 and open == 0 and redis.call('HGET', KEYS[2], 'state') == 'needs_reconciliation' then
    redis.call('HSET', KEYS[2], 'state', 'finished', 'finished_at', ARGV[3])
  end
else
  redis.call('HSET', KEYS[1], 'state', 'reconciled_not_created')
  redis.call('HINCRBY', KEYS[2], 'open', 1)
  local st = redis.call('HGET', KEYS[2], 'state')
  if st == 'needs_reconciliation' or st == 'finished' then
    redis.call('HSET', KEYS[2], 'state', 'queued')
    redis.call('HDEL', KEYS[2], 'finished_at')
  end
end
return { 'ok' }
