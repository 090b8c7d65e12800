import { lookup, type LookupAddress, type LookupOptions } from "node:dns";
import { Agent } from "node:https";
import { BlockList, isIP } from "node:net";

/**
 * Push endpoints are URLs the server POSTs to, given by whoever subscribes: without a check, any
 * owner token (or a leaked one) makes the server send requests into its own network. A push service
 * is a public HTTPS host (FCM, Mozilla's autopush, Apple's web push), so:
 * - at subscription time, an endpoint whose host is an IP address in any spelling (the URL parser
 *   normalizes `0x7f000001`, `2130706433`, `127.1`; `[::1]`, `[::ffff:127.0.0.1]`), `localhost` or
 *   `*.localhost`, a single label, or a name of a private namespace (`.local`, `.localdomain`,
 *   `.internal`, `.home.arpa`) is refused, with the reason;
 * - when a push is sent, a name that resolves to a loopback, private, link-local, unique-local or
 *   otherwise non-public address is refused before connecting (`publicPushAgent`).
 * PUSH_ALLOW_PRIVATE_ENDPOINTS=1 turns both off, for the tests' push service on loopback only.
 */

const PRIVATE_SUFFIXES = [".localhost", ".local", ".localdomain", ".internal", ".home.arpa"];

/** Why the server will not push to this endpoint's host, or null when it may. */
export function refusedPushHost(endpoint: URL): string | null {
  const host = endpoint.hostname.toLowerCase().replace(/\.+$/, "");
  if (host.startsWith("[") || /^[\d.]+$/.test(host))
    return `its host ${endpoint.hostname} is an IP address: a push service has a public name`;
  if (host === "localhost" || PRIVATE_SUFFIXES.some((suffix) => host.endsWith(suffix)))
    return `its host ${endpoint.hostname} is a local or private name`;
  if (!host.includes("."))
    return `its host ${endpoint.hostname} is not a public name (a single label)`;
  return null;
}

/** Every address that is not public unicast: loopback, private, shared (CGNAT), link-local, unique-local, documentation, multicast, reserved. */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [
  ["::", 127], // :: and ::1 (an IPv4-mapped address is judged by the IPv4 rules: BlockList does that itself)
  ["64:ff9b::", 96], // NAT64 embeds an IPv4 address
  ["100::", 64],
  ["2001:db8::", 32],
  ["2002::", 16], // 6to4 embeds an IPv4 address
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, "ipv6");

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && !NOT_PUBLIC.check(address, family === 4 ? "ipv4" : "ipv6");
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** `dns.lookup` that fails for a name with any non-public address, so the connection is never made. */
export function publicAddressLookup(
  hostname: string,
  options: LookupOptions,
  callback: LookupCallback,
): void {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.find((candidate) => !isPublicAddress(candidate.address));
    if (refused || addresses.length === 0) {
      const failure: NodeJS.ErrnoException = new Error(
        `push service ${hostname} resolves to ${refused ? `a non-public address (${refused.address})` : "no address"}: not sent`,
      );
      failure.code = "EPUSHHOSTREFUSED";
      return callback(failure, []);
    }
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

/** The HTTPS agent pushes are sent with: it connects to public addresses only. */
export function publicPushAgent(): Agent {
  return new Agent({ keepAlive: true, lookup: publicAddressLookup });
}
