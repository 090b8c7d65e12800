import { PrivateDatabase } from "../store/private-database.ts";

/**
 * Devices an owner signed in from a device link (a phone that scanned the dashboard's QR code). Each
 * link's token carries the device's key id (`kid`); a revoked device's kid is refused from its next
 * connect on. Its own SQLite file under DATA_DIR (0600).
 */

export type Device = { kid: string; owner: string; name: string; createdAt: number; expiresAt: number; revokedAt: number | null };

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

const toDevice = (row: Row): Device => ({ kid: row.kid, owner: row.owner, name: row.name, createdAt: row.created_at, expiresAt: row.expires_at, revokedAt: row.revoked_at });

export class DeviceStore {
  private readonly database: PrivateDatabase<keyof typeof STATEMENTS>;

  constructor(file: string) {
    this.database = new PrivateDatabase(file, SCHEMA, STATEMENTS);
  }

  add(device: Omit<Device, "revokedAt">): void {
    this.database.statements.add.run(device.kid, device.owner, device.name, device.createdAt, device.expiresAt);
  }

  /** The owner's devices that still work, newest first (expired ones are forgotten). */
  list(owner: string, now: number): Device[] {
    this.database.statements.prune.run(now);
    return (this.database.statements.list.all(owner, now) as Row[]).map(toDevice);
  }

  /** Whether a token with this kid is still good: a known device, neither revoked nor expired. */
  isActive(kid: string, now: number): boolean {
    const row = this.database.statements.get.get(kid) as Row | undefined;
    return row !== undefined && row.revoked_at === null && row.expires_at > now;
  }

  /** Returns whether the owner had such a device to revoke. */
  revoke(kid: string, owner: string, now: number): boolean {
    return Number(this.database.statements.revoke.run(now, kid, owner).changes) > 0;
  }

  close(): void {
    this.database.close();
  }
}
