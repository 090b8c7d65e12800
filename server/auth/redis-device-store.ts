import type { Redis } from "ioredis";
import { z } from "zod";
import { Flag, flatRows, redisScripts, unavailableAs } from "../store/redis-scripts.ts";
import { SetAside } from "../store/rows.ts";
import {
  COMMAND_LINE,
  type Device,
  type DeviceStore,
  StoredDevice,
  type StoredFields,
  storedMinter,
} from "./device-store.ts";

/** The devices of several instances, in the Redis they share (device-store.ts says what a device is). */

/**
 * Newest first; an expired device (or one whose key Redis already let lapse) is forgotten on the way.
 * The fields of the others go back as they are stored, for the caller to read (and set aside).
 */
const LIST = `
local p, owner, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local index = p .. 'owner-devices:' .. owner
local out = {}
for _, kid in ipairs(redis.call('ZREVRANGE', index, 0, -1)) do
  local key = p .. 'device:' .. kid
  local fields = redis.call('HMGET', key, 'owner', 'name', 'created', 'expires', 'mintedBy')
  local expires = tonumber(fields[4])
  if redis.call('EXISTS', key) == 0 or (expires and expires <= now) then
    redis.call('DEL', key)
    redis.call('ZREM', index, kid)
  else
    out[#out + 1] = kid
    out[#out + 1] = fields
  end
end
return out
`;

/** Only the device's own owner revokes it; a revoked device is deleted, so its kid is unknown from then on. */
const REVOKE = `
local p, kid, owner = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HGET', p .. 'device:' .. kid, 'owner') ~= owner then return 0 end
redis.call('DEL', p .. 'device:' .. kid)
redis.call('ZREM', p .. 'owner-devices:' .. owner, kid)
return 1
`;

/** Revokes one device unless the command line minted it; returns 1 when it did. */
const REVOKE_UNLESS_COMMAND_LINE = `
local p, kid = ARGV[1], ARGV[2]
local key = p .. 'device:' .. kid
if redis.call('EXISTS', key) == 0 or redis.call('HGET', key, 'mintedBy') == '${COMMAND_LINE}' then return 0 end
local owner = redis.call('HGET', key, 'owner')
redis.call('DEL', key)
if owner then redis.call('ZREM', p .. 'owner-devices:' .. owner, kid) end
return 1
`;

/** LIST's reply: each device's kid, then its hash fields (owner, name, created, expires, mintedBy) as stored, for `read` to judge. */
const Listed = flatRows(
  z.tuple([
    z.string(),
    z.tuple([
      z.string().nullable(),
      z.string().nullable(),
      z.string().nullable(),
      z.string().nullable(),
      z.string().nullable(),
    ]),
  ]),
);

const SCRIPTS = {
  list: { lua: LIST, reply: Listed },
  revoke: { lua: REVOKE, reply: Flag },
  revokeUnlessCommandLine: { lua: REVOKE_UNLESS_COMMAND_LINE, reply: Flag },
};

/** A Redis MATCH pattern for keys that start with `text`: its glob characters escaped. */
const globPrefix = (text: string) => `${text.replace(/[*?[\]\\]/g, "\\$&")}*`;

/**
 * Keys, under the deployment's prefix (`<REDIS_KEY_PREFIX>devices:`): `device:<kid>` hash (owner,
 * name, created, expires, mintedBy), which Redis drops by itself when the link expires, and
 * `owner-devices:<owner>` sorted set of kids by creation, for the listing.
 */
export class RedisDeviceStore implements DeviceStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly run: ReturnType<typeof redisScripts<typeof SCRIPTS>>;
  private readonly setAside: SetAside<Device>;

  /** Takes a connected client; `close` does not end it (its owner does). */
  constructor(redis: Redis, prefix: string, log: (message: string) => void) {
    this.redis = redis;
    this.prefix = prefix;
    this.run = redisScripts(redis, prefix, SCRIPTS);
    this.setAside = new SetAside("device", StoredDevice, log);
  }

  async add(device: Device): Promise<void> {
    const key = `${this.prefix}device:${device.kid}`;
    const minter = storedMinter(device.mintedBy);
    await unavailableAs(this.redis, () =>
      this.redis
        .multi()
        .hset(key, {
          owner: device.owner,
          name: device.name,
          created: device.createdAt,
          expires: device.expiresAt,
          ...(minter === null ? {} : { mintedBy: minter }),
        })
        .pexpireat(key, device.expiresAt)
        .zadd(`${this.prefix}owner-devices:${device.owner}`, device.createdAt, device.kid)
        .exec(),
    );
  }

  async list(owner: string, now: number): Promise<Device[]> {
    const devices: Device[] = [];
    for (const [kid, fields] of await this.run("list", owner, now)) {
      const device = this.read(kid, fields);
      if (device) devices.push(device);
    }
    return devices;
  }

  /** A device from its hash fields (owner, name, created, expires, mintedBy), or null when they do not read. */
  private read(
    kid: string,
    [owner, name, created, expires, mintedBy]: readonly (string | null)[],
  ): Device | null {
    const fields: StoredFields = {
      kid,
      owner,
      name,
      createdAt: storedNumber(created ?? null),
      expiresAt: storedNumber(expires ?? null),
      mintedBy: mintedBy ?? null,
    };
    return this.setAside.read(kid, fields);
  }

  async isActive(kid: string, now: number): Promise<boolean> {
    const stored = await unavailableAs(this.redis, () =>
      this.redis.hgetall(`${this.prefix}device:${kid}`),
    );
    if (Object.keys(stored).length === 0) return false;
    const device = this.read(
      kid,
      [stored.owner, stored.name, stored.created, stored.expires, stored.mintedBy].map(
        (field) => field ?? null,
      ),
    );
    return device !== null && device.expiresAt > now;
  }

  async revoke(kid: string, owner: string): Promise<boolean> {
    return this.run("revoke", kid, owner);
  }

  async revokeMintedThroughOwnerLinks(): Promise<number> {
    const keyPrefix = `${this.prefix}device:`;
    let revoked = 0;
    let cursor = "0";
    do {
      const [next, keys] = await unavailableAs(this.redis, () =>
        this.redis.scan(cursor, "MATCH", globPrefix(keyPrefix), "COUNT", 200),
      );
      for (const key of keys)
        if (await this.run("revokeUnlessCommandLine", key.slice(keyPrefix.length))) revoked++;
      cursor = next;
    } while (cursor !== "0");
    return revoked;
  }

  close(): void {}
}

/** A number field as Redis keeps it (text): its number when it is one, else the text itself (the schema refuses it). */
const storedNumber = (text: string | null): unknown =>
  text !== null && /^\d+$/.test(text) ? Number(text) : text;
