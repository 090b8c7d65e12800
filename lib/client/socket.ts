import { io, type Socket } from "socket.io-client";
import type { ErrorCode, ClientToServerEvents, ServerToClientEvents, TabAnswer } from "../protocol.ts";

/**
 * The browser end of tab protocol v1 (docs/PROTOCOL.md). Types only come from lib/protocol.ts:
 * nothing is parsed here (zod stays out of the browser bundle); the server validates every payload.
 */

export type TabClientSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

/** Connects to the page's own origin (the widget's iframe and the dashboard are served by the product). */
export function createTabSocket(token: string): TabClientSocket {
  return io({ auth: { token }, transports: ["websocket"], autoConnect: false });
}

type AckOf<E extends keyof ClientToServerEvents> = Parameters<Parameters<ClientToServerEvents[E]>[1]>[0];
type PayloadOf<E extends keyof ClientToServerEvents> = Parameters<ClientToServerEvents[E]>[0];

/** A failure the browser itself detects: not connected, or no ack in time. */
export type ClientFailure = { ok: false; error: { code: ErrorCode | "OFFLINE" | "TIMEOUT"; message: string } };

const OFFLINE: ClientFailure = { ok: false, error: { code: "OFFLINE", message: "Not connected to the server; try again in a moment." } };

/** Sends one answer; with no socket yet it fails like a disconnected one. */
export function answerAsk(socket: TabClientSocket | null, askId: string, answer: TabAnswer) {
  return socket ? request(socket, "ask:answer", { askId, answer }) : Promise.resolve(OFFLINE);
}

/**
 * Emits an event and resolves with its ack. Refuses to emit while disconnected rather than letting
 * Socket.IO buffer the packet: an answer (or a secret) must never wait in a send buffer.
 */
export async function request<E extends keyof ClientToServerEvents>(
  socket: TabClientSocket,
  event: E,
  payload: PayloadOf<E>,
  timeoutMs = 20_000,
): Promise<AckOf<E> | ClientFailure> {
  if (!socket.connected) return OFFLINE;
  try {
    // The event map is generic here; each call site is typed through request<E>'s signature.
    const timed = socket.timeout(timeoutMs) as unknown as { emitWithAck(event: E, payload: PayloadOf<E>): Promise<AckOf<E>> };
    return await timed.emitWithAck(event, payload);
  } catch {
    return { ok: false, error: { code: "TIMEOUT", message: "The server did not answer in time." } };
  }
}
