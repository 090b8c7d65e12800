// What every part of the fake Gateway shares: its settings, the real Gateway's limits and error
// shapes, owned timers, and the wire (connections, events with their seq, scope-gated broadcasts,
// responses), which the fault injection (faults.ts) can pause, delay or cut.
import { formatValidationErrors } from "@openclaw/gateway-protocol";
import type { WebSocket } from "ws";
import type { FakeErrorShape } from "./types.ts";

export const MAX_PAYLOAD = 26_214_400;
export const MAX_BUFFERED_BYTES = 52_428_800;
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** The options of one fake, defaults applied. */
export type Settings = {
  token: string;
  now: () => number;
  tickIntervalMs: number;
  /** Lowercased; undefined: any agent id is accepted. */
  knownAgents: string[] | undefined;
  defaultAgentId: string;
  questionTimeoutMs: number;
  approvalTimeoutMs: number;
  enforceScopes: boolean;
  serverVersion: string;
  bootId: string;
  startedAtMs: number;
};

export type Conn = {
  connId: string;
  ws: WebSocket;
  hello: boolean;
  seq: number;
  scopes: string[];
  caps: string[];
  role: string;
  displayName: string;
  buffered: string[];
};

export type Reply = { ok: true; payload: unknown } | { ok: false; error: FakeErrorShape };
export type Responder = (reply: Reply) => void;
/** A Gateway method: answers through `reply` (now or later), or throws a RequestError. */
export type Method = (conn: Conn, params: unknown, reply: Responder) => void;

/** A refused request, in the real Gateway's error shape. */
export class RequestError extends Error {
  readonly shape: FakeErrorShape;
  constructor(message: string, details?: unknown, code = "INVALID_REQUEST") {
    super(message);
    this.shape = details === undefined ? { code, message } : { code, message, details };
  }
}

