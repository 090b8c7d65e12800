/**
 * In-repo FAKE OpenClaw Gateway (wire protocol v4) for tests that need what the real Gateway cannot
 * do on demand: faults, disconnects, timing, seq gaps, malformed records, slow consumers.
 *
 * Frames mirror what a real `openclaw@2026.9.6` Gateway sent to a raw WebSocket probe on 2026-11-29
 * (handshake, hello-ok, question / plugin approval / exec approval / chat.send frames, error shapes
 * and messages). Inbound params are checked with the `@openclaw/gateway-protocol` validators and
 * refused as `INVALID_REQUEST` with `invalid <method> params: <formatValidationErrors(...)>`, exactly
 * like the real Gateway. See the report in the PR / task for what was compared.
 */
import { randomUUID } from "node:crypto";
import { WebSocketServer, type WebSocket } from "ws";
import {
  GATEWAY_SERVER_CAPS,
  formatValidationErrors,
  validateChatSendParams,
  validateConnectParams,
  validateExecApprovalGetParams,
  validateExecApprovalRequestParams,
  validateExecApprovalResolveParams,
  validatePluginApprovalRequestParams,
  validatePluginApprovalResolveParams,
  validateQuestionGetParams,
  validateQuestionListParams,
  validateQuestionRequestParams,
  validateQuestionResolveParams,
  validateQuestionWaitAnswerParams,
  validateRequestFrame,
  type HelloOk,
  type QuestionAnswers,
  type QuestionRecord,
} from "@openclaw/gateway-protocol";
import { PROTOCOL_VERSION } from "@openclaw/gateway-protocol/version";

// ---------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------

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
export type ApprovalInput = Record<string, unknown> & { id?: string; timeoutMs?: number; createdAtMs?: number };
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
export type FakeHandlerContext = { connId: string; scopes: string[]; caps: string[]; method: string };
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
  resolveQuestion(id: string, outcome: QuestionOutcome, opts?: { resolvedBy?: string }): { status: string; answers?: QuestionAnswers };
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

// ---------------------------------------------------------------------------------------------
// Constants mirrored from the real Gateway
// ---------------------------------------------------------------------------------------------

const DEFAULT_TOKEN = "fake-gateway-token";
const REAL_TICK_INTERVAL_MS = 30_000;
const REAL_QUESTION_TIMEOUT_MS = 900_000;
const REAL_APPROVAL_TIMEOUT_MS = 120_000;
const MAX_PAYLOAD = 26_214_400;
const MAX_BUFFERED_BYTES = 52_428_800;
const MAX_TIMER_DELAY_MS = 2_147_483_647;
const APPROVAL_DECISIONS = ["allow-once", "allow-always", "deny"];
const APPROVAL_NOT_FOUND_DETAILS = {
  reason: "APPROVAL_NOT_FOUND",
  remediation: "Re-request the action; pending approvals are cleared after expiry or restart.",
};

const BUILTIN_METHODS = [
  "health",
  "chat.send",
  "question.request",
  "question.waitAnswer",
  "question.resolve",
  "question.get",
  "question.list",
  "plugin.approval.list",
  "plugin.approval.request",
  "plugin.approval.waitDecision",
  "plugin.approval.resolve",
  "exec.approval.get",
  "exec.approval.list",
  "exec.approval.request",
  "exec.approval.waitDecision",
  "exec.approval.resolve",
];
const ADVERTISED_EVENTS = [
  "connect.challenge",
  "agent",
  "chat",
  "chat.metadata.changed",
  "presence",
  "tick",
  "shutdown",
  "health",
  "heartbeat",
  "exec.approval.requested",
  "exec.approval.resolved",
  "question.requested",
  "question.resolved",
  "plugin.approval.requested",
  "plugin.approval.resolved",
];

// ---------------------------------------------------------------------------------------------
// Internal state types
// ---------------------------------------------------------------------------------------------

