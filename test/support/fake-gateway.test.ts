import { GatewayClient, GatewayClientRequestError } from "@openclaw/gateway-client";
import {
  ChatEventSchema,
  type EventFrame,
  type HelloOk,
  HelloOkSchema,
  QuestionGetResultSchema,
  QuestionListResultSchema,
  QuestionRequestedEventSchema,
  QuestionRequestResultSchema,
  QuestionResolvedEventSchema,
  QuestionResolveResultSchema,
  QuestionWaitAnswerResultSchema,
  TickEventSchema,
} from "@openclaw/gateway-protocol";
import type { TSchema } from "typebox";
// typebox is what @openclaw/gateway-protocol compiles its own validators with.
import { Compile } from "typebox/compile";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type FakeGateway,
  FakeGatewayError,
  type FakeGatewayOptions,
  startFakeGateway,
} from "./fake-gateway.ts";

const TOKEN = "test-token";
const SCOPES = [
  "operator.read",
  "operator.write",
  "operator.approvals",
  "operator.questions",
  "operator.admin",
];
const CAPS = ["plugin-approvals", "exec-approvals"];
const SESSION = "agent:dev:openwebui:chat-123";
const DB_QUESTION = {
  questionId: "db",
  header: "Database",
  question: "Which database?",
  options: [
    { label: "Postgres (Recommended)", description: "needs a server" },
    { label: "SQLite" },
  ],
};

function conforms(schema: TSchema, value: unknown): string[] {
  const validator = Compile(schema);
  return validator.Check(value)
    ? []
    : [...validator.Errors(value)].map((e) => `${e.instancePath} ${e.message}`);
}

type Gap = { expected: number; received: number };
type TestClient = {
  client: GatewayClient;
  hellos: HelloOk[];
  events: EventFrame[];
  gaps: Gap[];
  closes: Array<{ code: number; reason: string; atMs: number }>;
  connectErrors: Error[];
  paused: unknown[];
  /** Resolves with the next event named `name` (searching those already received from `fromIndex`). */
  nextEvent(name: string, fromIndex?: number, timeoutMs?: number): Promise<EventFrame>;
  waitFor(check: () => boolean, timeoutMs?: number): Promise<void>;
};

const clients: GatewayClient[] = [];

async function waitUntil(
  check: () => boolean,
  timeoutMs = 5_000,
  label = "condition",
): Promise<void> {
  await vi.waitFor(
    () => {
      if (!check()) throw new Error(`timed out waiting for ${label}`);
    },
    { timeout: timeoutMs, interval: 10 },
  );
}

function makeClient(
  gw: FakeGateway,
  overrides: { token?: string; scopes?: string[]; caps?: string[] } = {},
): TestClient {
  const t: TestClient = {
    client: undefined as unknown as GatewayClient,
    hellos: [],
    events: [],
    gaps: [],
    closes: [],
    connectErrors: [],
    paused: [],
    nextEvent: (name, fromIndex = 0, timeoutMs = 5_000) =>
      vi.waitFor(
        () => {
          const found = t.events.slice(fromIndex).find((e) => e.event === name);
          if (!found) throw new Error(`timed out waiting for event ${name}`);
          return found;
        },
        { timeout: timeoutMs, interval: 10 },
      ),
    waitFor: (check, timeoutMs) => waitUntil(check, timeoutMs),
  };
  t.client = new GatewayClient({
    url: gw.url,
    token: overrides.token ?? TOKEN,
    minProtocol: 4,
    maxProtocol: 4,
    scopes: overrides.scopes ?? SCOPES,
    caps: overrides.caps ?? CAPS,
    deviceIdentity: null,
    onHelloOk: (hello) => t.hellos.push(hello),
    onEvent: (event) => t.events.push(event),
    onGap: (gap) => t.gaps.push(gap),
    onClose: (code, reason) => t.closes.push({ code, reason, atMs: Date.now() }),
    onConnectError: (error) => t.connectErrors.push(error),
    onReconnectPaused: (info) => t.paused.push(info),
  });
  clients.push(t.client);
  return t;
}

