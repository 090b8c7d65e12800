import type { Server as HttpServer } from "node:http";
import { Server, type ServerOptions } from "socket.io";
import { errorMessage } from "../../lib/error-message.ts";
import type {
  ClientToServerEvents,
  InstanceStatus,
  ServerToClientEvents,
} from "../../lib/protocol.ts";
import { verifyActToken } from "../auth/tokens.ts";
import type { AskBroker } from "../broker/broker.ts";
import type { StatusSource } from "../status.ts";
import { ackedHandlers } from "./acks.ts";
import { connectionGate } from "./gate.ts";
import { createAskHandlers, createChatHandlers, type TabIo, type TabSocket } from "./handlers.ts";
import { authenticateTabs, linkRoom } from "./handshake.ts";
import { relayToTabs } from "./relay.ts";

/**
 * The Socket.IO transport: origin checks and connection limits (gate.ts), authentication at the
 * handshake (handshake.ts), the broker's and the Gateway's events passed on to the tabs (relay.ts),
 * per-socket rate limits and one ack per event (acks.ts). Thin on purpose: decisions live in the
 * broker.
 */

export type TabServerOptions = {
  broker: AskBroker;
  gateway: StatusSource<InstanceStatus>;
  key: Uint8Array;
  /** The Open WebUI filter's key: it signs widget tokens, good for one chat each (auth/tokens.ts). */
  embedKey?: Uint8Array;
  owners: ReadonlySet<string>;
  /** Origins besides the app's own that may open a socket (Open WebUI). */
  allowedOrigins: readonly string[];
  /** The app's own origin is this URL's when set; otherwise it is read from the Host header. */
  publicUrl?: string;
  maxTokenDays: number;
  maxConnectionsPerAddress: number;
  /** Proxies (addresses or CIDR subnets) whose X-Forwarded-For names the client. */
  trustedProxies: readonly string[];
  /** How long a connection may stay without an authenticated socket. */
  authTimeoutMs?: number;
  /** Whether an owner link's key id is current (not revoked). */
  isKnownKid?: (kid: string) => Promise<boolean>;
  /** Several instances: the Socket.IO adapter that fans events out to the others (Redis). */
  adapter?: ServerOptions["adapter"];
  /** Inbound events per second per socket, with a burst of twice that. */
  eventsPerSecond?: number;
  /** The injected clock's time: what tokens are judged at and the rate limits refill by. */
  now: () => number;
  log: (message: string) => void;
};

export type TabServer = {
  io: Server<ClientToServerEvents, ServerToClientEvents>;
  /** Closes the sockets opened with this link key id, on every instance (the adapter carries it): a revoked device link. */
  disconnectLink(kid: string): void;
  /**
   * Closes this instance's sockets whose link key id is no longer known: an owner link revoked by the
   * `owner-link` command, a process that cannot reach the running instances, which each check their own.
   */
  disconnectRevokedLinks(): Promise<void>;
  close(): Promise<void>;
};

const MAX_PAYLOAD_BYTES = 64 * 1024;
const AUTH_TIMEOUT_MS = 5_000;

/** Wires the transport's parts (gate.ts, handshake.ts, relay.ts, acks.ts, handlers.ts) to one Socket.IO server. */
export function createTabServer(http: HttpServer, options: TabServerOptions): TabServer {
  const { broker, gateway, now, log } = options;
  const gate = connectionGate(options);
  const io: TabIo = new Server(http, {
    maxHttpBufferSize: MAX_PAYLOAD_BYTES,
    ...(options.adapter ? { adapter: options.adapter } : {}),
    serveClient: false,
    // Socket.IO closes a connection that has joined no namespace by then: sockets that never
    // authenticate, or only fail to, are not kept.
    connectTimeout: options.authTimeoutMs ?? AUTH_TIMEOUT_MS,
    allowRequest: gate.allowRequest,
    cors: gate.cors,
  });
  io.engine.on("connection", gate.count);

  /** The link key ids this instance's sockets were opened with; one whose room emptied is dropped at the next check. */
  const linkKids = new Set<string>();
  authenticateTabs(io, { ...options, linkOpened: (kid) => linkKids.add(kid) });
  relayToTabs(io, broker, gateway);

  const chats = createChatHandlers(broker);
  const asks = createAskHandlers(broker, (token) =>
    verifyActToken(token, options.key, { maxTokenDays: options.maxTokenDays, now }),
  );
  const eventsPerSecond = options.eventsPerSecond ?? 20;
  io.on("connection", (socket: TabSocket) => {
    const guarded = ackedHandlers(socket, { eventsPerSecond, now, log });
    socket.emit("gateway:status", gateway.status);
    socket.on("chat:view", guarded("chat:view", chats.view));
    socket.on("chat:leave", guarded("chat:leave", chats.leave));
    socket.on("ask:answer", guarded("ask:answer", asks.answer));
    socket.on("asks:list", guarded("asks:list", asks.list));
    socket.on("asks:watch", guarded("asks:watch", asks.watch));
    socket.on("disconnect", (reason) => {
      // Leaving the namespace but keeping the connection would hold it past the auth timeout,
      // which no longer applies to it: a tab has one socket, so its connection goes too.
      if (reason === "client namespace disconnect") socket.conn.close();
      broker
        .leave(socket.id)
        .catch((error: unknown) => log(`leaving for ${socket.id} failed: ${errorMessage(error)}`));
    });
  });

  return {
    io,
    disconnectLink: (kid) => io.in(linkRoom(kid)).disconnectSockets(true),
    async disconnectRevokedLinks() {
      for (const kid of linkKids) {
        if (!io.sockets.adapter.rooms.has(linkRoom(kid))) linkKids.delete(kid);
        else if (!(await options.isKnownKid?.(kid)))
          io.local.in(linkRoom(kid)).disconnectSockets(true);
      }
    },
    close: () => io.close(),
  };
}
