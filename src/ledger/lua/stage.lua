-- Stages one withdrawal request of a batch being imported and takes its payee keys.
-- KEYS: register, request. ARGV: mode ('nx': take only free keys; 'force': take every key, a
-- person's explicit choice), n (pairs of request fields), the request's n field/value pairs, then
-- register key/value pairs (payee key, "<batch>:<seq>:<line>").
-- Replies the payee keys that already had an entry (not taken here): the caller decides each one
-- with take-payee.lua (free, the batch's own, or held by another payout).
local n = tonumber(ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 3, 2 + 2 * n))
local existing = {}
local force = ARGV[1] == 'force'
for i = 3 + 2 * n, #ARGV, 2 do
  if force then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  elseif redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) == 0 then
    existing[#existing + 1] = ARGV[i]
  end
end
return existing
