-- A 422 naming some rows: the request (sending) becomes rejected, and a new pending request
-- carries its other items, in one step. The payee keys of those items move to the new request.
-- KEYS: request, batch, sending set, new request, register. ARGV: now, seq, new seq, rowErrors
-- json, message, http status, new body, new wallet lines, new bank lines, new total, new refs,
-- new payees ("<line>\t<key>\n"), batch id.
--@payees
local rs = redis.call('HGET', KEYS[1], 'state')
if rs == 'rejected' then
  local ra = redis.call('HGET', KEYS[1], 'resent_as')
  if ra then return { tonumber(redis.call('HGET', KEYS[2], 'open')), 'ok', ra } end
end
if rs ~= 'sending' then return { -1, rs or 'missing' } end
redis.call('HSET', KEYS[1], 'state', 'rejected', 'finished_at', ARGV[1], 'row_errors', ARGV[4], 'message', ARGV[5],
  'http_status', ARGV[6], 'resent_as', ARGV[3])
redis.call('SREM', KEYS[3], ARGV[2])
redis.call('HINCRBY', KEYS[2], 'req_rejected', 1)
redis.call('HSET', KEYS[4], 'state', 'pending', 'body', ARGV[7], 'wallet_lines', ARGV[8], 'bank_lines', ARGV[9],
  'total', ARGV[10], 'refs', ARGV[11], 'payees', ARGV[12], 'attempts', 0, 'parent', ARGV[2])
local own = ARGV[13] .. ':' .. ARGV[3]
local entries = {}
for key in string.gmatch(ARGV[12], '%d+\t([^\n]+)\n') do
  entries[#entries + 1] = key
  entries[#entries + 1] = own
end
hset_all(KEYS[5], entries)
return { tonumber(redis.call('HGET', KEYS[2], 'open')), 'ok' }
