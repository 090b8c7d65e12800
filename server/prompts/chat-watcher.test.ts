// The chat watcher on the real broker (in-memory store and presence, a ManualClock): the Gateway's
// `chat` frames of a run, checked and turned into run updates as the Gateway adapter does, become
// text-prompt asks; runs that move on end them; an unanswered secret prompt tells the agent once.
import type { ChatEvent } from "@openclaw/gateway-protocol";
import { describe, expect } from "vitest";
import { SECRET_CANCELLED_MESSAGE, SECRET_NOT_RECEIVED_MESSAGE } from "../../lib/answers.ts";
import type { Ask } from "../../lib/ask.ts";
import { ChatKeyPattern, DEFAULT_SESSION_KEY_PATTERN } from "../../lib/session-key.ts";
import { approval, question, textPrompt } from "../../test/support/ask-fixtures.ts";
import { brokerTest, settled, tab } from "../../test/support/broker-harness.ts";
import {
  chatFrames,
  expectCard,
  type Mode,
  MODES,
  PROMPT_KINDS,
  type PromptKind,
  PROMPTS,
  questionsOf,
  TRIGGER,
} from "../../test/support/text-prompts.ts";
import type { AskBroker } from "../broker/broker.ts";
import { Emitter } from "../events.ts";
import { runUpdate } from "../gateway/intake.ts";
import { checkChatEvent } from "../gateway/records.ts";
import { type AgentRuns, ChatWatcher, type RunEvents, type RunUpdate } from "./chat-watcher.ts";

const TIMEOUT_MS = 240_000;
const keyOf = (chatId: string) => `agent:dev:openwebui:${chatId}`;

/** The agent's runs as the Gateway adapter reports them; records what the agent is told. */
class ScriptedRuns extends Emitter<RunEvents> implements AgentRuns {
  readonly notified: { askId: string; message: string }[] = [];
  /** The next notice fails with this. */
  failNext: Error | null = null;

  async notify(ask: Ask, message: string): Promise<void> {
    const failure = this.failNext;
    this.failNext = null;
    if (failure) throw failure;
    this.notified.push({ askId: ask.id, message });
  }

  /** The Gateway's frames, each checked against its schema, as the Gateway adapter passes them on. */
  stream(frames: ChatEvent[]): void {
    for (const frame of frames) {
      const checked = checkChatEvent(frame);
      if (!checked.ok) throw new Error(`the Gateway would not send this frame: ${checked.error}`);
      this.update(runUpdate(checked.value));
    }
  }

  /** A whole run of `reply` on the chat's session. */
  reply(
    chatId: string,
    runId: string,
    reply: string,
    mode: Mode = "one character per delta (cumulative message)",
  ): void {
    this.stream(chatFrames(keyOf(chatId), runId, reply, mode));
  }

  update(update: RunUpdate): void {
    this.emit("run:update", update);
  }
}

/** The broker harness's test, with the watcher on it (started for every test, stopped after). */
const it = brokerTest
  .extend("runs", () => new ScriptedRuns())
  .extend("logs", () => [] as string[])
  .extend("watcher", { auto: true }, ({ broker, runs, clock, logs }, { onCleanup }) => {
    const watcher = new ChatWatcher({
      broker,
      runs,
      chatKeys: new ChatKeyPattern(DEFAULT_SESSION_KEY_PATTERN, "dev"),
      agentId: "dev",
      clock,
      timeoutMs: TIMEOUT_MS,
      log: (line) => logs.push(line),
    });
    onCleanup(() => watcher.stop());
    return watcher;
  });

