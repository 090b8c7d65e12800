// The fake Gateway's public types: its options, what it records, and the API tests drive it with.
import type { QuestionAnswers, QuestionRecord } from "@openclaw/gateway-protocol";

export type FakeGatewayOptions = {
  /** Shared gateway token; a connect with another token is refused like the real Gateway. Default "fake-gateway-token". */
  token?: string;
  /** Clock for createdAtMs / expiresAtMs / ts / tick payloads. Timers still run on real time (or vitest fake timers). */
  now?: () => number;
  /** Advertised in hello-ok `policy.tickIntervalMs` and used to send `tick` events. Real Gateway: 30000. */
  tickIntervalMs?: number;
  /** Known agent ids. When set, unknown agents are refused like the real Gateway; when unset any agent id is accepted. */
  agents?: string[];
  /** hello-ok `snapshot.sessionDefaults.defaultAgentId`. Default: first of `agents`, else "dev". */
  defaultAgentId?: string;
  /** question.request default timeout (real: 900000 = 15 min). */
  defaultQuestionTimeoutMs?: number;
  /** plugin/exec approval default timeout (real plugin approvals: 120000). */
  defaultApprovalTimeoutMs?: number;
  /** Apply the real Gateway's scope/cap gating of broadcasts. Default true. */
  enforceScopes?: boolean;
  /** hello-ok `server.version`. Default "2026.9.6". */
  serverVersion?: string;
  /** Fixed port (default: a free port). */
  port?: number;
};

export type FakeRequestLogEntry = { connId: string; method: string; params: unknown; atMs: number };
export type FakeChatSendEntry = {
  connId: string;
  sessionKey: string;
  message: string;
  idempotencyKey: string;
  params: Record<string, unknown>;
  atMs: number;
};
export type FakeErrorShape = {
  code: string;
  message: string;
  details?: unknown;
  retryable?: boolean;
  retryAfterMs?: number;
};
export type ApprovalKind = "plugin" | "exec";
/** What `*.approval.requested` carries and `*.approval.list` returns for one approval. */
export type FakeApprovalRecord = {
  approvalKind: ApprovalKind;
  id: string;
  request: Record<string, unknown>;
  createdAtMs: number;
  expiresAtMs: number;
};
export type FakeApprovalState = FakeApprovalRecord & {
  status: "pending" | "resolved" | "expired";
  /** Recorded decision; null while pending and after expiry (the broadcast says "deny", the record says null). */
  decision: string | null;
  resolvedBy: string | null;
  resolvedAtMs: number | null;
};
export type QuestionInput = Partial<Omit<QuestionRecord, "questions">> & {
  questions?: QuestionRecord["questions"];
  /** Alternative to expiresAtMs: expiresAtMs = createdAtMs + timeoutMs. */
  timeoutMs?: number;
};
export type QuestionOutcome = { answers: QuestionAnswers } | { cancel: true };
export type ApprovalInput = Record<string, unknown> & {
  id?: string;
  timeoutMs?: number;
  createdAtMs?: number;
};
export type ChatEmitOptions = {
  state: "delta" | "final" | "status" | "aborted" | "error";
  /** Suffix text (delta). Appended to the run's cumulative text unless `replace`. */
  deltaText?: string;
  /** Explicit `message`; default is the cumulative `{role:"assistant", content:[{type:"text", text}]}`. */
  message?: unknown;
  /** Non-prefix replacement: the cumulative text becomes `deltaText`. */
  replace?: boolean;
  /** `state:"status"` phase. Default "starting_model". */
  phase?: string;
  errorMessage?: string;
  stopReason?: string;
  agentId?: string;
  /** Payload `seq` (per run) override. Default: increments per delta/status; final reuses the last one (as seen live). */
  seq?: number;
};
export type FakeHandlerContext = {
  connId: string;
  scopes: string[];
  caps: string[];
  method: string;
};
/** Custom method handler: return the payload, or throw FakeGatewayError for an error response. */
export type FakeHandler = (params: unknown, ctx: FakeHandlerContext) => unknown;

