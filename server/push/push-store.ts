import { closeSync, existsSync, openSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { PRIVATE_FILE_MODE, preparePrivateDir, restrictFiles } from "../store/data-dir.ts";

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

export class PushStore {
  private readonly db: DatabaseSync;
  private readonly statements: Record<string, StatementSync>;

  constructor(file: string) {
    if (file !== ":memory:") {
      preparePrivateDir(path.dirname(file));
      if (!existsSync(file)) closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
    }
    this.db = new DatabaseSync(file);
    this.db.exec("PRAGMA journal_mode = WAL;");
    this.db.exec(SCHEMA);
    if (file !== ":memory:") restrictFiles(file, `${file}-wal`, `${file}-shm`);
    this.statements = {
      upsert: this.db.prepare(
        "INSERT INTO subscriptions (endpoint, owner, device, p256dh, auth, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(endpoint) DO UPDATE SET owner = excluded.owner, device = excluded.device, p256dh = excluded.p256dh, auth = excluded.auth",
      ),
      remove: this.db.prepare("DELETE FROM subscriptions WHERE endpoint = ?"),
      removeDevice: this.db.prepare("DELETE FROM subscriptions WHERE device = ?"),
      removeOwned: this.db.prepare("DELETE FROM subscriptions WHERE endpoint = ? AND owner = ?"),
      forOwners: this.db.prepare("SELECT owner, device, endpoint, p256dh, auth FROM subscriptions ORDER BY created_at"),
      redeem: this.db.prepare("INSERT INTO redeemed_actions (jti, expires_at) VALUES (?, ?) ON CONFLICT(jti) DO NOTHING"),
      prune: this.db.prepare("DELETE FROM redeemed_actions WHERE expires_at < ?"),
    };
  }

  subscribe(record: PushSubscriptionRecord, now: number): void {
    this.statements.upsert!.run(record.endpoint, record.owner, record.device, record.p256dh, record.auth, now);
  }

  /** An owner removes one of their own subscriptions; returns whether there was one. */
  unsubscribe(endpoint: string, owner: string): boolean {
    return Number(this.statements.removeOwned!.run(endpoint, owner).changes) > 0;
  }

  /** The push service said the subscription is gone (404, 410). */
  forget(endpoint: string): void {
    this.statements.remove!.run(endpoint);
  }

  /** A revoked device's subscriptions. */
  forgetDevice(kid: string): void {
    this.statements.removeDevice!.run(kid);
  }

  subscriptions(owners: ReadonlySet<string>): PushSubscriptionRecord[] {
    return (this.statements.forOwners!.all() as PushSubscriptionRecord[]).filter((record) => owners.has(record.owner));
  }

  /** Claims a token id once: true for the first redemption, false for every replay. */
  redeem(jti: string, expiresAt: number, now: number): boolean {
    this.statements.prune!.run(now);
    return Number(this.statements.redeem!.run(jti, expiresAt).changes) === 1;
  }

  close(): void {
    this.db.close();
  }
}