describe("ChatWatcher: a reply that ends with a prompt becomes a text-prompt ask (docs/ARCHITECTURE.md#text-prompts)", () => {
  it("on the session's chat, with the run, the agent and a timeout; the same reply again is the same ask", async ({
    clock,
    broker,
    runs,
    tabs,
  }) => {
    await broker.view(tab("t1"), "c1");
    clock.advance(5_000);
    runs.reply("c1", "run-a", PROMPTS.choice);
    await settled();
    const [card, ...more] = tabs.changes;
    expect(more).toEqual([]);
    expect(card).toMatchObject({
      source: "text-prompt",
      chatId: "c1",
      sessionKey: keyOf("c1"),
      runId: "run-a",
      agentId: "dev",
      createdAt: clock.now(),
      expiresAt: clock.now() + TIMEOUT_MS,
    });
    expect(card!.id).toMatch(/^prompt:[0-9a-f]{32}$/);
    expect(card!.textPrompt).toMatchObject({ continues: "run", form: "choice" });
    expect(card).not.toHaveProperty("replyId");
    expect(tabs.shownOn("t1")).toEqual([card!.id]);
    // The Gateway sends the reply again (a reconnect): one ask, shown once.
    runs.reply("c1", "run-a", PROMPTS.choice, "one final snapshot");
    await settled();
    expect(broker.pendingAsks.map((ask) => ask.id)).toEqual([card!.id]);
    expect(tabs.shownOn("t1")).toEqual([card!.id]);
  });

  it("a /v1 reply's prompt is that reply's, answered in its chat", async ({
    broker,
    runs,
    tabs,
  }) => {
    runs.stream(
      chatFrames(
        "agent:dev:openai-user:openwebui:c1:m1",
        "chatcmpl_1",
        PROMPTS.text,
        "one final snapshot",
      ),
    );
    await settled();
    expect(tabs.changes[0]).toMatchObject({
      chatId: "c1",
      replyId: "m1",
      textPrompt: { continues: "chat" },
    });
    expect(broker.pendingAsks).toHaveLength(0); // no tab had the chat open: it ended as text
  });

  it("a reply without a prompt, or one the model took back, asks nothing", async ({
    broker,
    runs,
    tabs,
  }) => {
    await broker.view(tab("t1"), "c1");
    runs.reply("c1", "run-a", "Done: the tests pass.");
    runs.stream([
      ...chatFrames(
        keyOf("c1"),
        "run-b",
        PROMPTS.choice,
        "one character per delta (cumulative message)",
      ).slice(0, -1),
      {
        runId: "run-b",
        sessionKey: keyOf("c1"),
        agentId: "dev",
        state: "final",
        message: { role: "assistant", content: [{ type: "text", text: "Never mind." }] },
        seq: 999,
      },
    ]);
    await settled();
    expect(tabs.changes).toEqual([]);
  });
});

describe("text prompts: every way the Gateway streams a reply gives the same card", () => {
  for (const mode of MODES) {
    for (const kind of PROMPT_KINDS) {
      it(`${kind} prompt, ${mode}`, async ({ broker, runs, tabs }) => {
        await broker.view(tab("t1"), "c1");
        runs.reply("c1", "run-1", PROMPTS[kind], mode);
        await settled();
        const [card, ...more] = tabs.changes;
        expect(more).toEqual([]);
        expect(card).toMatchObject({
          kind: kind === "secret" ? "secret" : "question",
          source: "text-prompt",
          chatId: "c1",
          sessionKey: keyOf("c1"),
          agentId: "dev",
          runId: "run-1",
          status: "pending",
        });
        expect(card!.expiresAt! - card!.createdAt).toBe(TIMEOUT_MS);
        expectCard(kind, card!);
        // Nothing of the card repeats the trigger phrase.
        expect(JSON.stringify(kind === "secret" ? card : questionsOf(card!))).not.toMatch(TRIGGER);
        expect(tabs.shownOn("t1")).toEqual([card!.id]);
      });
    }
  }
});

