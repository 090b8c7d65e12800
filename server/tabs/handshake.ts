import { errorMessage } from "../../lib/error-message.ts";
import {
  type CheckUnavailable,
  HandshakeProtocol,
  type IncompatibleProtocol,
  TAB_PROTOCOL_VERSION,
} from "../../lib/protocol.ts";
import { AuthError, verifyTabToken } from "../auth/tokens.ts";
import { OPAQUE_ORIGIN } from "./gate.ts";
import type { TabIo } from "./handlers.ts";

/** A real client fails its CONNECT once (a bad or expired token); more on one connection is guessing. */
const MAX_FAILED_CONNECTS = 3;

/** Every socket opened with an owner or device link is in the room of its key id, so revoking the link can close them. */
export const linkRoom = (kid: string) => `kid:${kid}`;
/** A reply's widgets, wherever they are connected: told of an ask of their reply refused before any tab showed it. */
export const replyRoom = (chatId: string, replyId: string) => `reply:${chatId}:${replyId}`;

export type HandshakeOptions = {
  key: Uint8Array;
  /** The Open WebUI filter's key: it signs widget tokens, good for one chat each (auth/tokens.ts). */
  embedKey?: Uint8Array;
  owners: ReadonlySet<string>;
  maxTokenDays: number;
  /** Whether an owner link's key id is current (not revoked). */
  isKnownKid?: (kid: string) => Promise<boolean>;
  now: () => number;
  log: (message: string) => void;
  /** Told each link key id a socket was opened with. */
  linkOpened: (kid: string) => void;
};

/**
 * The CONNECT of each socket: the page's tab protocol first (another release is told to reload,
 * whatever its token), then its token. An admitted socket carries its tab and sits in the rooms of
 * its link and its reply; a connection that keeps failing is closed.
 */
export function authenticateTabs(io: TabIo, options: HandshakeOptions): void {
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
      const protocol = HandshakeProtocol.safeParse(socket.handshake.auth?.protocol);
      if (!protocol.success || protocol.data !== TAB_PROTOCOL_VERSION)
        throw incompatible(protocol.success ? protocol.data : null);
      const identity = await verifyTabToken(socket.handshake.auth?.token, options.key, {
        maxTokenDays: options.maxTokenDays,
        now: options.now,
        isKnownKid: options.isKnownKid,
        embedKey: options.embedKey,
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
        options.linkOpened(identity.kid);
        await socket.join(linkRoom(identity.kid));
      }
      if (identity.chat !== null && identity.reply !== null)
        await socket.join(replyRoom(identity.chat, identity.reply.msg));
    };
    authenticate().then(
      () => next(),
      (error: unknown) => {
        if (error instanceof AuthError || error instanceof IncompatibleProtocolError)
          return refuse(error);
        // The store could not be read (Redis away, say): not the page's fault, so not counted; the
        // page is told to try again rather than that its link is bad.
        options.log(`tab authentication failed: ${errorMessage(error)}`);
        next(new CheckUnavailableError());
      },
    );
  });
}

class CheckUnavailableError extends Error {
  readonly data: CheckUnavailable = { code: "UNAVAILABLE" };
  constructor() {
    super("the server could not check this link just now; trying again");
  }
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
