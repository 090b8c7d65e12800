import type { Redis } from "ioredis";
import type { Clock, TimerHandle } from "../../lib/clock.ts";
import { redisScripts } from "../store/redis-scripts.ts";
import type { Presence, Tab } from "./ports.ts";

/**
 * Presence shared by every instance, in Redis: which tab views which chat, since when and on which
 * instance, and which tab shows each ask. Each operation is one Lua script (atomic across instances).
 * Each instance keeps a key alive with a heartbeat; a tab whose instance's key has expired (the
 * instance died without a goodbye) no longer counts as a viewer and is removed when next met, so a
 * dead instance's presence goes by itself within HEARTBEAT_TTL_MS.
 *
 * Keys under the prefix: `tab:<id>` hash (chat, user, owner, claim, msg and mts of its reply, instance,
 * since), `viewers:<chat>`
 * sorted set of tab ids in view order, `seq` (that order), `shown` hash ask → tab, `instance:<id>`
 * (the heartbeat) and `instance-tabs:<id>` (its tabs, removed on a clean stop).
 */

export const HEARTBEAT_EVERY_MS = 3_000;
export const HEARTBEAT_TTL_MS = 10_000;

const VIEW = `
local p, tab, chat = ARGV[1], ARGV[2], ARGV[3]
local key = p .. 'tab:' .. tab
local previous = redis.call('HGET', key, 'chat')
if previous then redis.call('ZREM', p .. 'viewers:' .. previous, tab) end
redis.call('HSET', key, 'chat', chat, 'user', ARGV[4], 'owner', ARGV[5], 'claim', ARGV[6], 'instance', ARGV[7], 'since', ARGV[8], 'msg', ARGV[9], 'mts', ARGV[10])
redis.call('ZADD', p .. 'viewers:' .. chat, redis.call('INCR', p .. 'seq'), tab)
redis.call('SADD', p .. 'instance-tabs:' .. ARGV[7], tab)
return previous
`;

const LEAVE = `
local p, tab = ARGV[1], ARGV[2]
local key = p .. 'tab:' .. tab
local row = redis.call('HMGET', key, 'chat', 'instance')
if not row[1] then return false end
redis.call('ZREM', p .. 'viewers:' .. row[1], tab)
redis.call('SREM', p .. 'instance-tabs:' .. row[2], tab)
redis.call('DEL', key)
return row[1]
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
    redis.call('DEL', key)
  end
end
return out
`;

const CHAT_OF = `
local row = redis.call('HMGET', ARGV[1] .. 'tab:' .. ARGV[2], 'chat', 'instance')
if row[1] and redis.call('EXISTS', ARGV[1] .. 'instance:' .. row[2]) == 1 then return row[1] end
return false
`;

const SHOW = `
local p, ask, tab, from = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if (redis.call('HGET', p .. 'shown', ask) or '') ~= from then return 0 end
if tab == '' then redis.call('HDEL', p .. 'shown', ask) else redis.call('HSET', p .. 'shown', ask, tab) end
return 1
`;

const FORGET = `
local tab = redis.call('HGET', ARGV[1] .. 'shown', ARGV[2])
redis.call('HDEL', ARGV[1] .. 'shown', ARGV[2])
return tab
`;

/** A clean stop: the instance's tabs stop viewing now rather than when its heartbeat runs out. */
const DEPART = `
local p, instance = ARGV[1], ARGV[2]
for _, tab in ipairs(redis.call('SMEMBERS', p .. 'instance-tabs:' .. instance)) do
  local key = p .. 'tab:' .. tab
  local chat = redis.call('HGET', key, 'chat')
  if chat then redis.call('ZREM', p .. 'viewers:' .. chat, tab) end
  redis.call('DEL', key)
end
redis.call('DEL', p .. 'instance-tabs:' .. instance, p .. 'instance:' .. instance)
return 0
`;

export type RedisPresenceOptions = {
  redis: Redis;
  instanceId: string;
  clock: Clock;
  prefix?: string;
  log(message: string): void;
};

export class RedisPresence implements Presence {
  private readonly redis: Redis;
  private readonly instanceId: string;
  private readonly clock: Clock;
  private readonly prefix: string;
  private readonly log: (message: string) => void;
  private readonly run: ReturnType<typeof redisScripts<"view" | "leave" | "viewers" | "chatOf" | "show" | "forget" | "depart">>;
  private heartbeat: TimerHandle | null = null;
  private running = false;

  constructor(options: RedisPresenceOptions) {
    this.redis = options.redis;
    this.instanceId = options.instanceId;
    this.clock = options.clock;
    this.prefix = options.prefix ?? "asks:presence:";
    this.log = options.log;
    this.run = redisScripts(this.redis, this.prefix, { view: VIEW, leave: LEAVE, viewers: VIEWERS, chatOf: CHAT_OF, show: SHOW, forget: FORGET, depart: DEPART });
  }

  /** Announces this instance and keeps it alive until `stop`. */
  async start(): Promise<void> {
    this.running = true;
    await this.beat();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.heartbeat) this.clock.clearTimer(this.heartbeat);
    this.heartbeat = null;
    await this.run("depart", this.instanceId);
  }

  async view(tab: Tab, chatId: string): Promise<string | null> {
    const previous = await this.run("view", tab.id, chatId, tab.userId, tab.isOwner ? "1" : "0", tab.chatClaim ?? "", this.instanceId, this.clock.now(), tab.reply?.msg ?? "", tab.reply?.mts ?? "");
    return (previous as string | null) ?? null;
  }

  async leave(tabId: string): Promise<string | null> {
    return ((await this.run("leave", tabId)) as string | null) ?? null;
  }

  async viewers(chatId: string): Promise<readonly Tab[]> {
    const flat = (await this.run("viewers", chatId)) as string[];
    const tabs: Tab[] = [];
    for (let i = 0; i + 5 < flat.length; i += 6) {
      const [id, userId, owner, claim, msg, mts] = flat.slice(i, i + 6) as [string, string, string, string, string, string];
      tabs.push({ id, userId, isOwner: owner === "1", chatClaim: claim || null, reply: msg ? { msg, mts: Number(mts) } : null });
    }
    return tabs;
  }

  async chatOf(tabId: string): Promise<string | null> {
    return ((await this.run("chatOf", tabId)) as string | null) ?? null;
  }

  async shownTo(askId: string): Promise<string | null> {
    return this.redis.hget(`${this.prefix}shown`, askId);
  }

  async show(askId: string, tabId: string | null, from: string | null): Promise<boolean> {
    return (await this.run("show", askId, tabId ?? "", from ?? "")) === 1;
  }

  async forget(askId: string): Promise<string | null> {
    return ((await this.run("forget", askId)) as string | null) ?? null;
  }

  /** Since when the tab views its chat (epoch ms), or null. */
  async viewingSince(tabId: string): Promise<number | null> {
    const since = await this.redis.hget(`${this.prefix}tab:${tabId}`, "since");
    return since === null ? null : Number(since);
  }

  private async beat(): Promise<void> {
    try {
      await this.redis.set(`${this.prefix}instance:${this.instanceId}`, String(this.clock.now()), "PX", HEARTBEAT_TTL_MS);
    } catch (error) {
      // Redis is away: the next beat tries again; until then this instance's tabs may lapse.
      this.log(`presence heartbeat failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (this.running) this.heartbeat = this.clock.setTimer(() => this.tick(), HEARTBEAT_EVERY_MS);
  }

  private tick(): void {
    this.heartbeat = null;
    this.beat().catch((error: unknown) => this.log(`presence heartbeat failed: ${error instanceof Error ? error.message : String(error)}`));
  }
}
