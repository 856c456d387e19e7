-- queued → halted (the token was refused): requests not yet sent end as not sent.
-- KEYS: batch. ARGV: reason. Replies the batch's state before.
local st = redis.call('HGET', KEYS[1], 'state')
if st == 'queued' then redis.call('HSET', KEYS[1], 'state', 'halted', 'halt_reason', ARGV[1]) end
return st
