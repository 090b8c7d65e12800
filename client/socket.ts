import { io, type Socket } from "socket.io-client";
import type {
  AnswerAck,
  ClientEvent,
  ClientEvents,
  ClientToServerEvents,
  ErrorCode,
  ServerToClientEvents,
  TabAnswer,
} from "../lib/protocol.ts";
import { TAB_PROTOCOL_VERSION } from "../lib/protocol-version.ts";

/**
 * The browser end of tab protocol v1 (docs/PROTOCOL.md), typed by the event maps of lib/protocol.ts.
 * Nothing is parsed here (zod stays out of the browser bundles); the server validates every payload.
 */

export type TabClientSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

/** Connects to the page's own origin (the widget's iframe and the dashboard are served by the product). */
export function createTabSocket(token: string): TabClientSocket {
  return io({
    auth: { token, protocol: TAB_PROTOCOL_VERSION },
    transports: ["websocket"],
    autoConnect: false,
    // A restarted server is found within 2 s of its coming back (Socket.IO's default waits up to 5 s).
    reconnectionDelayMax: 2_000,
  });
}

/** A failure the browser itself detects: not connected, or no ack in time. */
export type ClientFailure = {
  ok: false;
  error: { code: ErrorCode | "OFFLINE" | "TIMEOUT"; message: string };
};

const OFFLINE: ClientFailure = {
  ok: false,
  error: { code: "OFFLINE", message: "Not connected to the server; try again in a moment." },
};
const TIMEOUT: ClientFailure = {
  ok: false,
  error: { code: "TIMEOUT", message: "The server did not answer in time." },
};

/**
 * Sends one event and resolves with its ack, typed by the protocol's event map:
 * `request(socket, "chat:view", { chatId })`. Refuses to emit while disconnected rather than letting
 * Socket.IO buffer the packet: an answer (or a secret) must never wait in a send buffer.
 */
export async function request<E extends ClientEvent>(
  socket: TabClientSocket,
  event: E,
  payload: ClientEvents[E]["payload"],
  timeoutMs = 20_000,
): Promise<ClientEvents[E]["ack"] | ClientFailure> {
  if (!socket.connected) return OFFLINE;
  // Socket.IO's timed-socket types read the acks of this event map as `any`: the map states them.
  const timed = socket.timeout(timeoutMs) as unknown as {
    emitWithAck(event: E, payload: ClientEvents[E]["payload"]): Promise<ClientEvents[E]["ack"]>;
  };
  try {
    return await timed.emitWithAck(event, payload);
  } catch {
    return TIMEOUT;
  }
}

/** Sends one answer; with no socket yet it fails like a disconnected one. */
export function sendAnswer(
  socket: TabClientSocket | null,
  askId: string,
  answer: TabAnswer,
  act?: string,
): Promise<AnswerAck | ClientFailure> {
  const payload = act === undefined ? { askId, answer } : { askId, answer, act };
  return socket ? request(socket, "ask:answer", payload) : Promise.resolve(OFFLINE);
}
