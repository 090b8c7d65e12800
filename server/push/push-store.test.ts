import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { sideStoreBackends } from "../../test/support/store-backends.ts";
import {
  MAX_SUBSCRIPTIONS_PER_OWNER,
  type PushStore,
  type PushSubscriptionRecord,
} from "./push-store.ts";
import { RedisPushStore } from "./redis-push-store.ts";
import { SqlitePushStore } from "./sqlite-push-store.ts";
import { signSubscription, subscriptionKey } from "./subscription-signature.ts";

const expiresAt = Date.now() + 3600_000;
const signingKey = subscriptionKey("a".repeat(32));
/** A subscription made with the link of this key id (a device's, or the owner links'). */
const subscription = (endpoint: string, owner: string, kid: string): PushSubscriptionRecord => ({
  endpoint,
  owner,
  link: { kid, expiresAt },
  p256dh: `key-${endpoint}`,
  auth: `auth-${endpoint}`,
});
const endpointsOf = (records: PushSubscriptionRecord[]) => records.map((record) => record.endpoint);
const stored = (record: PushSubscriptionRecord, createdAt: number, failures = 0) => ({
  ...record,
  createdAt,
  failures,
});

const logs: string[] = [];
const backends = sideStoreBackends<PushStore>({
  sqlite: (file) => new SqlitePushStore(file, { signingKey, log: (line) => logs.push(line) }),
  redis: (client, prefix) =>
    new RedisPushStore(client, prefix, { signingKey, log: (line) => logs.push(line) }),
});

