import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { clientAddress, trustedProxies } from "./address.ts";

const request = (peer: string, forwarded?: string) =>
  ({
    socket: { remoteAddress: peer },
    headers: forwarded === undefined ? {} : { "x-forwarded-for": forwarded },
  }) as unknown as IncomingMessage;

describe("client address", () => {
  const none = trustedProxies([]);
  const proxies = trustedProxies(["10.0.0.0/8", "192.0.2.1", "::1"]);

  it("is the peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress(request("127.0.0.1", "203.0.113.9"), none)).toBe("127.0.0.1");
    expect(clientAddress(request("::ffff:127.0.0.1"), none)).toBe("127.0.0.1");
  });

  it("is the right-most address that is not a trusted proxy, from a trusted peer", () => {
    expect(clientAddress(request("192.0.2.1", "203.0.113.9"), proxies)).toBe("203.0.113.9");
    // A client writing its own X-Forwarded-For cannot choose the address it is counted against.
    expect(
      clientAddress(request("::ffff:10.1.2.3", "198.51.100.1, 203.0.113.9, 10.9.9.9"), proxies),
    ).toBe("203.0.113.9");
    expect(clientAddress(request("::1", "10.0.0.5"), proxies)).toBe("10.0.0.5");
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", () => {
    expect(clientAddress(request("203.0.113.50", "198.51.100.1"), proxies)).toBe("203.0.113.50");
  });
});
