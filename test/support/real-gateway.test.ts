// Proves the harness against the real OpenClaw Gateway started by test/setup/global-gateway.ts.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { OperatorConnection, Payload } from "./gateway-client.ts";
import { connectOperator } from "./gateway-client.ts";
import { TEST_AGENT } from "./on-gateway.ts";
import {
  fetchStubRequests,
  lastUserMessageIndex,
  messageText,
  STUB_DEFAULT_REPLY,
  stubScript,
} from "./stub-model.ts";

const url = inject("gatewayUrl");
const token = inject("gatewayToken");
const stubModelUrl = inject("stubModelUrl");

const chatKey = () => `agent:${TEST_AGENT}:openwebui:${randomUUID()}`;

describe.skipIf(!url)("real OpenClaw Gateway harness", () => {
  let requester: OperatorConnection;
  let elsewhere: OperatorConnection;

  beforeAll(async () => {
    requester = await connectOperator({ url, token, displayName: "requester" });
    elsewhere = await connectOperator({ url, token, displayName: "elsewhere" });
  });
  afterAll(async () => {
    await requester?.stop();
    await elsewhere?.stop();
  });

  it("connects with protocol 4 and the requested scopes", () => {
    expect(requester.hello.protocol).toBe(4);
    expect(requester.hello.auth?.scopes).toEqual(
      expect.arrayContaining(["operator.questions", "operator.admin"]),
    );
  });

  it("question.request → question.requested elsewhere → question.resolve → question.waitAnswer", async () => {
    const sessionKey = chatKey();
    const created = await requester.request("question.request", {
      questions: [
        {
          questionId: "db",
          header: "Database",
          question: "Which database?",
          isOther: true,
          options: [
            { label: "Postgres (Recommended)", description: "needs a server" },
            { label: "SQLite" },
          ],
        },
      ],
      sessionKey,
      timeoutMs: 60_000,
    });
    expect(created.id).toEqual(expect.any(String));

    const requested = await elsewhere.waitForEvent(
      "question.requested",
      (p) => p.id === created.id,
    );
    expect(requested).toMatchObject({
      id: created.id,
      sessionKey,
      agentId: TEST_AGENT,
      status: "pending",
    });
    expect(requested.questions[0]).toMatchObject({ questionId: "db", isOther: true });

    const waiting = requester.request(
      "question.waitAnswer",
      { id: created.id },
      { timeoutMs: 30_000 },
    );
    const resolved = await elsewhere.request("question.resolve", {
      id: created.id,
      answers: { answers: { db: ["MariaDB"] } },
    });
    expect(resolved).toMatchObject({ status: "answered" });
    expect(await waiting).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["MariaDB"] } },
    });
    await requester.waitForEvent(
      "question.resolved",
      (p) => p.id === created.id && p.status === "answered",
    );
  });

  it("plugin.approval.request → requested on the watcher → allow-once → the request returns it", async () => {
    const sessionKey = chatKey();
    const pending = requester.request(
      "plugin.approval.request",
      {
        pluginId: "harness-test",
        title: "Run harness step",
        description: "Proves the approval path",
        sessionKey,
        timeoutMs: 60_000,
      },
      { timeoutMs: 60_000 },
    );
    const requested = await elsewhere.waitForEvent(
      "plugin.approval.requested",
      (p) => p.request?.sessionKey === sessionKey,
    );
    expect(requested).toMatchObject({
      approvalKind: "plugin",
      id: expect.stringMatching(/^plugin:/),
      request: { pluginId: "harness-test" },
    });

    expect(
      await elsewhere.request("plugin.approval.resolve", {
        id: requested.id,
        decision: "allow-once",
      }),
    ).toMatchObject({ ok: true });
    expect(await pending).toMatchObject({ id: requested.id, decision: "allow-once" });
    const done = await requester.waitForEvent(
      "plugin.approval.resolved",
      (p) => p.id === requested.id,
    );
    expect(done).toMatchObject({ decision: "allow-once", resolvedBy: "elsewhere" });
  });

  it("a live run streams the stub's scripted reply as chat delta/final events", async () => {
    const sessionKey = chatKey();
    const reply = "Hello\nOpenClaw needs input: Which DB?\n1. Postgres\n2. SQLite";
    const idempotencyKey = randomUUID(); // the runId: its events can precede the chat.send reply
    const sent = await requester.request("chat.send", {
      sessionKey,
      message: stubScript({ reply, chunkSize: 7 }),
      idempotencyKey,
    });
    expect(sent).toMatchObject({ runId: idempotencyKey, status: "started" });

    const final = await requester.waitForEvent(
      "chat",
      (p) => p.runId === idempotencyKey && p.state === "final",
      45_000,
    );
    expect(chatText(final)).toBe(reply);
    const deltas = requester.events.filter(
      (e) =>
        e.event === "chat" && e.payload.runId === idempotencyKey && e.payload.state === "delta",
    );
    expect(deltas.length).toBeGreaterThan(0);
    expect(reply.startsWith(chatText(deltas.at(-1)?.payload ?? {}))).toBe(true);
    expect(deltas.every((e) => e.payload.sessionKey === sessionKey)).toBe(true);
  });

  it("a text answer sent with chat.send reaches the model as the next user message", async () => {
    const sessionKey = chatKey();
    const first = randomUUID();
    await requester.request("chat.send", {
      sessionKey,
      message: stubScript({ reply: "OpenClaw needs input: Which DB?\n1. Postgres\n2. SQLite" }),
      idempotencyKey: first,
    });
    await requester.waitForEvent("chat", (p) => p.runId === first && p.state === "final", 45_000);

    const answer = `2 (${randomUUID()})`; // unique, so the stub's record of it is unambiguous
    const second = randomUUID();
    await requester.request("chat.send", { sessionKey, message: answer, idempotencyKey: second });
    const final = await requester.waitForEvent(
      "chat",
      (p) => p.runId === second && p.state === "final",
      45_000,
    );
    expect(chatText(final)).toBe(STUB_DEFAULT_REPLY);

    const [request] = await fetchStubRequests(stubModelUrl, answer);
    const messages = request?.body.messages ?? [];
    expect(messageText(messages[lastUserMessageIndex(messages)])).toContain(answer);
  });

  it("a live run's ask_user (via tool_call) reaches clients as question.requested; the answer resumes the run", async () => {
    const sessionKey = chatKey();
    const idempotencyKey = randomUUID();
    const then = "Dark it is.";
    const tag = randomUUID();
    const message = stubScript({
      tag,
      tool: {
        id: "ask_user",
        args: {
          questions: [
            {
              id: "theme",
              header: "Theme",
              question: "Which theme?",
              options: [
                { label: "Dark (Recommended)", description: "easy on the eyes" },
                { label: "Light" },
              ],
            },
          ],
          timeoutSeconds: 60,
        },
      },
      then,
    });
    await requester.request("chat.send", { sessionKey, message, idempotencyKey });

    const requested = await elsewhere.waitForEvent(
      "question.requested",
      (p) => p.sessionKey === sessionKey,
      45_000,
    );
    expect(requested).toMatchObject({
      runId: idempotencyKey,
      agentId: TEST_AGENT,
      status: "pending",
    });
    expect(requested.questions[0]).toMatchObject({
      questionId: "theme",
      header: "Theme",
      isOther: true,
    });

    await elsewhere.request("question.resolve", {
      id: requested.id,
      answers: { answers: { theme: ["Dark (Recommended)"] } },
    });
    const final = await requester.waitForEvent(
      "chat",
      (p) => p.runId === idempotencyKey && p.state === "final",
      45_000,
    );
    expect(chatText(final)).toBe(then);

    // First model request: the script; second: the same plus the tool_call and its result carrying the answer.
    const mine = await fetchStubRequests(stubModelUrl, tag);
    expect(mine).toHaveLength(2);
    const toolResult = mine[1]?.body.messages?.find((m) => m.role === "tool");
    expect(messageText(toolResult)).toContain("Dark (Recommended)");
  });

  it("a secret requested by a live run (secrets via tool_call) never reaches the model", async () => {
    const sessionKey = chatKey();
    const idempotencyKey = randomUUID();
    const tag = randomUUID();
    const secretValue = `sk-test-${randomUUID()}`;
    const message = stubScript({
      tag,
      tools: [
        {
          id: "secrets",
          args: {
            action: "request",
            name: "DEMO_TOKEN",
            reason: "harness test",
            allowedHosts: ["api.example.com"],
            timeoutSeconds: 60,
          },
        },
        {
          id: "ask_user",
          args: {
            questions: [
              {
                id: "go",
                header: "Go",
                question: "Proceed?",
                options: [{ label: "Yes" }, { label: "No" }],
              },
            ],
            timeoutSeconds: 60,
          },
        },
      ],
      then: "All set.",
    });
    await requester.request("chat.send", { sessionKey, message, idempotencyKey });

    const secret = await elsewhere.waitForEvent(
      "question.requested",
      (p) => p.sessionKey === sessionKey,
      45_000,
    );
    expect(secret).toMatchObject({ runId: idempotencyKey });
    expect(secret.questions[0]).toMatchObject({
      questionId: "secret_value",
      isSecret: true,
      options: [],
      secretStore: { name: "DEMO_TOKEN" },
    });
    const stored = await elsewhere.request("question.resolve", {
      id: secret.id,
      answers: { answers: { secret_value: [secretValue] } },
    });
    expect(stored).toMatchObject({
      status: "answered",
      answers: { answers: { secret_value: ["stored"] } },
    });

    // Second step of the same script: the stub moves on to ask_user once the secrets result is in.
    const ask = await elsewhere.waitForEvent(
      "question.requested",
      (p) => p.sessionKey === sessionKey && p.id !== secret.id,
      45_000,
    );
    await elsewhere.request("question.resolve", {
      id: ask.id,
      answers: { answers: { go: ["Yes"] } },
    });
    const final = await requester.waitForEvent(
      "chat",
      (p) => p.runId === idempotencyKey && p.state === "final",
      45_000,
    );
    expect(chatText(final)).toBe("All set.");

    expect(await fetchStubRequests(stubModelUrl, tag)).toHaveLength(3);
    expect(await fetchStubRequests(stubModelUrl, secretValue)).toEqual([]);
    const resolvedEvents = requester.events.filter(
      (e) => e.event === "question.resolved" && e.payload.id === secret.id,
    );
    expect(JSON.stringify(resolvedEvents)).not.toContain(secretValue);
  });
});

function chatText(payload: Payload): string {
  const content = payload.message?.content;
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part: Payload) => part.text ?? "").join("") : "";
}
