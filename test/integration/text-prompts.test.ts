import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { SECRET_CANCELLED_SUMMARY, SECRET_ENTERED_SUMMARY } from "../../lib/outcomes.ts";
import type { FakeGateway } from "../support/fake-gateway.ts";
import { ManualClock } from "../support/manual-clock.ts";
import {
  newChat,
  sessionKeyOf as keyOf,
  startOnFakeGateway,
  stopOnFakeGateway,
  TEST_AGENT,
} from "../support/on-gateway.ts";
import { openTab, type Tab, type TestServer } from "../support/tabs.ts";
import {
  chatFrames,
  cumulative,
  expectCard,
  type Mode,
  type PromptKind,
  PROMPTS,
  TRIGGER,
} from "../support/text-prompts.ts";

/**
 * Text prompts (docs/ARCHITECTURE.md#sources-and-answers, #routing, #text-prompts, issue 3 part B) through the whole path, against the in-repo fake
 * Gateway: assistant text streamed as `chat` events (one character per delta, 7-character deltas,
 * cumulative snapshots with replays and a `replace`, deltaText-only frames, one final snapshot) →
 * chat watcher → broker → the tab viewing the chat → answer → `chat.send` back to the session. What
 * needs no sockets is tested on its own: every way of streaming each kind of prompt and the card it
 * becomes in server/prompts/chat-watcher.test.ts, what each answer sends in lib/answers.test.ts.
 *
 * Every run here is one the agent started on its own as far as this service is concerned (the test
 * emits its events; nobody called chat.send for it): cron jobs and sub-agent results look the same.
 */

const DEFAULT_TIMEOUT_MS = 240_000;

// ---------------------------------------------------------------------------------------------
// Harness: one fake Gateway, the real server in-process, socket.io-client tabs
// ---------------------------------------------------------------------------------------------

type Harness = {
  fake: FakeGateway;
  server: TestServer;
  /** An owner tab on `asks:watch`: sees every ask change (the dashboard feed). */
  watcher: Tab;
  tabs: Tab[];
  /** Every frame any tab of this harness received, as JSON (secret checks). */
  frames: string[];
  dispose(): Promise<void>;
};

const harnesses: Harness[] = [];

async function boot(
  options: { env?: Record<string, string>; clock?: ManualClock } = {},
): Promise<Harness> {
  const { fake, server } = await startOnFakeGateway({
    env: options.env,
    clock: options.clock,
    connectTimeoutMs: 10_000,
  });
  const harness: Harness = {
    fake,
    server,
    watcher: undefined as unknown as Tab,
    tabs: [],
    frames: [],
    async dispose() {
      for (const tab of harness.tabs.splice(0)) tab.close();
      await stopOnFakeGateway({ fake, server });
    },
  };
  harnesses.push(harness);
  harness.watcher = await openTabOn(harness, null);
  expect(await harness.watcher.send("asks:watch", {})).toEqual({ ok: true });
  return harness;
}

async function openTabOn(h: Harness, chatId: string | null, userId = "owner"): Promise<Tab> {
  const tab = await openTab(h.server.url, await h.server.token(userId));
  tab.socket.onAny((event: string, ...args: unknown[]) =>
    h.frames.push(JSON.stringify([event, ...args])),
  );
  h.tabs.push(tab);
  if (chatId) expect(await tab.send("chat:view", { chatId })).toEqual({ ok: true });
  return tab;
}

const newRun = (label = "run") => `${label}-${randomUUID()}`;

/** chat.send calls the server made to one session. */
const sentTo = (h: Harness, sessionKey: string) =>
  h.fake.sent.filter((entry) => entry.sessionKey === sessionKey);
/** Every chat.send request frame (even ones the Gateway folded as in-flight), for "exactly once". */
const chatSendRequests = (h: Harness, sessionKey: string) =>
  h.fake.requests.filter(
    (r) =>
      r.method === "chat.send" && (r.params as { sessionKey?: string }).sessionKey === sessionKey,
  );

