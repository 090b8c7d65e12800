import { z } from "zod";
import { DeviceMinter } from "../../lib/devices.ts";
import { PrivateDatabase } from "../store/private-database.ts";
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
export const COMMAND_LINE = "command-line";
const OWNER_LINK = "owner-link:";

export function storedMinter(minter: DeviceMinter): string | null {
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
export const StoredDevice = z.object({
  kid: z.string().min(1),
  owner: z.string().min(1),
  name: z.string().min(1),
  createdAt: z.number().int().nonnegative(),
  expiresAt: z.number().int().nonnegative(),
  mintedBy: StoredMinter,
});

/** A stored device's fields, each as the store hands it back. */
export type StoredFields = Record<keyof z.input<typeof StoredDevice>, unknown>;

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
