import type { Redis } from "ioredis";
import { z } from "zod";
import { DeviceMinter } from "../../lib/devices.ts";
import { PrivateDatabase } from "../store/private-database.ts";
import { Flag, flatRows, redisScripts, unavailableAs } from "../store/redis-scripts.ts";
import { SetAside } from "../store/rows.ts";

/**
 * Devices an owner signed in from a device link (a phone that scanned the dashboard's QR code). Each
 * link's token carries the device's key id (`kid`); a revoked device's kid is refused from its next
 * connect on. One process keeps them in its own SQLite file under DATA_DIR (0600); several instances
 * share them in Redis, so a link minted on one works on every other and a revocation holds everywhere.
 * Each device records which link minted it, so revoking the owner links ends what they minted.
 * A stored device that no longer reads (a hand edit, another version's data) is set aside: logged
 * once with its kid, left out of the list, and not a working link.
 */

export type Device = {
  kid: string;
  owner: string;
  name: string;
  createdAt: number;
  expiresAt: number;
  mintedBy: DeviceMinter;
};

export interface DeviceStore {
  add(device: Device): Promise<void>;
  /** The owner's devices that still work, newest first (expired ones are forgotten, unreadable ones set aside). */
  list(owner: string, now: number): Promise<Device[]>;
  /** Whether a token with this kid is still good: a known device, neither revoked nor expired. */
  isActive(kid: string, now: number): Promise<boolean>;
  /** Returns whether the owner had such a device to revoke. */
  revoke(kid: string, owner: string, now: number): Promise<boolean>;
  /**
   * The owner links were revoked: so is every device minted through one (or whose minter an earlier
   * version did not record), of every owner. Devices minted by `npm run owner-link -- --device` stay.
   * Returns how many were revoked.
   */
  revokeMintedThroughOwnerLinks(now: number): Promise<number>;
  close(): void;
}

/**
 * How a device's minter is stored (a SQLite column, a Redis hash field): `owner-link:<kid>` or
 * `command-line`; absent for a device stored before minters were recorded.
 */
const COMMAND_LINE = "command-line";
const OWNER_LINK = "owner-link:";

function storedMinter(minter: DeviceMinter): string | null {
  if (minter.kind === "owner-link") return `${OWNER_LINK}${minter.kid}`;
  return minter.kind === "command-line" ? COMMAND_LINE : null;
}

const StoredMinter = z
  .string()
  .nullable()
  .transform((stored, context): DeviceMinter => {
    if (stored === null) return { kind: "unrecorded" };
    if (stored === COMMAND_LINE) return { kind: "command-line" };
    if (stored.startsWith(OWNER_LINK) && stored.length > OWNER_LINK.length)
      return { kind: "owner-link", kid: stored.slice(OWNER_LINK.length) };
    context.addIssue({ code: "custom", message: "is not a minter" });
    return z.NEVER;
  });

/** A stored device as both stores read it back: fields of the right types, times that are epoch ms. */
const StoredDevice = z.object({
  kid: z.string().min(1),
  owner: z.string().min(1),
  name: z.string().min(1),
  createdAt: z.number().int().nonnegative(),
  expiresAt: z.number().int().nonnegative(),
  mintedBy: StoredMinter,
});

/** A stored device's fields, each as the store hands it back. */
type StoredFields = Record<keyof z.input<typeof StoredDevice>, unknown>;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS devices (
    kid TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER,
    minted_by TEXT
  );
  CREATE INDEX IF NOT EXISTS devices_owner ON devices(owner);
`;

const STATEMENTS = {
  add: "INSERT INTO devices (kid, owner, name, created_at, expires_at, revoked_at, minted_by) VALUES (?, ?, ?, ?, ?, NULL, ?)",
  get: "SELECT * FROM devices WHERE kid = ?",
  list: "SELECT * FROM devices WHERE owner = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at DESC",
  revoke: "UPDATE devices SET revoked_at = ? WHERE kid = ? AND owner = ? AND revoked_at IS NULL",
  revokeMintedThroughOwnerLinks: `UPDATE devices SET revoked_at = ? WHERE revoked_at IS NULL AND (minted_by IS NULL OR minted_by != '${COMMAND_LINE}')`,
  prune: "DELETE FROM devices WHERE expires_at < ?",
};

/** A row as SQLite hands it back: a hand edit can leave any type in any column. */
type Row = {
  kid: string;
  owner: unknown;
  name: unknown;
  created_at: unknown;
  expires_at: unknown;
  revoked_at: unknown;
  minted_by: unknown;
};

export class SqliteDeviceStore implements DeviceStore {
  private readonly database: PrivateDatabase<keyof typeof STATEMENTS>;
  private readonly setAside: SetAside<Device>;

  constructor(file: string, log: (message: string) => void) {
    // Files from before minters were recorded: their devices read as unrecorded.
    this.database = new PrivateDatabase(file, {
      schema: SCHEMA,
      statements: STATEMENTS,
      added: { devices: { minted_by: "TEXT" } },
    });
    // A value too large for a JavaScript number reads as a bigint (and is set aside) rather than failing the whole read.
    for (const read of [this.database.statements.list, this.database.statements.get])
      read.setReadBigInts(true);
    this.setAside = new SetAside("device", StoredDevice, log);
  }

  async add(device: Device): Promise<void> {
    this.database.statements.add.run(
      device.kid,
      device.owner,
      device.name,
      device.createdAt,
      device.expiresAt,
      storedMinter(device.mintedBy),
    );
  }

  async list(owner: string, now: number): Promise<Device[]> {
    this.database.statements.prune.run(now);
    const devices: Device[] = [];
    for (const row of this.database.statements.list.all(owner, now) as Row[]) {
      const device = this.read(row);
      if (device) devices.push(device);
    }
    return devices;
  }

  private read(row: Row): Device | null {
    const fields: StoredFields = {
      kid: row.kid,
      owner: row.owner,
      name: row.name,
      createdAt: safeNumber(row.created_at),
      expiresAt: safeNumber(row.expires_at),
      mintedBy: row.minted_by,
    };
    return this.setAside.read(String(row.kid), fields);
  }

  async isActive(kid: string, now: number): Promise<boolean> {
    const row = this.database.statements.get.get(kid) as Row | undefined;
    if (row === undefined || row.revoked_at !== null) return false;
    const device = this.read(row);
    return device !== null && device.expiresAt > now;
  }

  async revoke(kid: string, owner: string, now: number): Promise<boolean> {
    return Number(this.database.statements.revoke.run(now, kid, owner).changes) > 0;
  }

  async revokeMintedThroughOwnerLinks(now: number): Promise<number> {
    return Number(this.database.statements.revokeMintedThroughOwnerLinks.run(now).changes);
  }

  close(): void {
    this.database.close();
  }
}

/** A bigint that fits a JavaScript number as that number; anything else as it is (the schema judges it). */
const safeNumber = (value: unknown): unknown =>
  typeof value === "bigint" &&
  value <= BigInt(Number.MAX_SAFE_INTEGER) &&
  value >= BigInt(Number.MIN_SAFE_INTEGER)
    ? Number(value)
    : value;

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