async function connected(
  gw: FakeGateway,
  overrides?: Parameters<typeof makeClient>[1],
): Promise<TestClient> {
  const t = makeClient(gw, overrides);
  t.client.start();
  await t.waitFor(() => t.hellos.length === 1);
  return t;
}

async function rejection(promise: Promise<unknown>): Promise<GatewayClientRequestError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayClientRequestError);
    return error as GatewayClientRequestError;
  }
  throw new Error("expected the request to be rejected");
}

let gw: FakeGateway;
async function restart(opts: FakeGatewayOptions): Promise<void> {
  await gw.stop();
  gw = await startFakeGateway(opts);
}

beforeEach(async () => {
  gw = await startFakeGateway({ token: TOKEN });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.stopAndWait().catch(() => undefined)));
  await gw.stop();
  expect(gw.activeTimerCount).toBe(0);
});

describe("fake gateway: handshake", () => {
  it("answers the challenge/connect handshake with a schema-valid hello-ok for protocol 4", async () => {
    const t = await connected(gw);
    const hello = t.hellos[0] as HelloOk;
    expect(conforms(HelloOkSchema, hello)).toEqual([]);
    expect(hello.protocol).toBe(4);
    expect(hello.auth.scopes).toEqual(SCOPES);
    expect(hello.policy.tickIntervalMs).toBe(30_000);
    expect(hello.features.methods).toEqual(
      expect.arrayContaining([
        "question.list",
        "question.resolve",
        "plugin.approval.resolve",
        "exec.approval.list",
        "chat.send",
      ]),
    );
    expect(hello.features.events).toEqual(
      expect.arrayContaining([
        "question.requested",
        "question.resolved",
        "plugin.approval.requested",
        "exec.approval.resolved",
        "chat",
        "tick",
      ]),
    );
    expect(gw.connectionCount).toBe(1);
    expect(gw.requests[0]?.method).toBe("connect");
    expect(gw.requests[0]?.params).toMatchObject({
      minProtocol: 4,
      maxProtocol: 4,
      caps: CAPS,
      auth: { token: TOKEN },
    });
  });

  it("refuses a wrong token like the real Gateway and the client stops reconnecting", async () => {
    const t = makeClient(gw, { token: "wrong" });
    t.client.start();
    await t.waitFor(() => t.paused.length === 1);
    const error = t.connectErrors[0];
    expect(error).toBeInstanceOf(GatewayClientRequestError);
    const requestError = error as GatewayClientRequestError;
    expect(requestError.gatewayCode).toBe("INVALID_REQUEST");
    expect(requestError.message).toBe(
      "unauthorized: gateway token mismatch (provide gateway auth token)",
    );
    expect(requestError.details).toMatchObject({
      code: "AUTH_TOKEN_MISMATCH",
      authReason: "token_mismatch",
    });
    expect(t.closes[0]?.code).toBe(1008);
    expect(t.hellos).toHaveLength(0);
    expect(gw.helloCount).toBe(0);
  });

  it("sends tick events at policy.tickIntervalMs with a seq", async () => {
    await restart({ token: TOKEN, tickIntervalMs: 100 });
    const t = await connected(gw);
    expect(t.hellos[0]?.policy.tickIntervalMs).toBe(100);
    const tick = await t.nextEvent("tick");
    expect(conforms(TickEventSchema, tick.payload)).toEqual([]);
    expect(typeof tick.seq).toBe("number");
  });
});

