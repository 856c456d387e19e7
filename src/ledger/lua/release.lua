-- sending → pending, only when it is proven that nothing reached the service.
-- KEYS: request, sending set. ARGV: seq. Replies 'ok' or the request's state.
local rs = redis.call('HGET', KEYS[1], 'state')
if rs == 'pending' then return 'ok' end
if rs ~= 'sending' then return rs or 'missing' end
redis.call('HSET', KEYS[1], 'state', 'pending')
redis.call('SREM', KEYS[2], ARGV[1])
return 'ok'
