-- awaiting_approval → queued, by someone other than the importer, before the deadline.
-- KEYS: batch, approvals list. ARGV: approver (as shown), now, approver's user (the person).
-- The importer's person is `imported_by_user` (or, for batches recorded before it, `imported_by`).
-- Replies { 'ok', requests } | { 'state', state } | { 'self', approver } | { 'expired', deadline }.
local st = redis.call('HGET', KEYS[1], 'state')
if st ~= 'awaiting_approval' then return { 'state', st or 'missing' } end
local importer = redis.call('HGET', KEYS[1], 'imported_by_user') or redis.call('HGET', KEYS[1], 'imported_by')
if importer == ARGV[3] or redis.call('HGET', KEYS[1], 'imported_by') == ARGV[1] then return { 'self', ARGV[3] } end
local exp = redis.call('HGET', KEYS[1], 'expires_at')
if exp and exp < ARGV[2] then
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'finished_at', ARGV[2], 'cancel_reason', 'approval expired')
  redis.call('RPUSH', KEYS[2], cjson.encode({ action = 'expired', by = 'bulk-cashout', at = ARGV[2] }))
  return { 'expired', exp }
end
redis.call('HSET', KEYS[1], 'state', 'queued', 'approved_by', ARGV[1], 'approved_at', ARGV[2])
redis.call('RPUSH', KEYS[2], cjson.encode({ action = 'approved', by = ARGV[1], at = ARGV[2] }))
return { 'ok', redis.call('HGET', KEYS[1], 'requests') }