describe("ChatWatcher: the run moves on without the card", () => {
  /** The card of a `kind` prompt that run `runId` asked on c1, shown on tab t1. */
  async function openCard(
    { broker, runs }: { broker: AskBroker; runs: ScriptedRuns },
    kind: PromptKind = "choice",
    runId = "run-a",
  ): Promise<Ask> {
    await broker.view(tab("t1"), "c1");
    runs.reply("c1", runId, PROMPTS[kind]);
    await settled();
    const card = broker.pendingAsks.find((ask) => ask.runId === runId);
    if (!card) throw new Error("no card");
    return card;
  }

  it("a run this service did not start on the session (the user wrote) ends its text prompts as text, closed answered-elsewhere; its other asks stay", async ({
    store,
    broker,
    runs,
    tabs,
  }) => {
    const card = await openCard({ broker, runs });
    await broker.receive(question("q1", "c1"));
    runs.update({ sessionKey: keyOf("c1"), runId: "user-run", ownRun: false, state: "started" });
    await settled();
    expect(await store.get(card.id)).toMatchObject({
      status: "ended-as-text",
      resolution: { summary: expect.stringContaining("Which database?") },
    });
    expect(tabs.closes("t1", card.id)).toMatchObject([{ reason: "answered-elsewhere" }]);
    expect(broker.getPending("q1")?.status).toBe("pending");
  });

  it("the prompt's own run, this service's runs (an answer, a notice) and runs on other sessions end nothing", async ({
    broker,
    runs,
    tabs,
  }) => {
    const card = await openCard({ broker, runs });
    const started = (sessionKey: string, runId: string, ownRun: boolean): RunUpdate => ({
      sessionKey,
      runId,
      ownRun,
      state: "started",
    });
    runs.update(started(keyOf("c1"), "run-a", false));
    runs.update(started(keyOf("c1"), `${card.id}:answer`, true));
    runs.update(started(keyOf("c1"), `${card.id}:notice`, true));
    runs.update(started(keyOf("c2"), "user-run", false));
    await settled();
    expect(tabs.closes("t1", card.id)).toEqual([]);
    expect(broker.getPending(card.id)?.status).toBe("pending");
  });

  it("a stopped run's approvals end as stopped (its tool calls will never run); other runs' and its questions stay", async ({
    store,
    broker,
    runs,
  }) => {
    await broker.receive(approval("mine", "c1", { runId: "run-x" }));
    await broker.receive(approval("other-run", "c1", { runId: "run-y" }));
    await broker.receive(question("question", "c1", { runId: "run-x" }));
    runs.update({ sessionKey: keyOf("c1"), runId: "run-x", ownRun: false, state: "stopped" });
    await settled();
    expect(await store.get("mine")).toMatchObject({
      status: "cancelled",
      resolution: { summary: "Stopped: the reply ended before an answer" },
    });
    expect(broker.pendingAsks.map((ask) => ask.id)).toEqual(["other-run", "question"]);
  });

  it("runs that never end do not pile up: past 1000 the oldest is forgotten, and its late final asks nothing", async ({
    broker,
    runs,
  }) => {
    const deltas = (runId: string) =>
      chatFrames(
        keyOf("c1"),
        runId,
        PROMPTS.choice,
        "7-character deltas (cumulative message)",
      ).slice(0, -1);
    await broker.view(tab("t1"), "c1");
    runs.stream(deltas("oldest"));
    runs.stream(deltas("kept"));
    for (let i = 0; i < 999; i++)
      runs.update({
        sessionKey: keyOf("c2"),
        runId: `filler-${i}`,
        ownRun: true,
        state: "started",
      });
    for (const runId of ["kept", "oldest"])
      runs.update({ sessionKey: keyOf("c1"), runId, ownRun: false, state: "final", text: null });
    await settled();
    expect(broker.pendingAsks.map((ask) => ask.runId)).toEqual(["kept"]);
  });

  it("a card answered through the broker: a typed option number reaches the agent as the label; an empty answer is refused, nothing is sent, the card stays", async ({
    channel,
    broker,
    runs,
    tabs,
  }) => {
    const card = await openCard({ broker, runs });
    expect(await broker.answer(tab("t1"), card.id, { type: "text", text: "   " })).toMatchObject({
      ok: false,
      error: { code: "INVALID" },
    });
    expect(channel.delivered).toEqual([]);
    expect(broker.getPending(card.id)?.status).toBe("pending");
    expect(await broker.answer(tab("t1"), card.id, { type: "text", text: "2" })).toEqual({
      ok: true,
      status: "answered",
    });
    expect(channel.delivered).toEqual([
      { askId: card.id, reply: { type: "message", text: "SQLite" } },
    ]);
    await settled();
    expect(tabs.closes("t1", card.id)).toMatchObject([{ reason: "answered", summary: "SQLite" }]);
  });
});

