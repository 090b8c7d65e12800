// Secret requests and ask_user questions from live agent runs on the real OpenClaw Gateway, driven by
// the scripted stub model (docs/ARCHITECTURE.md#the-ask, #sources-and-answers, #routing; docs/SECURITY.md#chat-ownership; issue 4). Secret questions can only come from the
// `secrets` tool inside a run: the stub's reply calls it through the Gateway's `tool_call` router.
// A secret value goes only to `question.resolve`; it must never appear in the SQLite files, the server
// log, any frame sent to any tab, or any request to the model.
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { SECRET_CANCELLED_SUMMARY, SECRET_ENTERED_SUMMARY } from "../../lib/outcomes.ts";
import type { OperatorConnection, Payload } from "../support/gateway-client.ts";
import {
  newChat,
  sessionKeyOf as chatKey,
  startOnGateway,
  stopOnGateway,
  useTabs,
} from "../support/on-gateway.ts";
import {
  fetchStubRequests,
  messageText,
  type StubScript,
  stubScript,
} from "../support/stub-model.ts";
import type { Tab, TestServer } from "../support/tabs.ts";

const stubModelUrl = inject("stubModelUrl");

const LIVE = 90_000;
// A test here waits on a live run at least twice, each wait allowing LIVE on a loaded machine: its
// budget holds two such waits, not the default 60 s, which a slow run outlasted (twice in CI) while
// every one of its own waits still had time.
const LIVE_TEST = { timeout: 2 * LIVE };

let requester: OperatorConnection;
let server: TestServer;
/** Every frame every tab of this file received, as JSON text. */
const frames: string[] = [];
const { tabs, tab } = useTabs({
  server: () => server,
  onOpen: (opened) =>
    opened.socket.onAny((event: string, ...args: unknown[]) =>
      frames.push(JSON.stringify([event, ...args])),
    ),
});

/** Starts a live run whose model follows `script`; `final` resolves with the run's last chat event. */
async function run(chatId: string, script: StubScript) {
  const runId = randomUUID(); // the run's id: its first events can precede the chat.send reply
  const sent = await requester.request<Payload>("chat.send", {
    sessionKey: chatKey(chatId),
    message: stubScript(script),
    idempotencyKey: runId,
  });
  expect(sent).toMatchObject({ runId, status: "started" });
  const final = requester.waitForEvent(
    "chat",
    (p) => p.runId === runId && p.state === "final",
    LIVE,
  );
  final.catch(() => {});
  return { runId, final };
}

function chatText(payload: Payload): string {
  const content = payload.message?.content;
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part: Payload) => part.text ?? "").join("") : "";
}

const waitShow = (viewer: Tab, predicate: (ask: Ask) => boolean, what: string) =>
  viewer.waitFor(() => viewer.shown.find(predicate), what, LIVE);

const secretsTool = (extra: Record<string, unknown> = {}) => ({
  id: "secrets",
  args: {
    action: "request",
    name: "DEMO_TOKEN",
    reason: "Deploys to the example API",
    allowedHosts: ["api.example.com"],
    timeoutSeconds: 300,
    ...extra,
  },
});

/** Everything a secret value must never reach, as text. */
function everywhere(): { name: string; text: string }[] {
  const files = readdirSync(server.dataDir).map((file) => ({
    name: `data file ${file}`,
    text: readFileSync(path.join(server.dataDir, file)).toString("latin1"),
  }));
  const tabText = tabs
    .map((t) => JSON.stringify([t.shown, t.closed, t.changed, t.statuses]))
    .join("\n");
  return [
    ...files,
    { name: "server log", text: server.logs.join("\n") },
    { name: "tab frames", text: frames.join("\n") + tabText },
  ];
}

async function expectNowhere(value: string) {
  expect(readdirSync(server.dataDir).some((file) => file.endsWith(".sqlite"))).toBe(true);
  for (const { name, text } of everywhere())
    expect(text.includes(value), `the secret value was found in the ${name}`).toBe(false);
  expect(
    await fetchStubRequests(stubModelUrl, value),
    "the secret value reached the model",
  ).toEqual([]);
}

