import type { Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import { type TrustedProxies, unmappedAddress } from "../tabs/address.ts";

/**
 * What one address may hold of the server (README: run it behind a proxy). Every TCP connection
 * counts against its peer's address, plain HTTP and Socket.IO alike: past the cap a new one is closed
 * at once, before Node reads a byte of it, so one address cannot take every file descriptor with
 * half-sent requests. A request whose headers (or whole request) have not arrived in time is dropped.
 * A trusted proxy's own address is not capped here (every client behind it shares it); Socket.IO
 * counts those clients by X-Forwarded-For (server/tabs/io.ts).
 */

export type Timeouts = { headersTimeoutMs: number; requestTimeoutMs: number };

/** The options of `http.createServer` that drop stalled requests. */
export function timeoutOptions({ headersTimeoutMs, requestTimeoutMs }: Timeouts): ServerOptions {
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    // Node checks both timeouts on this interval, 30 s by default: longer than the timeouts.
    connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs),
  };
}

export type ConnectionCap = {
  maxPerAddress: number;
  trusted: TrustedProxies;
  log: (message: string) => void;
};

export function capConnections(http: Server, cap: ConnectionCap): void {
  const open = new Map<string, number>();
  /** Addresses at the cap whose refusal is logged: once until they drop below it, not per connection. */
  const logged = new Set<string>();
  // One listener shared by every socket, not a closure each: 5,000 idle tabs hold 5,000 sockets. The
  // peer's address stays readable after the close (Node keeps what it read at the connection).
  function release(this: Socket): void {
    const address = unmappedAddress(this.remoteAddress ?? "unknown");
    const left = (open.get(address) ?? 1) - 1;
    logged.delete(address);
    if (left > 0) open.set(address, left);
    else open.delete(address);
  }
  http.on("connection", (socket: Socket) => {
    const address = unmappedAddress(socket.remoteAddress ?? "unknown");
    if (cap.trusted.has(address)) return;
    const count = open.get(address) ?? 0;
    if (count >= cap.maxPerAddress) {
      if (!logged.has(address)) {
        logged.add(address);
        cap.log(`connections from ${address} over MAX_CONNECTIONS_PER_ADDRESS are closed`);
      }
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.on("close", release);
  });
}
