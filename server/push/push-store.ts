import { PrivateDatabase } from "../store/private-database.ts";

/**
 * The push store, its own SQLite file under DATA_DIR (0600): each owner's push subscriptions, and the
 * action tokens already redeemed (kept until their expiry, so a replay is refused).
 */

export type PushSubscriptionRecord = {
  owner: string;
  /** The device link (its kid) the owner subscribed with, or null for an owner link. */
  device: string | null;
  endpoint: string;
  p256dh: string;
  auth: string;
};

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS subscriptions (
    endpoint TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    device TEXT,
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
  upsert: "INSERT INTO subscriptions (endpoint, owner, device, p256dh, auth, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(endpoint) DO UPDATE SET owner = excluded.owner, device = excluded.device, p256dh = excluded.p256dh, auth = excluded.auth",
  remove: "DELETE FROM subscriptions WHERE endpoint = ?",
  removeDevice: "DELETE FROM subscriptions WHERE device = ?",
  removeOwned: "DELETE FROM subscriptions WHERE endpoint = ? AND owner = ?",
  forOwners: "SELECT owner, device, endpoint, p256dh, auth FROM subscriptions ORDER BY created_at",
  redeem: "INSERT INTO redeemed_actions (jti, expires_at) VALUES (?, ?) ON CONFLICT(jti) DO NOTHING",
  prune: "DELETE FROM redeemed_actions WHERE expires_at < ?",
};

export class PushStore {
  private readonly database: PrivateDatabase<keyof typeof STATEMENTS>;

  constructor(file: string) {
    this.database = new PrivateDatabase(file, SCHEMA, STATEMENTS);
  }

  subscribe(record: PushSubscriptionRecord, now: number): void {
    this.database.statements.upsert.run(record.endpoint, record.owner, record.device, record.p256dh, record.auth, now);
  }

  /** An owner removes one of their own subscriptions; returns whether there was one. */
  unsubscribe(endpoint: string, owner: string): boolean {
    return Number(this.database.statements.removeOwned.run(endpoint, owner).changes) > 0;
  }

  /** The push service said the subscription is gone (404, 410). */
  forget(endpoint: string): void {
    this.database.statements.remove.run(endpoint);
  }

  /** A revoked device's subscriptions. */
  forgetDevice(kid: string): void {
    this.database.statements.removeDevice.run(kid);
  }

  subscriptions(owners: ReadonlySet<string>): PushSubscriptionRecord[] {
    return (this.database.statements.forOwners.all() as PushSubscriptionRecord[]).filter((record) => owners.has(record.owner));
  }

  /** Claims a token id once: true for the first redemption, false for every replay. */
  redeem(jti: string, expiresAt: number, now: number): boolean {
    this.database.statements.prune.run(now);
    return Number(this.database.statements.redeem.run(jti, expiresAt).changes) === 1;
  }

  close(): void {
    this.database.close();
  }
}
