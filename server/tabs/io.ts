import type { IncomingMessage, Server as HttpServer } from "node:http";
import { Server, type ServerOptions } from "socket.io";
import { errorMessage } from "../../lib/error-message.ts";
import {
  type ClientEvent,
  type ClientEvents,
  type ClientToServerEvents,
  fail,
  HandshakeProtocol,
  type IncompatibleProtocol,
  type InstanceStatus,
  type ServerToClientEvents,
  TAB_PROTOCOL_VERSION,
} from "../../lib/protocol.ts";
import { AuthError, verifyTabToken } from "../auth/tokens.ts";
import type { AskBroker } from "../broker/broker.ts";
import type { StatusSource } from "../status.ts";
import { clientAddress, trustedProxies } from "./address.ts";
import {
  createAskHandlers,
  createChatHandlers,
  type TabHandler,
  type TabIo,
  type TabSocket,
  WATCHERS_ROOM,
} from "./handlers.ts";

/**
 * The Socket.IO transport: authentication at the handshake, origin checks, connection limits,
 * per-socket rate limits, and the broker's and the Gateway's events passed on to the tabs. Thin on
 * purpose: decisions live in the broker.
 */

export type TabServerOptions = {
  broker: AskBroker;
  gateway: StatusSource<InstanceStatus>;
  key: Uint8Array;
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
/** A real client fails its CONNECT once (a bad or expired token); more on one connection is guessing. */
const MAX_FAILED_CONNECTS = 3;
const AUTH_TIMEOUT_MS = 5_000;
/** The sandboxed widget iframe has an opaque origin. */
const OPAQUE_ORIGIN = "null";
/** Every socket opened with an owner or device link is in the room of its key id, so revoking the link can close them. */
const linkRoom = (kid: string) => `kid:${kid}`;
/** A reply's widgets, wherever they are connected: told of an ask of their reply refused before any tab showed it. */
const replyRoom = (chatId: string, replyId: string) => `reply:${chatId}:${replyId}`;

export function createTabServer(http: HttpServer, options: TabServerOptions): TabServer {
  const { now } = options;
  const trusted = trustedProxies(options.trustedProxies);
  const publicOrigin = options.publicUrl ? new URL(options.publicUrl).origin : null;
  const isAppOrigin = (origin: string, request: IncomingMessage) => {
    if (publicOrigin !== null) return origin === publicOrigin;
    const host = request.headers.host;
    return host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
  };
  const openPerAddress = new Map<string, number>();

  const io: TabIo = new Server(http, {
    maxHttpBufferSize: MAX_PAYLOAD_BYTES,
    ...(options.adapter ? { adapter: options.adapter } : {}),
    serveClient: false,
    // Socket.IO closes a connection that has joined no namespace by then: sockets that never
    // authenticate, or only fail to, are not kept.
    connectTimeout: options.authTimeoutMs ?? AUTH_TIMEOUT_MS,
    allowRequest: (request, callback) => {
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
        (openPerAddress.get(clientAddress(request, trusted)) ?? 0) >=
        options.maxConnectionsPerAddress
      ) {
        return callback("too many connections from this address", false);
      }
      callback(null, true);
    },
    cors: {
      origin: (origin, callback) =>
        callback(
          null,
          origin === undefined ||
            origin === OPAQUE_ORIGIN ||
            options.allowedOrigins.includes(origin),
        ),
    },
  });

  io.engine.on(
    "connection",
    (connection: {
      request: IncomingMessage;
      once(event: "close", listener: () => void): void;
    }) => {
      const address = clientAddress(connection.request, trusted);
      openPerAddress.set(address, (openPerAddress.get(address) ?? 0) + 1);
      connection.once("close", () => {
        const left = (openPerAddress.get(address) ?? 1) - 1;
        if (left > 0) openPerAddress.set(address, left);
        else openPerAddress.delete(address);
      });
    },
  );

  const { broker, gateway, log } = options;
  /** The link key ids this instance's sockets were opened with; one whose room emptied is dropped at the next check. */
  const linkKids = new Set<string>();

  /** Failed CONNECT packets per engine connection (Socket.IO lets a client retry on one connection). */
  const failedConnects = new WeakMap<object, number>();
  io.use((socket, next) => {
    const refuse = (error: Error) => {
      const failures = (failedConnects.get(socket.conn) ?? 0) + 1;
      failedConnects.set(socket.conn, failures);
      next(error);
      // Socket.IO writes the CONNECT_ERROR on the next tick; closing after it lets the client read why.
      if (failures >= MAX_FAILED_CONNECTS) setImmediate(() => socket.conn.close());
    };
    const authenticate = async () => {
      // Before the token: a page of another release is told to reload, whatever its token.
      const protocol = HandshakeProtocol.safeParse(socket.handshake.auth?.protocol);
      if (!protocol.success || protocol.data !== TAB_PROTOCOL_VERSION)
        throw incompatible(protocol.success ? protocol.data : null);
      const identity = await verifyTabToken(socket.handshake.auth?.token, options.key, {
        maxTokenDays: options.maxTokenDays,
        now,
        isKnownKid: options.isKnownKid,
      });
      // A sandboxed frame may be anyone's page: only a token bound to one chat (the widget's) may use it.
      if (socket.handshake.headers.origin === OPAQUE_ORIGIN && identity.chat === null) {
        throw new AuthError(
          "a sandboxed frame (origin null) needs an embed token, one with a chat claim",
        );
      }
      socket.data.tab = {
        id: socket.id,
        userId: identity.userId,
        isOwner: options.owners.has(identity.userId),
        chatClaim: identity.chat,
        reply: identity.reply,
      };
      // Joined as soon as the kid is found current, before the socket connects, so a revocation made
      // after this check finds the socket in the room (one racing it from another instance is caught
      // by the periodic check of the links, auth/link-check.ts).
      if (identity.kid !== null) {
        linkKids.add(identity.kid);
        await socket.join(linkRoom(identity.kid));
      }
      if (identity.chat !== null && identity.reply !== null)
        await socket.join(replyRoom(identity.chat, identity.reply.msg));
    };
    authenticate().then(
      () => next(),
      (error: unknown) => {
        if (!(error instanceof AuthError)) log(`tab authentication failed: ${errorMessage(error)}`);
        refuse(
          error instanceof AuthError || error instanceof IncompatibleProtocolError
            ? error
            : new Error("authentication failed"),
        );
      },
    );
  });

  // Cards come from presence on the instance that holds the tab (it carried them there); a widget's
  // notice that it was superseded goes to its tab wherever it is connected (the adapter carries it to
  // another instance); the dashboard feed and the status stay local: every instance hears every ask
  // and has its own link.
  broker.cardEvents.on("card:show", (tabId, ask) =>
    io.sockets.sockets.get(tabId)?.emit("ask:show", ask),
  );
  broker.cardEvents.on("card:close", (tabId, close) =>
    io.sockets.sockets.get(tabId)?.emit("ask:close", close),
  );
  broker.on("widget:superseded", (tabId, chatId) =>
    io.to(tabId).emit("widget:superseded", { chatId }),
  );
  // An ask refused by policy (a guest's approval) is never shown: its reply's widget still says why.
  broker.on("ask:ended", (ask, reason) => {
    if (reason === "denied" && ask.chatId !== null && ask.replyId !== undefined) {
      io.to(replyRoom(ask.chatId, ask.replyId)).emit("ask:close", {
        askId: ask.id,
        reason,
        summary: ask.resolution?.summary,
      });
    }
  });
  broker.on("ask:changed", (ask) => {
    // Encoding an ask for an empty room is work on every delivery: skip it when no dashboard watches.
    if (io.sockets.adapter.rooms.get(WATCHERS_ROOM)?.size)
      io.local.to(WATCHERS_ROOM).emit("ask:changed", ask);
  });
  // A title comes to one instance (the one the filter called): every instance's dashboards hear it.
  broker.on("chat:titled", (chatId, title) =>
    io.to(WATCHERS_ROOM).emit("chat:title", { chatId, title }),
  );
  gateway.on("gateway:status", (status) => io.local.emit("gateway:status", status));

  const chats = createChatHandlers(broker);
  const asks = createAskHandlers(broker);
  const perSecond = options.eventsPerSecond ?? 20;
  io.on("connection", (socket: TabSocket) => {
    const allow = tokenBucket(perSecond, perSecond * 2, now);
    socket.emit("gateway:status", gateway.status);
    /**
     * Every event gets exactly one ack: the handler's (sent early when it acknowledges before its
     * work is done), RATE_LIMITED, or INTERNAL when the handler threw before acknowledging. A failure
     * is logged here, once, and goes no further.
     */
    const guarded =
      <E extends ClientEvent>(event: E, handler: TabHandler<E>) =>
      (
        payload: ClientEvents[E]["payload"],
        ack: (response: ClientEvents[E]["ack"]) => void,
      ): void => {
        // A client may leave out the callback: the event is still handled, with nobody to answer.
        const callback = typeof ack === "function" ? ack : () => {};
        if (!allow()) return callback(fail("RATE_LIMITED", "too many events; slow down"));
        let acked = false;
        const respond = (response: ClientEvents[E]["ack"]): void => {
          if (acked) return;
          acked = true;
          callback(response);
        };
        const handle = async (): Promise<void> => {
          let response: ClientEvents[E]["ack"];
          try {
            response = await handler(socket, payload, respond);
          } catch (error) {
            log(`${event} from ${socket.id} failed: ${errorMessage(error)}`);
            response = fail(
              "INTERNAL",
              "the server could not handle this event; it has been logged",
            );
          }
          respond(response);
        };
        handle().catch((error: unknown) =>
          log(`acking ${event} to ${socket.id} failed: ${errorMessage(error)}`),
        );
      };
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

class IncompatibleProtocolError extends Error {
  readonly data: IncompatibleProtocol = {
    code: "INCOMPATIBLE_PROTOCOL",
    serverProtocol: TAB_PROTOCOL_VERSION,
  };
}

/** A page speaking another tab protocol (null: no version that parses), in words that say what to do. */
function incompatible(protocol: number | null): IncompatibleProtocolError {
  const which =
    protocol === null
      ? "this page sent no tab protocol version the server knows"
      : protocol > TAB_PROTOCOL_VERSION
        ? `the server runs an older release than this page (tab protocol ${TAB_PROTOCOL_VERSION}, the page's ${protocol})`
        : `this page is from an older release than the server (tab protocol ${protocol}, the server's ${TAB_PROTOCOL_VERSION})`;
  return new IncompatibleProtocolError(`${which}; reload the page`);
}