describe("fake gateway: questions", () => {
  it("question.request → question.requested (before the response) → resolve → question.resolved", async () => {
    const asker = await connected(gw);
    const watcher = await connected(gw);
    const created = await asker.client.request<{ id: string; expiresAtMs: number }>(
      "question.request",
      {
        questions: [DB_QUESTION],
        sessionKey: SESSION,
        agentId: "dev",
        timeoutMs: 60_000,
      },
    );
    expect(conforms(QuestionRequestResultSchema, created)).toEqual([]);
    // Seen live: question.requested reaches clients just before the question.request response.
    const requestedOnAsker = asker.events.find((e) => e.event === "question.requested");
    expect(requestedOnAsker).toBeDefined();
    const requested = await watcher.nextEvent("question.requested");
    expect(conforms(QuestionRequestedEventSchema, requested.payload)).toEqual([]);
    expect(requested.payload).toMatchObject({
      id: created.id,
      questions: [DB_QUESTION],
      agentId: "dev",
      sessionKey: SESSION,
      expiresAtMs: created.expiresAtMs,
      status: "pending",
    });
    const record = requested.payload as { createdAtMs: number; expiresAtMs: number };
    expect(record.expiresAtMs - record.createdAtMs).toBe(60_000);

    const result = await watcher.client.request("question.resolve", {
      id: created.id,
      answers: { answers: { db: ["SQLite"] } },
    });
    expect(conforms(QuestionResolveResultSchema, result)).toEqual([]);
    expect(result).toEqual({ status: "answered", answers: { answers: { db: ["SQLite"] } } });
    for (const t of [asker, watcher]) {
      const resolved = await t.nextEvent("question.resolved");
      expect(conforms(QuestionResolvedEventSchema, resolved.payload)).toEqual([]);
      expect(resolved.payload).toEqual({
        id: created.id,
        status: "answered",
        answers: { answers: { db: ["SQLite"] } },
      });
    }
    const waited = await asker.client.request("question.waitAnswer", { id: created.id });
    expect(conforms(QuestionWaitAnswerResultSchema, waited)).toEqual([]);
    expect(waited).toEqual(result);
  });

  it("list returns {questions:[pending]} and get returns {question}", async () => {
    const t = await connected(gw);
    const q = gw.createQuestion({ sessionKey: SESSION, runId: "run-1", timeoutMs: 60_000 });
    const list = await t.client.request<{ questions: Array<{ id: string }> }>("question.list", {});
    expect(conforms(QuestionListResultSchema, list)).toEqual([]);
    expect(list.questions.map((x) => x.id)).toEqual([q.id]);
    expect(list.questions[0]).toMatchObject({
      agentId: "dev",
      sessionKey: SESSION,
      runId: "run-1",
      status: "pending",
    });
    const got = await t.client.request("question.get", { id: q.id });
    expect(conforms(QuestionGetResultSchema, got)).toEqual([]);
    expect(got).toEqual({ question: q });

    gw.resolveQuestion(q.id, { cancel: true });
    const resolved = await t.nextEvent("question.resolved");
    expect(resolved.payload).toEqual({ id: q.id, status: "cancelled" });
    expect(await t.client.request("question.list", {})).toEqual({ questions: [] });
    expect(await t.client.request("question.get", { id: q.id })).toMatchObject({
      question: { id: q.id, status: "cancelled" },
    });
  });

  it("refuses with INVALID_REQUEST and details.reason, like the real Gateway", async () => {
    const t = await connected(gw);
    const q = gw.createQuestion();
    const unknownOption = await rejection(
      t.client.request("question.resolve", { id: q.id, answers: { answers: { db: ["MySQL"] } } }),
    );
    expect(unknownOption.gatewayCode).toBe("INVALID_REQUEST");
    expect(unknownOption.message).toBe("question 'db' contains an unknown option");
    expect(unknownOption.details).toEqual({ reason: "QUESTION_INVALID_ANSWER" });

    const badParams = await rejection(t.client.request("question.resolve", { id: q.id }));
    expect(badParams.message).toBe(
      "invalid question.resolve params: must have required property 'answers'; must have required property 'cancel'; must match a schema in anyOf",
    );
    expect(badParams.details).toBeUndefined();

    await t.client.request("question.resolve", {
      id: q.id,
      answers: { answers: { db: ["SQLite"] } },
    });
    const again = await rejection(t.client.request("question.resolve", { id: q.id, cancel: true }));
    expect(again.message).toBe(`question '${q.id}' is already answered`);
    expect(again.details).toEqual({ reason: "QUESTION_ALREADY_TERMINAL" });

    const missing = await rejection(t.client.request("question.get", { id: "nope" }));
    expect(missing.details).toEqual({ reason: "QUESTION_NOT_FOUND" });
    expect(missing.message).toBe("question 'nope' was not found");

    const unknownMethod = await rejection(t.client.request("question.bogus", {}));
    expect(unknownMethod.message).toBe("unknown method: question.bogus");

    const tooFew = await rejection(t.client.request("question.request", { questions: [] }));
    expect(tooFew.message).toBe(
      "invalid question.request params: at /questions: must not have fewer than 1 items",
    );
  });

  it("accepts a typed answer only when the question has isOther", async () => {
    const t = await connected(gw);
    const q = gw.createQuestion({ questions: [{ ...DB_QUESTION, isOther: true }] });
    expect(
      await t.client.request("question.resolve", {
        id: q.id,
        answers: { answers: { db: ["MySQL"] } },
      }),
    ).toEqual({
      status: "answered",
      answers: { answers: { db: ["MySQL"] } },
    });
  });

  it("secret-store questions (only creatable by a live run) answer and broadcast 'stored', never the value", async () => {
    const t = await connected(gw);
    const q = gw.createQuestion({
      sessionKey: SESSION,
      runId: "run-9",
      questions: [
        {
          questionId: "secret_value",
          header: "API key",
          question: "Provide the secret for DEMO_TOKEN.",
          options: [],
          isSecret: true,
          secretStore: {
            name: "DEMO_TOKEN",
            kind: "secret",
            allowedHosts: ["api.example.com"],
            reason: "demo",
          },
        },
      ],
    });
    const result = await t.client.request("question.resolve", {
      id: q.id,
      answers: { answers: { secret_value: ["hunter2"] } },
    });
    expect(result).toEqual({
      status: "answered",
      answers: { answers: { secret_value: ["stored"] } },
    });
    const resolved = await t.nextEvent("question.resolved");
    expect(JSON.stringify(resolved.payload)).not.toContain("hunter2");
    const refused = await rejection(
      t.client.request("question.request", {
        questions: [
          { questionId: "s", header: "S", question: "secret?", options: [], isSecret: true },
        ],
      }),
    );
    expect(refused.message).toBe("question 's': secret questions are not supported yet");
  });

  it("expires questions with a timer and broadcasts question.resolved {status:'expired'}", async () => {
    const t = await connected(gw);
    const { id } = await t.client.request<{ id: string }>("question.request", {
      questions: [DB_QUESTION],
      timeoutMs: 200,
    });
    const wait = t.client.request("question.waitAnswer", { id });
    const expired = await t.nextEvent("question.resolved");
    expect(expired.payload).toEqual({ id, status: "expired" });
    expect(await wait).toEqual({ status: "expired" });
    const late = await rejection(t.client.request("question.resolve", { id, cancel: true }));
    expect(late.details).toEqual({ reason: "QUESTION_ALREADY_TERMINAL" });
  });

  it("uses the injected clock for createdAtMs / expiresAtMs", async () => {
    await restart({ token: TOKEN, now: () => 1_000_000 });
    const t = await connected(gw);
    const { expiresAtMs } = await t.client.request<{ expiresAtMs: number }>("question.request", {
      questions: [DB_QUESTION],
    });
    expect(expiresAtMs).toBe(1_000_000 + 900_000);
  });
});

