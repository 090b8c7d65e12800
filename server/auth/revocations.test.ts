import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { SqliteDeviceStore } from "./device-store.ts";
import { Revocations } from "./revocations.ts";

const dir = mkdtempSync(path.join(tmpdir(), "revocations-"));
const devices = new SqliteDeviceStore(path.join(dir, "devices.sqlite"), () => {});
const clock = new ManualClock();
afterAll(() => {
  devices.close();
  rmSync(dir, { recursive: true, force: true });
});

const added = async (kid: string, owner = "owner") => {
  await devices.add({
    kid,
    owner,
    name: kid,
    createdAt: clock.now(),
    expiresAt: clock.now() + 60_000,
    mintedBy: { kind: "command-line" },
  });
  return kid;
};

describe("revocations", () => {
  it("revoking a device refuses its kid, then tells every listener, and is answered once each one's work is done", async () => {
    const revocations = new Revocations({ devices, clock });
    const kid = await added("device-phone");
    const heard: string[] = [];
    revocations.on("link:revoked", (revoked) => void heard.push(`sockets ${revoked}`));
    revocations.on("link:revoked", async (revoked) => {
      expect(await devices.isActive(revoked, clock.now())).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 10));
      heard.push(`subscriptions ${revoked}`);
    });
    expect(await revocations.revokeDevice(kid, "owner")).toBe(true);
    expect(heard).toEqual([`sockets ${kid}`, `subscriptions ${kid}`]);
  });

  it("another owner's device, or one already revoked, is not revoked and nobody is told", async () => {
    const revocations = new Revocations({ devices, clock });
    const kid = await added("device-bobs", "bob");
    const heard: string[] = [];
    revocations.on("link:revoked", (revoked) => void heard.push(revoked));
    expect(await revocations.revokeDevice(kid, "owner")).toBe(false);
    expect(await devices.isActive(kid, clock.now())).toBe(true);
    expect(await revocations.revokeDevice(kid, "bob")).toBe(true);
    expect(await revocations.revokeDevice(kid, "bob")).toBe(false);
    expect(heard).toEqual([kid]);
  });

  it("a listener that fails rejects the revocation; the device stays revoked", async () => {
    const revocations = new Revocations({ devices, clock });
    const kid = await added("device-lost");
    revocations.on("link:revoked", async () => {
      throw new Error("the push store is away");
    });
    await expect(revocations.revokeDevice(kid, "owner")).rejects.toThrow(/push store is away/);
    expect(await devices.isActive(kid, clock.now())).toBe(false);
  });
});
