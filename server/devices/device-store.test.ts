import { describe, expect, it } from "vitest";
import { sideStoreBackends } from "../../test/support/store-backends.ts";
import { RedisDeviceStore, SqliteDeviceStore, type DeviceStore } from "./device-store.ts";

// Times near now: the Redis store lets a device's key lapse at its real expiry.
const t0 = Date.now();
const at = (seconds: number) => t0 + seconds * 1000;

describe.each(sideStoreBackends<DeviceStore>({ sqlite: (file) => new SqliteDeviceStore(file), redis: (client, prefix) => new RedisDeviceStore(client, prefix) }))("device store on $name", (backend) => {
  it("keeps devices per owner until they expire or are revoked", async () => {
    const store = backend.open();
    await store.add({ kid: "device-a", owner: "owner", name: "Phone", createdAt: at(1), expiresAt: at(100) });
    await store.add({ kid: "device-b", owner: "owner", name: "Tablet", createdAt: at(2), expiresAt: at(50) });
    await store.add({ kid: "device-c", owner: "bob", name: "Laptop", createdAt: at(3), expiresAt: at(100) });
    expect((await store.list("owner", at(10))).map((device) => device.name)).toEqual(["Tablet", "Phone"]);
    expect(await store.list("bob", at(10))).toEqual([{ kid: "device-c", owner: "bob", name: "Laptop", createdAt: at(3), expiresAt: at(100) }]);
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

  it.runIf(backend.shared)("is one for every instance: a device added on one is known on another, and revoked there for both", async () => {
    const first = backend.open();
    const second = backend.shared!();
    await first.add({ kid: "device-x", owner: "owner", name: "Phone", createdAt: at(1), expiresAt: at(100) });
    expect(await second.isActive("device-x", at(10))).toBe(true);
    expect(await second.revoke("device-x", "owner", at(10))).toBe(true);
    expect(await first.isActive("device-x", at(10))).toBe(false);
    expect(await first.list("owner", at(10))).toEqual([]);
  });
});
