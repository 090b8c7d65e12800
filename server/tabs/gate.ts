import type { IncomingMessage } from "node:http";
import type { ServerOptions } from "socket.io";
import { clientAddress, trustedProxies } from "./address.ts";

/** The sandboxed widget iframe has an opaque origin. */
export const OPAQUE_ORIGIN = "null";

export type ConnectionGateOptions = {
  /** Origins besides the app's own that may open a socket (Open WebUI). */
  allowedOrigins: readonly string[];
  /** The app's own origin is this URL's when set; otherwise it is read from the Host header. */
  publicUrl?: string;
  maxConnectionsPerAddress: number;
  /** Proxies (addresses or CIDR subnets) whose X-Forwarded-For names the client. */
  trustedProxies: readonly string[];
};

type EngineConnection = {
  request: IncomingMessage;
  once(event: "close", listener: () => void): void;
};

/**
 * Which connections may open a socket, before any token is read: the app's own origin, Open WebUI's,
 * the sandboxed widget's opaque one and Node clients (no Origin), and no more than the cap of open
 * connections per client address.
 */
export function connectionGate(options: ConnectionGateOptions) {
  const trusted = trustedProxies(options.trustedProxies);
  const publicOrigin = options.publicUrl ? new URL(options.publicUrl).origin : null;
  const isAppOrigin = (origin: string, request: IncomingMessage) => {
    if (publicOrigin !== null) return origin === publicOrigin;
    const host = request.headers.host;
    return host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
  };
  const openPerAddress = new Map<string, number>();

  const allowRequest: NonNullable<ServerOptions["allowRequest"]> = (request, callback) => {
    const origin = request.headers.origin;
    // Node clients send no Origin; the sandboxed widget sends "null" and must bring an embed token (checked at CONNECT).
    if (
      origin !== undefined &&
      origin !== OPAQUE_ORIGIN &&
      !isAppOrigin(origin, request) &&
      !options.allowedOrigins.includes(origin)
    ) {
      return callback("origin not allowed", false);
    }
    // Counted when the connection opens; handshakes in flight at once may pass a few over the cap.
    if (
      (openPerAddress.get(clientAddress(request, trusted)) ?? 0) >= options.maxConnectionsPerAddress
    ) {
      return callback("too many connections from this address", false);
    }
    callback(null, true);
  };

  return {
    allowRequest,
    cors: {
      origin: (
        origin: string | undefined,
        callback: (error: Error | null, allow: boolean) => void,
      ) =>
        callback(
          null,
          origin === undefined ||
            origin === OPAQUE_ORIGIN ||
            options.allowedOrigins.includes(origin),
        ),
    },
    /** Counts the engine's connections per address, from open to close. */
    count: (connection: EngineConnection): void => {
      const address = clientAddress(connection.request, trusted);
      openPerAddress.set(address, (openPerAddress.get(address) ?? 0) + 1);
      connection.once("close", () => {
        const left = (openPerAddress.get(address) ?? 1) - 1;
        if (left > 0) openPerAddress.set(address, left);
        else openPerAddress.delete(address);
      });
    },
  };
}
