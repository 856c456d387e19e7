-- staging → queued | awaiting_approval | finished (no request): the import's last step, only on a
-- batch still staging (one refused meanwhile, e.g. by the recovery sweep, stays refused).
-- KEYS: batch, approvals list. ARGV: new state, approval event json ('' for none), then the
-- batch's field/value pairs. Replies { 'ok' } or { 'state', state }.
local st = redis.call('HGET', KEYS[1], 'state')
if st ~= 'staging' then return { 'state', st or 'missing' } end
redis.call('HSET', KEYS[1], 'state', ARGV[1], unpack(ARGV, 3))
if ARGV[2] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[2]) end
return { 'ok' }