/**
 * Waits until the server has processed every chat event emitted so far: a Gateway question (a path
 * that does not go through the text-prompt code) on a session of no chat reaches the dashboard feed.
 * Events of one connection are handled in order, so once it is seen, everything before it was handled.
 */
async function settle(h: Harness): Promise<void> {
  await barrierQuestion(h);
}

/** Creates a question on a session of no chat and waits until the dashboard feed shows it; its id. */
async function barrierQuestion(h: Harness): Promise<string> {
  const { id } = h.fake.createQuestion({
    sessionKey: `agent:${TEST_AGENT}:barrier:${randomUUID()}`,
    timeoutMs: 600_000,
  });
  await h.watcher.waitFor(
    () => h.watcher.changed.find((a) => a.id === id),
    "the barrier question on the dashboard feed",
    10_000,
  );
  return id;
}

/**
 * `settle`, and then waits until every Gateway call the server started so far has reached the
 * fake: the watcher answers the barrier question, so the server calls `question.resolve` after
 * everything it sent before on that connection, and the answer is acked only after the fake replied.
 */
async function flushGatewayCalls(h: Harness): Promise<void> {
  const id = await barrierQuestion(h);
  expect(
    await h.watcher.send("ask:answer", {
      askId: id,
      answer: { type: "questions", answers: { db: ["SQLite"] } },
    }),
  ).toEqual({ ok: true, status: "answered" });
  expect(
    h.fake.requests.filter(
      (r) => r.method === "question.resolve" && (r.params as { id?: string }).id === id,
    ),
  ).toHaveLength(1);
}

function showsFor(tab: Tab, sessionKey: string): Ask[] {
  return tab.shown.filter((a) => a.sessionKey === sessionKey);
}

async function cardFor(tab: Tab, sessionKey: string): Promise<Ask> {
  return tab.waitForShow((a) => a.sessionKey === sessionKey && a.source === "text-prompt");
}

/** Emits one whole run the way the Gateway streams it in `mode` (test/support/text-prompts.ts). */
function streamReply(
  fake: FakeGateway,
  sessionKey: string,
  runId: string,
  reply: string,
  mode: Mode,
): void {
  for (const frame of chatFrames(sessionKey, runId, reply, mode)) fake.emitRaw("chat", frame);
}

/** A tab viewing a new chat, and the card of a `kind` prompt that a run the agent started streamed there in `mode`. */
async function cardOn(
  h: Harness,
  kind: PromptKind,
  mode: Mode = "one character per delta (cumulative message)",
) {
  const chatId = newChat();
  const sessionKey = keyOf(chatId);
  const runId = newRun();
  const tab = await openTabOn(h, chatId);
  streamReply(h.fake, sessionKey, runId, PROMPTS[kind], mode);
  const card = await cardFor(tab, sessionKey);
  return { chatId, sessionKey, runId, tab, card };
}

afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
});

// ---------------------------------------------------------------------------------------------
// Detection: every chunking gives the same card
// ---------------------------------------------------------------------------------------------

