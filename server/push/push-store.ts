import path from "node:path";
import type { Redis } from "ioredis";
import { z } from "zod";
import type { TokenLink } from "../http/owner-request.ts";
import { PrivateDatabase } from "../store/private-database.ts";
import { parseStored, redisScripts, unavailableAs } from "../store/redis-scripts.ts";

/**
 * The push store: each owner's push subscriptions, each with the link it was made with, and the action
 * tokens already redeemed (kept until their expiry, so a replay is refused). One process keeps it in
 * its own SQLite file under DATA_DIR (0600); several instances share it in Redis, so a subscription
 * made on one is pushed to by any and a token redeemed on one is a replay on every other.
 */

export type PushSubscriptionRecord = {
  owner: string;
  /**
   * The link the owner subscribed with: its key id (a device's, or the owner links'; null for a token
   * without one) and when it expires (epoch ms; 0 for a subscription stored before links were kept).
   * Its notifications carry action tokens, so it is pushed to only while that link works.
   */
  link: TokenLink;
  endpoint: string;
  p256dh: string;
  auth: string;
};

export interface PushStore {
  subscribe(record: PushSubscriptionRecord, now: number): Promise<void>;
  /** An owner removes one of their own subscriptions; returns whether there was one. */
  unsubscribe(endpoint: string, owner: string): Promise<boolean>;
  /** The push service said the subscription is gone (404, 410). */
  forget(endpoint: string): Promise<void>;
  /** The subscriptions made with a revoked device's link. */
  forgetDevice(kid: string): Promise<void>;
  /** These owners' subscriptions, oldest first. */
  subscriptions(owners: ReadonlySet<string>): Promise<PushSubscriptionRecord[]>;
  /** Claims a token id once: true for the first redemption, false for every replay (atomic, even across instances). */
  redeem(jti: string, expiresAt: number, now: number): Promise<boolean>;
  /** Undoes a redemption whose decision was not taken (the store went away meanwhile): the token works again. */
  release(jti: string): Promise<void>;
  close(): void;
}

