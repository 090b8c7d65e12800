import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import type { DeviceMinter } from "../../lib/devices.ts";
import { sideStoreBackends } from "../../test/support/store-backends.ts";
import { type Device, type DeviceStore, SqliteDeviceStore } from "./device-store.ts";
import { RedisDeviceStore } from "./redis-device-store.ts";

// Times near now: the Redis store lets a device's key lapse at its real expiry.
const t0 = Date.now();
const at = (seconds: number) => t0 + seconds * 1000;
const throughOwnerLink: DeviceMinter = { kind: "owner-link", kid: "owner-kid-1" };
const device = (
  kid: string,
  owner: string,
  name: string,
  created: number,
  expires: number,
  mintedBy: DeviceMinter = throughOwnerLink,
): Device => ({ kid, owner, name, createdAt: at(created), expiresAt: at(expires), mintedBy });

const logs: string[] = [];
const backends = sideStoreBackends<DeviceStore>({
  sqlite: (file) => new SqliteDeviceStore(file, (line) => logs.push(line)),
  redis: (client, prefix) => new RedisDeviceStore(client, prefix, (line) => logs.push(line)),
});

describe.each(backends)("device store on $name", (backend) => {
  it("keeps devices per owner, with who minted each, until they expire or are revoked", async () => {
    const store = backend.open();
    await store.add(device("device-a", "owner", "Phone", 1, 100));
    await store.add(device("device-b", "owner", "Tablet", 2, 50, { kind: "command-line" }));
    await store.add(device("device-c", "bob", "Laptop", 3, 100));
    expect(
      (await store.list("owner", at(10))).map((listed) => [listed.name, listed.mintedBy]),
    ).toEqual([
      ["Tablet", { kind: "command-line" }],
      ["Phone", throughOwnerLink],
    ]);
    expect(await store.list("bob", at(10))).toEqual([device("device-c", "bob", "Laptop", 3, 100)]);
    expect(await store.isActive("device-a", at(10))).toBe(true);
    expect(await store.isActive("device-b", at(50))).toBe(false);
    expect(await store.revoke("device-c", "owner", at(10))).toBe(false);
    expect(await store.revoke("device-a", "owner", at(10))).toBe(true);
    expect(await store.isActive("device-a", at(10))).toBe(false);
    expect(await store.revoke("device-a", "owner", at(11))).toBe(false);
    expect(await store.list("owner", at(60))).toEqual([]);
    expect(await store.isActive("unknown", at(10))).toBe(false);
    expect(await store.isActive("device-c", at(10))).toBe(true);
  });

  it("22.1 revoking the owner links revokes every device minted through one, of every owner, and those whose minter was not recorded; the command line's stay", async () => {
    const store = backend.open();
    await store.add(device("device-leaked", "owner", "Attacker's phone", 1, 100));
    await store.add(
      device("device-older-link", "bob", "Bob's phone", 2, 100, {
        kind: "owner-link",
        kid: "owner-kid-0",
      }),
    );
    await store.add(
      device("device-kitchen", "owner", "Kitchen tablet", 3, 100, { kind: "command-line" }),
    );
    // A device stored by an earlier version, which did not record its minter.
    const raw = backend.raw();
    if (raw.name === "sqlite") {
      const db = new DatabaseSync(raw.file);
      db.prepare(
        "INSERT INTO devices (kid, owner, name, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      ).run("device-old", "owner", "Old phone", at(4), at(100));
      db.close();
    } else {
      await raw.client
        .multi()
        .hset(`${raw.prefix}device:device-old`, {
          owner: "owner",
          name: "Old phone",
          created: at(4),
          expires: at(100),
        })
        .zadd(`${raw.prefix}owner-devices:owner`, at(4), "device-old")
        .exec();
    }
    expect(
      (await store.list("owner", at(10))).find((listed) => listed.kid === "device-old")?.mintedBy,
    ).toEqual({ kind: "unrecorded" });

    expect(await store.revokeMintedThroughOwnerLinks(at(10))).toBe(3);
    for (const kid of ["device-leaked", "device-older-link", "device-old"])
      expect(await store.isActive(kid, at(10)), kid).toBe(false);
    expect(await store.isActive("device-kitchen", at(10))).toBe(true);
    expect((await store.list("owner", at(10))).map((listed) => listed.name)).toEqual([
      "Kitchen tablet",
    ]);
    expect(await store.list("bob", at(10))).toEqual([]);
    expect(await store.revokeMintedThroughOwnerLinks(at(11))).toBe(0);
  });

  it("22.6 a stored device that does not read is set aside: logged once with its kid, left out of the list, not a working link; the others are listed", async () => {
    const store = backend.open();
    await store.add(device("device-good", "owner", "Phone", 1, 100));
    const raw = backend.raw();
    if (raw.name === "sqlite") {
      const db = new DatabaseSync(raw.file);
      const insert = db.prepare(
        "INSERT INTO devices (kid, owner, name, created_at, expires_at, minted_by) VALUES (?, ?, ?, ?, ?, ?)",
      );
      insert.run("device-bad-expiry", "owner", "Broken", at(2), "soon", "command-line");
      insert.run("device-huge", "owner", "Huge", 2n ** 62n, at(100), "command-line");
      insert.run("device-bad-minter", "owner", "Minted by whom", at(3), at(100), "someone");
      db.close();
    } else {
      const p = raw.prefix;
      await raw.client
        .multi()
        .hset(`${p}device:device-bad-expiry`, { owner: "owner", name: "Broken", created: at(2) })
        .zadd(`${p}owner-devices:owner`, at(2), "device-bad-expiry")
        .hset(`${p}device:device-huge`, {
          owner: "owner",
          name: "Huge",
          created: "99999999999999999999",
          expires: at(100),
        })
        .zadd(`${p}owner-devices:owner`, at(2), "device-huge")
        .hset(`${p}device:device-bad-minter`, {
          owner: "owner",
          name: "Minted by whom",
          created: at(3),
          expires: at(100),
          mintedBy: "someone",
        })
        .zadd(`${p}owner-devices:owner`, at(3), "device-bad-minter")
        .exec();
    }
    logs.length = 0;
    expect((await store.list("owner", at(10))).map((listed) => listed.kid)).toEqual([
      "device-good",
    ]);
    expect((await store.list("owner", at(10))).map((listed) => listed.kid)).toEqual([
      "device-good",
    ]);
    for (const kid of ["device-huge", "device-bad-minter"])
      expect(await store.isActive(kid, at(10)), kid).toBe(false);
    expect(logs.toSorted()).toEqual([
      expect.stringMatching(/^set aside unreadable stored device device-bad-expiry: expiresAt: /),
      expect.stringMatching(/^set aside unreadable stored device device-bad-minter: mintedBy: /),
      expect.stringMatching(/^set aside unreadable stored device device-huge: createdAt: /),
    ]);
  });

  it.runIf(backend.shared)(
    "is one for every instance: a device added on one is known on another, and revoked there for both",
    async () => {
      const first = backend.open();
      const second = backend.shared!();
      await first.add(device("device-x", "owner", "Phone", 1, 100));
      expect(await second.isActive("device-x", at(10))).toBe(true);
      expect(await second.revoke("device-x", "owner", at(10))).toBe(true);
      expect(await first.isActive("device-x", at(10))).toBe(false);
      expect(await first.list("owner", at(10))).toEqual([]);
    },
  );
});

describe("device store on SQLite, a file from before minters were recorded", () => {
  it("gains the column; its devices read as unrecorded", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "device-store-"));
    try {
      const file = path.join(dir, "devices.sqlite");
      const old = new DatabaseSync(file);
      old.exec(
        "CREATE TABLE devices (kid TEXT PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, revoked_at INTEGER)",
      );
      old
        .prepare("INSERT INTO devices VALUES (?, ?, ?, ?, ?, NULL)")
        .run("device-1", "owner", "Phone", at(1), at(100));
      old.close();
      const store = new SqliteDeviceStore(file, () => {});
      expect(await store.list("owner", at(10))).toEqual([
        device("device-1", "owner", "Phone", 1, 100, { kind: "unrecorded" }),
      ]);
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