describe("fake gateway: approvals", () => {
  it("plugin approvals: requested → bare-array list → resolve {ok:true} → resolved; same decision ok, another refused", async () => {
    const t = await connected(gw);
    const created = gw.createPluginApproval({
      pluginId: "demo",
      title: "Send email",
      description: "Send an email to bob",
      severity: "warning",
      toolName: "email_send",
      sessionKey: SESSION,
      timeoutMs: 60_000,
    });
    expect(created.id).toMatch(/^plugin:[0-9a-f-]{36}$/u);
    const requested = await t.nextEvent("plugin.approval.requested");
    expect(requested.payload).toEqual({
      approvalKind: "plugin",
      id: created.id,
      request: expect.objectContaining({
        pluginId: "demo",
        title: "Send email",
        agentId: "dev",
        sessionKey: SESSION,
        runId: null,
        detail: null,
      }),
      createdAtMs: created.createdAtMs,
      expiresAtMs: created.createdAtMs + 60_000,
    });
    const list = await t.client.request("plugin.approval.list", {});
    expect(list).toEqual([
      {
        id: created.id,
        request: created.request,
        createdAtMs: created.createdAtMs,
        expiresAtMs: created.expiresAtMs,
        approvalKind: "plugin",
      },
    ]);

    expect(
      await t.client.request("plugin.approval.resolve", { id: created.id, decision: "allow-once" }),
    ).toEqual({ ok: true });
    const resolved = await t.nextEvent("plugin.approval.resolved");
    expect(resolved.payload).toEqual({
      id: created.id,
      decision: "allow-once",
      resolvedBy: "gateway-client",
      ts: expect.any(Number),
      request: created.request,
    });
    expect(
      await t.client.request("plugin.approval.resolve", { id: created.id, decision: "allow-once" }),
    ).toEqual({ ok: true });
    const other = await rejection(
      t.client.request("plugin.approval.resolve", { id: created.id, decision: "deny" }),
    );
    expect(other.message).toBe("approval already resolved");
    expect(other.details).toEqual({ reason: "APPROVAL_ALREADY_RESOLVED" });
    const missing = await rejection(
      t.client.request("plugin.approval.resolve", { id: "plugin:nope", decision: "deny" }),
    );
    expect(missing.details).toMatchObject({ reason: "APPROVAL_NOT_FOUND" });
    const badParams = await rejection(
      t.client.request("plugin.approval.resolve", { id: created.id }),
    );
    expect(badParams.message).toBe(
      "invalid plugin.approval.resolve params: must have required property 'decision'",
    );
    expect(await t.client.request("plugin.approval.list", {})).toEqual([]);
  });

  it("plugin.approval.request from a client reaches the other route and returns the decision", async () => {
    const requester = await connected(gw);
    const watcher = await connected(gw);
    const pending = requester.client.request<{ id: string; decision: string | null }>(
      "plugin.approval.request",
      {
        title: "T",
        description: "D",
        sessionKey: SESSION,
        twoPhase: true,
      },
      { expectFinal: true },
    );
    const requested = await watcher.nextEvent("plugin.approval.requested");
    const id = (requested.payload as { id: string }).id;
    expect(requester.events.some((e) => e.event === "plugin.approval.requested")).toBe(false); // the requester is no route for itself
    await watcher.client.request("plugin.approval.resolve", { id, decision: "deny" });
    expect(await pending).toMatchObject({ id, decision: "deny" });
  });

  it("only admin clients with the plugin-approvals cap receive plugin.approval.requested", async () => {
    const noAdmin = await connected(gw, { scopes: ["operator.read", "operator.approvals"] });
    const route = await connected(gw);
    gw.createPluginApproval({ title: "T", description: "D" });
    await route.nextEvent("plugin.approval.requested");
    expect(noAdmin.events.some((e) => e.event === "plugin.approval.requested")).toBe(false);
  });

  it("exec approvals: requested with approvalKind exec, list, get, resolve", async () => {
    const t = await connected(gw);
    const created = gw.createExecApproval({
      command: "rm -rf /tmp/x",
      cwd: "/tmp",
      host: "gateway",
      sessionKey: SESSION,
    });
    const requested = await t.nextEvent("exec.approval.requested");
    expect(requested.payload).toMatchObject({
      approvalKind: "exec",
      id: created.id,
      request: {
        command: "rm -rf /tmp/x",
        cwd: "/tmp",
        host: "gateway",
        agentId: "dev",
        sessionKey: SESSION,
        allowedDecisions: ["allow-once", "allow-always", "deny"],
      },
    });
    expect(await t.client.request("exec.approval.list", {})).toEqual([
      expect.objectContaining({ id: created.id, approvalKind: "exec" }),
    ]);
    expect(await t.client.request("exec.approval.get", { id: created.id })).toMatchObject({
      id: created.id,
      commandText: "rm -rf /tmp/x",
    });
    expect(
      await t.client.request("exec.approval.resolve", { id: created.id, decision: "allow-always" }),
    ).toEqual({ ok: true });
    const resolved = await t.nextEvent("exec.approval.resolved");
    expect(resolved.payload).toMatchObject({
      id: created.id,
      decision: "allow-always",
      resolvedBy: "gateway-client",
    });
    const bogus = await rejection(
      t.client.request("exec.approval.resolve", { id: created.id, decision: "bogus" }),
    );
    expect(bogus.message).toBe("invalid decision");
  });

  it("expiry is broadcast as resolved with decision deny, resolvedBy null and ts at/after expiresAtMs", async () => {
    const t = await connected(gw);
    const plugin = gw.createPluginApproval({ title: "T", description: "D", timeoutMs: 150 });
    const exec = gw.createExecApproval({ command: "ls", timeoutMs: 150 });
    for (const [event, created] of [
      ["plugin.approval.resolved", plugin],
      ["exec.approval.resolved", exec],
    ] as const) {
      const resolved = await t.nextEvent(event);
      const payload = resolved.payload as {
        id: string;
        decision: string;
        resolvedBy: null;
        ts: number;
      };
      expect(payload).toMatchObject({ id: created.id, decision: "deny", resolvedBy: null });
      expect(payload.ts).toBeGreaterThanOrEqual(created.expiresAtMs);
    }
    const late = await rejection(
      t.client.request("plugin.approval.resolve", { id: plugin.id, decision: "deny" }),
    );
    expect(late.details).toEqual({ reason: "APPROVAL_ALREADY_RESOLVED" });
    expect(await t.client.request("plugin.approval.waitDecision", { id: plugin.id })).toMatchObject(
      { decision: null, terminalReason: "timeout" },
    );
  });
});

