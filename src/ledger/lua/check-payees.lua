-- Which payee keys are held by a payout of another batch (read only).
-- KEYS: register. ARGV: prefix, cutoff, own batch id, keys joined by "\n".
-- Returns a flat list of (1-based position, entry, request state, batch state, finished_at) for
-- each key held; keys last taken by the own batch are not reported (a batch re-imported after a
-- refusal takes its keys again).
--@lifecycle
local PREFIX = ARGV[1]
local CUTOFF = ARGV[2]
--@payees
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local keys = {}
for key in string.gmatch(ARGV[4], '[^\n]+') do keys[#keys + 1] = key end
local own = ARGV[3] .. ':'
local out = {}
for from = 1, #keys, 1000 do
  local to = math.min(from + 999, #keys)
  local found = redis.call('HMGET', KEYS[1], unpack(keys, from, to))
  for i = from, to do
    local cur = found[i - from + 1]
    if cur and string.sub(cur, 1, #own) ~= own then
      local h = payee_holder(cur, keys[i])
      if h then
        out[#out + 1] = i
        out[#out + 1] = h[4]
        out[#out + 1] = h[1]
        out[#out + 1] = h[2]
        out[#out + 1] = h[3]
      end
    end
  end
end
return out
