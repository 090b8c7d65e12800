import { PrivateDatabase } from "../store/private-database.ts";
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
  evictOldest:
    "DELETE FROM subscriptions WHERE owner = ? AND endpoint NOT IN (SELECT endpoint FROM subscriptions WHERE owner = ? ORDER BY created_at DESC, rowid DESC LIMIT ?) RETURNING endpoint",
  remove: "DELETE FROM subscriptions WHERE endpoint = ?",
  removeDevice: "DELETE FROM subscriptions WHERE link_kid = ?",
  removeOwned: "DELETE FROM subscriptions WHERE endpoint = ? AND owner = ?",
  all: "SELECT endpoint, owner, link_kid, link_expires_at, p256dh, auth, created_at, signature, failures FROM subscriptions ORDER BY created_at, rowid",
  countFailure:
    "UPDATE subscriptions SET failures = failures + 1 WHERE endpoint = ? RETURNING failures",
  clearFailures: "UPDATE subscriptions SET failures = 0 WHERE endpoint = ?",
  redeem:
    "INSERT INTO redeemed_actions (jti, expires_at) VALUES (?, ?) ON CONFLICT(jti) DO NOTHING",
  release: "DELETE FROM redeemed_actions WHERE jti = ?",
  prune: "DELETE FROM redeemed_actions WHERE expires_at < ?",
};

type Row = {
  endpoint: string;
  owner: unknown;
  link_kid: unknown;
  link_expires_at: unknown;
  p256dh: unknown;
  auth: unknown;
  created_at: unknown;
  signature: unknown;
  failures: unknown;
};

/** The push store of one process (push-store.ts): its own SQLite file under DATA_DIR (0600). */
export class SqlitePushStore implements PushStore {
  private readonly database: PrivateDatabase<keyof typeof STATEMENTS>;
  private readonly key: Uint8Array;
  private readonly log: (message: string) => void;

  constructor(file: string, options: PushStoreOptions) {
    // Files from before links, signatures or failure counts were kept gain the columns; their rows
    // are unsigned, so they are removed when read (the dashboard stores its subscription again on its next visit).
    this.database = new PrivateDatabase(file, {
      schema: SCHEMA,
      statements: STATEMENTS,
      added: {
        subscriptions: {
          link_kid: "TEXT",
          link_expires_at: "INTEGER",
          signature: "TEXT",
          failures: "INTEGER NOT NULL DEFAULT 0",
        },
      },
    });
    this.key = options.signingKey;
    this.log = options.log;
  }

  async subscribe(record: PushSubscriptionRecord, now: number): Promise<string[]> {
    const { statements } = this.database;
    statements.upsert.run(
      record.endpoint,
      record.owner,
      record.link.kid,
      record.link.expiresAt,
      record.p256dh,
      record.auth,
      now,
      signSubscription(this.key, record),
    );
    return (
      statements.evictOldest.all(record.owner, record.owner, MAX_SUBSCRIPTIONS_PER_OWNER) as {
        endpoint: string;
      }[]
    ).map((row) => row.endpoint);
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
      const read = verifiedSubscription(this.key, {
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
        this.log(removedUnverifiedLine(row.endpoint, read.why));
      } else if (owners.has(read.subscription.owner)) subscriptions.push(read.subscription);
    }
    return subscriptions;
  }

  async countFailure(endpoint: string): Promise<number> {
    const row = this.database.statements.countFailure.get(endpoint) as
      { failures: number } | undefined;
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
