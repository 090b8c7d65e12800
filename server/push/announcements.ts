import type { Redis } from "ioredis";
import type { Ask } from "../../lib/ask.ts";
import { Flag, redisScripts, unavailableAs } from "../store/redis-scripts.ts";

/**
 * Which asks were announced by push, so that one event gives one push: a new pending ask is announced
 * by one claimant only, and its ending gets an outcome push only if it was announced. One process keeps
 * this in memory. Several instances all hear every ask (each is connected to the Gateway) and share
 * the subscriptions, so they share this too, in Redis: the first instance to claim an ask announces it,
 * and whichever instance ends it (the broker reports an ending on exactly one) sends the outcome.
 */
export interface PushAnnouncements {
  /** First sight of a pending ask: true for exactly one caller per ask, the one that may announce it. */
  claim(ask: Ask, now: number): Promise<boolean>;
  /** The claimant is about to push it: false when the ask ended meanwhile (then nothing is pushed). */
  markPushed(askId: string): Promise<boolean>;
  /** The ask ended: whether it was pushed (so its outcome push is due). */
  ended(askId: string): Promise<boolean>;
}

type State = "claimed" | "pushed";

export class MemoryPushAnnouncements implements PushAnnouncements {
  private readonly states = new Map<string, State>();

  async claim(ask: Ask): Promise<boolean> {
    if (this.states.has(ask.id)) return false;
    this.states.set(ask.id, "claimed");
    return true;
  }

  async markPushed(askId: string): Promise<boolean> {
    if (this.states.get(askId) !== "claimed") return false;
    this.states.set(askId, "pushed");
    return true;
  }

  async ended(askId: string): Promise<boolean> {
    const state = this.states.get(askId);
    this.states.delete(askId);
    return state === "pushed";
  }
}

const HOUR_MS = 3600 * 1000;
/** An ask without an expiry: its claim outlives any pending ask seen in practice. */
const CLAIM_WITHOUT_EXPIRY_MS = 7 * 24 * HOUR_MS;
/** How long an ending is remembered, so an instance that hears the ask late claims nothing. */
const ENDED_MS = 24 * HOUR_MS;

const MARK_PUSHED = `
local key = ARGV[1] .. 'announced:' .. ARGV[2]
if redis.call('GET', key) ~= 'claimed' then return 0 end
redis.call('SET', key, 'pushed', 'KEEPTTL')
return 1
`;

const SCRIPTS = { markPushed: { lua: MARK_PUSHED, reply: Flag } };

/**
 * One key per ask under the deployment's prefix (`<REDIS_KEY_PREFIX>push:`): `announced:<ask id>`,
 * `claimed` (SET NX), then `pushed`, then `ended`; it lapses an hour after the ask's expiry (a day
 * after its ending).
 */
export class RedisPushAnnouncements implements PushAnnouncements {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly run: ReturnType<typeof redisScripts<typeof SCRIPTS>>;

  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
    this.run = redisScripts(redis, prefix, SCRIPTS);
  }

  async claim(ask: Ask, now: number): Promise<boolean> {
    const ttl =
      ask.expiresAt === null ? CLAIM_WITHOUT_EXPIRY_MS : Math.max(0, ask.expiresAt - now) + HOUR_MS;
    return (
      (await unavailableAs(this.redis, () =>
        this.redis.set(this.key(ask.id), "claimed", "PX", ttl, "NX"),
      )) === "OK"
    );
  }

  async markPushed(askId: string): Promise<boolean> {
    return this.run("markPushed", askId);
  }

  async ended(askId: string): Promise<boolean> {
    return (
      (await unavailableAs(this.redis, () =>
        this.redis.set(this.key(askId), "ended", "PX", ENDED_MS, "GET"),
      )) === "pushed"
    );
  }

  private key(askId: string): string {
    return `${this.prefix}announced:${askId}`;
  }
}
