import type { Redis } from "ioredis";
import { z } from "zod";
import { Ask, inReply } from "../../lib/ask.ts";
import type { Clock, TimerHandle } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import { AskClose } from "../../lib/protocol.ts";
import { Emitter } from "../events.ts";
import { Done, Flag, flatRows, redisScripts } from "../store/redis-scripts.ts";
import type { CardEvents, Placement, Presence, Tab } from "./ports.ts";

/**
 * Presence shared by every instance, in Redis: which tab views which chat, since when and on which
 * instance, and which tab shows each ask. Each operation is one Lua script (atomic across instances).
 * Each instance keeps a key alive with a heartbeat; a tab whose instance's key has expired (the
 * instance died without a goodbye) no longer counts as a viewer and is removed when next met, so a
 * dead instance's presence goes by itself within HEARTBEAT_TTL_MS.
 *
 * Keys under the prefix: `tab:<id>` hash (chat, user, owner, claim, msg and mts of its reply, instance,
 * since), `viewers:<chat>`
 * sorted set of tab ids in view order, `seq` (that order), `shown` hash ask → tab and `held:<tab>` (its
 * asks: a tab that leaves its chat drops their cards (docs/PROTOCOL.md#server--client), so they are placed again), `ended:<ask>`
 * (an ended ask, for a day: never placed again), `instance:<id>`
 * (the heartbeat) and `instance-tabs:<id>` (its tabs, removed on a clean stop).
 *
 * Cards travel in the scripts that move them: `place` and `forget` PUBLISH each card to the channel
 * `cards:<instance>` of the instance holding the tab, in the same atomic step as the move. Redis sends
 * a channel's messages in the order the scripts ran, so a tab hears of its cards in the order the moves
 * happened, whichever instances made them (a show and a handoff published apart, from two instances'
 * own connections, could arrive the other way round), and a card crosses Redis once.
 */

/**
 * The card channel's version: raised only by a change of the card messages or of the keys above that an
 * instance of the previous release cannot follow. Each instance records it (`card-protocols`, instance →
 * version) and joins only a deployment whose live instances speak it, so instances of two releases that
 * cannot pass cards never share one Redis. (Those of releases before the record speak version 1.)
 */
export const CARD_PROTOCOL_VERSION = 1;
export const HEARTBEAT_EVERY_MS = 3_000;
export const HEARTBEAT_TTL_MS = 10_000;
/**
 * How long presence remembers an ended ask (so a late replay of it is never shown; the store names
 * older ones) and a superseded widget's instance (so it is told how the cards it kept end).
 */
const REMEMBERED_MS = 86_400_000;

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

