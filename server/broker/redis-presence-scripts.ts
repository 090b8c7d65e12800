import { z } from "zod";
import { Done, Flag, flatRows } from "../store/redis-scripts.ts";
import type { Placement, Tab } from "./ports.ts";

// The Lua scripts behind RedisPresence (redis-presence.ts names the keys they share), each one atomic
// step across instances, with the zod schema its reply is read through.

/**
 * How long presence remembers an ended ask (so a late replay of it is never shown; the store names
 * older ones) and a superseded widget's instance (so it is told how the cards it kept end).
 */
export const REMEMBERED_MS = 86_400_000;

/** A tab that leaves a chat drops its cards there (docs/PROTOCOL.md#server--client): they are nobody's, to be placed again. */
const RELEASE = `
local function release(p, tab)
  for _, ask in ipairs(redis.call('SMEMBERS', p .. 'held:' .. tab)) do
    if redis.call('HGET', p .. 'shown', ask) == tab then redis.call('HDEL', p .. 'shown', ask) end
  end
  redis.call('DEL', p .. 'held:' .. tab)
end
`;

const VIEW = `${RELEASE}
local p, tab, chat = ARGV[1], ARGV[2], ARGV[3]
local key = p .. 'tab:' .. tab
local previous = redis.call('HGET', key, 'chat')
if previous then redis.call('ZREM', p .. 'viewers:' .. previous, tab) end
if previous and previous ~= chat then release(p, tab) end
redis.call('HSET', key, 'chat', chat, 'user', ARGV[4], 'owner', ARGV[5], 'claim', ARGV[6], 'instance', ARGV[7], 'since', ARGV[8], 'msg', ARGV[9], 'mts', ARGV[10])
redis.call('PERSIST', key)
redis.call('ZADD', p .. 'viewers:' .. chat, redis.call('INCR', p .. 'seq'), tab)
redis.call('SADD', p .. 'instance-tabs:' .. ARGV[7], tab)
return previous
`;

/**
 * ARGV[3] = '1': a superseded widget keeps its cards (and its instance, for a day, so it is told how
 * they end); otherwise the tab drops them and is forgotten.
 */
const LEAVE = `${RELEASE}
local p, tab = ARGV[1], ARGV[2]
local key = p .. 'tab:' .. tab
local row = redis.call('HMGET', key, 'chat', 'instance')
if not row[2] then return false end
if row[1] then redis.call('ZREM', p .. 'viewers:' .. row[1], tab) end
if ARGV[3] == '1' then
  redis.call('HDEL', key, 'chat', 'user', 'owner', 'claim', 'since', 'msg', 'mts')
  redis.call('PEXPIRE', key, ${REMEMBERED_MS})
else
  release(p, tab)
  redis.call('SREM', p .. 'instance-tabs:' .. row[2], tab)
  redis.call('DEL', key)
end
return row[1] or false
`;

/** Viewers oldest first, as flat [id, user, owner, claim, msg, mts] rows; tabs of dead instances are dropped on the way. */
const VIEWERS = `
local p, chat = ARGV[1], ARGV[2]
local out = {}
for _, tab in ipairs(redis.call('ZRANGE', p .. 'viewers:' .. chat, 0, -1)) do
  local key = p .. 'tab:' .. tab
  local row = redis.call('HMGET', key, 'user', 'owner', 'claim', 'instance', 'msg', 'mts')
  if row[1] and redis.call('EXISTS', p .. 'instance:' .. row[4]) == 1 then
    out[#out + 1] = tab
    out[#out + 1] = row[1]
    out[#out + 1] = row[2]
    out[#out + 1] = row[3]
    out[#out + 1] = row[5] or ''
    out[#out + 1] = row[6] or ''
  else
    redis.call('ZREM', p .. 'viewers:' .. chat, tab)
    redis.call('DEL', key, p .. 'held:' .. tab)
  end
end
return out
`;

/**
 * The newest viewer of the chat that may see the ask gets its card (newestWhoMaySee of lib/policy.ts: an owner,
 * or the chat's recorded owner, ARGV[4], '' when none is), the tab that showed it before is told it
 * was handed off if it still views the chat, and both are told on their instances' card channels.
 * Returns {moved (0/1), then the tab's fields as VIEWERS gives them} ({moved} alone: no tab may see it).
 */
