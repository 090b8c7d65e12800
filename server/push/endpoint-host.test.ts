import { request } from "node:https";
import { describe, expect, it } from "vitest";
import {
  isPublicAddress,
  publicAddressLookup,
  publicPushAgent,
  refusedPushHost,
} from "./endpoint-host.ts";

const refused = (endpoint: string) => refusedPushHost(new URL(endpoint));

describe("push endpoint hosts", () => {
  it("22.5 refuses a bare IP address in any spelling, localhost and private names; takes public push services", () => {
    for (const endpoint of [
      "https://127.0.0.1/push",
      "https://0x7f000001/push",
      "https://2130706433/push",
      "https://0177.0.0.1/push",
      "https://127.1/push",
      "https://8.8.8.8/push",
      "https://[::1]/push",
      "https://[::ffff:127.0.0.1]/push",
      "https://[fe80::1]/push",
      "https://[2001:4860:4860::8888]/push",
    ])
      expect(refused(endpoint), endpoint).toMatch(
        /is an IP address: a push service has a public name$/,
      );
    for (const endpoint of [
      "https://localhost/push",
      "https://LOCALHOST./push",
      "https://push.localhost/x",
      "https://printer.local/x",
      "https://redis.internal/x",
      "https://nas.home.arpa/x",
      "https://box.localdomain/x",
    ])
      expect(refused(endpoint), endpoint).toMatch(/is a local or private name$/);
    expect(refused("https://intranet/push")).toMatch(/is not a public name \(a single label\)$/);
    for (const endpoint of [
      "https://fcm.googleapis.com/fcm/send/abc",
      "https://updates.push.services.mozilla.com/wpush/v2/abc",
      "https://web.push.apple.com/QabC",
      "https://push.example.test/x",
    ])
      expect(refused(endpoint), endpoint).toBeNull();
  });

  it("22.5 tells public addresses from loopback, private, link-local, unique-local and mapped ones", () => {
    for (const address of [
      "8.8.8.8",
      "142.250.74.106",
      "2a00:1450:4001:82b::200a",
      "::ffff:8.8.8.8",
    ])
      expect(isPublicAddress(address), address).toBe(true);
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "64:ff9b::7f00:1",
      "224.0.0.1",
      "not an address",
    ])
      expect(isPublicAddress(address), address).toBe(false);
  });

  it("22.5 refuses, when a push is sent, a name that resolves to a loopback address", async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      publicAddressLookup("localhost", {}, (failure) => resolve(failure)),
    );
    expect(error).toMatchObject({
      code: "EPUSHHOSTREFUSED",
      message: expect.stringMatching(
        /^push service localhost resolves to a non-public address \(.+\): not sent$/,
      ),
    });
  });

  it("22.5 the push sender's agent never connects to such a name", async () => {
    const agent = publicPushAgent();
    try {
      const error = await new Promise<NodeJS.ErrnoException>((resolve) => {
        const sent = request("https://localhost:9/push", { method: "POST", agent }, () =>
          resolve(new Error("connected")),
        );
        sent.once("error", resolve);
        sent.end();
      });
      expect(error).toMatchObject({ code: "EPUSHHOSTREFUSED" });
    } finally {
      agent.destroy();
    }
  });
});