describe("text prompts: every way the Gateway streams a reply gives the same card", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await boot();
    harnesses.splice(harnesses.indexOf(h), 1); // kept for the whole describe, disposed in afterAll
  });
  afterAll(async () => {
    await h?.dispose();
  });

  it("deltaText-only frames with a replace: `deltaText` replaces the reply, and the new text's prompt is asked", async () => {
    // Outside the matrix of server/prompts/chat-watcher.test.ts: one product bug here would fail every prompt kind alike.
    for (const kind of ["choice", "secret"] as const) {
      const { card } = await cardOn(h, kind, "deltaText-only frames with a replace");
      expect(card.kind, kind).toBe(kind === "secret" ? "secret" : "question");
      expectCard(kind, card);
      expect(JSON.stringify(card)).not.toContain("Draft");
    }
  });

  it("a trigger inside a fenced code block, indented code or mid-line is a quote: no card", async () => {
    const chatId = newChat();
    const sessionKey = keyOf(chatId);
    const tab = await openTabOn(h, chatId);
    const quoted = [
      "Agents ask like this:",
      "```",
      "OpenClaw needs input: Which database?",
      "```",
      "    OpenClaw needs input: indented code",
      "and mid-line OpenClaw needs input: is text too.",
    ].join("\n");
    streamReply(
      h.fake,
      sessionKey,
      newRun(),
      quoted,
      "one character per delta (cumulative message)",
    );
    await settle(h);
    expect(showsFor(tab, sessionKey)).toEqual([]);
    expect(h.watcher.changed.filter((a) => a.sessionKey === sessionKey)).toEqual([]);
  });

  it("two runs streaming at once on two chats each get their own card (one scanner per run)", async () => {
    const [chatA, chatB] = [newChat(), newChat()];
    const [tabA, tabB] = [await openTabOn(h, chatA), await openTabOn(h, chatB)];
    const [runA, runB] = [newRun("a"), newRun("b")];
    const [replyA, replyB] = [PROMPTS.choice, PROMPTS.multiSelect];
    for (let i = 0; i < Math.max(replyA.length, replyB.length); i++) {
      if (i < replyA.length)
        h.fake.emitChat(keyOf(chatA), runA, { state: "delta", deltaText: replyA[i]! });
      if (i < replyB.length)
        h.fake.emitChat(keyOf(chatB), runB, { state: "delta", deltaText: replyB[i]! });
    }
    h.fake.emitChat(keyOf(chatA), runA, { state: "final" });
    h.fake.emitChat(keyOf(chatB), runB, { state: "final" });
    expectCard("choice", await cardFor(tabA, keyOf(chatA)));
    expectCard("multiSelect", await cardFor(tabB, keyOf(chatB)));
    await settle(h);
    expect(tabA.shown.map((a) => a.sessionKey)).toEqual([keyOf(chatA)]);
    expect(tabB.shown.map((a) => a.sessionKey)).toEqual([keyOf(chatB)]);
  });

  it("a replayed snapshot or final does not create a second ask", async () => {
    const { sessionKey, runId, tab, card } = await cardOn(
      h,
      "choice",
      "7-character deltas (cumulative message)",
    );
    // The Gateway sends the last snapshot and the final again (a reconnect, a duplicate frame).
    h.fake.emitChat(sessionKey, runId, {
      state: "delta",
      deltaText: "",
      message: cumulative(PROMPTS.choice),
    });
    h.fake.emitChat(sessionKey, runId, { state: "final", message: cumulative(PROMPTS.choice) });
    h.fake.emitChat(sessionKey, runId, { state: "final", message: cumulative(PROMPTS.choice) });
    await settle(h);
    expect(showsFor(tab, sessionKey).map((a) => a.id)).toEqual([card.id]);
    expect(tab.closed.filter((c) => c.askId === card.id)).toEqual([]);
    expect(h.server.broker.getPending(card.id)?.status).toBe("pending");
    expect(
      new Set(h.watcher.changed.filter((a) => a.sessionKey === sessionKey).map((a) => a.id)),
    ).toEqual(new Set([card.id]));

    // Answered, then replayed again: never revived, never sent twice.
    expect(
      await tab.send("ask:answer", { askId: card.id, answer: { type: "text", text: "2" } }),
    ).toEqual({ ok: true, status: "answered" });
    h.fake.emitChat(sessionKey, runId, { state: "final", message: cumulative(PROMPTS.choice) });
    await settle(h);
    expect(showsFor(tab, sessionKey)).toHaveLength(1);
    expect(sentTo(h, sessionKey)).toHaveLength(1);
    expect((await h.server.store.get(card.id))?.status).toBe("answered");
  });
});

