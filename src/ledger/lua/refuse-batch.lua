-- staging → refused: nothing of the batch will be sent; its staged requests are deleted (their
-- payee keys are free once the batch is refused). Only a batch still staging is refused.
-- KEYS: batch. ARGV: request key prefix ("<P>:batch:<id>:req:"), then the batch's field/value
-- pairs. Replies { 'ok' } or { 'state', state }.
local st = redis.call('HGET', KEYS[1], 'state')
if st ~= 'staging' then return { 'state', st or 'missing' } end
local last = tonumber(redis.call('HGET', KEYS[1], 'next_seq') or '0')
redis.call('HSET', KEYS[1], 'state', 'refused', 'requests', 0, 'open', 0, 'next_seq', 0, unpack(ARGV, 2))
for seq = 1, last do redis.call('DEL', ARGV[1] .. seq) end
return { 'ok' }
