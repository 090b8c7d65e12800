import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { sideStoreBackends } from "../../test/support/store-backends.ts";
import { RedisPushStore, SqlitePushStore, type PushStore, type PushSubscriptionRecord } from "./push-store.ts";

const expiresAt = Date.now() + 3600_000;
/** A subscription made with the link of this key id (a device's, or null: a token without one). */
const subscription = (endpoint: string, owner: string, kid: string | null): PushSubscriptionRecord => ({ endpoint, owner, link: { kid, expiresAt }, p256dh: `key-${endpoint}`, auth: `auth-${endpoint}` });
const endpointsOf = (records: PushSubscriptionRecord[]) => records.map((record) => record.endpoint);

describe.each(sideStoreBackends<PushStore>({ sqlite: (file) => new SqlitePushStore(file), redis: (client, prefix) => new RedisPushStore(client, prefix, () => {}) }))("push store on $name", (backend) => {
  it("keeps each owner's subscriptions with their links, oldest first; an owner removes only their own; gone ones and a revoked device's go", async () => {
    const store = backend.open();
    await store.subscribe(subscription("https://push.test/desk", "owner", null), 1);
    await store.subscribe(subscription("https://push.test/phone", "owner", "device-phone"), 2);
    await store.subscribe(subscription("https://push.test/alice", "alice", null), 3);
    await store.subscribe(subscription("https://push.test/tablet", "owner", "device-tablet"), 4);
    // Subscribing again (a newer link) replaces the keys and the link and keeps its place.
    const renewed = { ...subscription("https://push.test/desk", "owner", "owner-link-2"), link: { kid: "owner-link-2", expiresAt: expiresAt + 1 }, p256dh: "renewed" };
    await store.subscribe(renewed, 5);
    expect(await store.subscriptions(new Set(["owner"]))).toEqual([
      renewed,
      subscription("https://push.test/phone", "owner", "device-phone"),
      subscription("https://push.test/tablet", "owner", "device-tablet"),
    ]);
    expect(endpointsOf(await store.subscriptions(new Set(["owner", "alice"])))).toHaveLength(4);
    expect(await store.unsubscribe("https://push.test/alice", "owner")).toBe(false);
    expect(await store.unsubscribe("https://push.test/alice", "alice")).toBe(true);
    expect(await store.unsubscribe("https://push.test/alice", "alice")).toBe(false);
    await store.forgetDevice("device-phone");
    await store.forget("https://push.test/tablet");
    expect(endpointsOf(await store.subscriptions(new Set(["owner", "alice"])))).toEqual(["https://push.test/desk"]);
  });

  it("redeems an action token once each", async () => {
    const store = backend.open();
    expect(await store.redeem("j1", expiresAt, Date.now())).toBe(true);
    expect(await store.redeem("j1", expiresAt, Date.now())).toBe(false);
    expect(await store.redeem("j2", expiresAt, Date.now())).toBe(true);
  });

  it.runIf(backend.shared)("is one for every instance: a subscription made on one is seen by another, a token redeemed on one is a replay there", async () => {
    const first = backend.open();
    const second = backend.shared!();
    await first.subscribe(subscription("https://push.test/desk", "owner", "device-desk"), 1);
    expect(endpointsOf(await second.subscriptions(new Set(["owner"])))).toEqual(["https://push.test/desk"]);
    expect(await first.redeem("j1", expiresAt, Date.now())).toBe(true);
    expect(await second.redeem("j1", expiresAt, Date.now())).toBe(false);
    await second.forgetDevice("device-desk");
    expect(await first.subscriptions(new Set(["owner"]))).toEqual([]);
  });
});

describe("push store on SQLite, a file from before links were kept", () => {
  it("gains the link columns; its subscriptions have no link (expired), so they are pushed to no more until renewed", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "push-store-"));
    try {
      const file = path.join(dir, "push.sqlite");
      const old = new DatabaseSync(file);
      old.exec("CREATE TABLE subscriptions (endpoint TEXT PRIMARY KEY, owner TEXT NOT NULL, device TEXT, p256dh TEXT NOT NULL, auth TEXT NOT NULL, created_at INTEGER NOT NULL)");
      old.prepare("INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?, ?)").run("https://push.test/old-phone", "owner", "device-old", "key", "auth", 1);
      old.close();
      const store = new SqlitePushStore(file);
      expect(await store.subscriptions(new Set(["owner"]))).toEqual([{ endpoint: "https://push.test/old-phone", owner: "owner", link: { kid: null, expiresAt: 0 }, p256dh: "key", auth: "auth" }]);
      await store.subscribe(subscription("https://push.test/old-phone", "owner", "device-new"), 2);
      expect(await store.subscriptions(new Set(["owner"]))).toEqual([subscription("https://push.test/old-phone", "owner", "device-new")]);
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
