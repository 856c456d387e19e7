-- awaiting_approval → cancelled: nothing of the batch will be sent, and its payee keys are free.
-- KEYS: batch, approvals list. ARGV: who, note, now, action ('cancelled' | 'expired').
local st = redis.call('HGET', KEYS[1], 'state')
if st ~= 'awaiting_approval' then return { 'state', st or 'missing' } end
redis.call('HSET', KEYS[1], 'state', 'cancelled', 'finished_at', ARGV[3], 'cancel_reason', ARGV[2])
redis.call('RPUSH', KEYS[2], cjson.encode({ action = ARGV[4], by = ARGV[1], at = ARGV[3], note = ARGV[2] }))
return { 'ok' }
