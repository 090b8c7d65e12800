/**
 * The IPC protocol between the load client (run.ts, which owns the tabs and the clock) and the
 * server process (server-process.ts: fake Gateways, product server, bare relay). Every request
 * carries an id; the server process answers each with a Reply.
 */

/**
 * Which server a Gateway event goes to: the product, the bare relay, the first of two product
 * instances on one Redis (`cross`: the viewing tab sits on the second), or the bare relay that passes
 * each event through that Redis before its emit (`cross-relay`: the floor under `cross`).
 */
export type Target = "product" | "relay" | "cross" | "cross-relay";

export type Command =
  | { cmd: "start-fake" }
  | { cmd: "start-real"; gatewayUrl: string; gatewayToken: string }
  /**
   * Two product instances on a throwaway Redis; only the first hears the `cross` fake Gateway. Answers
   * {viewerUrl}: the second's, and {relayUrl}: the bare relay through the same Redis.
   */
  | { cmd: "start-cross" }
  /** The fake Gateway of `target` emits `question.requested` for `chat` (createQuestion); answers {id, emittedAt} (clock.ts). */
  | { cmd: "ask"; target: Target; chat: string }
  /** The fake Gateway of `target` cancels the question (→ `question.resolved`). */
  | { cmd: "cancel"; target: Target; askId: string }
  /** How many of these questions the fake Gateway of `target` holds as answered (via question.resolve). */
  | { cmd: "answered"; target: Target; ids: string[] }
  /** Tabs on each server, to wait for (dis)connects to settle. */
  | { cmd: "counts" }
  /** Full GC (several passes) then process.memoryUsage(). */
  | { cmd: "heap" }
  | { cmd: "gateway-status" }
  /** Answers at once: the IPC round trip, the floor under every Gateway-event figure. */
  | { cmd: "ping" }
  | { cmd: "stop" };

/** productViewers: tabs viewing a chat on the product server (every bench tab views one). */
export type Counts = { productViewers: number; relaySockets: number };
export type Heap = { heapUsed: number; external: number; arrayBuffers: number; rss: number };

/** `id` is the request id; no command has a field of that name. */
export type Request = Command & { id: number };
export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };
/** Sent once, unprompted, when the process is ready for commands. */
export type Ready = { ready: true; pid: number };