describe("ChatWatcher: a text-prompt secret that ends unanswered tells the agent once", () => {
  it("no tab has the chat: it ends as text at once and the agent is told no secret was received, once, even when the reply comes again", async ({
    runs,
  }) => {
    runs.reply("c1", "run-a", PROMPTS.secret);
    await settled();
    runs.reply("c1", "run-a", PROMPTS.secret, "one final snapshot");
    await settled();
    expect(runs.notified.map((notice) => notice.message)).toEqual([SECRET_NOT_RECEIVED_MESSAGE]);
  });

  it("its card times out: told once, at the timeout and not before", async ({
    clock,
    store,
    broker,
    runs,
  }) => {
    await broker.view(tab("t1"), "c1");
    runs.reply("c1", "run-a", PROMPTS.secret);
    await settled();
    const [dialog] = broker.pendingAsks;
    clock.advance(TIMEOUT_MS - 1);
    await settled();
    expect(runs.notified).toEqual([]);
    clock.advance(1);
    await settled();
    expect((await store.get(dialog!.id))?.status).toBe("ended-as-text");
    clock.advance(TIMEOUT_MS);
    await settled();
    expect(runs.notified).toEqual([{ askId: dialog!.id, message: SECRET_NOT_RECEIVED_MESSAGE }]);
  });

  it("not told: a question prompt that ended as text, a secret cancelled on its card (the cancel told it), a /v1 reply's secret", async ({
    channel,
    broker,
    runs,
    tabs,
  }) => {
    runs.reply("c2", "run-question", PROMPTS.choice);
    await broker.view(tab("t1"), "c1");
    runs.reply("c1", "run-cancelled", PROMPTS.secret);
    await settled();
    const dialog = broker.pendingAsks.find((ask) => ask.runId === "run-cancelled")!;
    expect(await broker.answer(tab("t1"), dialog.id, { type: "cancel" })).toMatchObject({
      ok: true,
      status: "cancelled",
    });
    runs.stream(
      chatFrames(
        "agent:dev:openai-user:openwebui:c3:m1",
        "chatcmpl_1",
        PROMPTS.secret,
        "one final snapshot",
      ),
    );
    await settled();
    expect(
      tabs.changes.filter((ask) => ask.status !== "pending").map((ask) => [ask.runId, ask.status]),
    ).toEqual([
      ["run-question", "ended-as-text"],
      ["run-cancelled", "cancelled"],
      ["chatcmpl_1", "ended-as-text"],
    ]);
    expect(channel.delivered).toEqual([
      { askId: dialog.id, reply: { type: "message", text: SECRET_CANCELLED_MESSAGE } },
    ]);
    expect(runs.notified).toEqual([]);
  });

  it("a notice that fails is logged, and the watcher goes on", async ({ runs, logs }) => {
    runs.failNext = new Error("the Gateway is busy");
    runs.reply("c1", "run-a", PROMPTS.secret);
    runs.reply("c2", "run-b", PROMPTS.secret);
    await settled();
    expect(logs).toEqual([
      expect.stringMatching(/^notifying about ask prompt:\w+ failed: the Gateway is busy$/),
    ]);
    expect(runs.notified).toHaveLength(1);
  });

  it("once stopped, it asks nothing and tells the agent nothing", async ({
    broker,
    runs,
    tabs,
    watcher,
  }) => {
    watcher.stop();
    await broker.view(tab("t1"), "c1");
    runs.reply("c1", "run-a", PROMPTS.choice);
    await broker.receive(textPrompt("tp1", "c2", "secret"));
    await settled();
    expect(tabs.shownOn("t1")).toEqual([]);
    expect(runs.notified).toEqual([]);
  });
});
