import type { Redis } from "ioredis";
import { z } from "zod";
import { PrivateDatabase } from "../store/private-database.ts";
import { Count, Flag, redisScripts, unavailableAs } from "../store/redis-scripts.ts";
import { isSignedSubscription, signSubscription } from "./subscription-signature.ts";

/**
 * The push store: each owner's push subscriptions, each with the link it was made with, and the action
 * tokens already redeemed (kept until their expiry, so a replay is refused). One process keeps it in
 * its own SQLite file under DATA_DIR (0600); several instances share it in Redis, so a subscription
 * made on one is pushed to by any and a token redeemed on one is a replay on every other.
 *
 * Every subscription is stored signed by the server (subscription-signature.ts); one that does not
 * verify (written by someone else with access to Redis or the file, or by an earlier version) or does
 * not read is removed when it is read, and logged then, once. An owner keeps at most
 * MAX_SUBSCRIPTIONS_PER_OWNER: storing one more removes their oldest. Each counts the pushes to it
 * that failed in a row (the notifier removes it after a few).
 */

/** The link an owner subscribed with: its key id (a device's, or the owner links') and its expiry (epoch ms). */
export type SubscriptionLink = { kid: string; expiresAt: number };

export type PushSubscriptionRecord = {
  owner: string;
  /** Its notifications carry action tokens, so it is pushed to only while this link works. */
  link: SubscriptionLink;
  endpoint: string;
  p256dh: string;
  auth: string;
};

/** A subscription as the store hands it back: verified, with when it was first stored and how many pushes to it failed in a row. */
export type StoredPushSubscription = PushSubscriptionRecord & { createdAt: number; failures: number };

/** Subscriptions per owner; a browser has one per site, so this is many devices, and bounds what one ask costs. */
export const MAX_SUBSCRIPTIONS_PER_OWNER = 20;

export interface PushStore {
  /**
   * Stores it signed (the same endpoint again replaces it, keeps its creation time and clears its
   * failures); the owner's oldest subscriptions beyond the cap are removed. Returns their endpoints.
   */
  subscribe(record: PushSubscriptionRecord, now: number): Promise<string[]>;
  /** An owner removes one of their own subscriptions; returns whether there was one. */
  unsubscribe(endpoint: string, owner: string): Promise<boolean>;
  /** The subscription is gone (the push service said so, its link ended, its pushes kept failing). */
  forget(endpoint: string): Promise<void>;
  /** The subscriptions made with a revoked device's link. */
  forgetDevice(kid: string): Promise<void>;
  /** These owners' subscriptions, oldest first. */
  subscriptions(owners: ReadonlySet<string>): Promise<StoredPushSubscription[]>;
  /** A push to it failed: how many did in a row now (0 when it is no longer stored). */
  countFailure(endpoint: string): Promise<number>;
  /** A push to it went through: its failures are forgotten. */
  clearFailures(endpoint: string): Promise<void>;
  /** Claims a token id once: true for the first redemption, false for every replay (atomic, even across instances). */
  redeem(jti: string, expiresAt: number, now: number): Promise<boolean>;
  /** Undoes a redemption whose decision was not taken (the store went away meanwhile): the token works again. */
  release(jti: string): Promise<void>;
  close(): void;
}

type StoreOptions = { signingKey: Uint8Array; log: (message: string) => void };

/** A stored subscription's fields, however each store keeps them; `signature` is checked after. */
const StoredSubscription = z.object({
  owner: z.string().min(1),
  link: z.object({ kid: z.string().min(1), expiresAt: z.number() }),
  endpoint: z.string().min(1),
  p256dh: z.string().min(1),
  auth: z.string().min(1),
  createdAt: z.number(),
  failures: z.number().int().nonnegative(),
  signature: z.unknown().optional(),
});

/** Reads a stored subscription back: what does not read or verify is reported (to be removed) with why. */
function verified(key: Uint8Array, fields: unknown): { ok: true; subscription: StoredPushSubscription } | { ok: false; why: string } {
  const parsed = StoredSubscription.safeParse(fields);
  if (!parsed.success) return { ok: false, why: `does not read (${parsed.error.issues[0]?.path.join(".") || "record"})` };
  const { signature, ...subscription } = parsed.data;
  if (!isSignedSubscription(key, subscription, signature)) return { ok: false, why: "is not signed by this server" };
  return { ok: true, subscription };
}

