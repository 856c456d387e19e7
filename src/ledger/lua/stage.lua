-- Stages one withdrawal request of a batch being imported and takes its payee keys.
-- KEYS: register, request. ARGV: mode ('nx': take only free keys; 'force': take every key, a
-- person's explicit choice), "<batch>:<seq>" (the register's entry for every key), the request's payee keys
-- ("<line>\t<key>\n" per item), then the request's other field/value pairs.
-- Replies a flat list of (payee key, entry) for the keys that already had an entry (not taken
-- here): the caller decides each one with take-payee.lua (free, the batch's own, or held).
redis.call('HSET', KEYS[2], 'payees', ARGV[3], unpack(ARGV, 4))
local existing = {}
local force = ARGV[1] == 'force'
for key in string.gmatch(ARGV[3], '%d+\t([^\n]+)\n') do
  local entry = ARGV[2]
  if force then
    redis.call('HSET', KEYS[1], key, entry)
  elseif redis.call('HSETNX', KEYS[1], key, entry) == 0 then
    existing[#existing + 1] = key
    existing[#existing + 1] = entry
  end
end
return existing
