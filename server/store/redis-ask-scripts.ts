import { z } from "zod";
import type { ReplyClaim } from "../broker/ports.ts";
import { Count, Done, Flag, flatRows } from "./redis-scripts.ts";

/**
 * The Lua scripts of the Redis ask store (redis.ts, which lays out the keys they use), each with the
 * schema of its reply. ARGV[1] is always the key prefix.
 */

const PUT = `
local p, id, status, chat = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local created, updated, body = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local key = p .. 'ask:' .. id
local old = redis.call('HMGET', key, 'status', 'chat')
if old[1] and old[1] ~= 'pending' then return 0 end
if old[1] then
  redis.call('ZREM', p .. 'status:' .. old[1], id)
  if old[2] and old[2] ~= '' and old[2] ~= chat then
    redis.call('ZREM', p .. 'chat-asks:' .. old[2], id)
    redis.call('SREM', p .. 'chat-pending:' .. old[2], id)
    local oldOwner = redis.call('HGET', p .. 'chats', old[2])
    if oldOwner then redis.call('ZREM', p .. 'owner-asks:' .. oldOwner, id) end
  end
end
redis.call('HSET', key, 'status', status, 'chat', chat, 'updated', updated, 'body', body)
redis.call('ZADD', p .. 'status:' .. status, updated, id)
redis.call('ZADD', p .. 'history', updated, id)
if status == 'pending' then
  redis.call('ZADD', p .. 'pending', created, id)
else
  redis.call('HDEL', key, 'claimed')
  redis.call('ZREM', p .. 'pending', id)
  redis.call('ZADD', p .. 'terminal', updated, id)
end
if chat ~= '' then
  redis.call('ZADD', p .. 'chat-asks:' .. chat, updated, id)
  if status == 'pending' then redis.call('SADD', p .. 'chat-pending:' .. chat, id) else redis.call('SREM', p .. 'chat-pending:' .. chat, id) end
  local owner = redis.call('HGET', p .. 'chats', chat)
  if owner then redis.call('ZADD', p .. 'owner-asks:' .. owner, updated, id) end
end
return 1
`;

/** Newest first from the narrowest set; the other filters are checked per ask until `limit` are found. */
const LIST = `
local p, status, chat, owner, limit = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local base, ownerChecked = p .. 'history', false
if chat ~= '' then base = p .. 'chat-asks:' .. chat
elseif owner ~= '' then base, ownerChecked = p .. 'owner-asks:' .. owner, true
elseif status ~= '' then base = p .. 'status:' .. status end
local out, found, start = {}, 0, 0
while found < limit do
  local ids = redis.call('ZREVRANGE', base, start, start + 499)
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    local row = redis.call('HMGET', p .. 'ask:' .. id, 'status', 'chat', 'body')
    local keep = row[3] and (status == '' or row[1] == status)
    if keep and owner ~= '' and not ownerChecked then
      keep = row[2] ~= '' and redis.call('HGET', p .. 'chats', row[2]) == owner
    end
    if keep then
      out[#out + 1] = id
      out[#out + 1] = row[3]
      found = found + 1
      if found >= limit then break end
    end
  end
  start = start + 500
end
return out
`;

const PENDING = `
local p = ARGV[1]
local out = {}
for _, id in ipairs(redis.call('ZRANGE', p .. 'pending', 0, -1)) do
  local body = redis.call('HGET', p .. 'ask:' .. id, 'body')
  if body then
    out[#out + 1] = id
    out[#out + 1] = body
  end
end
return out
`;

const CLAIM = `
local key = ARGV[1] .. 'ask:' .. ARGV[2]
local row = redis.call('HMGET', key, 'status', 'claimed')
if row[1] == 'pending' and not row[2] then
  redis.call('HSET', key, 'claimed', ARGV[3])
  return 1
end
return 0
`;

const RELEASE = `
local key = ARGV[1] .. 'ask:' .. ARGV[2]
if redis.call('HGET', key, 'claimed') == ARGV[3] then redis.call('HDEL', key, 'claimed') end
return 0
`;

/**
 * The first owner wins. A chat recorded now brings its earlier asks into its owner's listing; a view
 * time only moves forward. ARGV[5] = '1' also notes a view at ARGV[4].
 */
const RECORD_OWNER = `
local p, chat, user, at, viewed = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
if redis.call('HSETNX', p .. 'chats', chat, user) == 1 then
  redis.call('ZADD', p .. 'chat-seen', at, chat)
  local asks = p .. 'chat-asks:' .. chat
  if redis.call('EXISTS', asks) == 1 then
    local owned = p .. 'owner-asks:' .. user
    redis.call('ZUNIONSTORE', owned, 2, owned, asks, 'AGGREGATE', 'MAX')
  end
elseif viewed == '1' then
  redis.call('ZADD', p .. 'chat-seen', 'GT', at, chat)
end
return redis.call('HGET', p .. 'chats', chat)
`;