describe("fake gateway: chat", () => {
  it("chat.send answers {runId: idempotencyKey, status:'started'} and streams scripted chat events", async () => {
    const t = await connected(gw);
    const reply = await t.client.request("chat.send", {
      sessionKey: SESSION,
      message: "SQLite",
      idempotencyKey: "run-1",
    });
    expect(reply).toEqual({ runId: "run-1", status: "started" });
    expect(gw.sent).toEqual([
      expect.objectContaining({ sessionKey: SESSION, message: "SQLite", idempotencyKey: "run-1" }),
    ]);
    expect(
      await t.client.request("chat.send", {
        sessionKey: SESSION,
        message: "again",
        idempotencyKey: "run-1",
      }),
    ).toEqual({
      runId: "run-1",
      status: "in_flight",
    });
    const invalid = await rejection(
      t.client.request("chat.send", { sessionKey: SESSION, message: "hi" }),
    );
    expect(invalid.message).toBe(
      "invalid chat.send params: must have required property 'idempotencyKey'",
    );

    const from = t.events.length;
    gw.emitChat(SESSION, "run-1", { state: "delta", deltaText: "Hello" });
    gw.emitChat(SESSION, "run-1", { state: "delta", deltaText: " world" });
    gw.emitChat(SESSION, "run-1", { state: "final" });
    await t.waitFor(() => t.events.slice(from).filter((e) => e.event === "chat").length === 3);
    const chats = t.events
      .slice(from)
      .filter((e) => e.event === "chat")
      .map((e) => e.payload as Record<string, unknown>);
    for (const p of chats) expect(conforms(ChatEventSchema, p)).toEqual([]);
    expect(chats[1]).toMatchObject({
      state: "delta",
      deltaText: " world",
      message: { role: "assistant", content: [{ type: "text", text: "Hello world" }] },
      runId: "run-1",
      sessionKey: SESSION,
    });
    expect(chats[2]).toMatchObject({
      state: "final",
      message: { content: [{ type: "text", text: "Hello world" }] },
    });
    expect(chats[2]?.seq).toBe(chats[1]?.seq);
  });
});

