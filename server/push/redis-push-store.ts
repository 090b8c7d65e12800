import type { Redis } from "ioredis";
import { z } from "zod";
import { Count, Flag, parseStored, redisScripts, unavailableAs } from "../store/redis-scripts.ts";
import {
  MAX_SUBSCRIPTIONS_PER_OWNER,
  type PushStore,
  type PushStoreOptions,
  type PushSubscriptionRecord,
  removedUnverifiedLine,
  type StoredPushSubscription,
  verifiedSubscription,
} from "./push-store.ts";
import { signSubscription } from "./subscription-signature.ts";

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
 * The push store several instances share (push-store.ts), in Redis: a subscription made on one is
 * pushed to by any, and a token redeemed on one is a replay on every other. Keys, under the
 * deployment's prefix (`<REDIS_KEY_PREFIX>push:`): `subscriptions` hash endpoint → the subscription as
 * JSON (owner, link, keys, createdAt, signature); `failures` hash endpoint → the pushes to it that
 * failed in a row; `redeemed:<jti>` set once with SET NX and expiring with the token.
 */
export class RedisPushStore implements PushStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly key: Uint8Array;
  private readonly log: (message: string) => void;
  private readonly run: ReturnType<typeof redisScripts<typeof SCRIPTS>>;

  /** Takes a connected client; `close` does not end it (its owner does). */
  constructor(redis: Redis, prefix: string, options: PushStoreOptions) {
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
    await unavailableAs(this.redis, () =>
      this.redis
        .multi()
        .hdel(`${this.prefix}subscriptions`, endpoint)
        .hdel(`${this.prefix}failures`, endpoint)
        .exec(),
    );
  }

  async forgetDevice(kid: string): Promise<void> {
    await this.run("removeWhere", "kid", kid, "");
  }

  async subscriptions(owners: ReadonlySet<string>): Promise<StoredPushSubscription[]> {
    const [all, failures] = await unavailableAs(this.redis, () =>
      Promise.all([
        this.redis.hgetall(`${this.prefix}subscriptions`),
        this.redis.hgetall(`${this.prefix}failures`),
      ]),
    );
    const subscriptions: StoredPushSubscription[] = [];
    for (const [endpoint, json] of Object.entries(all)) {
      const read = verifiedSubscription(this.key, {
        ...(parseStored(JsonObject, json) ?? {}),
        endpoint,
        failures: Number(failures[endpoint] ?? 0),
      });
      if (!read.ok) {
        if (await this.run("removeIfUnchanged", endpoint, json))
          this.log(removedUnverifiedLine(endpoint, read.why));
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
    const set = await unavailableAs(this.redis, () =>
      this.redis.set(`${this.prefix}redeemed:${jti}`, "1", "PXAT", expiresAt, "NX"),
    );
    return set === "OK";
  }

  async release(jti: string): Promise<void> {
    await unavailableAs(this.redis, () => this.redis.del(`${this.prefix}redeemed:${jti}`));
  }

  close(): void {}
}

/** A stored subscription's fields, or none when it is not a JSON object (the schema then says what is missing). */
const JsonObject = z.record(z.string(), z.unknown());
