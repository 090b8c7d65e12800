import { describe, expect, it } from "vitest";
import { DeviceStore } from "./device-store.ts";

describe("device store", () => {
  it("keeps devices per owner until they expire or are revoked", () => {
    const store = new DeviceStore(":memory:");
    store.add({ kid: "device-a", owner: "owner", name: "Phone", createdAt: 1, expiresAt: 100 });
    store.add({ kid: "device-b", owner: "owner", name: "Tablet", createdAt: 2, expiresAt: 50 });
    store.add({ kid: "device-c", owner: "bob", name: "Laptop", createdAt: 3, expiresAt: 100 });
    expect(store.list("owner", 10).map((device) => device.name)).toEqual(["Tablet", "Phone"]);
    expect(store.isActive("device-a", 10)).toBe(true);
    expect(store.isActive("device-b", 50)).toBe(false);
    expect(store.revoke("device-c", "owner", 10)).toBe(false);
    expect(store.revoke("device-a", "owner", 10)).toBe(true);
    expect(store.isActive("device-a", 10)).toBe(false);
    expect(store.revoke("device-a", "owner", 11)).toBe(false);
    expect(store.list("owner", 60)).toEqual([]);
    expect(store.isActive("unknown", 10)).toBe(false);
    store.close();
  });
});