describe("fake gateway: extension points", () => {
  it("setHandler adds methods; onChatSend can script a run that arrives after the chat.send reply", async () => {
    gw.setHandler("agent.wait", (params) => ({
      runId: (params as { runId: string }).runId,
      status: "ok",
    }));
    gw.setHandler("boom", () => {
      throw new FakeGatewayError({
        code: "UNAVAILABLE",
        message: "boom",
        details: { reason: "TEST" },
      });
    });
    gw.onChatSend((entry) => {
      gw.emitChat(entry.sessionKey, entry.idempotencyKey, {
        state: "status",
        phase: "starting_model",
      });
      gw.emitChat(entry.sessionKey, entry.idempotencyKey, { state: "final", deltaText: "Done." });
    });
    const t = await connected(gw);
    expect(t.hellos[0]?.features.methods).toContain("agent.wait");
    expect(await t.client.request("agent.wait", { runId: "r1" })).toEqual({
      runId: "r1",
      status: "ok",
    });
    expect((await rejection(t.client.request("boom", {}))).details).toEqual({ reason: "TEST" });
    await t.client.request("chat.send", {
      sessionKey: SESSION,
      message: "go",
      idempotencyKey: "r2",
    });
    await t.waitFor(() => t.events.filter((e) => e.event === "chat").length === 2);
    const chats = t.events.filter((e) => e.event === "chat").map((e) => e.payload);
    expect(chats).toEqual([
      {
        runId: "r2",
        sessionKey: SESSION,
        agentId: "dev",
        state: "status",
        phase: "starting_model",
        seq: 1,
      },
      {
        runId: "r2",
        sessionKey: SESSION,
        agentId: "dev",
        state: "final",
        message: { role: "assistant", content: [{ type: "text", text: "Done." }] },
        seq: 1,
      },
    ]);
    expect(t.events.some((e) => e.event === "chat.metadata.changed")).toBe(true);
  });
});