/** A title only for a chat whose owner is recorded, atomically. */
const TITLE_CHAT = `
local p, chat, title = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HEXISTS', p .. 'chats', chat) == 1 then redis.call('HSET', p .. 'chat-titles', chat, title) end
return 0
`;

const PRUNE = `
local p, cutoff, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local asks = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', p .. 'terminal', '-inf', '(' .. cutoff, 'LIMIT', 0, limit)) do
  local key = p .. 'ask:' .. id
  local row = redis.call('HMGET', key, 'status', 'chat')
  redis.call('DEL', key)
  redis.call('ZREM', p .. 'terminal', id)
  redis.call('ZREM', p .. 'history', id)
  if row[1] then redis.call('ZREM', p .. 'status:' .. row[1], id) end
  if row[2] and row[2] ~= '' then
    redis.call('ZREM', p .. 'chat-asks:' .. row[2], id)
    local owner = redis.call('HGET', p .. 'chats', row[2])
    if owner then redis.call('ZREM', p .. 'owner-asks:' .. owner, id) end
  end
  asks = asks + 1
end
local chats, skipped = 0, 0
while chats < limit do
  local candidates = redis.call('ZRANGEBYSCORE', p .. 'chat-seen', '-inf', '(' .. cutoff, 'LIMIT', skipped, 500)
  if #candidates == 0 then break end
  for _, chat in ipairs(candidates) do
    if redis.call('SCARD', p .. 'chat-pending:' .. chat) > 0 then
      skipped = skipped + 1
    else
      local owner = redis.call('HGET', p .. 'chats', chat)
      redis.call('HDEL', p .. 'chats', chat)
      redis.call('HDEL', p .. 'chat-titles', chat)
      redis.call('ZREM', p .. 'chat-seen', chat)
      if owner then
        local ids = redis.call('ZRANGE', p .. 'chat-asks:' .. chat, 0, -1)
        for i = 1, #ids, 1000 do
          redis.call('ZREM', p .. 'owner-asks:' .. owner, unpack(ids, i, math.min(i + 999, #ids)))
        end
      end
      chats = chats + 1
      if chats >= limit then break end
    end
  end
end
for _, chat in ipairs(redis.call('ZRANGEBYSCORE', p .. 'embed-seen', '-inf', '(' .. cutoff, 'LIMIT', 0, limit)) do
  redis.call('DEL', p .. 'embed:' .. chat)
  redis.call('ZREM', p .. 'embed-seen', chat)
end
return { asks, chats }
`;

/**
 * Keeps the newer of the noted reply and this one (by mint time; a tie keeps the noted one) and returns
 * the newest as [msg, mts]. Reading and writing in one script keeps it the newest across instances.
 */
const NOTE_EMBED = `
local p, chat, msg, mts, at = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local key = p .. 'embed:' .. chat
local newest = redis.call('HMGET', key, 'msg', 'mts')
if not newest[1] or tonumber(mts) > tonumber(newest[2]) then
  redis.call('HSET', key, 'msg', msg, 'mts', mts)
  newest = { msg, mts }
end
redis.call('ZADD', p .. 'embed-seen', 'GT', at, chat)
return newest
`;

/** The chat's finished asks whose body names this reply, oldest change first, as flat [id, body] pairs. */
const FINISHED_IN_REPLY = `
local p, chat, reply = ARGV[1], ARGV[2], ARGV[3]
local out = {}
for _, id in ipairs(redis.call('ZRANGE', p .. 'chat-asks:' .. chat, 0, -1)) do
  local row = redis.call('HMGET', p .. 'ask:' .. id, 'status', 'body')
  if row[1] and row[1] ~= 'pending' then
    local ok, ask = pcall(cjson.decode, row[2])
    if ok and type(ask) == 'table' and ask.replyId == reply then
      out[#out + 1] = id
      out[#out + 1] = row[2]
    end
  end
end
return out
`;

/** Stored asks as the listing scripts give them: flat [id, body] pairs. */
const Rows = flatRows(z.tuple([z.string(), z.string()])).transform((rows) =>
  rows.map(([id, body]) => ({ id, body })),
);

export const ASK_SCRIPTS = {
  put: { lua: PUT, reply: Flag },
  list: { lua: LIST, reply: Rows },
  pending: { lua: PENDING, reply: Rows },
  claim: { lua: CLAIM, reply: Flag },
  release: { lua: RELEASE, reply: Done },
  recordOwner: { lua: RECORD_OWNER, reply: z.string() },
  prune: {
    lua: PRUNE,
    reply: z.tuple([Count, Count]).transform(([asks, chats]) => ({ asks, chats })),
  },
  noteEmbed: {
    lua: NOTE_EMBED,
    reply: z
      .tuple([z.string(), z.coerce.number()])
      .transform(([msg, mts]): ReplyClaim => ({ msg, mts })),
  },
  finishedInReply: { lua: FINISHED_IN_REPLY, reply: Rows },
  titleChat: { lua: TITLE_CHAT, reply: Done },
};