describe.each(backends)("push store on $name", (backend) => {
  it("keeps each owner's subscriptions with their links, oldest first; an owner removes only their own; gone ones and a revoked device's go", async () => {
    const store = backend.open();
    await store.subscribe(subscription("https://push.test/desk", "owner", "owner-link-1"), 1);
    await store.subscribe(subscription("https://push.test/phone", "owner", "device-phone"), 2);
    await store.subscribe(subscription("https://push.test/alice", "alice", "owner-link-1"), 3);
    await store.subscribe(subscription("https://push.test/tablet", "owner", "device-tablet"), 4);
    // Subscribing again (a newer link) replaces the keys and the link and keeps its place.
    const renewed = {
      ...subscription("https://push.test/desk", "owner", "owner-link-2"),
      link: { kid: "owner-link-2", expiresAt: expiresAt + 1 },
      p256dh: "renewed",
    };
    await store.subscribe(renewed, 5);
    expect(await store.subscriptions(new Set(["owner"]))).toEqual([
      stored(renewed, 1),
      stored(subscription("https://push.test/phone", "owner", "device-phone"), 2),
      stored(subscription("https://push.test/tablet", "owner", "device-tablet"), 4),
    ]);
    expect(endpointsOf(await store.subscriptions(new Set(["owner", "alice"])))).toHaveLength(4);
    expect(await store.unsubscribe("https://push.test/alice", "owner")).toBe(false);
    expect(await store.unsubscribe("https://push.test/alice", "alice")).toBe(true);
    expect(await store.unsubscribe("https://push.test/alice", "alice")).toBe(false);
    await store.forgetDevice("device-phone");
    await store.forget("https://push.test/tablet");
    expect(endpointsOf(await store.subscriptions(new Set(["owner", "alice"])))).toEqual([
      "https://push.test/desk",
    ]);
  });

  it("redeems an action token once each; a released one can be redeemed again", async () => {
    const store = backend.open();
    expect(await store.redeem("j1", expiresAt, Date.now())).toBe(true);
    expect(await store.redeem("j1", expiresAt, Date.now())).toBe(false);
    expect(await store.redeem("j2", expiresAt, Date.now())).toBe(true);
    await store.release("j1");
    expect(await store.redeem("j1", expiresAt, Date.now())).toBe(true);
  });

  it("22.3 a subscription the server did not sign (written straight into the store, signed with another AUTH_SECRET, or altered) is ignored, removed and logged once", async () => {
    const store = backend.open();
    await store.subscribe(subscription("https://push.test/mine", "owner", "owner-link-1"), 1);
    const forged = subscription("https://push.test/forged", "owner", "owner-link-1");
    const otherSecret = subscription("https://push.test/other-secret", "owner", "owner-link-1");
    const raw = backend.raw();
    const rows: [PushSubscriptionRecord, string | null][] = [
      [forged, null],
      [otherSecret, signSubscription(subscriptionKey("b".repeat(32)), otherSecret)],
      // Signed for its own owner, then handed to another: the signature no longer matches.
      [
        { ...subscription("https://push.test/altered", "owner", "owner-link-1") },
        signSubscription(
          signingKey,
          subscription("https://push.test/altered", "alice", "owner-link-1"),
        ),
      ],
    ];
    if (raw.name === "sqlite") {
      const db = new DatabaseSync(raw.file);
      const insert = db.prepare(
        "INSERT INTO subscriptions (endpoint, owner, link_kid, link_expires_at, p256dh, auth, created_at, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      );
      for (const [record, signature] of rows)
        insert.run(
          record.endpoint,
          record.owner,
          record.link.kid,
          record.link.expiresAt,
          record.p256dh,
          record.auth,
          2,
          signature,
        );
      db.close();
    } else {
      for (const [{ endpoint, ...record }, signature] of rows)
        await raw.client.hset(
          `${raw.prefix}subscriptions`,
          endpoint,
          JSON.stringify({ ...record, createdAt: 2, ...(signature === null ? {} : { signature }) }),
        );
    }
    logs.length = 0;
    expect(endpointsOf(await store.subscriptions(new Set(["owner", "alice"])))).toEqual([
      "https://push.test/mine",
    ]);
    expect(endpointsOf(await store.subscriptions(new Set(["owner", "alice"])))).toEqual([
      "https://push.test/mine",
    ]);
    expect(logs).toEqual(
      Array.from(
        { length: 3 },
        () =>
          "push subscription for https://push.test is not signed by this server: ignored and removed",
      ),
    );
    if (raw.name === "sqlite") {
      const db = new DatabaseSync(raw.file, { readOnly: true });
      expect(db.prepare("SELECT endpoint FROM subscriptions").all()).toEqual([
        expect.objectContaining({ endpoint: "https://push.test/mine" }),
      ]);
      db.close();
    } else
      expect(await raw.client.hkeys(`${raw.prefix}subscriptions`)).toEqual([
        "https://push.test/mine",
      ]);
  });

  it(`22.4 an owner keeps at most ${MAX_SUBSCRIPTIONS_PER_OWNER} subscriptions (the oldest goes); failures in a row are counted and cleared`, async () => {
    const store = backend.open();
    await store.subscribe(subscription("https://push.test/alice", "alice", "owner-link-1"), 0);
    for (let i = 1; i <= MAX_SUBSCRIPTIONS_PER_OWNER; i++)
      expect(
        await store.subscribe(subscription(`https://push.test/${i}`, "owner", "owner-link-1"), i),
      ).toEqual([]);
    // Renewing one adds none: nothing goes.
    expect(
      await store.subscribe(subscription("https://push.test/1", "owner", "owner-link-2"), 100),
    ).toEqual([]);
    expect(
      await store.subscribe(subscription("https://push.test/new", "owner", "owner-link-1"), 101),
    ).toEqual(["https://push.test/1"]);
    const mine = endpointsOf(await store.subscriptions(new Set(["owner"])));
    expect(mine).toHaveLength(MAX_SUBSCRIPTIONS_PER_OWNER);
    expect(mine[0]).toBe("https://push.test/2");
    expect(mine.at(-1)).toBe("https://push.test/new");
    // Another owner's are theirs.
    expect(endpointsOf(await store.subscriptions(new Set(["alice"])))).toEqual([
      "https://push.test/alice",
    ]);

    expect(await store.countFailure("https://push.test/2")).toBe(1);
    expect(await store.countFailure("https://push.test/2")).toBe(2);
    expect((await store.subscriptions(new Set(["owner"])))[0]).toMatchObject({
      endpoint: "https://push.test/2",
      failures: 2,
    });
    await store.clearFailures("https://push.test/2");
    expect(await store.countFailure("https://push.test/2")).toBe(1);
    // Storing it again starts afresh, and a subscription no longer stored counts nothing.
    await store.subscribe(subscription("https://push.test/2", "owner", "owner-link-1"), 102);
    expect((await store.subscriptions(new Set(["owner"])))[0]).toMatchObject({
      endpoint: "https://push.test/2",
      failures: 0,
    });
    expect(await store.countFailure("https://push.test/never")).toBe(0);
  });

  it.runIf(backend.shared)(
    "is one for every instance: a subscription made on one is seen by another, a token redeemed on one is a replay there",
    async () => {
      const first = backend.open();
      const second = backend.shared!();
      await first.subscribe(subscription("https://push.test/desk", "owner", "device-desk"), 1);
      expect(endpointsOf(await second.subscriptions(new Set(["owner"])))).toEqual([
        "https://push.test/desk",
      ]);
      expect(await first.redeem("j1", expiresAt, Date.now())).toBe(true);
      expect(await second.redeem("j1", expiresAt, Date.now())).toBe(false);
      await second.forgetDevice("device-desk");
      expect(await first.subscriptions(new Set(["owner"]))).toEqual([]);
    },
  );
});

describe("push store on SQLite, a file from an earlier version", () => {
  it("gains the columns; its subscriptions are unsigned, so they are removed when read (the dashboard stores its own again on its next visit)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "push-store-"));
    try {
      const file = path.join(dir, "push.sqlite");
      const old = new DatabaseSync(file);
      old.exec(
        "CREATE TABLE subscriptions (endpoint TEXT PRIMARY KEY, owner TEXT NOT NULL, device TEXT, p256dh TEXT NOT NULL, auth TEXT NOT NULL, created_at INTEGER NOT NULL)",
      );
      old
        .prepare("INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?, ?)")
        .run("https://push.test/old-phone", "owner", "device-old", "key", "auth", 1);
      old.close();
      const removed: string[] = [];
      const store = new SqlitePushStore(file, { signingKey, log: (line) => removed.push(line) });
      expect(await store.subscriptions(new Set(["owner"]))).toEqual([]);
      expect(removed).toEqual([
        "push subscription for https://push.test does not read (link.kid): ignored and removed",
      ]);
      await store.subscribe(subscription("https://push.test/old-phone", "owner", "device-new"), 2);
      expect(await store.subscriptions(new Set(["owner"]))).toEqual([
        stored(subscription("https://push.test/old-phone", "owner", "device-new"), 2),
      ]);
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
