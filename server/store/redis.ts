import type { Redis } from "ioredis";
import { z } from "zod";
import type { Ask, AskStatus } from "../../lib/ask.ts";
import { systemClock, type Clock } from "../../lib/clock.ts";
import { Count, Done, Flag, flatRows, redisScripts, unavailableAs } from "./redis-scripts.ts";
import type { ReplyClaim } from "../broker/ports.ts";
import { SetAsideRows } from "./rows.ts";
import type { AskStore, OwnerLinkKeyStore, RetentionStore } from "./store.ts";

/**
 * The store that several instances share: Redis 7.x (or Valkey), standalone. Every step that reads
 * and then writes is one Lua script, so it is atomic across instances: the one-winner claim, the
 * tombstone rule (a terminal ask is never written again), the first owner of a chat. Keys, under the
 * deployment's prefix (`<REDIS_KEY_PREFIX>store:`):
 *
 * - `ask:<id>` hash: status, chat, updated, claimed (the claimant while an answer is delivered), body (the Ask as JSON)
 * - `history`, `status:<status>`, `chat-asks:<chat>`, `owner-asks:<user>` sorted sets of ask ids by last
 *   change: the listings, each filter answered from one set (never one look-up per chat of a user)
 * - `pending` (by creation, for restore), `terminal` (by end, for retention), `chat-pending:<chat>` (a set)
 * - `chats` hash chat → owner; `chat-titles` hash chat → Open WebUI's title; `chat-seen` sorted set
 *   chat → last view (retention); `settings` hash
 * - `embed:<chat>` hash (msg, mts): the chat's newest reply seen in an embed token (the live widget's);
 *   `embed-seen` sorted set chat → when an embed of it was last noted (retention)
 *
 * The scripts name keys they build from the prefix, so this runs on one Redis, not a Cluster.
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

const OWNER_LINK_KID = "owner-link-kid";

/** Stored asks as the listing scripts give them: flat [id, body] pairs. */
const Rows = flatRows(z.tuple([z.string(), z.string()])).transform((rows) => rows.map(([id, body]) => ({ id, body })));

const SCRIPTS = {
  put: { lua: PUT, reply: Flag },
  list: { lua: LIST, reply: Rows },
  pending: { lua: PENDING, reply: Rows },
  claim: { lua: CLAIM, reply: Flag },
  release: { lua: RELEASE, reply: Done },
  recordOwner: { lua: RECORD_OWNER, reply: z.string() },
  prune: { lua: PRUNE, reply: z.tuple([Count, Count]).transform(([asks, chats]) => ({ asks, chats })) },
  noteEmbed: { lua: NOTE_EMBED, reply: z.tuple([z.string(), z.coerce.number()]).transform(([msg, mts]): ReplyClaim => ({ msg, mts })) },
  finishedInReply: { lua: FINISHED_IN_REPLY, reply: Rows },
  titleChat: { lua: TITLE_CHAT, reply: Done },
};

export type RedisAskStoreOptions = {
  /** Every key starts with it: several deployments (or test files) can share one Redis. */
  prefix: string;
  log?: (message: string) => void;
  /** The time the store records (when a chat's owner was); the system's without one. */
  clock?: Clock;
};

export class RedisAskStore implements AskStore, RetentionStore, OwnerLinkKeyStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly rows: SetAsideRows;
  private readonly clock: Clock;
  private readonly run: ReturnType<typeof redisScripts<typeof SCRIPTS>>;

  /** Takes a connected client; `close` does not end it (its owner does). */
  constructor(redis: Redis, options: RedisAskStoreOptions) {
    this.redis = redis;
    this.prefix = options.prefix;
    this.rows = new SetAsideRows(options.log);
    this.clock = options.clock ?? systemClock();
    this.run = redisScripts(redis, this.prefix, SCRIPTS);
  }

  /** A terminal ask is a tombstone: the script writes nothing over one. */
  async put(ask: Ask): Promise<boolean> {
    const body = JSON.stringify(ask);
    const written = await this.run("put", ask.id, ask.status, ask.chatId ?? "", ask.createdAt, ask.resolution?.at ?? ask.createdAt, body);
    if (!written) return false;
    this.rows.healed(ask.id);
    return true;
  }

  async get(id: string): Promise<Ask | null> {
    const body = await unavailableAs(this.redis, () => this.redis.hget(this.key(`ask:${id}`), "body"));
    return body === null ? null : this.rows.read(id, body);
  }

  async pending(): Promise<Ask[]> {
    return this.rows.readAll(await this.run("pending"));
  }

  async list(filter: { status?: AskStatus; chatId?: string; ownedBy?: string; limit?: number }): Promise<Ask[]> {
    return this.rows.readAll(await this.run("list", filter.status ?? "", filter.chatId ?? "", filter.ownedBy ?? "", filter.limit ?? 200));
  }

  async claim(id: string, claimant: string): Promise<boolean> {
    return this.run("claim", id, claimant);
  }

  async release(id: string, claimant: string): Promise<void> {
    await this.run("release", id, claimant);
  }

  async chatOwner(chatId: string): Promise<string | null> {
    return unavailableAs(this.redis, () => this.redis.hget(this.key("chats"), chatId));
  }

  async recordChatOwner(chatId: string, userId: string): Promise<string> {
    return this.run("recordOwner", chatId, userId, this.clock.now(), "0");
  }

  async chatViewed(chatId: string, owner: string, at: number): Promise<void> {
    await this.run("recordOwner", chatId, owner, at, "1");
  }

  setAsideRows(): number {
    return this.rows.count;
  }

  /** Only a chat with a recorded owner keeps a title: retention removes both together. */
  async titleChat(chatId: string, title: string): Promise<void> {
    await this.run("titleChat", chatId, title);
  }

  async chatTitles(chatIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(chatIds)];
    if (ids.length === 0) return new Map();
    const titles = await unavailableAs(this.redis, () => this.redis.hmget(this.key("chat-titles"), ...ids));
    return new Map(ids.flatMap((id, index) => (titles[index] ? [[id, titles[index]] as const] : [])));
  }

  async noteEmbed(chatId: string, embed: ReplyClaim, at: number): Promise<ReplyClaim> {
    return this.run("noteEmbed", chatId, embed.msg, embed.mts, at);
  }

  async finishedInReply(chatId: string, replyId: string): Promise<Ask[]> {
    return this.rows.readAll(await this.run("finishedInReply", chatId, replyId));
  }

  async prune(cutoff: number, limit: number): Promise<{ asks: number; chats: number }> {
    return this.run("prune", cutoff, limit);
  }

  async ownerLinkKid(): Promise<string | null> {
    return unavailableAs(this.redis, () => this.redis.hget(this.key("settings"), OWNER_LINK_KID));
  }

  async setOwnerLinkKid(kid: string): Promise<void> {
    await unavailableAs(this.redis, () => this.redis.hset(this.key("settings"), OWNER_LINK_KID, kid));
  }

  async close(): Promise<void> {}

  private key(name: string): string {
    return this.prefix + name;
  }
}