const SCRIPTS = {
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

export type RedisPresenceOptions = {
  redis: Redis;
  instanceId: string;
  clock: Clock;
  /** Every key and channel starts with it (the deployment's `<REDIS_KEY_PREFIX>presence:`). */
  prefix: string;
  log: (message: string) => void;
};

export class RedisPresence extends Emitter<CardEvents> implements Presence {
  private readonly redis: Redis;
  /** This instance's card channel: a connection of its own (a subscribed one takes no other commands). */
  private readonly cards: Redis;
  private readonly instanceId: string;
  private readonly clock: Clock;
  private readonly prefix: string;
  private readonly log: (message: string) => void;
  private readonly run: ReturnType<typeof redisScripts<typeof SCRIPTS>>;
  private heartbeat: TimerHandle | null = null;
  private running = false;

  constructor(options: RedisPresenceOptions) {
    super();
    this.redis = options.redis;
    this.instanceId = options.instanceId;
    this.clock = options.clock;
    this.prefix = options.prefix;
    this.log = options.log;
    this.cards = options.redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
    this.cards.on("error", () => {}); // the main connection reports an outage; this one reconnects and resubscribes by itself
    this.cards.on("message", (_channel: string, message: string) => this.receiveCard(message));
    this.run = redisScripts(this.redis, this.prefix, SCRIPTS);
  }

  /** Announces this instance and keeps it alive until `stop`; refuses a deployment of another card protocol. */
  async start(): Promise<void> {
    const [other, theirs] = await this.run(
      "join",
      this.instanceId,
      CARD_PROTOCOL_VERSION,
      this.clock.now(),
      HEARTBEAT_TTL_MS,
    );
    if (other !== undefined) {
      throw new Error(
        `instance ${other.slice(0, 8)} of this deployment speaks card protocol ${theirs}, this release ${CARD_PROTOCOL_VERSION}: ` +
          "instances of the two releases cannot pass cards to each other's tabs; stop the other release's instances, then start this one",
      );
    }
    this.running = true;
    await this.cards.subscribe(`${this.prefix}cards:${this.instanceId}`);
    await this.beat();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.heartbeat) this.clock.clearTimer(this.heartbeat);
    this.heartbeat = null;
    this.cards.disconnect();
    await this.run("depart", this.instanceId);
  }

  async view(tab: Tab, chatId: string): Promise<string | null> {
    return this.run(
      "view",
      tab.id,
      chatId,
      tab.userId,
      tab.isOwner ? "1" : "0",
      tab.chatClaim ?? "",
      this.instanceId,
      this.clock.now(),
      tab.reply?.msg ?? "",
      tab.reply?.mts ?? "",
    );
  }

  async leave(tabId: string, options: { keepCards?: boolean } = {}): Promise<string | null> {
    return this.run("leave", tabId, options.keepCards ? "1" : "0");
  }

  async viewers(chatId: string): Promise<readonly Tab[]> {
    return this.run("viewers", chatId);
  }

  async shownTo(askId: string): Promise<string | null> {
    return this.redis.hget(`${this.prefix}shown`, askId);
  }

  async place(ask: Ask & { chatId: string }, chatOwner: string | null): Promise<Placement> {
    const handedOff: AskClose = { askId: ask.id, reason: "handed-off" };
    const placement = await this.run(
      "place",
      ask.id,
      ask.chatId,
      chatOwner ?? "",
      JSON.stringify(ask),
      JSON.stringify(handedOff),
    );
    // The script published the card before it answered: when the tab is ours (or its instance shares
    // this process), the card is waiting on the card connection too. Handing back after the I/O of
    // this turn of the event loop lets the card reach its tab before the caller's bookkeeping runs.
    await afterPendingIo();
    return placement;
  }

  async forget(askId: string, close: AskClose): Promise<string | null> {
    return this.run("forget", askId, JSON.stringify(close), REMEMBERED_MS);
  }

  /** A card for a tab of this instance, as `place` or `forget` published it; one that does not parse is dropped, and logged. */
  private receiveCard(message: string): void {
    const [kind, tabId, reply, body] = splitCard(message);
    try {
      if (kind === "show")
        return this.emit("card:show", tabId, inReply(Ask.parse(JSON.parse(body)), reply || null));
      if (kind === "close") return this.emit("card:close", tabId, AskClose.parse(JSON.parse(body)));
      throw new Error(`unknown kind ${JSON.stringify(kind.slice(0, 20))}`);
    } catch (error) {
      this.log(
        `dropped a card message for tab ${tabId.slice(0, 40)}: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`,
      );
    }
  }

  /** Since when the tab views its chat (epoch ms), or null. */
  async viewingSince(tabId: string): Promise<number | null> {
    const since = await this.redis.hget(`${this.prefix}tab:${tabId}`, "since");
    return since === null ? null : Number(since);
  }

  private async beat(): Promise<void> {
    try {
      await this.redis.set(
        `${this.prefix}instance:${this.instanceId}`,
        String(this.clock.now()),
        "PX",
        HEARTBEAT_TTL_MS,
      );
    } catch (error) {
      // Redis is away: the next beat tries again; until then this instance's tabs may lapse.
      this.log(`presence heartbeat failed: ${errorMessage(error)}`);
    }
    if (this.running) this.heartbeat = this.clock.setTimer(() => this.tick(), HEARTBEAT_EVERY_MS);
  }

  private tick(): void {
    this.heartbeat = null;
    this.beat().catch((error: unknown) =>
      this.log(`presence heartbeat failed: ${errorMessage(error)}`),
    );
  }
}

/** Resolves once the I/O callbacks already due in this turn of the event loop have run (setImmediate's check phase). */
function afterPendingIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

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
function splitCard(message: string): [kind: string, tabId: string, reply: string, body: string] {
  const lines = message.split("\n", 3);
  if (lines.length < 3) return ["", "", "", ""];
  const offset = lines[0]!.length + lines[1]!.length + lines[2]!.length + 3;
  return [lines[0]!, lines[1]!, lines[2]!, message.slice(offset)];
}