/** Throw from a custom handler to answer with `{ok:false, error: shape}`. */
export class FakeGatewayError extends Error {
  readonly shape: FakeErrorShape;
  constructor(shape: FakeErrorShape) {
    super(shape.message);
    this.name = "FakeGatewayError";
    this.shape = shape;
  }
}

export type FakeGateway = {
  /** `ws://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Every request frame received after parsing (connect included): connId, method, params, time. */
  readonly requests: FakeRequestLogEntry[];
  /** Every accepted chat.send. */
  readonly sent: FakeChatSendEntry[];
  /** Open connections that completed the handshake (hello-ok sent). */
  readonly connectionCount: number;
  /** Total hello-ok responses sent since start (grows by one per successful (re)connect). */
  readonly helloCount: number;
  /** Timers currently owned by the fake (ticks, expiries, waits, latency). 0 after stop(). */
  readonly activeTimerCount: number;
  /** Snapshot of every question record (pending and terminal). */
  readonly questions: QuestionRecord[];
  /** Snapshot of every plugin and exec approval (pending and terminal). */
  readonly approvals: FakeApprovalState[];

  createQuestion(input?: QuestionInput): QuestionRecord;
  resolveQuestion(
    id: string,
    outcome: QuestionOutcome,
    opts?: { resolvedBy?: string },
  ): { status: string; answers?: QuestionAnswers };
  createPluginApproval(input?: ApprovalInput): FakeApprovalRecord;
  createExecApproval(input?: ApprovalInput): FakeApprovalRecord;
  resolveApproval(id: string, decision: string, resolvedBy?: string): void;
  /** Force a pending question or approval to expire now (for frozen/injected clocks). */
  expire(id: string): void;
  emitChat(sessionKey: string, runId: string, opts: ChatEmitOptions): Record<string, unknown>;
  /** Broadcast an arbitrary event (no schema or scope checks) to every handshaken connection. `seq: null` omits seq; a number forces it. */
  emitRaw(event: string, payload: unknown, opts?: { seq?: number | null }): void;
  /** Send a raw text frame (e.g. invalid JSON) to every handshaken connection. */
  sendRaw(text: string): void;
  /** Abrupt close (TCP terminate → client sees 1006) of every client socket, or a clean close with a code. */
  dropConnections(opts?: { code?: number; reason?: string }): void;
  /** Real-Gateway-like restart notice: `shutdown` event, then close 1012. */
  shutdown(reason?: string, restartExpectedMs?: number): void;
  /** Stop delivering events. "drop" (default): events are lost but consume seq (slow consumer → gap). "buffer": held and delivered on resume. */
  pauseEvents(mode?: "drop" | "buffer"): void;
  resumeEvents(): void;
  /** Advance every open connection's event seq by n, so the next event shows a gap. */
  skipSeq(n?: number): void;
  /** Delay responses by ms (all methods, connect included), or only `method`'s when given. 0 clears. */
  setLatency(ms: number, method?: string): void;
  /** Answer the next `times` requests of `method` with this error. */
  failNext(method: string, error: FakeErrorShape, times?: number): void;
  /** Refuse connects: "startup" = retryable UNAVAILABLE startup-sidecars (close 1013); a shape = that error (close 1008); null = accept again. */
  rejectConnects(mode: "startup" | FakeErrorShape | null): void;
  /** Add or override a method handler; null removes an added handler. */
  setHandler(method: string, handler: FakeHandler | null): void;
  /** Register a callback for every accepted chat.send (e.g. to script a run with emitChat). */
  onChatSend(cb: ((entry: FakeChatSendEntry) => void) | null): void;
  /** Resolve when at least n connections have completed the handshake. */
  waitForConnections(n: number, timeoutMs?: number): Promise<void>;
  /** Close everything; clears every timer. */
  stop(): Promise<void>;
};