beforeAll(async () => {
  ({ requester, server } = await startOnGateway());
});

afterAll(() => stopOnGateway({ server, requester }));

describe("secret requests from a live run (secrets tool)", LIVE_TEST, () => {
  it("§6 arrives, a tab views the chat: masked dialog on the newest viewing tab with name, reason and allowed hosts; the value is stored ('stored' comes back), the run continues, and the value is nowhere", async () => {
    const chatId = newChat();
    const older = await tab(chatId);
    const viewer = await tab(chatId);
    const dashboard = await tab(null);
    expect(await dashboard.send("asks:watch", {})).toEqual({ ok: true });
    const bystander = await tab(newChat());
    const tag = randomUUID();
    const { runId, final } = await run(chatId, { tag, tools: [secretsTool()], then: "All set." });

    const shown = await waitShow(viewer, (a) => a.kind === "secret", "the secret dialog");
    expect(shown).toMatchObject({
      kind: "secret",
      source: "gateway.secret",
      chatId,
      runId,
      status: "pending",
    });
    expect(shown.kind === "secret" && shown.secret).toMatchObject({
      questionId: "secret_value",
      name: "DEMO_TOKEN",
      reason: "Deploys to the example API",
      allowedHosts: ["api.example.com"],
      allowedHostsEditable: true,
    });
    const requested = await requester.waitForEvent("question.requested", (p) => p.id === shown.id);
    expect(shown.expiresAt).toBe(requested.expiresAtMs);
    expect(older.shown).toEqual([]);
    expect(bystander.shown).toEqual([]);

    const value = `sk-live-${randomUUID()}`;
    const ack = await viewer.send("ask:answer", {
      askId: shown.id,
      answer: { type: "secret", value },
    });
    expect(ack).toEqual({ ok: true, status: "answered", outcome: "stored" });
    // The Gateway stored it: it answers and broadcasts "stored", never the value.
    const resolved = await requester.waitForEvent("question.resolved", (p) => p.id === shown.id);
    expect(resolved).toMatchObject({
      status: "answered",
      answers: { answers: { secret_value: ["stored"] } },
    });
    expect(await viewer.waitForClose(shown.id)).toEqual({
      askId: shown.id,
      reason: "answered",
      summary: SECRET_ENTERED_SUMMARY,
    });
    expect(await server.store.get(shown.id)).toMatchObject({
      status: "answered",
      resolution: { summary: SECRET_ENTERED_SUMMARY, by: "owner" },
    });

    // The run went on: the model got the tool result and the reply finished.
    expect(chatText(await final)).toBe("All set.");
    const requests = await fetchStubRequests(stubModelUrl, tag);
    expect(requests).toHaveLength(2);
    const toolResult = requests[1]?.body.messages?.find((m) => m.role === "tool");
    expect(messageText(toolResult)).toContain("stored");

    await expectNowhere(value);
  });

  it("the allowed hosts are editable: the edited list reaches the Gateway's store", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const tag = randomUUID();
    const { final } = await run(chatId, { tag, tools: [secretsTool()], then: "Hosts noted." });
    const shown = await waitShow(viewer, (a) => a.kind === "secret", "the secret dialog");
    const value = `sk-edit-${randomUUID()}`;
    const edited = ["api.example.com", `eu-${tag.slice(0, 8)}.example.com`];
    expect(
      await viewer.send("ask:answer", {
        askId: shown.id,
        answer: { type: "secret", value, allowedHosts: edited },
      }),
    ).toEqual({ ok: true, status: "answered", outcome: "stored" });
    expect(chatText(await final)).toBe("Hosts noted.");
    // The tool result reports the entry's current policy: the edited hosts.
    const requests = await fetchStubRequests(stubModelUrl, tag);
    const toolResult = requests.at(-1)?.body.messages?.find((m) => m.role === "tool");
    expect(messageText(toolResult)).toContain(edited[1]);
    await expectNowhere(value);
  });

  it("§6 Cancel: the tab gets 'cancelled' for its toast, the agent hears no answer, the run continues, summary 'Cancelled (nothing entered)'", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const tag = randomUUID();
    const { final } = await run(chatId, {
      tag,
      tools: [secretsTool()],
      then: "Continuing without it.",
    });
    const shown = await waitShow(viewer, (a) => a.kind === "secret", "the secret dialog");
    expect(
      await viewer.send("ask:answer", { askId: shown.id, answer: { type: "cancel" } }),
    ).toEqual({ ok: true, status: "cancelled", outcome: "cancelled" });
    expect(
      await requester.waitForEvent("question.resolved", (p) => p.id === shown.id),
    ).toMatchObject({ status: "cancelled" });
    expect(await viewer.waitForClose(shown.id)).toEqual({
      askId: shown.id,
      reason: "cancelled",
      summary: SECRET_CANCELLED_SUMMARY,
    });
    expect(chatText(await final)).toBe("Continuing without it.");
  });

  it("§6 arrives, no tab views the chat: it waits (never ends as text), is shown when a tab opens the chat, and moves to a newer tab", async () => {
    const chatId = newChat();
    const { runId, final } = await run(chatId, { tools: [secretsTool()], then: "Thanks." });
    const requested = await requester.waitForEvent(
      "question.requested",
      (p) => p.runId === runId,
      LIVE,
    );
    await expect
      .poll(() => server.broker.getPending(requested.id as string)?.status, { timeout: 10_000 })
      .toBe("pending");
    const first = await tab(chatId);
    await waitShow(first, (a) => a.id === requested.id, "the secret dialog on the first tab");
    const phone = await tab(chatId);
    await waitShow(phone, (a) => a.id === requested.id, "the secret dialog on the newer tab");
    expect(await first.waitForClose(requested.id)).toEqual({
      askId: requested.id,
      reason: "handed-off",
    });
    const value = `sk-moved-${randomUUID()}`;
    expect(
      await phone.send("ask:answer", { askId: requested.id, answer: { type: "secret", value } }),
    ).toEqual({ ok: true, status: "answered", outcome: "stored" });
    expect(chatText(await final)).toBe("Thanks.");
    await expectNowhere(value);
  });

  it("§6 chat's user is not in OWNER_USERS: the request is cancelled at once, never shown, and its summary says it needs the owner", async () => {
    const chatId = newChat();
    const guest = await tab(chatId, "alice");
    const { runId, final } = await run(chatId, { tools: [secretsTool()], then: "No key then." });
    const requested = await requester.waitForEvent(
      "question.requested",
      (p) => p.runId === runId,
      LIVE,
    );
    const resolved = await requester.waitForEvent(
      "question.resolved",
      (p) => p.id === requested.id,
      15_000,
    );
    expect(resolved.status).toBe("cancelled");
    await expect
      .poll(async () => (await server.store.get(requested.id as string))?.status, {
        timeout: 10_000,
      })
      .not.toBe("pending");
    const stored = await server.store.get(requested.id as string);
    expect(["cancelled", "denied"]).toContain(stored?.status);
    expect(stored?.resolution?.summary).toMatch(/owner/i);
    expect(guest.shown.map((a) => a.id)).not.toContain(requested.id);
    expect(chatText(await final)).toBe("No key then.");
  });

  it("another agent's session: its secret request is never shown and never cancelled, even in a guest's chat", async () => {
    const chatId = newChat();
    const guest = await tab(chatId, "alice");
    const runId = randomUUID();
    await requester.request("chat.send", {
      sessionKey: `agent:other:openwebui:${chatId}`,
      message: stubScript({ tools: [secretsTool()], then: "Other agent done." }),
      idempotencyKey: runId,
    });
    const foreign = await requester.waitForEvent(
      "question.requested",
      (p) => p.runId === runId,
      LIVE,
    );
    // Our own agent's request on the same (guest) chat, after it: once it is cancelled, the other was seen too.
    const own = await run(chatId, { tools: [secretsTool()], then: "Own agent done." });
    const ownRequested = await requester.waitForEvent(
      "question.requested",
      (p) => p.runId === own.runId,
      LIVE,
    );
    expect(
      await requester.waitForEvent("question.resolved", (p) => p.id === ownRequested.id, 15_000),
    ).toMatchObject({ status: "cancelled" });
    expect(chatText(await own.final)).toBe("Own agent done.");
    expect(await server.store.get(foreign.id as string)).toBeNull();
    expect(guest.shown.map((a) => a.id)).not.toContain(foreign.id);
    const record = await requester.request<Payload>("question.get", { id: foreign.id });
    expect(JSON.stringify(record)).toContain('"pending"');
    await requester.request("question.resolve", { id: foreign.id, cancel: true });
  });

  it("§9: a secret request that arrived before the chat's owner was known is never shown to a guest who then becomes its owner", async () => {
    const chatId = newChat();
    const { runId, final } = await run(chatId, { tools: [secretsTool()], then: "Later." });
    const requested = await requester.waitForEvent(
      "question.requested",
      (p) => p.runId === runId,
      LIVE,
    );
    await expect
      .poll(() => server.broker.getPending(requested.id as string)?.status, { timeout: 10_000 })
      .toBe("pending");
    const guest = await tab(chatId, "alice");
    await expect
      .poll(async () => (await server.store.get(requested.id as string))?.status, {
        timeout: 10_000,
      })
      .not.toBe("pending")
      .catch(() => {});
    expect
      .soft(
        guest.shown.map((a) => a.id),
        "a guest got the secret dialog",
      )
      .not.toContain(requested.id);
    expect((await server.store.get(requested.id as string))?.status).not.toBe("pending");
    expect(
      await requester.waitForEvent("question.resolved", (p) => p.id === requested.id, 10_000),
    ).toMatchObject({ status: "cancelled" });
    expect(chatText(await final)).toBe("Later.");
  });
});