type Conn = {
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

type QuestionState = { record: QuestionRecord; timer: NodeJS.Timeout | null; waiters: Set<() => void> };

type ApprovalState = FakeApprovalState & {
  timer: NodeJS.Timeout | null;
  waiters: Set<() => void>;
  requesterConnId: string | null;
};

type ChatRun = { sessionKey: string; text: string; seq: number; done: boolean };

type Reply = { ok: true; payload: unknown } | { ok: false; error: FakeErrorShape };
type Responder = (reply: Reply) => void;

class RequestError extends Error {
  readonly shape: FakeErrorShape;
  constructor(message: string, details?: unknown, code = "INVALID_REQUEST") {
    super(message);
    this.shape = details === undefined ? { code, message } : { code, message, details };
  }
}

function invalidParams(method: string, errors: Parameters<typeof formatValidationErrors>[0]): RequestError {
  return new RequestError(`invalid ${method} params: ${formatValidationErrors(errors)}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `agent:<id>:<rest>` → lowercased agent id (the real Gateway lowercases agent ids in keys). */
function agentFromSessionKey(sessionKey: string | null | undefined): string | undefined {
  if (typeof sessionKey !== "string") return undefined;
  const match = /^agent:([^:]+):/u.exec(sessionKey);
  return match?.[1]?.toLowerCase();
}

function normalizeSessionKey(sessionKey: string): string {
  const agent = agentFromSessionKey(sessionKey);
  return agent === undefined ? sessionKey : `agent:${agent}:${sessionKey.slice(`agent:${agent}:`.length)}`;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

// ---------------------------------------------------------------------------------------------
// The fake
// ---------------------------------------------------------------------------------------------

export async function startFakeGateway(opts: FakeGatewayOptions = {}): Promise<FakeGateway> {
  const token = opts.token ?? DEFAULT_TOKEN;
  const now = opts.now ?? (() => Date.now());
  const tickIntervalMs = opts.tickIntervalMs ?? REAL_TICK_INTERVAL_MS;
  const knownAgents = opts.agents?.map((a) => a.toLowerCase());
  const defaultAgentId = opts.defaultAgentId ?? knownAgents?.[0] ?? "dev";
  const questionTimeoutMs = opts.defaultQuestionTimeoutMs ?? REAL_QUESTION_TIMEOUT_MS;
  const approvalTimeoutMs = opts.defaultApprovalTimeoutMs ?? REAL_APPROVAL_TIMEOUT_MS;
  const enforceScopes = opts.enforceScopes ?? true;
  const serverVersion = opts.serverVersion ?? "2026.9.6";
  const bootId = randomUUID();
  const startedAtMs = now();

  const conns = new Map<string, Conn>();
  const timers = new Set<NodeJS.Timeout>();
  const questions = new Map<string, QuestionState>();
  const approvals = new Map<string, ApprovalState>();
  const chatRuns = new Map<string, ChatRun>();
  const chatSessions = new Set<string>();
  const requests: FakeRequestLogEntry[] = [];
  const sent: FakeChatSendEntry[] = [];
  const customHandlers = new Map<string, FakeHandler>();
  const failures = new Map<string, { error: FakeErrorShape; remaining: number }>();
  const methodLatency = new Map<string, number>();
  const connectionWaiters = new Set<() => void>();
  let globalLatencyMs = 0;
  let pauseMode: "drop" | "buffer" | null = null;
  let connectRejection: "startup" | FakeErrorShape | null = null;
  let chatSendCallback: ((entry: FakeChatSendEntry) => void) | null = null;
  let helloCount = 0;
  let stopped = false;

  // ---- timers -------------------------------------------------------------------------------

  function later(fn: () => void, ms: number): NodeJS.Timeout {
    const handle = setTimeout(() => {
      timers.delete(handle);
      if (!stopped) fn();
    }, Math.min(MAX_TIMER_DELAY_MS, Math.max(0, ms)));
    handle.unref();
    timers.add(handle);
    return handle;
  }

  function cancel(handle: NodeJS.Timeout | null): void {
    if (!handle) return;
    clearTimeout(handle);
    timers.delete(handle);
  }

  // ---- sending ------------------------------------------------------------------------------

  function sendText(conn: Conn, text: string): void {
    if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(text);
  }

  function sendEvent(conn: Conn, event: string, payload: unknown, seqOverride?: number | null): void {
    if (pauseMode === "drop") {
      conn.seq += 1; // a slow consumer loses the event but the seq is spent: the client sees a gap later
      return;
    }
    let seq: number | undefined;
    if (seqOverride === null) seq = undefined;
    else if (typeof seqOverride === "number") seq = seqOverride;
    else seq = conn.seq += 1;
    const frame = seq === undefined ? { type: "event", event, payload } : { type: "event", event, payload, seq };
    const text = JSON.stringify(frame);
    if (pauseMode === "buffer") conn.buffered.push(text);
    else sendText(conn, text);
  }

  function hasScope(conn: Conn, ...scopes: string[]): boolean {
    return scopes.some((s) => conn.scopes.includes(s));
  }

  /** Which handshaken connections get `event` (real Gateway gating, see REAL-GATEWAY.md / presence.md). */
  function audience(event: string, conn: Conn): boolean {
    if (!enforceScopes) return true;
    switch (event) {
      case "plugin.approval.requested":
        return hasScope(conn, "operator.admin") && conn.caps.includes("plugin-approvals");
      case "exec.approval.requested":
        return hasScope(conn, "operator.admin") && conn.caps.includes("exec-approvals");
      case "plugin.approval.resolved":
      case "exec.approval.resolved":
        return hasScope(conn, "operator.approvals", "operator.admin");
      case "question.requested":
      case "question.resolved":
        return hasScope(conn, "operator.questions", "operator.admin");
      case "chat":
      case "agent":
      case "chat.metadata.changed":
        return hasScope(conn, "operator.read", "operator.write", "operator.admin");
      default:
        return true;
    }
  }

  function broadcast(event: string, payload: unknown, exceptConnId: string | null = null): void {
    for (const conn of conns.values()) {
      if (!conn.hello || conn.connId === exceptConnId || !audience(event, conn)) continue;
      sendEvent(conn, event, clone(payload));
    }
  }

  function respond(conn: Conn, id: string, method: string, reply: Reply): void {
    const frame = reply.ok
      ? { type: "res", id, ok: true, payload: reply.payload }
      : { type: "res", id, ok: false, error: reply.error };
    const text = JSON.stringify(frame);
    const delay = methodLatency.get(method) ?? globalLatencyMs;
    if (delay > 0) later(() => sendText(conn, text), delay);
    else sendText(conn, text);
  }

  // ---- questions ----------------------------------------------------------------------------

  function questionNotFound(id: string): RequestError {
    return new RequestError(`question '${id}' was not found`, { reason: "QUESTION_NOT_FOUND" });
  }

  function storeQuestion(record: QuestionRecord): QuestionRecord {
    const state: QuestionState = { record, timer: null, waiters: new Set() };
    questions.set(record.id, state);
    if (record.status === "pending") {
      state.timer = later(() => expireQuestion(state), record.expiresAtMs - now());
      broadcast("question.requested", record);
    }
    return clone(record);
  }

  function questionResult(record: QuestionRecord): { status: QuestionRecord["status"]; answers?: QuestionAnswers } {
    return record.status === "answered" && record.answers
      ? { status: record.status, answers: clone(record.answers) }
      : { status: record.status };
  }

  function finishQuestion(state: QuestionState): void {
    cancel(state.timer);
    state.timer = null;
    const payload = { id: state.record.id, ...questionResult(state.record) };
    broadcast("question.resolved", payload);
    for (const wake of state.waiters) wake();
    state.waiters.clear();
  }

  function expireQuestion(state: QuestionState): void {
    if (state.record.status !== "pending") return;
    state.record.status = "expired";
    finishQuestion(state);
  }

  /** The real Gateway's answer checks, in its order; messages copied from the real Gateway. */
  function checkAnswers(record: QuestionRecord, answers: QuestionAnswers): void {
    const bad = (message: string) => new RequestError(message, { reason: "QUESTION_INVALID_ANSWER" });
    const byId = new Map(record.questions.map((q) => [q.questionId, q]));
    for (const key of Object.keys(answers.answers)) {
      if (!byId.has(key)) throw bad(`question '${key}' is not part of this request`);
    }
    for (const q of record.questions) {
      const values = answers.answers[q.questionId];
      if (!values || values.length === 0) throw bad(`question '${q.questionId}' requires an answer`);
      if (values.length > 1 && q.multiSelect !== true) throw bad(`question '${q.questionId}' does not allow multiple answers`);
      if (q.options.length > 0 && q.isOther !== true) {
        const labels = new Set(q.options.map((o) => o.label));
        if (values.some((v) => !labels.has(v))) throw bad(`question '${q.questionId}' contains an unknown option`);
      }
    }
  }

  function applyQuestionOutcome(id: string, outcome: QuestionOutcome, resolvedBy?: string) {
    const state = questions.get(id);
    if (!state) throw questionNotFound(id);
    const record = state.record;
    if (record.status !== "pending") {
      throw new RequestError(`question '${id}' is already ${record.status}`, { reason: "QUESTION_ALREADY_TERMINAL" });
    }
    if ("cancel" in outcome) {
      record.status = "cancelled";
    } else {
      checkAnswers(record, outcome.answers);
      const stored: QuestionAnswers = { answers: {} };
      for (const q of record.questions) {
        const values = outcome.answers.answers[q.questionId] ?? [];
        // Secret-store answers never travel back: the real Gateway answers and broadcasts "stored".
        stored.answers[q.questionId] = q.secretStore ? values.map(() => "stored") : [...values];
      }
      record.status = "answered";
      record.answers = stored;
    }
    if (resolvedBy !== undefined) record.resolvedBy = resolvedBy;
    finishQuestion(state);
    return questionResult(record);
  }

  function requestQuestion(params: unknown): { id: string; expiresAtMs: number } {
    if (!validateQuestionRequestParams(params)) throw invalidParams("question.request", validateQuestionRequestParams.errors);
    const sessionKey = params.sessionKey === undefined ? undefined : normalizeSessionKey(params.sessionKey);
    const keyAgent = agentFromSessionKey(sessionKey);
    let agentId = params.agentId;
    if (agentId !== undefined) {
      if (knownAgents && !knownAgents.includes(agentId.toLowerCase())) throw new RequestError(`Unknown agent id "${agentId}"`);
      if (keyAgent !== undefined && keyAgent !== agentId.toLowerCase()) {
        throw new RequestError(`agent "${agentId}" does not match session key agent "${keyAgent}"`);
      }
    } else {
      agentId = keyAgent;
    }
    const seenIds = new Set<string>();
    for (const q of params.questions) {
      if (seenIds.has(q.questionId)) throw new RequestError(`duplicate question id '${q.questionId}'`);
      seenIds.add(q.questionId);
      if (q.options.length === 1) {
        throw new RequestError(`question '${q.questionId}' must have either no options or 2 to 4 options`);
      }
      const labels = new Set<string>();
      for (const o of q.options) {
        if (labels.has(o.label)) throw new RequestError(`question '${q.questionId}' has duplicate option label '${o.label}'`);
        labels.add(o.label);
      }
      if (q.secretStore) throw new RequestError("secret store questions require trusted agent runtime authority");
      if (q.isSecret) throw new RequestError(`question '${q.questionId}': secret questions are not supported yet`);
    }
    const createdAtMs = now();
    const record: QuestionRecord = {
      id: params.id ?? randomUUID(),
      questions: clone(params.questions),
      ...(agentId !== undefined ? { agentId } : {}),
      ...(sessionKey !== undefined ? { sessionKey } : {}),
      ...(params.runId !== undefined ? { runId: params.runId } : {}),
      createdAtMs,
      expiresAtMs: createdAtMs + (params.timeoutMs ?? questionTimeoutMs),
      status: "pending",
    };
    storeQuestion(record);
    return { id: record.id, expiresAtMs: record.expiresAtMs };
  }

  function waitAnswer(params: unknown, reply: Responder): void {
    if (!validateQuestionWaitAnswerParams(params)) throw invalidParams("question.waitAnswer", validateQuestionWaitAnswerParams.errors);
    const state = questions.get(params.id);
    if (!state) throw questionNotFound(params.id);
    if (state.record.status !== "pending") {
      reply({ ok: true, payload: questionResult(state.record) });
      return;
    }
    let timer: NodeJS.Timeout | null = null;
    const wake = () => {
      cancel(timer);
      reply({ ok: true, payload: questionResult(state.record) });
    };
    state.waiters.add(wake);
    if (params.timeoutMs !== undefined) {
      timer = later(() => {
        state.waiters.delete(wake);
        reply({ ok: true, payload: { status: "pending" } });
      }, params.timeoutMs);
    }
  }

  // ---- approvals ----------------------------------------------------------------------------

  function approvalRecord(a: ApprovalState): FakeApprovalRecord {
    return clone({ approvalKind: a.approvalKind, id: a.id, request: a.request, createdAtMs: a.createdAtMs, expiresAtMs: a.expiresAtMs });
  }

  function approvalFinal(a: ApprovalState) {
    return { id: a.id, decision: a.decision, createdAtMs: a.createdAtMs, expiresAtMs: a.expiresAtMs };
  }

  function hasRoute(kind: ApprovalKind, exceptConnId: string | null): boolean {
    const event = `${kind}.approval.requested`;
    return [...conns.values()].some((c) => c.hello && c.connId !== exceptConnId && audience(event, c));
  }

  function normalizePluginRequest(input: Record<string, unknown>): Record<string, unknown> {
    const sessionKey = typeof input.sessionKey === "string" ? normalizeSessionKey(input.sessionKey) : null;
    return {
      pluginId: input.pluginId ?? null,
      title: input.title ?? "Plugin approval",
      description: input.description ?? "A plugin asks for approval",
      scope: input.scope ?? null,
      detail: input.detail ?? null,
      severity: input.severity ?? null,
      toolName: input.toolName ?? null,
      toolCallId: input.toolCallId ?? null,
      agentId: input.agentId ?? agentFromSessionKey(sessionKey) ?? null,
      sessionKey,
      runId: input.runId ?? null,
      turnSourceChannel: input.turnSourceChannel ?? null,
      turnSourceTo: input.turnSourceTo ?? null,
      turnSourceAccountId: input.turnSourceAccountId ?? null,
      turnSourceThreadId: input.turnSourceThreadId ?? null,
    };
  }

  function normalizeExecRequest(input: Record<string, unknown>): Record<string, unknown> {
    const sessionKey = typeof input.sessionKey === "string" ? normalizeSessionKey(input.sessionKey) : null;
    const unavailable = Array.isArray(input.unavailableDecisions) ? input.unavailableDecisions : [];
    return {
      command: input.command ?? "echo hello",
      systemRunBinding: null,
      systemRunPlan: input.systemRunPlan ?? null,
      cwd: input.cwd ?? null,
      nodeId: input.nodeId ?? null,
      host: input.host ?? "gateway",
      security: input.security ?? null,
      ask: input.ask ?? null,
      warningText: input.warningText ?? null,
      scope: input.scope ?? null,
      commandAnalysis: input.commandAnalysis ?? { commandCount: 1, nestedCommandCount: 0, riskKinds: [], warningLines: [] },
      allowedDecisions: input.allowedDecisions ?? APPROVAL_DECISIONS.filter((d) => !unavailable.includes(d)),
      agentId: input.agentId ?? agentFromSessionKey(sessionKey) ?? null,
      resolvedPath: input.resolvedPath ?? null,
      sessionKey,
      sessionId: input.sessionId ?? null,
      runId: input.runId ?? null,
      toolCallId: input.toolCallId ?? null,
      turnSourceChannel: input.turnSourceChannel ?? null,
      turnSourceTo: input.turnSourceTo ?? null,
      turnSourceAccountId: input.turnSourceAccountId ?? null,
      turnSourceThreadId: input.turnSourceThreadId ?? null,
      cronExecutionSource: null,
      cronOperationBinding: null,
    };
  }

  function createApproval(kind: ApprovalKind, input: ApprovalInput, requesterConnId: string | null): ApprovalState {
    const { id, timeoutMs, createdAtMs: createdInput, twoPhase: _twoPhase, ...rest } = input;
    const createdAtMs = createdInput ?? now();
    const request = kind === "plugin" ? normalizePluginRequest(rest) : normalizeExecRequest(rest);
    const state: ApprovalState = {
      approvalKind: kind,
      id: id ?? (kind === "plugin" ? `plugin:${randomUUID()}` : randomUUID()),
      request,
      createdAtMs,
      expiresAtMs: createdAtMs + (timeoutMs ?? approvalTimeoutMs),
      status: "pending",
      decision: null,
      resolvedBy: null,
      resolvedAtMs: null,
      timer: null,
      waiters: new Set(),
      requesterConnId,
    };
    approvals.set(state.id, state);
    state.timer = later(() => expireApproval(state), state.expiresAtMs - now());
    const { approvalKind, id: approvalId, createdAtMs: c, expiresAtMs: e } = state;
    broadcast(`${kind}.approval.requested`, { approvalKind, id: approvalId, request, createdAtMs: c, expiresAtMs: e }, requesterConnId);
    return state;
  }

  function finishApproval(a: ApprovalState, broadcastDecision: string): void {
    cancel(a.timer);
    a.timer = null;
    const wakeWaiters = () => {
      for (const wake of a.waiters) wake();
      a.waiters.clear();
    };
    // Order seen live: a decision answers the waiting requests before the broadcast; an expiry
    // broadcasts first and then answers them.
    if (a.status === "resolved") wakeWaiters();
    broadcast(`${a.approvalKind}.approval.resolved`, {
      id: a.id,
      decision: broadcastDecision,
      resolvedBy: a.resolvedBy,
      ts: a.resolvedAtMs,
      request: a.request,
    });
    wakeWaiters();
  }

  function expireApproval(a: ApprovalState): void {
    if (a.status !== "pending") return;
    a.status = "expired";
    a.resolvedAtMs = Math.max(now(), a.expiresAtMs);
    finishApproval(a, "deny");
  }

  function applyApprovalDecision(kind: ApprovalKind | null, id: string, decision: string, resolvedBy: string): void {
    if (!APPROVAL_DECISIONS.includes(decision)) throw new RequestError("invalid decision");
    const a = approvals.get(id);
    if (!a || (kind !== null && a.approvalKind !== kind)) throw new RequestError("unknown or expired approval id", APPROVAL_NOT_FOUND_DETAILS);
    if (a.status === "resolved" && a.decision === decision) return; // same decision twice → ok
    if (a.status !== "pending") throw new RequestError("approval already resolved", { reason: "APPROVAL_ALREADY_RESOLVED" });
    const allowed = a.request.allowedDecisions;
    if (Array.isArray(allowed) && !allowed.includes(decision)) throw new RequestError("invalid decision");
    a.status = "resolved";
    a.decision = decision;
    a.resolvedBy = resolvedBy;
    a.resolvedAtMs = now();
    finishApproval(a, decision);
  }

  function requestApproval(kind: ApprovalKind, conn: Conn, params: unknown, reply: Responder): void {
    const validator = kind === "plugin" ? validatePluginApprovalRequestParams : validateExecApprovalRequestParams;
    if (!validator(params)) throw invalidParams(`${kind}.approval.request`, validator.errors);
    const input = params as ApprovalInput;
    const sessionAgent = agentFromSessionKey(typeof input.sessionKey === "string" ? input.sessionKey : undefined);
    if (knownAgents && typeof input.agentId === "string" && !knownAgents.includes(input.agentId.toLowerCase())) {
      throw new RequestError(`Unknown agent id "${input.agentId}"`);
    }
    if (knownAgents && sessionAgent !== undefined && !knownAgents.includes(sessionAgent)) {
      throw new RequestError(`Unknown agent id "${sessionAgent}"`);
    }
    const twoPhase = input.twoPhase === true;
    if (!hasRoute(kind, conn.connId)) {
      // Seen live: with no approval route the request returns at once with decision null.
      const createdAtMs = now();
      const id = typeof input.id === "string" ? input.id : kind === "plugin" ? `plugin:${randomUUID()}` : randomUUID();
      const timeoutMs = typeof input.timeoutMs === "number" ? input.timeoutMs : approvalTimeoutMs;
      reply({ ok: true, payload: { id, decision: null, createdAtMs, expiresAtMs: createdAtMs + timeoutMs } });
      return;
    }
    const a = createApproval(kind, input, conn.connId);
    if (twoPhase) {
      reply({
        ok: true,
        payload: { status: "accepted", id: a.id, deliveryRoute: "approval-client", createdAtMs: a.createdAtMs, expiresAtMs: a.expiresAtMs },
      });
    }
    a.waiters.add(() => reply({ ok: true, payload: approvalFinal(a) }));
  }

  function waitDecision(params: unknown, reply: Responder): void {
    const id = isRecord(params) && typeof params.id === "string" ? params.id : undefined;
    const a = id === undefined ? undefined : approvals.get(id);
    if (!a) throw new RequestError("approval expired or not found");
    const answer = () =>
      reply({ ok: true, payload: { ...approvalFinal(a), terminalReason: a.status === "expired" ? "timeout" : "user" } });
    if (a.status !== "pending") answer();
    else a.waiters.add(answer);
  }

  // ---- chat ---------------------------------------------------------------------------------

  function chatSend(conn: Conn, params: unknown): { runId: string; status: string } {
    if (!validateChatSendParams(params)) throw invalidParams("chat.send", validateChatSendParams.errors);
    if (params.message.trim() === "" && (params.attachments?.length ?? 0) === 0) {
      throw new RequestError("message or attachment required");
    }
    const agent = agentFromSessionKey(params.sessionKey);
    if (knownAgents && agent !== undefined && !knownAgents.includes(agent)) {
      throw new RequestError(`Agent "${agent}" no longer exists in configuration`);
    }
    const runId = params.idempotencyKey;
    const existing = chatRuns.get(runId);
    if (existing && !existing.done) return { runId, status: "in_flight" };
    const sessionKey = normalizeSessionKey(params.sessionKey);
    chatRuns.set(runId, { sessionKey, text: "", seq: 0, done: false });
    const entry: FakeChatSendEntry = {
      connId: conn.connId,
      sessionKey,
      message: params.message,
      idempotencyKey: params.idempotencyKey,
      params: clone(params as Record<string, unknown>),
      atMs: now(),
    };
    sent.push(entry);
    const firstMessage = !chatSessions.has(sessionKey);
    chatSessions.add(sessionKey);
    // Let the response go out first (as observed), then the session-metadata ping and any scripted run.
    queueMicrotask(() => {
      if (stopped) return;
      if (firstMessage) broadcast("chat.metadata.changed", {});
      chatSendCallback?.(clone(entry));
    });
    return { runId, status: "started" };
  }

  function emitChat(sessionKey: string, runId: string, o: ChatEmitOptions): Record<string, unknown> {
    const key = normalizeSessionKey(sessionKey);
    let run = chatRuns.get(runId);
    if (!run) {
      run = { sessionKey: key, text: "", seq: 0, done: false };
      chatRuns.set(runId, run);
    }
    const agentId = o.agentId ?? agentFromSessionKey(key);
    const base: Record<string, unknown> = { runId, sessionKey: key, ...(agentId !== undefined ? { agentId } : {}) };
    const cumulative = () => ({ role: "assistant", content: [{ type: "text", text: run.text }] });
    let payload: Record<string, unknown>;
    switch (o.state) {
      case "status": {
        run.seq = o.seq ?? run.seq + 1;
        payload = { ...base, state: "status", phase: o.phase ?? "starting_model", seq: run.seq };
        break;
      }
      case "delta": {
        const deltaText = o.deltaText ?? "";
        run.text = o.replace ? deltaText : run.text + deltaText;
        run.seq = o.seq ?? run.seq + 1;
        payload = {
          ...base,
          state: "delta",
          message: o.message ?? cumulative(),
          deltaText,
          ...(o.replace ? { replace: true } : {}),
          seq: run.seq,
        };
        break;
      }
      case "final": {
        if (o.deltaText !== undefined) run.text = o.replace ? o.deltaText : run.text + o.deltaText;
        run.seq = o.seq ?? Math.max(run.seq, 1);
        run.done = true;
        const message = o.message ?? (run.text === "" ? undefined : cumulative());
        payload = {
          ...base,
          state: "final",
          ...(message !== undefined ? { message } : {}),
          ...(o.stopReason !== undefined ? { stopReason: o.stopReason } : {}),
          seq: run.seq,
        };
        break;
      }
      case "aborted":
      case "error": {
        run.seq = o.seq ?? Math.max(run.seq, 1);
        run.done = true;
        payload = {
          ...base,
          state: o.state,
          ...(o.message !== undefined ? { message: o.message } : {}),
          ...(o.errorMessage !== undefined ? { errorMessage: o.errorMessage } : {}),
          ...(o.stopReason !== undefined ? { stopReason: o.stopReason } : {}),
          seq: run.seq,
        };
        break;
      }
    }
    broadcast("chat", payload);
    return clone(payload);
  }

  // ---- request dispatch ---------------------------------------------------------------------

  function handleBuiltin(conn: Conn, method: string, params: unknown, reply: Responder): boolean {
    const ok = (payload: unknown) => reply({ ok: true, payload });
    switch (method) {
      case "health":
        ok({ ok: true, ts: now(), durationMs: 0 });
        return true;
      case "question.request":
        ok(requestQuestion(params));
        return true;
      case "question.list": {
        const p = params === undefined ? {} : params;
        if (!validateQuestionListParams(p)) throw invalidParams(method, validateQuestionListParams.errors);
        ok({ questions: [...questions.values()].filter((s) => s.record.status === "pending").map((s) => clone(s.record)) });
        return true;
      }
      case "question.get": {
        if (!validateQuestionGetParams(params)) throw invalidParams(method, validateQuestionGetParams.errors);
        const state = questions.get(params.id);
        if (!state) throw questionNotFound(params.id);
        ok({ question: clone(state.record) });
        return true;
      }
      case "question.resolve": {
        if (!validateQuestionResolveParams(params)) throw invalidParams(method, validateQuestionResolveParams.errors);
        const outcome: QuestionOutcome = "cancel" in params ? { cancel: true } : { answers: params.answers };
        ok(applyQuestionOutcome(params.id, outcome, params.resolvedBy));
        return true;
      }
      case "question.waitAnswer":
        waitAnswer(params, reply);
        return true;
      case "plugin.approval.request":
        requestApproval("plugin", conn, params, reply);
        return true;
      case "exec.approval.request":
        requestApproval("exec", conn, params, reply);
        return true;
      case "plugin.approval.list":
      case "exec.approval.list": {
        // No params validator exists for these; the real Gateway ignores params here.
        const kind: ApprovalKind = method.startsWith("plugin") ? "plugin" : "exec";
        ok(
          [...approvals.values()]
            .filter((a) => a.approvalKind === kind && a.status === "pending")
            .map((a) => clone({ id: a.id, request: a.request, createdAtMs: a.createdAtMs, expiresAtMs: a.expiresAtMs, approvalKind: a.approvalKind })),
        );
        return true;
      }
      case "plugin.approval.resolve":
      case "exec.approval.resolve": {
        const kind: ApprovalKind = method.startsWith("plugin") ? "plugin" : "exec";
        const validator = kind === "plugin" ? validatePluginApprovalResolveParams : validateExecApprovalResolveParams;
        if (!validator(params)) throw invalidParams(method, validator.errors);
        applyApprovalDecision(kind, params.id, params.decision, conn.displayName);
        ok({ ok: true });
        return true;
      }
      case "plugin.approval.waitDecision":
      case "exec.approval.waitDecision":
        waitDecision(params, reply);
        return true;
      case "exec.approval.get": {
        if (!validateExecApprovalGetParams(params)) throw invalidParams(method, validateExecApprovalGetParams.errors);
        const a = approvals.get(params.id);
        if (!a || a.approvalKind !== "exec" || a.status !== "pending") {
          throw new RequestError("unknown or expired approval id", APPROVAL_NOT_FOUND_DETAILS);
        }
        ok({
          id: a.id,
          commandText: a.request.command,
          commandPreview: null,
          allowedDecisions: a.request.allowedDecisions,
          host: a.request.host,
          nodeId: a.request.nodeId,
          agentId: a.request.agentId,
          expiresAtMs: a.expiresAtMs,
        });
        return true;
      }
      case "chat.send":
        ok(chatSend(conn, params));
        return true;
      default:
        return false;
    }
  }

  function handleRequest(conn: Conn, id: string, method: string, params: unknown): void {
    let settled = false;
    const reply: Responder = (r) => {
      if (settled && !(r.ok && isRecord(r.payload) && "decision" in r.payload)) return;
      // A two-phase approval answers twice (accepted, then final); everything else answers once.
      settled = true;
      respond(conn, id, method, r);
    };
    const failure = failures.get(method);
    if (failure) {
      failure.remaining -= 1;
      if (failure.remaining <= 0) failures.delete(method);
      reply({ ok: false, error: clone(failure.error) });
      return;
    }
    try {
      const custom = customHandlers.get(method);
      if (custom) {
        const ctx: FakeHandlerContext = { connId: conn.connId, scopes: [...conn.scopes], caps: [...conn.caps], method };
        Promise.resolve()
          .then(() => custom(params, ctx))
          .then(
            (payload) => reply({ ok: true, payload }),
            (error: unknown) => reply({ ok: false, error: toErrorShape(error) }),
          );
        return;
      }
      if (!handleBuiltin(conn, method, params, reply)) throw new RequestError(`unknown method: ${method}`);
    } catch (error) {
      reply({ ok: false, error: toErrorShape(error) });
    }
  }

  function toErrorShape(error: unknown): FakeErrorShape {
    if (error instanceof RequestError || error instanceof FakeGatewayError) return clone(error.shape);
    return { code: "UNAVAILABLE", message: error instanceof Error ? error.message : String(error) };
  }

  // ---- handshake ----------------------------------------------------------------------------

  function buildHello(conn: Conn): HelloOk {
    const ts = now();
    return {
      type: "hello-ok",
      protocol: PROTOCOL_VERSION,
      server: {
        version: serverVersion,
        buildId: `${serverVersion}-fake-gateway`,
        bootId,
        controlUiBuildSource: "bundled",
        connId: conn.connId,
      },
      features: {
        methods: [...new Set([...BUILTIN_METHODS, ...customHandlers.keys()])],
        events: [...ADVERTISED_EVENTS],
        capabilities: Object.values(GATEWAY_SERVER_CAPS),
      },
      snapshot: {
        suspension: { phase: "accepting" },
        presence: [],
        health: { ok: true, ts },
        stateVersion: { presence: 1, health: 1 },
        uptimeMs: Math.max(0, Math.floor(ts - startedAtMs)),
        sessionDefaults: {
          defaultAgentId,
          modelConfigured: false,
          ownership: "sole",
          selectionRequired: false,
          mainKey: "main",
          mainSessionKey: `agent:${defaultAgentId}:main`,
          scope: "per-sender",
        },
        authMode: "token",
      },
      auth: { role: conn.role, scopes: [...conn.scopes] },
      policy: {
        maxPayload: MAX_PAYLOAD,
        maxBufferedBytes: MAX_BUFFERED_BYTES,
        tickIntervalMs,
        attachments: { maxBytes: 19_464_192, maxImageBytes: 6_291_456 },
        allowedSessionVisibilities: ["shared", "read-only", "suggest", "draft"],
        hasMultipleSessionSharingIdentities: false,
      },
    };
  }

  function refuseConnect(conn: Conn, id: string, error: FakeErrorShape, closeCode: number, closeReason: string): void {
    const text = JSON.stringify({ type: "res", id, ok: false, error });
    const delay = methodLatency.get("connect") ?? globalLatencyMs;
    const send = () => {
      sendText(conn, text);
      if (conn.ws.readyState === conn.ws.OPEN) conn.ws.close(closeCode, closeReason);
    };
    if (delay > 0) later(send, delay);
    else send();
  }

  function handleConnect(conn: Conn, id: string, params: unknown): void {
    if (!validateConnectParams(params)) {
      const message = `invalid connect params: ${formatValidationErrors(validateConnectParams.errors)}`;
      refuseConnect(conn, id, { code: "INVALID_REQUEST", message }, 1008, message);
      return;
    }
    if (params.minProtocol > PROTOCOL_VERSION || params.maxProtocol < PROTOCOL_VERSION) {
      refuseConnect(
        conn,
        id,
        {
          code: "INVALID_REQUEST",
          message: "protocol mismatch",
          details: {
            code: "PROTOCOL_MISMATCH",
            clientMinProtocol: params.minProtocol,
            clientMaxProtocol: params.maxProtocol,
            expectedProtocol: PROTOCOL_VERSION,
            minimumProbeProtocol: 3,
          },
        },
        1002,
        "protocol mismatch",
      );
      return;
    }
    const presented = params.auth?.token;
    if (presented === undefined && params.device === undefined) {
      refuseConnect(conn, id, { code: "NOT_PAIRED", message: "device identity required", details: { code: "DEVICE_IDENTITY_REQUIRED" } }, 1008, "device identity required");
      return;
    }
    if (presented !== token) {
      const message = "unauthorized: gateway token mismatch (provide gateway auth token)";
      refuseConnect(
        conn,
        id,
        {
          code: "INVALID_REQUEST",
          message,
          details: {
            code: "AUTH_TOKEN_MISMATCH",
            authReason: "token_mismatch",
            canRetryWithDeviceToken: false,
            recommendedNextStep: "update_auth_credentials",
          },
        },
        1008,
        message,
      );
      return;
    }
    if (connectRejection === "startup") {
      refuseConnect(
        conn,
        id,
        { code: "UNAVAILABLE", message: "gateway starting", details: { reason: "startup-sidecars" }, retryable: true, retryAfterMs: 500 },
        1013,
        "gateway starting",
      );
      return;
    }
    if (connectRejection) {
      refuseConnect(conn, id, clone(connectRejection), 1008, connectRejection.message);
      return;
    }
    conn.role = params.role ?? "operator";
    conn.scopes = params.scopes ?? ["operator.admin"];
    conn.caps = params.caps ?? [];
    conn.displayName = params.client.displayName ?? params.client.id;
    const hello = buildHello(conn);
    const finish = () => {
      if (stopped || conn.ws.readyState !== conn.ws.OPEN) return;
      sendText(conn, JSON.stringify({ type: "res", id, ok: true, payload: hello }));
      conn.hello = true;
      helloCount += 1;
      for (const wake of [...connectionWaiters]) wake();
    };
    const delay = methodLatency.get("connect") ?? globalLatencyMs;
    if (delay > 0) later(finish, delay);
    else finish();
  }

  function onMessage(conn: Conn, raw: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(raw);
    } catch {
      return; // the real Gateway ignores unparsable frames
    }
    if (!validateRequestFrame(frame)) {
      if (isRecord(frame) && typeof frame.id === "string") {
        respond(conn, frame.id, "", {
          ok: false,
          error: { code: "INVALID_REQUEST", message: `invalid request frame: ${formatValidationErrors(validateRequestFrame.errors)}` },
        });
      }
      return;
    }
    requests.push({ connId: conn.connId, method: frame.method, params: clone(frame.params), atMs: now() });
    if (!conn.hello) {
      if (frame.method !== "connect") {
        const message = "invalid handshake: first request must be connect";
        refuseConnect(conn, frame.id, { code: "INVALID_REQUEST", message }, 1008, message);
        return;
      }
      handleConnect(conn, frame.id, frame.params);
      return;
    }
    if (frame.method === "connect") {
      respond(conn, frame.id, "connect", { ok: false, error: { code: "INVALID_REQUEST", message: "connect already completed" } });
      return;
    }
    handleRequest(conn, frame.id, frame.method, frame.params);
  }

  // ---- server -------------------------------------------------------------------------------

  const wss = new WebSocketServer({ host: "127.0.0.1", port: opts.port ?? 0, maxPayload: MAX_PAYLOAD });
  await new Promise<void>((resolve, reject) => {
    wss.once("listening", () => resolve());
    wss.once("error", reject);
  });
  const address = wss.address();
  if (typeof address === "string" || address === null) throw new Error("fake gateway: unexpected server address");
  const port = address.port;

  wss.on("connection", (ws) => {
    if (stopped) {
      ws.terminate();
      return;
    }
    const conn: Conn = {
      connId: randomUUID(),
      ws,
      hello: false,
      seq: 0,
      scopes: [],
      caps: [],
      role: "operator",
      displayName: "gateway-client",
      buffered: [],
    };
    conns.set(conn.connId, conn);
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      const text = Buffer.isBuffer(data) ? data.toString("utf8") : Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data).toString("utf8");
      onMessage(conn, text);
    });
    ws.on("close", () => conns.delete(conn.connId));
    ws.on("error", () => conns.delete(conn.connId));
    // The challenge carries no seq, like the real Gateway's.
    sendText(conn, JSON.stringify({ type: "event", event: "connect.challenge", payload: { nonce: randomUUID(), ts: now(), capabilities: ["model-catalog-snapshot"] } }));
  });

  const tickTimer = setInterval(() => {
    if (stopped) return;
    for (const conn of conns.values()) if (conn.hello) sendEvent(conn, "tick", { ts: now() });
  }, tickIntervalMs);
  tickTimer.unref();
  timers.add(tickTimer);

  // ---- public API ---------------------------------------------------------------------------

  function findPending(id: string): QuestionState | ApprovalState | undefined {
    return questions.get(id) ?? approvals.get(id);
  }

  const api: FakeGateway = {
    url: `ws://127.0.0.1:${port}`,
    port,
    token,
    requests,
    sent,
    get connectionCount() {
      return [...conns.values()].filter((c) => c.hello && c.ws.readyState === c.ws.OPEN).length;
    },
    get helloCount() {
      return helloCount;
    },
    get activeTimerCount() {
      return timers.size;
    },
    get questions() {
      return [...questions.values()].map((s) => clone(s.record));
    },
    get approvals() {
      return [...approvals.values()].map((a) =>
        clone({
          approvalKind: a.approvalKind,
          id: a.id,
          request: a.request,
          createdAtMs: a.createdAtMs,
          expiresAtMs: a.expiresAtMs,
          status: a.status,
          decision: a.decision,
          resolvedBy: a.resolvedBy,
          resolvedAtMs: a.resolvedAtMs,
        }),
      );
    },

    createQuestion(input = {}) {
      const { timeoutMs, ...partial } = input;
      const createdAtMs = partial.createdAtMs ?? now();
      const sessionKey = partial.sessionKey === undefined ? undefined : normalizeSessionKey(partial.sessionKey);
      const agentId = partial.agentId ?? agentFromSessionKey(sessionKey);
      const record: QuestionRecord = {
        ...partial,
        id: partial.id ?? randomUUID(),
        questions: partial.questions ?? [
          {
            questionId: "db",
            header: "Database",
            question: "Which database?",
            options: [{ label: "Postgres (Recommended)", description: "needs a server" }, { label: "SQLite" }],
          },
        ],
        ...(agentId !== undefined ? { agentId } : {}),
        ...(sessionKey !== undefined ? { sessionKey } : {}),
        createdAtMs,
        expiresAtMs: partial.expiresAtMs ?? createdAtMs + (timeoutMs ?? questionTimeoutMs),
        status: partial.status ?? "pending",
      };
      return storeQuestion(clone(record));
    },

    resolveQuestion(id, outcome, o = {}) {
      try {
        return applyQuestionOutcome(id, outcome, o.resolvedBy);
      } catch (error) {
        throw error instanceof RequestError ? new FakeGatewayError(error.shape) : error;
      }
    },

    createPluginApproval(input = {}) {
      return approvalRecord(createApproval("plugin", input, null));
    },

    createExecApproval(input = {}) {
      return approvalRecord(createApproval("exec", input, null));
    },

    resolveApproval(id, decision, resolvedBy = "gateway-client") {
      try {
        applyApprovalDecision(null, id, decision, resolvedBy);
      } catch (error) {
        throw error instanceof RequestError ? new FakeGatewayError(error.shape) : error;
      }
    },

    expire(id) {
      const target = findPending(id);
      if (!target) throw new Error(`fake gateway: nothing to expire with id ${id}`);
      if ("record" in target) expireQuestion(target);
      else expireApproval(target);
    },

    emitChat(sessionKey, runId, o) {
      return emitChat(sessionKey, runId, o);
    },

    emitRaw(event, payload, o = {}) {
      for (const conn of conns.values()) if (conn.hello) sendEvent(conn, event, clone(payload), o.seq);
    },

    sendRaw(text) {
      for (const conn of conns.values()) if (conn.hello) sendText(conn, text);
    },

    dropConnections(o = {}) {
      for (const conn of [...conns.values()]) {
        if (o.code === undefined) conn.ws.terminate();
        else conn.ws.close(o.code, o.reason ?? "");
      }
    },

    shutdown(reason = "gateway restarting", restartExpectedMs) {
      const payload = restartExpectedMs === undefined ? { reason } : { reason, restartExpectedMs };
      for (const conn of [...conns.values()]) {
        if (conn.hello) sendEvent(conn, "shutdown", payload);
        if (conn.ws.readyState === conn.ws.OPEN) conn.ws.close(1012, "service restart");
      }
    },

    pauseEvents(mode = "drop") {
      pauseMode = mode;
    },

    resumeEvents() {
      pauseMode = null;
      for (const conn of conns.values()) {
        const queued = conn.buffered.splice(0);
        for (const text of queued) sendText(conn, text);
      }
    },

    skipSeq(n = 1) {
      for (const conn of conns.values()) conn.seq += n;
    },

    setLatency(ms, method) {
      if (method === undefined) globalLatencyMs = Math.max(0, ms);
      else if (ms > 0) methodLatency.set(method, ms);
      else methodLatency.delete(method);
    },

    failNext(method, error, times = 1) {
      failures.set(method, { error: clone(error), remaining: times });
    },

    rejectConnects(mode) {
      connectRejection = mode;
    },

    setHandler(method, handler) {
      if (handler) customHandlers.set(method, handler);
      else customHandlers.delete(method);
    },

    onChatSend(cb) {
      chatSendCallback = cb;
    },

    waitForConnections(n, timeoutMs = 5_000) {
      return new Promise<void>((resolve, reject) => {
        if (api.connectionCount >= n) {
          resolve();
          return;
        }
        let timer: NodeJS.Timeout | null = null;
        const check = () => {
          if (api.connectionCount < n) return;
          cancel(timer);
          connectionWaiters.delete(check);
          resolve();
        };
        connectionWaiters.add(check);
        timer = later(() => {
          connectionWaiters.delete(check);
          reject(new Error(`fake gateway: ${api.connectionCount}/${n} connections after ${timeoutMs} ms`));
        }, timeoutMs);
      });
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      for (const handle of timers) {
        clearTimeout(handle);
        clearInterval(handle);
      }
      timers.clear();
      for (const q of questions.values()) {
        q.timer = null;
        q.waiters.clear();
      }
      for (const a of approvals.values()) {
        a.timer = null;
        a.waiters.clear();
      }
      connectionWaiters.clear();
      for (const conn of conns.values()) conn.ws.terminate();
      conns.clear();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
  return api;
}