describe("fake gateway: faults", () => {
  it("dropConnections: the client reconnects by itself after ~1 s and gets hello-ok again", async () => {
    const t = await connected(gw);
    gw.dropConnections();
    await t.waitFor(() => t.closes.length === 1);
    const closedAt = t.closes[0]?.atMs ?? 0;
    expect(t.closes[0]?.code).toBe(1006);
    await t.waitFor(() => t.hellos.length === 2, 5_000);
    const elapsed = Date.now() - closedAt;
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(2_500);
    expect(gw.helloCount).toBe(2);
    await gw.waitForConnections(1);
    expect(gw.connectionCount).toBe(1);
    // Requests work again on the new socket.
    expect(await t.client.request("question.list", {})).toEqual({ questions: [] });
  });

  it("shutdown() sends the shutdown event, closes with 1012 and the client comes back", async () => {
    const t = await connected(gw);
    gw.shutdown("restart", 500);
    const notice = await t.nextEvent("shutdown");
    expect(notice.payload).toEqual({ reason: "restart", restartExpectedMs: 500 });
    await t.waitFor(() => t.closes.length === 1);
    expect(t.closes[0]?.code).toBe(1012);
    await t.waitFor(() => t.hellos.length === 2, 5_000);
  });

  it("rejectConnects('startup') makes the client retry until connects are accepted again", async () => {
    gw.rejectConnects("startup");
    const t = makeClient(gw);
    t.client.start();
    await waitUntil(
      () => gw.requests.filter((r) => r.method === "connect").length >= 2,
      5_000,
      "two connect attempts",
    );
    expect(t.hellos).toHaveLength(0);
    expect(t.paused).toEqual([]);
    gw.rejectConnects(null);
    await t.waitFor(() => t.hellos.length === 1, 5_000);
  });

  it("skipSeq creates a seq gap and the client's onGap fires", async () => {
    const t = await connected(gw);
    gw.createQuestion(); // seq 1
    await t.nextEvent("question.requested");
    gw.skipSeq(3);
    gw.createQuestion(); // seq 5
    await t.waitFor(() => t.gaps.length === 1);
    expect(t.gaps[0]).toEqual({ expected: 2, received: 5 });
  });

  it("pauseEvents('drop') loses events for a slow consumer but spends their seq", async () => {
    const t = await connected(gw);
    gw.createQuestion();
    await t.nextEvent("question.requested");
    gw.pauseEvents();
    gw.createQuestion();
    gw.createQuestion();
    gw.resumeEvents();
    const q = gw.createQuestion();
    await t.waitFor(() => t.gaps.length === 1);
    expect(t.gaps[0]).toEqual({ expected: 2, received: 4 });
    expect(
      t.events
        .filter((e) => e.event === "question.requested")
        .map((e) => (e.payload as { id: string }).id)
        .at(-1),
    ).toBe(q.id);
  });

  it("pauseEvents('buffer') delays events and delivers them in order on resume", async () => {
    const t = await connected(gw);
    gw.pauseEvents("buffer");
    const a = gw.createQuestion();
    const b = gw.createQuestion();
    // Barrier: a response on the same socket, sent after the events would have been.
    expect(await t.client.request("question.list", {})).toMatchObject({
      questions: [{ id: a.id }, { id: b.id }],
    });
    expect(t.events.some((e) => e.event === "question.requested")).toBe(false);
    gw.resumeEvents();
    await t.waitFor(() => t.events.filter((e) => e.event === "question.requested").length === 2);
    expect(t.events.map((e) => (e.payload as { id?: string }).id)).toEqual([a.id, b.id]);
    expect(t.gaps).toEqual([]);
  });

  it("emitRaw delivers malformed records untouched; setLatency delays responses; failNext injects errors", async () => {
    const t = await connected(gw);
    gw.emitRaw("question.requested", { id: 42, questions: "nope" });
    const raw = await t.nextEvent("question.requested");
    expect(raw.payload).toEqual({ id: 42, questions: "nope" });

    gw.setLatency(300);
    const started = Date.now();
    await t.client.request("question.list", {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    gw.setLatency(0);

    gw.failNext("question.list", { code: "UNAVAILABLE", message: "try later", retryable: true });
    const failed = await rejection(t.client.request("question.list", {}));
    expect(failed.gatewayCode).toBe("UNAVAILABLE");
    expect(failed.retryable).toBe(true);
    expect(await t.client.request("question.list", {})).toEqual({ questions: [] });
    expect(gw.requests.map((r) => r.method)).toEqual([
      "connect",
      "question.list",
      "question.list",
      "question.list",
    ]);
  });

  it("stop() closes every client socket and clears every timer", async () => {
    const t = await connected(gw);
    gw.createQuestion({ timeoutMs: 60_000 });
    gw.createPluginApproval({ timeoutMs: 60_000 });
    gw.setLatency(10_000, "question.get");
    void t.client.request("question.get", { id: "x" }).catch(() => undefined);
    void t.client
      .request("question.waitAnswer", { id: gw.questions[0]?.id, timeoutMs: 60_000 })
      .catch(() => undefined);
    // Barrier: the fake handles a socket's requests in order, so both above are waiting once this returns.
    await t.client.request("question.list", {});
    expect(gw.activeTimerCount).toBeGreaterThan(0);
    await gw.stop();
    expect(gw.activeTimerCount).toBe(0);
    await t.waitFor(() => t.closes.length >= 1);
  });
});
