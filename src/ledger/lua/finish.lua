-- Records a final outcome: from-state → to-state, counted in the batch; the batch is finished
-- (or needs reconciliation) when its last open request is final.
-- KEYS: request, batch, sending set. ARGV: from-state, to-state, now, seq, then field/value pairs.
-- Replies { open requests left, 'ok' }, or { -1, the request's state } when it is not in from-state.
local rs = redis.call('HGET', KEYS[1], 'state')
if rs ~= ARGV[1] then return { -1, rs or 'missing' } end
-- The outcome's own HTTP status, if it has one, replaces that of an earlier try.
redis.call('HDEL', KEYS[1], 'http_status')
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'finished_at', ARGV[3], unpack(ARGV, 5))
redis.call('SREM', KEYS[3], ARGV[4])
redis.call('HINCRBY', KEYS[2], 'req_' .. ARGV[2], 1)
local open = redis.call('HINCRBY', KEYS[2], 'open', -1)
if open == 0 then
  local st = redis.call('HGET', KEYS[2], 'state')
  if st == 'queued' or st == 'halted' then
    local unknown = tonumber(redis.call('HGET', KEYS[2], 'req_unknown') or '0')
    redis.call('HSET', KEYS[2], 'state', unknown > 0 and 'needs_reconciliation' or 'finished', 'finished_at', ARGV[3])
  end
end
return { open, 'ok' }
