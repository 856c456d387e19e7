-- A batch refused as a whole whose content is imported again: the refused batch stays as it was
-- (its record, its events, its report folder), and names the batch that follows it, once.
-- KEYS: batch. ARGV: id of the new batch.
-- Replies { 'ok', id of the batch that follows it } (this call's, or an earlier call's when two
-- imports of the content met), or { 'state', state } when the batch is not refused.
local st = redis.call('HGET', KEYS[1], 'state')
if st ~= 'refused' then return { 'state', st or 'missing' } end
redis.call('HSETNX', KEYS[1], 'superseded_by', ARGV[1])
return { 'ok', redis.call('HGET', KEYS[1], 'superseded_by') }
