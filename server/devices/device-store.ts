import path from "node:path";
import type { Redis } from "ioredis";
import { PrivateDatabase } from "../store/private-database.ts";
import { redisScripts, unavailableAs } from "../store/redis-scripts.ts";

/**
 * Devices an owner signed in from a device link (a phone that scanned the dashboard's QR code). Each
 * link's token carries the device's key id (`kid`); a revoked device's kid is refused from its next
 * connect on. One process keeps them in its own SQLite file under DATA_DIR (0600); several instances
 * share them in Redis, so a link minted on one works on every other and a revocation holds everywhere.
 */

export type Device = { kid: string; owner: string; name: string; createdAt: number; expiresAt: number };

export interface DeviceStore {
  add(device: Device): Promise<void>;
  /** The owner's devices that still work, newest first (expired ones are forgotten). */
  list(owner: string, now: number): Promise<Device[]>;
  /** Whether a token with this kid is still good: a known device, neither revoked nor expired. */
  isActive(kid: string, now: number): Promise<boolean>;
  /** Returns whether the owner had such a device to revoke. */
  revoke(kid: string, owner: string, now: number): Promise<boolean>;
  close(): void;
}

/** The device store the deployment uses: Redis's when the instances share one, else DATA_DIR's file. */
export function openDeviceStore(options: { redis: Redis | null; redisKeyPrefix: string; dataDir: string }): DeviceStore {
  if (options.redis) return new RedisDeviceStore(options.redis, `${options.redisKeyPrefix}devices:`);
  return new SqliteDeviceStore(path.join(options.dataDir, "devices.sqlite"));
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS devices (
    kid TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE INDEX IF NOT EXISTS devices_owner ON devices(owner);
`;

const STATEMENTS = {
  add: "INSERT INTO devices (kid, owner, name, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)",
  get: "SELECT * FROM devices WHERE kid = ?",
  list: "SELECT * FROM devices WHERE owner = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at DESC",
  revoke: "UPDATE devices SET revoked_at = ? WHERE kid = ? AND owner = ? AND revoked_at IS NULL",
  prune: "DELETE FROM devices WHERE expires_at < ?",
};

type Row = { kid: string; owner: string; name: string; created_at: number; expires_at: number; revoked_at: number | null };

const toDevice = (row: Row): Device => ({ kid: row.kid, owner: row.owner, name: row.name, createdAt: row.created_at, expiresAt: row.expires_at });

export class SqliteDeviceStore implements DeviceStore {
  private readonly database: PrivateDatabase<keyof typeof STATEMENTS>;

  constructor(file: string) {
    this.database = new PrivateDatabase(file, SCHEMA, STATEMENTS);
  }

  async add(device: Device): Promise<void> {
    this.database.statements.add.run(device.kid, device.owner, device.name, device.createdAt, device.expiresAt);
  }

  async list(owner: string, now: number): Promise<Device[]> {
    this.database.statements.prune.run(now);
    return (this.database.statements.list.all(owner, now) as Row[]).map(toDevice);
  }

  async isActive(kid: string, now: number): Promise<boolean> {
    const row = this.database.statements.get.get(kid) as Row | undefined;
    return row !== undefined && row.revoked_at === null && row.expires_at > now;
  }

  async revoke(kid: string, owner: string, now: number): Promise<boolean> {
    return Number(this.database.statements.revoke.run(now, kid, owner).changes) > 0;
  }

  close(): void {
    this.database.close();
  }
}

/** Newest first; an expired device (or one whose key Redis already let lapse) is forgotten on the way. */
const LIST = `
local p, owner, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local index = p .. 'owner-devices:' .. owner
local out = {}
for _, kid in ipairs(redis.call('ZREVRANGE', index, 0, -1)) do
  local row = redis.call('HMGET', p .. 'device:' .. kid, 'name', 'created', 'expires')
  if row[1] and tonumber(row[3]) > now then
    out[#out + 1] = kid
    out[#out + 1] = row[1]
    out[#out + 1] = row[2]
    out[#out + 1] = row[3]
  else
    redis.call('DEL', p .. 'device:' .. kid)
    redis.call('ZREM', index, kid)
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

/**
 * Keys, under the deployment's prefix (`<REDIS_KEY_PREFIX>devices:`): `device:<kid>` hash (owner,
 * name, created, expires), which Redis drops by itself when the link expires, and
 * `owner-devices:<owner>` sorted set of kids by creation, for the listing.
 */
export class RedisDeviceStore implements DeviceStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly run: ReturnType<typeof redisScripts<"list" | "revoke">>;

  /** Takes a connected client; `close` does not end it (its owner does). */
  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
    this.run = redisScripts(redis, prefix, { list: LIST, revoke: REVOKE });
  }

  async add(device: Device): Promise<void> {
    const key = `${this.prefix}device:${device.kid}`;
    await unavailableAs(this.redis, () =>
      this.redis
        .multi()
        .hset(key, { owner: device.owner, name: device.name, created: device.createdAt, expires: device.expiresAt })
        .pexpireat(key, device.expiresAt)
        .zadd(`${this.prefix}owner-devices:${device.owner}`, device.createdAt, device.kid)
        .exec(),
    );
  }

  async list(owner: string, now: number): Promise<Device[]> {
    const flat = (await this.run("list", owner, now)) as string[];
    const devices: Device[] = [];
    for (let i = 0; i + 3 < flat.length; i += 4) devices.push({ kid: flat[i]!, owner, name: flat[i + 1]!, createdAt: Number(flat[i + 2]), expiresAt: Number(flat[i + 3]) });
    return devices;
  }

  async isActive(kid: string, now: number): Promise<boolean> {
    const expires = await unavailableAs(this.redis, () => this.redis.hget(`${this.prefix}device:${kid}`, "expires"));
    return expires !== null && Number(expires) > now;
  }

  async revoke(kid: string, owner: string): Promise<boolean> {
    return (await this.run("revoke", kid, owner)) === 1;
  }

  close(): void {}
}
