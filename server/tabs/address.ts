import type { IncomingMessage } from "node:http";
import { BlockList, isIPv4, isIPv6 } from "node:net";

/**
 * The address a connection counts against. Behind a proxy every tab arrives from the proxy's address,
 * so X-Forwarded-For is read, but only when the peer is a trusted proxy: anyone else could write it.
 * The client is the right-most address not itself a trusted proxy (the left part is the client's word).
 */

export type TrustedProxies = { has(address: string): boolean };

export function trustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split("/");
    const type = isIPv6(address!) ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(address!, type);
    else list.addSubnet(address!, Number(prefix), type);
  }
  return {
    has(address) {
      const plain = unmappedAddress(address);
      if (isIPv4(plain)) return list.check(plain, "ipv4");
      return isIPv6(plain) && list.check(plain, "ipv6");
    },
  };
}

export function clientAddress(request: IncomingMessage, trusted: TrustedProxies): string {
  const peer = unmappedAddress(request.socket.remoteAddress ?? "unknown");
  const forwarded = request.headers["x-forwarded-for"];
  if (!forwarded || !trusted.has(peer)) return peer;
  const hops = (Array.isArray(forwarded) ? forwarded.join(",") : forwarded)
    .split(",")
    .map((hop) => unmappedAddress(hop.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trusted.has(hops[i]!)) return hops[i]!;
  }
  return hops[0] ?? peer;
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client. */
export function unmappedAddress(address: string): string {
  return address.startsWith("::ffff:") && isIPv4(address.slice(7)) ? address.slice(7) : address;
}