const PLACE = `
local p, ask, chat, chatOwner = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', p .. 'ended:' .. ask) == 1 then return {0} end
local target, row
local tabs = redis.call('ZRANGE', p .. 'viewers:' .. chat, 0, -1)
for i = #tabs, 1, -1 do
  local fields = redis.call('HMGET', p .. 'tab:' .. tabs[i], 'user', 'owner', 'claim', 'instance', 'msg', 'mts')
  if fields[1] and redis.call('EXISTS', p .. 'instance:' .. fields[4]) == 1 then
    if fields[2] == '1' or (chatOwner ~= '' and fields[1] == chatOwner) then
      target, row = tabs[i], fields
      break
    end
  else
    redis.call('ZREM', p .. 'viewers:' .. chat, tabs[i])
    redis.call('DEL', p .. 'tab:' .. tabs[i], p .. 'held:' .. tabs[i])
  end
end
local holder = redis.call('HGET', p .. 'shown', ask)
local result = {0}
if target then result = {0, target, row[1], row[2], row[3], row[5] or '', row[6] or ''} end
if (holder or '') == (target or '') then return result end
result[1] = 1
if target then
  redis.call('HSET', p .. 'shown', ask, target)
  redis.call('SADD', p .. 'held:' .. target, ask)
else
  redis.call('HDEL', p .. 'shown', ask)
end
if holder then
  redis.call('SREM', p .. 'held:' .. holder, ask)
  local held = redis.call('HMGET', p .. 'tab:' .. holder, 'chat', 'instance')
  if held[1] == chat then redis.call('PUBLISH', p .. 'cards:' .. held[2], 'close\\n' .. holder .. '\\n\\n' .. ARGV[6]) end
end
if target then redis.call('PUBLISH', p .. 'cards:' .. row[4], 'show\\n' .. target .. '\\n' .. (row[5] or '') .. '\\n' .. ARGV[5]) end
return result
`;

const FORGET = `
local p = ARGV[1]
local tab = redis.call('HGET', p .. 'shown', ARGV[2])
redis.call('HDEL', p .. 'shown', ARGV[2])
redis.call('SET', p .. 'ended:' .. ARGV[2], '1', 'PX', ARGV[4])
if tab then
  redis.call('SREM', p .. 'held:' .. tab, ARGV[2])
  local instance = redis.call('HGET', p .. 'tab:' .. tab, 'instance')
  if instance then redis.call('PUBLISH', p .. 'cards:' .. instance, 'close\\n' .. tab .. '\\n\\n' .. ARGV[3]) end
end
return tab
`;

/** A clean stop: the instance's tabs stop viewing now rather than when its heartbeat runs out. */
const DEPART = `${RELEASE}
local p, instance = ARGV[1], ARGV[2]
for _, tab in ipairs(redis.call('SMEMBERS', p .. 'instance-tabs:' .. instance)) do
  release(p, tab)
  local key = p .. 'tab:' .. tab
  local chat = redis.call('HGET', key, 'chat')
  if chat then redis.call('ZREM', p .. 'viewers:' .. chat, tab) end
  redis.call('DEL', key)
end
redis.call('DEL', p .. 'instance-tabs:' .. instance, p .. 'instance:' .. instance)
redis.call('HDEL', p .. 'card-protocols', instance)
return 0
`;

/** Joins if every live instance speaks this one's card protocol (and forgets the dead); else names one that does not. */
const JOIN = `
local p, instance, version = ARGV[1], ARGV[2], ARGV[3]
local key = p .. 'card-protocols'
local known = redis.call('HGETALL', key)
for i = 1, #known, 2 do
  if redis.call('EXISTS', p .. 'instance:' .. known[i]) == 0 then redis.call('HDEL', key, known[i])
  elseif known[i] ~= instance and known[i + 1] ~= version then return {known[i], known[i + 1]} end
end
redis.call('HSET', key, instance, version)
redis.call('SET', p .. 'instance:' .. instance, ARGV[4], 'PX', ARGV[5])
return {}
`;

/** A tab as VIEWERS and PLACE give it: id, user, owner ('1'), chat claim, reply msg and mts ('' for none). */
const TabFields = z.tuple([z.string(), z.string(), z.string(), z.string(), z.string(), z.string()]);

export const SCRIPTS = {
  view: { lua: VIEW, reply: z.string().nullable() },
  leave: { lua: LEAVE, reply: z.string().nullable() },
  viewers: { lua: VIEWERS, reply: flatRows(TabFields).transform((rows) => rows.map(tabOf)) },
  place: {
    lua: PLACE,
    reply: z
      .union([z.tuple([Flag]), z.tuple([Flag, ...TabFields.def.items])])
      .transform(([moved, ...fields]): Placement => ({
        tab: fields.length === 6 ? tabOf(fields) : null,
        moved,
      })),
  },
  forget: { lua: FORGET, reply: z.string().nullable() },
  depart: { lua: DEPART, reply: Done },
  join: { lua: JOIN, reply: z.union([z.tuple([]), z.tuple([z.string(), z.string()])]) },
};

function tabOf([id, userId, owner, claim, msg, mts]: z.output<typeof TabFields>): Tab {
  return {
    id,
    userId,
    isOwner: owner === "1",
    chatClaim: claim || null,
    reply: msg ? { msg, mts: Number(mts) } : null,
  };
}

/** A card message's lines: kind, tab, reply (empty for none and for a close) and the JSON (which holds no raw newline). */
