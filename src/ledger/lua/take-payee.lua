-- Takes one payee key that already has an entry, when the payout that took it no longer holds it
-- (or it is the same batch's, imported again after a refusal).
-- KEYS: register. ARGV: prefix, cutoff, payee key, new entry ("<batch>:<seq>").
-- Replies { 'ok' } or { 'held', "<batch>:<seq>:<line>" of the holder, request state, batch state, finished_at }.
--@lifecycle
local PREFIX = ARGV[1]
local CUTOFF = ARGV[2]
--@payees
local cur = redis.call('HGET', KEYS[1], ARGV[3])
local own = string.match(ARGV[4], '^(%x+:)')
if cur and string.sub(cur, 1, #own) ~= own then
  local h = payee_holder(cur, ARGV[3])
  if h then return { 'held', h[4], h[1], h[2], h[3] } end
end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
return { 'ok' }
