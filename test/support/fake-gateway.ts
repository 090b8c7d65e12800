/**
 * In-repo FAKE OpenClaw Gateway (wire protocol v4) for tests that need what the real Gateway cannot
 * do on demand: faults, disconnects, timing, seq gaps, malformed records, slow consumers.
 *
 * Frames mirror what a real `openclaw@2026.9.6` Gateway sent to a raw WebSocket probe on 2026-11-29
 * (handshake, hello-ok, question / plugin approval / exec approval / chat.send frames, error shapes
 * and messages). Inbound params are checked with the `@openclaw/gateway-protocol` validators and
 * refused as `INVALID_REQUEST` with `invalid <method> params: <formatValidationErrors(...)>`, exactly
 * like the real Gateway.
 *
 * By concern, in fake-gateway/: `wire.ts` (settings, timers, connections, broadcasts),
 * `connection.ts` (handshake, request frames, dispatch), `questions.ts`, `approvals.ts`, `chat.ts`
 * (the methods and events), `faults.ts` (fault injection), `types.ts` (the public API).
 */
import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { createApprovals } from "./fake-gateway/approvals.ts";
import { createChat } from "./fake-gateway/chat.ts";
import { createConnections } from "./fake-gateway/connection.ts";
import { faultControls } from "./fake-gateway/faults.ts";
import { createQuestions } from "./fake-gateway/questions.ts";
import {
  type FakeGateway,
  FakeGatewayError,
  type FakeGatewayOptions,
} from "./fake-gateway/types.ts";
import {
  FaultState,
  MAX_PAYLOAD,
  type Method,
  RequestError,
  type Settings,
  Timers,
  Wire,
} from "./fake-gateway/wire.ts";

export * from "./fake-gateway/types.ts";

const DEFAULT_TOKEN = "fake-gateway-token";
const REAL_TICK_INTERVAL_MS = 30_000;
const REAL_QUESTION_TIMEOUT_MS = 900_000;
const REAL_APPROVAL_TIMEOUT_MS = 120_000;

function settingsOf(opts: FakeGatewayOptions): Settings {
  const now = opts.now ?? (() => Date.now());
  const knownAgents = opts.agents?.map((a) => a.toLowerCase());
  return {
    token: opts.token ?? DEFAULT_TOKEN,
    now,
    tickIntervalMs: opts.tickIntervalMs ?? REAL_TICK_INTERVAL_MS,
    knownAgents,
    defaultAgentId: opts.defaultAgentId ?? knownAgents?.[0] ?? "dev",
    questionTimeoutMs: opts.defaultQuestionTimeoutMs ?? REAL_QUESTION_TIMEOUT_MS,
    approvalTimeoutMs: opts.defaultApprovalTimeoutMs ?? REAL_APPROVAL_TIMEOUT_MS,
    enforceScopes: opts.enforceScopes ?? true,
    serverVersion: opts.serverVersion ?? "2026.9.6",
    bootId: randomUUID(),
    startedAtMs: now(),
  };
}

/** A test-API call refused the way the Gateway would refuse it: thrown as a FakeGatewayError. */
function asFakeError<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw error instanceof RequestError ? new FakeGatewayError(error.shape) : error;
  }
}

export async function startFakeGateway(opts: FakeGatewayOptions = {}): Promise<FakeGateway> {
  const settings = settingsOf(opts);
  const timers = new Timers();
  const faults = new FaultState();
  const wire = new Wire(settings, timers, faults);
  const questions = createQuestions(settings, timers, wire);
  const approvals = createApprovals(settings, timers, wire);
  const chat = createChat(settings, timers, wire);
  const health: Method = (_conn, _params, reply) =>
    reply({ ok: true, payload: { ok: true, ts: settings.now(), durationMs: 0 } });
  const builtins = { health, ...chat.methods, ...questions.methods, ...approvals.methods };
  const connections = createConnections({ settings, timers, wire, faults, builtins });

  const wss = new WebSocketServer({
    host: "127.0.0.1",
    port: opts.port ?? 0,
    maxPayload: MAX_PAYLOAD,
  });
  await new Promise<void>((resolve, reject) => {
    wss.once("listening", () => resolve());
    wss.once("error", reject);
  });
  const address = wss.address();
  if (typeof address === "string" || address === null)
    throw new Error("fake gateway: unexpected server address");
  const port = address.port;
  wss.on("connection", (ws) => connections.accept(ws));

  timers.every(() => {
    for (const conn of wire.handshaken()) wire.sendEvent(conn, "tick", { ts: settings.now() });
  }, settings.tickIntervalMs);

  return {
    url: `ws://127.0.0.1:${port}`,
    port,
    token: settings.token,
    requests: connections.requests,
    sent: chat.sent,
    get connectionCount() {
      return connections.connectionCount();
    },
    get helloCount() {
      return connections.helloCount();
    },
    get activeTimerCount() {
      return timers.size;
    },
    get questions() {
      return questions.records();
    },
    get approvals() {
      return approvals.states();
    },

    createQuestion: (input = {}) => questions.create(input),
    resolveQuestion: (id, outcome, o = {}) =>
      asFakeError(() => questions.resolve(id, outcome, o.resolvedBy)),
    createPluginApproval: (input = {}) => approvals.create("plugin", input),
    createExecApproval: (input = {}) => approvals.create("exec", input),
    resolveApproval: (id, decision, resolvedBy = "gateway-client") =>
      asFakeError(() => approvals.decide(null, id, decision, resolvedBy)),
    expire(id) {
      const question = questions.get(id);
      const approval = approvals.get(id);
      if (question) questions.expire(question);
      else if (approval) approvals.expire(approval);
      else throw new Error(`fake gateway: nothing to expire with id ${id}`);
    },
    emitChat: (sessionKey, runId, o) => chat.emit(sessionKey, runId, o),
    onChatSend: (callback) => chat.onSend(callback),
    setHandler: (method, handler) => connections.setHandler(method, handler),
    waitForConnections: (n, timeoutMs = 5_000) => connections.waitForConnections(n, timeoutMs),
    ...faultControls(wire, faults),

    async stop() {
      if (timers.stopped) return;
      timers.stop();
      questions.stop();
      approvals.stop();
      connections.stop();
      for (const conn of wire.conns.values()) conn.ws.terminate();
      wire.conns.clear();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
