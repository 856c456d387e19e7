-- Stages one withdrawal request of a batch being imported and takes its payee keys, atomically.
-- KEYS: register, request. ARGV: prefix, cutoff, batch id, seq, force ('1': take keys held
-- elsewhere, a person's explicit choice), payees ("<line>\t<key>\n" per item), then the
-- request's field/value pairs.
-- A key held by a payout of another batch (taken since the import checked it) refuses the
-- request: { 'held', key, entry, request state, batch state, finished_at }. Else { 'ok' }.
--@lifecycle
local PREFIX = ARGV[1]
local CUTOFF = ARGV[2]
--@payees
local own = ARGV[3] .. ':'
local entries = {}
for line, key in string.gmatch(ARGV[6], '(%d+)\t([^\n]+)\n') do
  if ARGV[5] ~= '1' then
    local cur = redis.call('HGET', KEYS[1], key)
    if cur and string.sub(cur, 1, #own) ~= own then
      local h = payee_holder(cur, key)
      if h then return { 'held', key, cur, h[1], h[2], h[3] } end
    end
  end
  entries[#entries + 1] = key
  entries[#entries + 1] = own .. ARGV[4] .. ':' .. line
end
hset_all(KEYS[1], entries)
redis.call('HSET', KEYS[2], 'payees', ARGV[6], unpack(ARGV, 7))
return { 'ok' }
