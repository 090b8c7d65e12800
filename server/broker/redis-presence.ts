import type { Redis } from "ioredis";
import { Ask, inReply } from "../../lib/ask.ts";
import type { Clock, TimerHandle } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import { AskClose } from "../../lib/protocol.ts";
import { Emitter } from "../events.ts";
import { redisScripts } from "../store/redis-scripts.ts";
import type { CardEvents, Placement, Presence, Tab } from "./ports.ts";
import { REMEMBERED_MS, SCRIPTS } from "./redis-presence-scripts.ts";

/**
 * Presence shared by every instance, in Redis: which tab views which chat, since when and on which
 * instance, and which tab shows each ask. Each operation is one Lua script (atomic across instances).
 * Each instance keeps a key alive with a heartbeat; a tab whose instance's key has expired (the
 * instance died without a goodbye) no longer counts as a viewer and is removed when next met, so a
 * dead instance's presence goes by itself within HEARTBEAT_TTL_MS.
 *
 * Keys under the prefix: `tab:<id>` hash (chat, user, owner, claim, msg and mts of its reply,
 * instance, since), `viewers:<chat>` sorted set of tab ids in view order, `seq` (that order), `shown`
 * hash ask → tab and `held:<tab>` (its asks: a tab that leaves its chat drops their cards, so they are
 * placed again: docs/PROTOCOL.md#server--client), `ended:<ask>` (an ended ask, for a day: never placed
 * again), `instance:<id>` (the heartbeat) and `instance-tabs:<id>` (its tabs, removed on a clean stop).
 * The scripts that read and write them are in redis-presence-scripts.ts.
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

function splitCard(message: string): [kind: string, tabId: string, reply: string, body: string] {
  const lines = message.split("\n", 3);
  if (lines.length < 3) return ["", "", "", ""];
  const offset = lines[0]!.length + lines[1]!.length + lines[2]!.length + 3;
  return [lines[0]!, lines[1]!, lines[2]!, message.slice(offset)];
}