/** The push store the deployment uses: Redis's when the instances share one, else DATA_DIR's file. */
export function openPushStore(options: { redis: Redis | null; redisKeyPrefix: string; dataDir: string; log: (message: string) => void }): PushStore {
  if (options.redis) return new RedisPushStore(options.redis, `${options.redisKeyPrefix}push:`, options.log);
  return new SqlitePushStore(path.join(options.dataDir, "push.sqlite"));
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS subscriptions (
    endpoint TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    link_kid TEXT,
    link_expires_at INTEGER,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS subscriptions_owner ON subscriptions(owner);
  CREATE TABLE IF NOT EXISTS redeemed_actions (
    jti TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
  );
`;

const STATEMENTS = {
  upsert:
    "INSERT INTO subscriptions (endpoint, owner, link_kid, link_expires_at, p256dh, auth, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(endpoint) DO UPDATE SET owner = excluded.owner, link_kid = excluded.link_kid, link_expires_at = excluded.link_expires_at, p256dh = excluded.p256dh, auth = excluded.auth",
  remove: "DELETE FROM subscriptions WHERE endpoint = ?",
  removeDevice: "DELETE FROM subscriptions WHERE link_kid = ?",
  removeOwned: "DELETE FROM subscriptions WHERE endpoint = ? AND owner = ?",
  forOwners: "SELECT owner, link_kid, link_expires_at, endpoint, p256dh, auth FROM subscriptions ORDER BY created_at",
  redeem: "INSERT INTO redeemed_actions (jti, expires_at) VALUES (?, ?) ON CONFLICT(jti) DO NOTHING",
  release: "DELETE FROM redeemed_actions WHERE jti = ?",
  prune: "DELETE FROM redeemed_actions WHERE expires_at < ?",
};

export class SqlitePushStore implements PushStore {
  private readonly database: PrivateDatabase<keyof typeof STATEMENTS>;

  constructor(file: string) {
    // Files from before links were kept: their subscriptions have none, so they are pushed to no more
    // (the dashboard renews its subscription with its link when it next opens).
    this.database = new PrivateDatabase(file, SCHEMA, STATEMENTS, { subscriptions: { link_kid: "TEXT", link_expires_at: "INTEGER" } });
  }

  async subscribe(record: PushSubscriptionRecord, now: number): Promise<void> {
    this.database.statements.upsert.run(record.endpoint, record.owner, record.link.kid, record.link.expiresAt, record.p256dh, record.auth, now);
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

  async subscriptions(owners: ReadonlySet<string>): Promise<PushSubscriptionRecord[]> {
    type Row = Omit<PushSubscriptionRecord, "link"> & { link_kid: string | null; link_expires_at: number | null };
    return (this.database.statements.forOwners.all() as Row[])
      .filter((row) => owners.has(row.owner))
      .map(({ link_kid, link_expires_at, ...record }) => ({ ...record, link: { kid: link_kid, expiresAt: link_expires_at ?? 0 } }));
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

/** What a subscription's hash field holds (JSON); one that does not parse is skipped and logged. */
const StoredSubscription = z.object({
  owner: z.string(),
  // Stored before links were kept: no link, so it is pushed to no more until the dashboard renews it.
  link: z.object({ kid: z.string().nullable(), expiresAt: z.number() }).default({ kid: null, expiresAt: 0 }),
  p256dh: z.string(),
  auth: z.string(),
  createdAt: z.number(),
});

/** An upsert keeps the first subscription's creation time, as the SQLite store does. */
const SUBSCRIBE = `
local p, endpoint, record = ARGV[1], ARGV[2], cjson.decode(ARGV[3])
local old = redis.call('HGET', p .. 'subscriptions', endpoint)
if old then
  local ok, stored = pcall(cjson.decode, old)
  if ok and type(stored.createdAt) == 'number' then record.createdAt = stored.createdAt end
end
redis.call('HSET', p .. 'subscriptions', endpoint, cjson.encode(record))
return 1
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
    if ok and field == 'kid' then found = type(record.link) == 'table' and record.link.kid or nil
    elseif ok then found = record[field] end
    if found == value then
      redis.call('HDEL', p .. 'subscriptions', all[i])
      removed = removed + 1
    end
  end
end
return removed
`;

/**
 * Keys, under the deployment's prefix (`<REDIS_KEY_PREFIX>push:`): `subscriptions` hash endpoint →
 * the subscription as JSON (owner, link, keys, createdAt); `redeemed:<jti>` set once with SET NX
 * and expiring with the token.
 */
export class RedisPushStore implements PushStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly log: (message: string) => void;
  private readonly run: ReturnType<typeof redisScripts<"subscribe" | "removeWhere">>;

  /** Takes a connected client; `close` does not end it (its owner does). */
  constructor(redis: Redis, prefix: string, log: (message: string) => void) {
    this.redis = redis;
    this.prefix = prefix;
    this.log = log;
    this.run = redisScripts(redis, prefix, { subscribe: SUBSCRIBE, removeWhere: REMOVE_WHERE });
  }

  async subscribe(record: PushSubscriptionRecord, now: number): Promise<void> {
    const { endpoint, ...rest } = record;
    await this.run("subscribe", endpoint, JSON.stringify({ ...rest, createdAt: now }));
  }

  async unsubscribe(endpoint: string, owner: string): Promise<boolean> {
    return Number(await this.run("removeWhere", "owner", owner, endpoint)) > 0;
  }

  async forget(endpoint: string): Promise<void> {
    await unavailableAs(this.redis, () => this.redis.hdel(`${this.prefix}subscriptions`, endpoint));
  }

  async forgetDevice(kid: string): Promise<void> {
    await this.run("removeWhere", "kid", kid, "");
  }

  async subscriptions(owners: ReadonlySet<string>): Promise<PushSubscriptionRecord[]> {
    const all = await unavailableAs(this.redis, () => this.redis.hgetall(`${this.prefix}subscriptions`));
    const records: (PushSubscriptionRecord & { createdAt: number })[] = [];
    for (const [endpoint, json] of Object.entries(all)) {
      const stored = parseStored(StoredSubscription, json);
      if (!stored) {
        this.log(`push subscription for ${originOf(endpoint)} does not parse: skipped`);
        continue;
      }
      if (owners.has(stored.owner)) records.push({ endpoint, ...stored });
    }
    return records.sort((a, b) => a.createdAt - b.createdAt).map(({ createdAt: _createdAt, ...record }) => record);
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

/** An endpoint's origin only: its path is the subscription's capability. */
function originOf(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return "(an unparsable endpoint)";
  }
}