/** The real Gateway's answer to params its protocol schema refuses. */
export function invalidParams(
  method: string,
  errors: Parameters<typeof formatValidationErrors>[0],
): RequestError {
  return new RequestError(`invalid ${method} params: ${formatValidationErrors(errors)}`);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `agent:<id>:<rest>` → lowercased agent id (the real Gateway lowercases agent ids in keys). */
export function agentFromSessionKey(sessionKey: string | null | undefined): string | undefined {
  if (typeof sessionKey !== "string") return undefined;
  const match = /^agent:([^:]+):/u.exec(sessionKey);
  return match?.[1]?.toLowerCase();
}

export function normalizeSessionKey(sessionKey: string): string {
  const agent = agentFromSessionKey(sessionKey);
  return agent === undefined
    ? sessionKey
    : `agent:${agent}:${sessionKey.slice(`agent:${agent}:`.length)}`;
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Every timer the fake owns (expiries, waits, latency, ticks): none fires after, or survives, stop. */
export class Timers {
  private readonly handles = new Set<NodeJS.Timeout>();
  stopped = false;

  later(fn: () => void, ms: number): NodeJS.Timeout {
    const handle = setTimeout(
      () => {
        this.handles.delete(handle);
        if (!this.stopped) fn();
      },
      Math.min(MAX_TIMER_DELAY_MS, Math.max(0, ms)),
    );
    handle.unref();
    this.handles.add(handle);
    return handle;
  }

  every(fn: () => void, ms: number): void {
    const handle = setInterval(() => {
      if (!this.stopped) fn();
    }, ms);
    handle.unref();
    this.handles.add(handle);
  }

  cancel(handle: NodeJS.Timeout | null): void {
    if (!handle) return;
    clearTimeout(handle);
    this.handles.delete(handle);
  }

  get size(): number {
    return this.handles.size;
  }

  stop(): void {
    this.stopped = true;
    for (const handle of this.handles) {
      clearTimeout(handle);
      clearInterval(handle);
    }
    this.handles.clear();
  }
}

/** The injected faults the wire obeys; faults.ts sets them. */
export class FaultState {
  /** "drop": events are lost but spend their seq; "buffer": held until resumed. */
  pauseMode: "drop" | "buffer" | null = null;
  connectRejection: "startup" | FakeErrorShape | null = null;
  globalLatencyMs = 0;
  readonly methodLatency = new Map<string, number>();
  readonly failures = new Map<string, { error: FakeErrorShape; remaining: number }>();

  latencyOf(method: string): number {
    return this.methodLatency.get(method) ?? this.globalLatencyMs;
  }

  /** The error to answer this request of `method` with, if one was injected (each is used up). */
  takeFailure(method: string): FakeErrorShape | null {
    const failure = this.failures.get(method);
    if (!failure) return null;
    failure.remaining -= 1;
    if (failure.remaining <= 0) this.failures.delete(method);
    return clone(failure.error);
  }
}

/** The connections and what goes out on them. */
export class Wire {
  readonly conns = new Map<string, Conn>();
  private readonly settings: Settings;
  private readonly timers: Timers;
  private readonly faults: FaultState;

  constructor(settings: Settings, timers: Timers, faults: FaultState) {
    this.settings = settings;
    this.timers = timers;
    this.faults = faults;
  }

  /** Connections that completed the handshake. */
  handshaken(): Conn[] {
    return [...this.conns.values()].filter((conn) => conn.hello);
  }

  sendText(conn: Conn, text: string): void {
    if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(text);
  }

  sendEvent(conn: Conn, event: string, payload: unknown, seqOverride?: number | null): void {
    if (this.faults.pauseMode === "drop") {
      conn.seq += 1; // a slow consumer loses the event but the seq is spent: the client sees a gap later
      return;
    }
    let seq: number | undefined;
    if (seqOverride === null) seq = undefined;
    else if (typeof seqOverride === "number") seq = seqOverride;
    else seq = conn.seq += 1;
    const frame =
      seq === undefined
        ? { type: "event", event, payload }
        : { type: "event", event, payload, seq };
    const text = JSON.stringify(frame);
    if (this.faults.pauseMode === "buffer") conn.buffered.push(text);
    else this.sendText(conn, text);
  }

  /** Which handshaken connections get `event` (real Gateway gating, see REAL-GATEWAY.md / presence.md). */
  reaches(event: string, conn: Conn): boolean {
    if (!this.settings.enforceScopes) return true;
    const hasScope = (...scopes: string[]) => scopes.some((s) => conn.scopes.includes(s));
    switch (event) {
      case "plugin.approval.requested":
        return hasScope("operator.admin") && conn.caps.includes("plugin-approvals");
      case "exec.approval.requested":
        return hasScope("operator.admin") && conn.caps.includes("exec-approvals");
      case "plugin.approval.resolved":
      case "exec.approval.resolved":
        return hasScope("operator.approvals", "operator.admin");
      case "question.requested":
      case "question.resolved":
        return hasScope("operator.questions", "operator.admin");
      case "chat":
      case "agent":
      case "chat.metadata.changed":
        return hasScope("operator.read", "operator.write", "operator.admin");
      default:
        return true;
    }
  }

  broadcast(event: string, payload: unknown, exceptConnId: string | null = null): void {
    for (const conn of this.handshaken()) {
      if (conn.connId === exceptConnId || !this.reaches(event, conn)) continue;
      this.sendEvent(conn, event, clone(payload));
    }
  }

  respond(conn: Conn, id: string, method: string, reply: Reply): void {
    const frame = reply.ok
      ? { type: "res", id, ok: true, payload: reply.payload }
      : { type: "res", id, ok: false, error: reply.error };
    this.sendLater(conn, JSON.stringify(frame), method);
  }

  /** Sends `text` after `method`'s injected latency (at once without one), then runs `after`. */
  sendLater(conn: Conn, text: string, method: string, after?: () => void): void {
    const send = () => {
      this.sendText(conn, text);
      after?.();
    };
    const delay = this.faults.latencyOf(method);
    if (delay > 0) this.timers.later(send, delay);
    else send();
  }
}
