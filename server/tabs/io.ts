import type { Server as HttpServer } from "node:http";
import { Server } from "socket.io";
import type { Ask } from "../../lib/ask.ts";
import { fail, type AskClose, type ClientToServerEvents, type GatewayStatus, type ServerToClientEvents } from "../../lib/protocol.ts";
import type { AskBroker, TabSink } from "../broker/broker.ts";
import { AuthError, verifyTabToken } from "./auth.ts";
import { WATCHERS_ROOM, createAskHandlers, createChatHandlers, type TabSocket } from "./handlers.ts";

/**
 * The Socket.IO transport: authentication at the handshake, origin checks, per-socket rate limits,
 * and the TabSink the broker talks through. Thin on purpose: decisions live in the broker.
 */

export type TabServerOptions = {
  key: Uint8Array;
  owners: ReadonlySet<string>;
  /** Origins besides the app's own that may open a socket (Open WebUI). */
  allowedOrigins: readonly string[];
  /** Whether an owner link's key id is current (not revoked). */
  isKnownKid?: (kid: string) => boolean;
  /** Inbound events per second per socket, with a burst of twice that. */
  eventsPerSecond?: number;
  now?: () => number;
};

export type TabServer = {
  io: Server<ClientToServerEvents, ServerToClientEvents>;
  sink: TabSink;
  attach(broker: AskBroker, gatewayStatus: () => GatewayStatus): void;
  broadcastStatus(status: GatewayStatus): void;
  close(): Promise<void>;
};

const MAX_PAYLOAD_BYTES = 64 * 1024;

export function createTabServer(http: HttpServer, options: TabServerOptions): TabServer {
  const now = options.now ?? Date.now;
  const io = new Server<ClientToServerEvents, ServerToClientEvents>(http, {
    maxHttpBufferSize: MAX_PAYLOAD_BYTES,
    serveClient: false,
    allowRequest: (request, callback) => {
      const origin = request.headers.origin;
      // Node clients send no Origin; the sandboxed widget sends "null" and must bring a token (every socket does).
      if (origin === undefined || origin === "null") return callback(null, true);
      const host = request.headers.host;
      const sameOrigin = host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
      callback(sameOrigin || options.allowedOrigins.includes(origin) ? null : "origin not allowed", sameOrigin || options.allowedOrigins.includes(origin));
    },
    cors: {
      origin: (origin, callback) => callback(null, origin === undefined || origin === "null" || options.allowedOrigins.includes(origin) ? true : false),
    },
  });

  io.use((socket, next) => {
    verifyTabToken(socket.handshake.auth?.token, options.key, { isKnownKid: options.isKnownKid }).then(
      (identity) => {
        socket.data.tab = {
          id: socket.id,
          userId: identity.userId,
          isOwner: options.owners.has(identity.userId),
          chatClaim: identity.chat,
        };
        next();
      },
      (error: unknown) => next(error instanceof AuthError ? error : new Error("authentication failed")),
    );
  });

  const sink: TabSink = {
    show: (tabId: string, ask: Ask) => io.to(tabId).emit("ask:show", ask),
    close: (tabId: string, close: AskClose) => io.to(tabId).emit("ask:close", close),
    changed: (ask: Ask) => {
      // Encoding an ask for an empty room is work on every delivery: skip it when no dashboard watches.
      if (io.sockets.adapter.rooms.get(WATCHERS_ROOM)?.size) io.to(WATCHERS_ROOM).emit("ask:changed", ask);
    },
  };

  return {
    io,
    sink,
    attach(broker, gatewayStatus) {
      const chats = createChatHandlers(broker);
      const asks = createAskHandlers(broker);
      const perSecond = options.eventsPerSecond ?? 20;
      io.on("connection", (raw) => {
        const socket = raw as TabSocket;
        const allow = tokenBucket(perSecond, perSecond * 2, now);
        socket.emit("gateway:status", gatewayStatus());
        const guarded =
          (handler: (socket: TabSocket, payload: unknown, ack: unknown) => unknown) =>
          (payload: unknown, ack: unknown) => {
            if (!allow()) {
              if (typeof ack === "function") ack(fail("RATE_LIMITED", "too many events; slow down"));
              return;
            }
            void handler(socket, payload, ack);
          };
        socket.on("chat:view", guarded(chats.view));
        socket.on("chat:leave", guarded(chats.leave));
        socket.on("ask:answer", guarded(asks.answer));
        socket.on("asks:list", guarded(asks.list));
        socket.on("asks:watch", guarded(asks.watch));
        socket.on("disconnect", () => broker.leave(socket.id));
      });
    },
    broadcastStatus(status) {
      io.emit("gateway:status", status);
    },
    close: () =>
      new Promise<void>((resolve) => {
        io.close(() => resolve());
      }),
  };
}

function tokenBucket(ratePerSecond: number, burst: number, now: () => number): () => boolean {
  let tokens = burst;
  let last = now();
  return () => {
    const current = now();
    tokens = Math.min(burst, tokens + ((current - last) / 1000) * ratePerSecond);
    last = current;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}