describe("ask_user questions from a live run", LIVE_TEST, () => {
  const threeQuestions = {
    id: "ask_user",
    args: {
      questions: [
        {
          id: "theme",
          header: "Theme",
          question: "Which theme?",
          options: [{ label: "Dark", description: "easy on the eyes" }, { label: "Light" }],
        },
        {
          id: "features",
          header: "Features",
          question: "Which features?",
          multiSelect: true,
          options: [{ label: "Search" }, { label: "Export" }, { label: "Sharing" }],
        },
        {
          id: "region",
          header: "Region",
          question: "Where to deploy?",
          options: [{ label: "eu-west" }, { label: "us-east" }],
        },
      ],
      timeoutSeconds: 600,
    },
  };

  it("3 questions stepped in one card, multi-select and Other; answers reach the Gateway as {answers: {<questionId>: [values]}} and the run continues", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const tag = randomUUID();
    const { runId, final } = await run(chatId, { tag, tool: threeQuestions, then: "Configured." });
    const shown = await waitShow(
      viewer,
      (a) => a.kind === "question" && a.runId === runId,
      "the question card",
    );
    const requested = await requester.waitForEvent("question.requested", (p) => p.id === shown.id);
    expect(shown).toMatchObject({
      kind: "question",
      source: "gateway.question",
      chatId,
      runId,
      expiresAt: requested.expiresAtMs,
    });
    if (shown.kind !== "question") throw new Error("not a question");
    expect(shown.questions.map((q) => q.id)).toEqual(["theme", "features", "region"]);
    expect(shown.questions[0]).toMatchObject({
      header: "Theme",
      question: "Which theme?",
      options: [{ label: "Dark", description: "easy on the eyes" }, { label: "Light" }],
      multiSelect: false,
      allowOther: true,
    });
    expect(shown.questions[1]).toMatchObject({ multiSelect: true, allowOther: true });

    // A partial answer is refused here, before the Gateway would refuse it; nothing changes.
    const partial = await viewer.send("ask:answer", {
      askId: shown.id,
      answer: { type: "questions", answers: { theme: ["Dark"] } },
    });
    expect(partial).toMatchObject({ ok: false, error: { code: "INVALID" } });
    expect(server.broker.getPending(shown.id)?.status).toBe("pending");

    const answers = { theme: ["Dark"], features: ["Search", "Sharing"], region: ["Mars base one"] };
    expect(
      await viewer.send("ask:answer", { askId: shown.id, answer: { type: "questions", answers } }),
    ).toEqual({ ok: true, status: "answered" });
    const resolved = await requester.waitForEvent("question.resolved", (p) => p.id === shown.id);
    expect(resolved).toMatchObject({ status: "answered", answers: { answers } });
    expect(await viewer.waitForClose(shown.id)).toMatchObject({ reason: "answered" });
    expect(chatText(await final)).toBe("Configured.");
    const requests = await fetchStubRequests(stubModelUrl, tag);
    const toolResult = messageText(requests.at(-1)?.body.messages?.find((m) => m.role === "tool"));
    for (const value of ["Dark", "Search", "Sharing", "Mars base one"])
      expect(toolResult).toContain(value);
  });

  it("option numbers map to labels in the Gateway's shape", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { runId, final } = await run(chatId, { tool: threeQuestions, then: "OK." });
    const shown = await waitShow(
      viewer,
      (a) => a.kind === "question" && a.runId === runId,
      "the question card",
    );
    expect(
      await viewer.send("ask:answer", {
        askId: shown.id,
        answer: {
          type: "questions",
          answers: { theme: ["2"], features: ["1", "3"], region: ["us-east"] },
        },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(
      await requester.waitForEvent("question.resolved", (p) => p.id === shown.id),
    ).toMatchObject({
      status: "answered",
      answers: {
        answers: { theme: ["Light"], features: ["Search", "Sharing"], region: ["us-east"] },
      },
    });
    expect(chatText(await final)).toBe("OK.");
  });

  it("§6 Cancel (Skip) declines the whole card: the Gateway hears cancelled, the run continues", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { runId, final } = await run(chatId, {
      tool: {
        id: "ask_user",
        args: { questions: threeQuestions.args.questions.slice(0, 2), timeoutSeconds: 600 },
      },
      then: "Skipped, using defaults.",
    });
    const shown = await waitShow(
      viewer,
      (a) => a.kind === "question" && a.runId === runId,
      "the question card",
    );
    expect(shown.kind === "question" && shown.questions).toHaveLength(2);
    expect(
      await viewer.send("ask:answer", { askId: shown.id, answer: { type: "cancel" } }),
    ).toEqual({ ok: true, status: "cancelled" });
    expect(
      await requester.waitForEvent("question.resolved", (p) => p.id === shown.id),
    ).toMatchObject({ status: "cancelled" });
    expect(await viewer.waitForClose(shown.id)).toMatchObject({ reason: "cancelled" });
    expect(chatText(await final)).toBe("Skipped, using defaults.");
  });

  it("§6 answered elsewhere / the tab switches chats: ends only by answer, cancel, answered elsewhere or the Gateway's timeout", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { runId, final } = await run(chatId, {
      tool: {
        id: "ask_user",
        args: { questions: threeQuestions.args.questions.slice(0, 1), timeoutSeconds: 600 },
      },
      then: "Fine.",
    });
    const shown = await waitShow(
      viewer,
      (a) => a.kind === "question" && a.runId === runId,
      "the question card",
    );
    // Switching away and back does not end it.
    expect(await viewer.send("chat:view", { chatId: newChat() })).toEqual({ ok: true });
    expect(await viewer.send("chat:view", { chatId })).toEqual({ ok: true });
    await viewer.waitFor(
      () => (viewer.shown.filter((a) => a.id === shown.id).length === 2 ? true : undefined),
      "shown again",
    );
    expect(server.broker.getPending(shown.id)?.status).toBe("pending");
    await requester.request("question.resolve", {
      id: shown.id,
      answers: { answers: { theme: ["Light"] } },
    });
    expect(await viewer.waitForClose(shown.id)).toMatchObject({
      reason: "answered-elsewhere",
      summary: "Light",
    });
    expect(chatText(await final)).toBe("Fine.");
  });
});