/** An endpoint's origin only: its path is the subscription's capability. */
export function originOf(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return "(an unparsable endpoint)";
  }
}

const unsignedLine = (endpoint: string, why: string) => `push subscription for ${originOf(endpoint)} ${why}: ignored and removed`;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS subscriptions (
    endpoint TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    link_kid TEXT,
    link_expires_at INTEGER,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    signature TEXT,
    failures INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX IF NOT EXISTS subscriptions_owner ON subscriptions(owner);
  CREATE TABLE IF NOT EXISTS redeemed_actions (
    jti TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
  );
`;

const STATEMENTS = {
  upsert:
    "INSERT INTO subscriptions (endpoint, owner, link_kid, link_expires_at, p256dh, auth, created_at, signature, failures) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT(endpoint) DO UPDATE SET owner = excluded.owner, link_kid = excluded.link_kid, link_expires_at = excluded.link_expires_at, p256dh = excluded.p256dh, auth = excluded.auth, signature = excluded.signature, failures = 0",
  evictOldest: "DELETE FROM subscriptions WHERE owner = ? AND endpoint NOT IN (SELECT endpoint FROM subscriptions WHERE owner = ? ORDER BY created_at DESC, rowid DESC LIMIT ?) RETURNING endpoint",
  remove: "DELETE FROM subscriptions WHERE endpoint = ?",
  removeDevice: "DELETE FROM subscriptions WHERE link_kid = ?",
  removeOwned: "DELETE FROM subscriptions WHERE endpoint = ? AND owner = ?",
  all: "SELECT endpoint, owner, link_kid, link_expires_at, p256dh, auth, created_at, signature, failures FROM subscriptions ORDER BY created_at, rowid",
  countFailure: "UPDATE subscriptions SET failures = failures + 1 WHERE endpoint = ? RETURNING failures",
  clearFailures: "UPDATE subscriptions SET failures = 0 WHERE endpoint = ?",
  redeem: "INSERT INTO redeemed_actions (jti, expires_at) VALUES (?, ?) ON CONFLICT(jti) DO NOTHING",
  release: "DELETE FROM redeemed_actions WHERE jti = ?",
  prune: "DELETE FROM redeemed_actions WHERE expires_at < ?",
};

type Row = { endpoint: string; owner: unknown; link_kid: unknown; link_expires_at: unknown; p256dh: unknown; auth: unknown; created_at: unknown; signature: unknown; failures: unknown };

export class SqlitePushStore implements PushStore {
  private readonly database: PrivateDatabase<keyof typeof STATEMENTS>;
  private readonly key: Uint8Array;
  private readonly log: (message: string) => void;

  constructor(file: string, options: StoreOptions) {
    // Files from before links, signatures or failure counts were kept gain the columns; their rows
    // are unsigned, so they are removed when read (the dashboard stores its subscription again on its next visit).
    this.database = new PrivateDatabase(file, {
      schema: SCHEMA,
      statements: STATEMENTS,
      added: { subscriptions: { link_kid: "TEXT", link_expires_at: "INTEGER", signature: "TEXT", failures: "INTEGER NOT NULL DEFAULT 0" } },
    });
    this.key = options.signingKey;
    this.log = options.log;
  }

  async subscribe(record: PushSubscriptionRecord, now: number): Promise<string[]> {
    const { statements } = this.database;
    statements.upsert.run(record.endpoint, record.owner, record.link.kid, record.link.expiresAt, record.p256dh, record.auth, now, signSubscription(this.key, record));
    return (statements.evictOldest.all(record.owner, record.owner, MAX_SUBSCRIPTIONS_PER_OWNER) as { endpoint: string }[]).map((row) => row.endpoint);
  }

  async unsubscribe(endpoint: string, owner: string): Promise<boolean> {
    return Number(this.database.statements.removeOwned.run(endpoint, owner).changes) > 0;
  }

  async forget(endpoint: string): Promise<void> {
    this.database.statements.remove.run(endpoint);
  }

  async forgetDevice(kid: string): Promise<void> {
    this.database.statements.removeDevice.run(kid);
  }

  async subscriptions(owners: ReadonlySet<string>): Promise<StoredPushSubscription[]> {
    const subscriptions: StoredPushSubscription[] = [];
    for (const row of this.database.statements.all.all() as Row[]) {
      const read = verified(this.key, {
        owner: row.owner,
        link: { kid: row.link_kid, expiresAt: row.link_expires_at },
        endpoint: row.endpoint,
        p256dh: row.p256dh,
        auth: row.auth,
        createdAt: row.created_at,
        failures: row.failures,
        signature: row.signature,
      });
      if (!read.ok) {
        this.database.statements.remove.run(row.endpoint);
        this.log(unsignedLine(row.endpoint, read.why));
      } else if (owners.has(read.subscription.owner)) subscriptions.push(read.subscription);
    }
    return subscriptions;
  }

  async countFailure(endpoint: string): Promise<number> {
    const row = this.database.statements.countFailure.get(endpoint) as { failures: number } | undefined;
    return row?.failures ?? 0;
  }

  async clearFailures(endpoint: string): Promise<void> {
    this.database.statements.clearFailures.run(endpoint);
  }

  async redeem(jti: string, expiresAt: number, now: number): Promise<boolean> {
    this.database.statements.prune.run(now);
    return Number(this.database.statements.redeem.run(jti, expiresAt).changes) === 1;
  }

  async release(jti: string): Promise<void> {
    this.database.statements.release.run(jti);
  }

  close(): void {
    this.database.close();
  }
}

/**
 * Stores (or renews, keeping its creation time) one subscription, clears its failures, then removes
 * the owner's oldest beyond the cap (ARGV[4]); returns their endpoints.
 */
const SUBSCRIBE = `
local p, endpoint, record, cap = ARGV[1], ARGV[2], cjson.decode(ARGV[3]), tonumber(ARGV[4])
local old = redis.call('HGET', p .. 'subscriptions', endpoint)
if old then
  local ok, stored = pcall(cjson.decode, old)
  if ok and type(stored) == 'table' and type(stored.createdAt) == 'number' then record.createdAt = stored.createdAt end
end
redis.call('HSET', p .. 'subscriptions', endpoint, cjson.encode(record))
redis.call('HDEL', p .. 'failures', endpoint)
local mine = {}
local all = redis.call('HGETALL', p .. 'subscriptions')
for i = 1, #all, 2 do
  local ok, stored = pcall(cjson.decode, all[i + 1])
  if ok and type(stored) == 'table' and stored.owner == record.owner then
    mine[#mine + 1] = { endpoint = all[i], createdAt = tonumber(stored.createdAt) or 0 }
  end
end
table.sort(mine, function(a, b)
  if a.createdAt ~= b.createdAt then return a.createdAt < b.createdAt end
  return a.endpoint < b.endpoint
end)
local evicted = {}
for i = 1, #mine - cap do
  redis.call('HDEL', p .. 'subscriptions', mine[i].endpoint)
  redis.call('HDEL', p .. 'failures', mine[i].endpoint)
  evicted[#evicted + 1] = mine[i].endpoint
end
return evicted
`;

/** Removes the subscriptions whose `field` (`owner`, or `kid` of their link) equals `value` (only `endpoint` when given); returns how many. */
const REMOVE_WHERE = `
local p, field, value, endpoint = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local removed = 0
local all = redis.call('HGETALL', p .. 'subscriptions')
for i = 1, #all, 2 do
  if endpoint == '' or all[i] == endpoint then
    local ok, record = pcall(cjson.decode, all[i + 1])
    local found = nil
    if ok and type(record) == 'table' and field == 'kid' then found = type(record.link) == 'table' and record.link.kid or nil
    elseif ok and type(record) == 'table' then found = record[field] end
    if found == value then
      redis.call('HDEL', p .. 'subscriptions', all[i])
      redis.call('HDEL', p .. 'failures', all[i])
      removed = removed + 1
    end
  end
end
return removed
`;

/** Removes one subscription read as unsigned, unless it was written over since (then it is read again next time). */
const REMOVE_IF_UNCHANGED = `
local p, endpoint, json = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HGET', p .. 'subscriptions', endpoint) ~= json then return 0 end
redis.call('HDEL', p .. 'subscriptions', endpoint)
redis.call('HDEL', p .. 'failures', endpoint)
return 1
`;

/** One more failure of a stored subscription; 0 for one no longer stored (no stray count is left). */
const COUNT_FAILURE = `
local p, endpoint = ARGV[1], ARGV[2]
if redis.call('HEXISTS', p .. 'subscriptions', endpoint) == 0 then return 0 end
return redis.call('HINCRBY', p .. 'failures', endpoint, 1)
`;

const SCRIPTS = {
  subscribe: { lua: SUBSCRIBE, reply: z.array(z.string()) },
  removeWhere: { lua: REMOVE_WHERE, reply: Count },
  removeIfUnchanged: { lua: REMOVE_IF_UNCHANGED, reply: Flag },
  countFailure: { lua: COUNT_FAILURE, reply: Count },
};

/**
 * Keys, under the deployment's prefix (`<REDIS_KEY_PREFIX>push:`): `subscriptions` hash endpoint →
 * the subscription as JSON (owner, link, keys, createdAt, signature); `failures` hash endpoint → the
 * pushes to it that failed in a row; `redeemed:<jti>` set once with SET NX and expiring with the token.
 */
export class RedisPushStore implements PushStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly key: Uint8Array;
  private readonly log: (message: string) => void;
  private readonly run: ReturnType<typeof redisScripts<typeof SCRIPTS>>;

  /** Takes a connected client; `close` does not end it (its owner does). */
  constructor(redis: Redis, prefix: string, options: StoreOptions) {
    this.redis = redis;
    this.prefix = prefix;
    this.key = options.signingKey;
    this.log = options.log;
    this.run = redisScripts(redis, prefix, SCRIPTS);
  }

  async subscribe(record: PushSubscriptionRecord, now: number): Promise<string[]> {
    const { endpoint, ...rest } = record;
    const stored = { ...rest, createdAt: now, signature: signSubscription(this.key, record) };
    return this.run("subscribe", endpoint, JSON.stringify(stored), MAX_SUBSCRIPTIONS_PER_OWNER);
  }

  async unsubscribe(endpoint: string, owner: string): Promise<boolean> {
    return (await this.run("removeWhere", "owner", owner, endpoint)) > 0;
  }

  async forget(endpoint: string): Promise<void> {
    await unavailableAs(this.redis, () => this.redis.multi().hdel(`${this.prefix}subscriptions`, endpoint).hdel(`${this.prefix}failures`, endpoint).exec());
  }

  async forgetDevice(kid: string): Promise<void> {
    await this.run("removeWhere", "kid", kid, "");
  }

  async subscriptions(owners: ReadonlySet<string>): Promise<StoredPushSubscription[]> {
    const [all, failures] = await unavailableAs(this.redis, () => Promise.all([this.redis.hgetall(`${this.prefix}subscriptions`), this.redis.hgetall(`${this.prefix}failures`)]));
    const subscriptions: StoredPushSubscription[] = [];
    for (const [endpoint, json] of Object.entries(all)) {
      const read = verified(this.key, { ...parseJson(json), endpoint, failures: Number(failures[endpoint] ?? 0) });
      if (!read.ok) {
        if (await this.run("removeIfUnchanged", endpoint, json)) this.log(unsignedLine(endpoint, read.why));
      } else if (owners.has(read.subscription.owner)) subscriptions.push(read.subscription);
    }
    return subscriptions.sort((a, b) => a.createdAt - b.createdAt);
  }

  async countFailure(endpoint: string): Promise<number> {
    return this.run("countFailure", endpoint);
  }

  async clearFailures(endpoint: string): Promise<void> {
    await unavailableAs(this.redis, () => this.redis.hdel(`${this.prefix}failures`, endpoint));
  }

  async redeem(jti: string, expiresAt: number): Promise<boolean> {
    const set = await unavailableAs(this.redis, () => this.redis.set(`${this.prefix}redeemed:${jti}`, "1", "PXAT", expiresAt, "NX"));
    return set === "OK";
  }

  async release(jti: string): Promise<void> {
    await unavailableAs(this.redis, () => this.redis.del(`${this.prefix}redeemed:${jti}`));
  }

  close(): void {}
}

/** A stored JSON object's fields, or none when it is not one (the schema then says what is missing). */
function parseJson(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