// ---------------------------------------------------------------------------------------------
// Answers go back to the session with chat.send
// ---------------------------------------------------------------------------------------------

describe("text prompts: answers continue the run with chat.send", () => {
  it("a typed option number on a choice card sends the option's label", async () => {
    const h = await boot();
    const { sessionKey, tab, card } = await cardOn(h, "choice");
    expect(
      await tab.send("ask:answer", { askId: card.id, answer: { type: "text", text: "2" } }),
    ).toEqual({ ok: true, status: "answered" });
    const [sent, ...more] = sentTo(h, sessionKey);
    expect(more).toEqual([]);
    expect(sent).toMatchObject({ sessionKey, message: "SQLite" });
    expect(sent!.idempotencyKey).toEqual(expect.any(String));
    expect(sent!.idempotencyKey.length).toBeGreaterThan(0);
    expect(await tab.waitForClose(card.id)).toEqual({
      askId: card.id,
      reason: "answered",
      summary: "SQLite",
    });
    expect(await h.server.store.get(card.id)).toMatchObject({
      status: "answered",
      resolution: { by: "owner", summary: "SQLite" },
    });
  });

  it("a second answer to the same card is refused and sends nothing", async () => {
    const h = await boot();
    const { sessionKey, tab, card } = await cardOn(h, "choice");
    expect(
      await tab.send("ask:answer", { askId: card.id, answer: { type: "text", text: "1" } }),
    ).toMatchObject({ ok: true });
    expect(
      await tab.send("ask:answer", { askId: card.id, answer: { type: "text", text: "2" } }),
    ).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
    expect(sentTo(h, sessionKey).map((s) => s.message)).toEqual(["Postgres"]);
  });

  it("a newer tab on the chat takes the card; the older one is told it was handed off", async () => {
    const h = await boot();
    const { chatId, sessionKey, tab: older, card } = await cardOn(h, "choice");
    const newer = await openTabOn(h, chatId);
    expect((await cardFor(newer, sessionKey)).id).toBe(card.id);
    expect(await older.waitForClose(card.id)).toEqual({ askId: card.id, reason: "handed-off" });
    expect(
      await newer.send("ask:answer", { askId: card.id, answer: { type: "text", text: "1" } }),
    ).toMatchObject({ ok: true });
    expect(sentTo(h, sessionKey).map((s) => s.message)).toEqual(["Postgres"]);
  });

  it("the answer's run (events before the chat.send reply, as the real Gateway does) closes nothing", async () => {
    const h = await boot();
    h.fake.setLatency(300, "chat.send");
    h.fake.onChatSend((entry) => {
      h.fake.emitChat(entry.sessionKey, entry.idempotencyKey, {
        state: "status",
        phase: "preparing_context",
      });
      h.fake.emitChat(entry.sessionKey, entry.idempotencyKey, {
        state: "delta",
        deltaText: "Using SQLite.",
      });
    });
    const { sessionKey, tab, card } = await cardOn(h, "choice");
    expect(
      await tab.send("ask:answer", { askId: card.id, answer: { type: "text", text: "SQLite" } }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await tab.waitForClose(card.id)).toEqual({
      askId: card.id,
      reason: "answered",
      summary: "SQLite",
    });
    expect((await h.server.store.get(card.id))?.status).toBe("answered");
    expect(sentTo(h, sessionKey)).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Secrets: only the agent gets the value
// ---------------------------------------------------------------------------------------------

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

describe("text prompts: secrets", () => {
  it("the value goes only to the agent; the ask says `•••• (secret entered)`; never in tab frames, logs or SQLite", async () => {
    const h = await boot();
    const chatId = newChat();
    const sessionKey = keyOf(chatId);
    const tab = await openTabOn(h, chatId);
    const other = await openTabOn(h, newChat()); // a bystander tab on another chat
    streamReply(
      h.fake,
      sessionKey,
      newRun(),
      PROMPTS.secret,
      "7-character deltas (cumulative message)",
    );
    const dialog = await cardFor(tab, sessionKey);
    expect(dialog.kind).toBe("secret");

    const value = `ghp_${randomUUID().replaceAll("-", "")}`;
    const ack = await tab.send("ask:answer", {
      askId: dialog.id,
      answer: { type: "secret", value },
    });
    expect(ack).toMatchObject({ ok: true, status: "answered" });
    expect(JSON.stringify(ack)).not.toContain(value);

    const sent = sentTo(h, sessionKey);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ sessionKey, message: value });
    expect(await tab.waitForClose(dialog.id)).toEqual({
      askId: dialog.id,
      reason: "answered",
      summary: SECRET_ENTERED_SUMMARY,
    });
    await h.watcher.waitFor(
      () => h.watcher.changed.find((a) => a.id === dialog.id && a.status === "answered"),
      "the answered secret on the dashboard feed",
    );
    expect(await h.server.store.get(dialog.id)).toMatchObject({
      status: "answered",
      resolution: { summary: SECRET_ENTERED_SUMMARY },
    });
    expect(JSON.stringify(await h.server.store.get(dialog.id))).not.toContain(value);
    await settle(h);

    // Never in any frame to any tab (the answering tab, a bystander, the dashboard feed), nor the log.
    expect(h.frames.length).toBeGreaterThan(0);
    expect(h.frames.join("\n")).not.toContain(value);
    expect(other.shown).toEqual([]);
    expect(h.server.logs.join("\n")).not.toContain(value);
    // Nor on disk: the database file and its journal, after the server has closed it.
    await h.server.stop();
    const files = filesUnder(h.server.dataDir);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files)
      expect(readFileSync(file).includes(Buffer.from(value)), file).toBe(false);
  });

  it("Cancel on the secret dialog tells the agent nothing was entered; summary `Cancelled (nothing entered)`", async () => {
    const h = await boot();
    const { sessionKey, tab, card: dialog } = await cardOn(h, "secret", "deltaText-only frames");
    expect(
      await tab.send("ask:answer", { askId: dialog.id, answer: { type: "cancel" } }),
    ).toMatchObject({ ok: true, status: "cancelled" });
    expect(await tab.waitForClose(dialog.id)).toEqual({
      askId: dialog.id,
      reason: "cancelled",
      summary: SECRET_CANCELLED_SUMMARY,
    });
    expect(await h.server.store.get(dialog.id)).toMatchObject({
      status: "cancelled",
      resolution: { summary: SECRET_CANCELLED_SUMMARY },
    });
    await settle(h);
    // Told once that the user cancelled and nothing was entered; no "not received" notice on top.
    const sent = sentTo(h, sessionKey);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.message).toMatch(/cancel/i);
    expect(sent[0]!.message).toMatch(/nothing/i);
    expect(chatSendRequests(h, sessionKey)).toHaveLength(1);
  });

  it("Cancel on any other card sends nothing: the prompt stays in the reply as text", async () => {
    const h = await boot();
    const { sessionKey, tab, card } = await cardOn(
      h,
      "choice",
      "one character per delta (cumulative message)",
    );
    expect(await tab.send("ask:answer", { askId: card.id, answer: { type: "cancel" } })).toEqual({
      ok: true,
      status: "cancelled",
    });
    const closed = await tab.waitForClose(card.id);
    expect(closed.reason).toBe("cancelled");
    const ended = await h.server.store.get(card.id);
    expect(ended?.status).toBe("cancelled");
    // What stays is the question as text, the trigger removed.
    expect(ended?.resolution?.summary).toContain("Which database?");
    expect(ended?.resolution?.summary).not.toMatch(TRIGGER);
    await settle(h);
    expect(chatSendRequests(h, sessionKey)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// No tab, timeouts
// ---------------------------------------------------------------------------------------------

describe("text prompts: no tab and timeouts", () => {
  it("a prompt no tab views ends as text at once; nothing is sent; a tab opening later gets no card", async () => {
    const h = await boot();
    const chatId = newChat();
    const sessionKey = keyOf(chatId);
    const elsewhere = await openTabOn(h, newChat()); // a tab, but on another chat
    streamReply(
      h.fake,
      sessionKey,
      newRun(),
      PROMPTS.choice,
      "7-character deltas (cumulative message)",
    );
    const ended = await h.watcher.waitFor(
      () =>
        h.watcher.changed.find((a) => a.sessionKey === sessionKey && a.status === "ended-as-text"),
      "ended-as-text",
      3_000,
    );
    expect(ended).toMatchObject({ source: "text-prompt", chatId });
    expect((await h.server.store.get(ended.id))?.status).toBe("ended-as-text");
    expect(h.server.broker.getPending(ended.id)).toBeUndefined();
    expect(elsewhere.shown).toEqual([]);
    const late = await openTabOn(h, chatId);
    await settle(h);
    expect(late.shown).toEqual([]);
    expect(chatSendRequests(h, sessionKey)).toEqual([]);
  });

  it("a secret prompt no tab views ends as text and the agent is told once that no secret was received", async () => {
    const h = await boot();
    const chatId = newChat();
    const sessionKey = keyOf(chatId);
    const runId = newRun();
    streamReply(
      h.fake,
      sessionKey,
      runId,
      PROMPTS.secret,
      "one character per delta (cumulative message)",
    );
    const ended = await h.watcher.waitFor(
      () =>
        h.watcher.changed.find((a) => a.sessionKey === sessionKey && a.status === "ended-as-text"),
      "ended-as-text",
      3_000,
    );
    expect(ended.kind).toBe("secret");
    await vi.waitFor(
      () => expect(sentTo(h, sessionKey), "the not-received notice").not.toEqual([]),
      { timeout: 3_000 },
    );
    // A replayed final must not tell the agent again.
    h.fake.emitChat(sessionKey, runId, { state: "final", message: cumulative(PROMPTS.secret) });
    await flushGatewayCalls(h);
    const notices = chatSendRequests(h, sessionKey);
    expect(notices).toHaveLength(1);
    const notice = sentTo(h, sessionKey)[0]!;
    expect(notice.message).toMatch(/not received|no secret/i);
    expect(notice.idempotencyKey).not.toBe(runId);
  });

  it("an unanswered card ends as text after 4 minutes (ManualClock); nothing is sent; no timer is left", async () => {
    const clock = new ManualClock();
    const h = await boot({ clock });
    const { sessionKey, tab, card } = await cardOn(
      h,
      "choice",
      "7-character deltas (cumulative message)",
    );
    expect(card.expiresAt).toBe(clock.now() + DEFAULT_TIMEOUT_MS);
    clock.advance(DEFAULT_TIMEOUT_MS - 1);
    await settle(h);
    expect(tab.closed).toEqual([]);
    expect(h.server.broker.getPending(card.id)?.status).toBe("pending");
    clock.advance(1);
    expect(await tab.waitForClose(card.id)).toMatchObject({
      askId: card.id,
      reason: "ended-as-text",
    });
    expect((await h.server.store.get(card.id))?.status).toBe("ended-as-text");
    expect(
      await tab.send("ask:answer", { askId: card.id, answer: { type: "text", text: "1" } }),
    ).toMatchObject({ ok: false });
    await settle(h);
    expect(chatSendRequests(h, sessionKey)).toEqual([]);
    // Its timer is gone: what is left belongs to the pending barrier questions, one each.
    expect(h.server.broker.pendingAsks.map((a) => a.id)).not.toContain(card.id);
    expect(h.server.broker.activeTimers).toBe(h.server.broker.pendingAsks.length);
  });

  it("an unanswered secret dialog ends after 4 minutes and the agent is told once (ManualClock)", async () => {
    const clock = new ManualClock();
    const h = await boot({ clock });
    const {
      sessionKey,
      tab,
      card: dialog,
    } = await cardOn(h, "secret", "cumulative snapshots with a replay and a replace");
    expect(dialog.kind).toBe("secret");
    clock.advance(DEFAULT_TIMEOUT_MS);
    expect(await tab.waitForClose(dialog.id)).toMatchObject({
      askId: dialog.id,
      reason: "ended-as-text",
    });
    await vi.waitFor(
      () => expect(sentTo(h, sessionKey), "the not-received notice").not.toEqual([]),
      { timeout: 3_000 },
    );
    clock.advance(DEFAULT_TIMEOUT_MS);
    await flushGatewayCalls(h);
    expect(chatSendRequests(h, sessionKey)).toHaveLength(1);
    expect(sentTo(h, sessionKey)[0]!.message).toMatch(/not received|no secret/i);
  });

  it("TEXT_PROMPT_TIMEOUT_SECONDS=5 ends the card after 5 s (ManualClock)", async () => {
    const clock = new ManualClock();
    const h = await boot({ env: { TEXT_PROMPT_TIMEOUT_SECONDS: "5" }, clock });
    const { sessionKey, tab, card } = await cardOn(h, "confirm", "one final snapshot");
    expect(card.expiresAt! - card.createdAt).toBe(5_000);
    clock.advance(4_999);
    await settle(h);
    expect(tab.closed).toEqual([]);
    clock.advance(1);
    const closed = await tab.waitForClose(card.id);
    expect(closed.reason).toBe("ended-as-text");
    expect(chatSendRequests(h, sessionKey)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The user writes instead; runs that are not the user; other agents
// ---------------------------------------------------------------------------------------------

describe("text prompts: the run moves on without the card", () => {
  it("a new run on the session that this service did not start (the user typed) closes the card: answered-elsewhere", async () => {
    const h = await boot();
    const { sessionKey, tab, card } = await cardOn(
      h,
      "choice",
      "7-character deltas (cumulative message)",
    );
    // The user's message is never echoed: it shows only as a new run on the session.
    h.fake.emitChat(sessionKey, newRun("user"), { state: "status", phase: "preparing_workspace" });
    expect(await tab.waitForClose(card.id)).toMatchObject({
      askId: card.id,
      reason: "answered-elsewhere",
    });
    expect((await h.server.store.get(card.id))?.status).toBe("ended-as-text");
    expect(
      await tab.send("ask:answer", { askId: card.id, answer: { type: "text", text: "1" } }),
    ).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
    await settle(h);
    expect(chatSendRequests(h, sessionKey)).toEqual([]);
  });

  it("the user typing closes a secret dialog too", async () => {
    const h = await boot();
    const {
      sessionKey,
      tab,
      card: dialog,
    } = await cardOn(h, "secret", "one character per delta (cumulative message)");
    h.fake.emitChat(sessionKey, newRun("user"), { state: "status", phase: "preparing_workspace" });
    expect(await tab.waitForClose(dialog.id)).toMatchObject({
      askId: dialog.id,
      reason: "answered-elsewhere",
    });
    await settle(h);
    // Never asked for in chat: whatever reaches the agent is at most one notice, never a second one.
    expect(chatSendRequests(h, sessionKey).length).toBeLessThanOrEqual(1);
  });

  it("runs this service started (an answer, a secret notice) do not close the open card", async () => {
    const h = await boot();
    const chatId = newChat();
    const sessionKey = keyOf(chatId);

    // 1. A secret prompt while no tab views the chat: the agent gets a notice (a run we start).
    streamReply(
      h.fake,
      sessionKey,
      newRun(),
      PROMPTS.secret,
      "7-character deltas (cumulative message)",
    );
    await vi.waitFor(
      () => expect(sentTo(h, sessionKey), "the not-received notice").toHaveLength(1),
      { timeout: 3_000 },
    );
    const noticeRun = sentTo(h, sessionKey)[0]!.idempotencyKey;

    // 2. A tab views the chat; a card is answered (another run we start).
    const tab = await openTabOn(h, chatId);
    streamReply(
      h.fake,
      sessionKey,
      newRun(),
      PROMPTS.confirm,
      "7-character deltas (cumulative message)",
    );
    const first = await cardFor(tab, sessionKey);
    expect(
      await tab.send("ask:answer", { askId: first.id, answer: { type: "text", text: "yes" } }),
    ).toMatchObject({ ok: true });
    expect(
      sentTo(h, sessionKey)
        .map((s) => s.message)
        .at(-1),
    ).toBe("Yes");
    const answerRun = sentTo(h, sessionKey).at(-1)!.idempotencyKey;

    // 3. The agent asks again in a later run (one the agent started): a new card is open.
    streamReply(
      h.fake,
      sessionKey,
      newRun(),
      PROMPTS.choice,
      "7-character deltas (cumulative message)",
    );
    const open = await tab.waitForShow((a) => a.sessionKey === sessionKey && a.id !== first.id);

    // 4. Our own runs stream on the session (late): the card stays open.
    for (const runId of [noticeRun, answerRun]) {
      h.fake.emitChat(sessionKey, runId, { state: "status", phase: "starting_model" });
      h.fake.emitChat(sessionKey, runId, { state: "delta", deltaText: "Noted." });
      h.fake.emitChat(sessionKey, runId, { state: "final" });
    }
    await settle(h);
    expect(tab.closed.filter((c) => c.askId === open.id)).toEqual([]);
    expect(h.server.broker.getPending(open.id)?.status).toBe("pending");

    // 5. Control: a run we did not start does close it.
    h.fake.emitChat(sessionKey, newRun("user"), { state: "status", phase: "preparing_workspace" });
    expect(await tab.waitForClose(open.id)).toMatchObject({ reason: "answered-elsewhere" });
  });

  it("a run on another chat of the same agent leaves the card alone", async () => {
    const h = await boot();
    const { tab, card } = await cardOn(h, "text", "7-character deltas (cumulative message)");
    h.fake.emitChat(keyOf(newChat()), newRun("user"), {
      state: "status",
      phase: "preparing_workspace",
    });
    await settle(h);
    expect(tab.closed).toEqual([]);
    expect(h.server.broker.getPending(card.id)?.status).toBe("pending");
  });

  it("another agent's sessions are ignored: never asked, and its runs close nothing", async () => {
    const h = await boot();
    const chatId = newChat();
    const tab = await openTabOn(h, chatId);
    const otherKey = keyOf(chatId, "other");
    // Another agent's prompt, on a session whose chat id is the one the tab views.
    streamReply(
      h.fake,
      otherKey,
      newRun(),
      PROMPTS.choice,
      "7-character deltas (cumulative message)",
    );
    // A record claiming agent "other" on a dev-looking key is not ours either.
    h.fake.emitChat(keyOf(chatId), newRun(), {
      state: "final",
      deltaText: PROMPTS.text,
      agentId: "other",
    });
    await settle(h);
    expect(tab.shown).toEqual([]);
    expect(h.watcher.changed.filter((a) => a.chatId === chatId)).toEqual([]);

    // A card of our agent on the chat stays open while the other agent's runs go on.
    streamReply(
      h.fake,
      keyOf(chatId),
      newRun(),
      PROMPTS.choice,
      "7-character deltas (cumulative message)",
    );
    const card = await cardFor(tab, keyOf(chatId));
    h.fake.emitChat(otherKey, newRun("user"), { state: "status", phase: "preparing_workspace" });
    await settle(h);
    expect(tab.closed).toEqual([]);
    expect(h.server.broker.getPending(card.id)?.status).toBe("pending");
    await settle(h);
    expect(chatSendRequests(h, otherKey)).toEqual([]);
  });
});
