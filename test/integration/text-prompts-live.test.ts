import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import {
  newChat,
  sessionKeyOf as keyOf,
  startOnGateway,
  stopOnGateway,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import {
  fetchStubRequests,
  isInternalContext,
  lastUserMessageIndex,
  messageText,
  parseStubScript,
  type RecordedRequest,
  stubScript,
} from "../support/stub-model.ts";
import { openTab, type Tab, type TestServer } from "../support/tabs.ts";

/**
 * Text prompts end to end against the REAL OpenClaw Gateway running live agent turns on the
 * scripted stub model: the model streams a reply with `OpenClaw needs input:`, the Gateway sends it
 * as `chat` events, the tab viewing the chat gets the card, and the answer goes back with
 * `chat.send` so the run continues: the model's next request carries it as the user's message.
 *
 * The Gateway wraps user text (a timestamp prefix, a trailing `Runtime: ...` line) and adds an
 * internal context message, so model-side checks use `toContain`. Live runs take seconds (the
 * first on a fresh Gateway up to ~12 s): generous timeouts.
 */

const stubModelUrl = inject("stubModelUrl");

const LIVE_TIMEOUT_MS = 90_000;
const WAIT_MS = 60_000;
const CHOICE_REPLY =
  "Sure.\nOpenClaw needs input: Which database?\n1. Postgres - needs a server\n2. SQLite";

/** The person on the chat: sends messages to the session as Open WebUI would. */
let user: OperatorConnection;
let server: TestServer;
/** An owner tab on `asks:watch` (the dashboard feed). */
let watcher: Tab;
const { tab: tabOn } = useTabs({ server: () => server });

/** The user (or an Open WebUI pipe) sends a message to the session; returns the run id. */
async function userSends(sessionKey: string, message: string): Promise<string> {
  const idempotencyKey = `user-${randomUUID()}`;
  const reply = await user.request<{ runId: string; status: string }>("chat.send", {
    sessionKey,
    message,
    idempotencyKey,
  });
  expect(reply).toMatchObject({ status: "started" });
  return reply.runId;
}

/** A run whose model streams `reply` in 7-character chunks; `tag` finds its model requests. */
function scripted(reply: string, tag: string): string {
  return stubScript({ reply, chunkSize: 7, tag });
}

async function waitForCard(tab: Tab, sessionKey: string): Promise<Ask> {
  return tab.waitFor(
    () => tab.shown.find((a) => a.sessionKey === sessionKey && a.source === "text-prompt"),
    `a text-prompt card for ${sessionKey}`,
    WAIT_MS,
  );
}

async function waitForClose(tab: Tab, askId: string) {
  return tab.waitFor(
    () => tab.closed.find((c) => c.askId === askId),
    `ask:close ${askId}`,
    WAIT_MS,
  );
}

/** The user's own words in a model request (the last user message that is not the Gateway's context). */
function lastUserText(request: RecordedRequest): string {
  const messages = request.body.messages ?? [];
  return messageText(messages[lastUserMessageIndex(messages)]);
}

/** Everything the user said in the conversation up to a model request (the Gateway's context left out). */
function userWords(request: RecordedRequest): string[] {
  return (request.body.messages ?? [])
    .filter((m) => m.role === "user" && !isInternalContext(m))
    .map(messageText);
}

function pollStub<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await read();
      if (value === undefined) throw new Error(`timed out waiting for ${what}`);
      return value;
    },
    { timeout: WAIT_MS, interval: 200 },
  );
}

beforeAll(async () => {
  expect(stubModelUrl, "the integration globalSetup provides a stub model").not.toBe("");
  ({ requester: user, server } = await startOnGateway({ requesterName: "open-webui-user" }));
  watcher = await openTab(server.url, await server.token("owner"));
  expect(await watcher.send("asks:watch", {})).toEqual({ ok: true });
});

afterAll(async () => {
  watcher?.close();
  await stopOnGateway({ server, requester: user });
});

describe("text prompts on the real Gateway with a live agent run", () => {
  it(
    "the tab viewing the chat gets a choice card; answering `2` reaches the model as the next user message",
    async () => {
      const chatId = newChat("tp-live");
      const sessionKey = keyOf(chatId);
      const tag = `choice-${randomUUID()}`;
      const tab = await tabOn(chatId);
      const runId = await userSends(sessionKey, scripted(CHOICE_REPLY, tag));

      const card = await waitForCard(tab, sessionKey);
      expect(card).toMatchObject({
        kind: "question",
        source: "text-prompt",
        chatId,
        sessionKey,
        agentId: TEST_AGENT,
        runId,
        status: "pending",
      });
      expect(card.kind === "question" && card.questions).toHaveLength(1);
      const question = card.kind === "question" ? card.questions[0]! : null;
      expect([question?.header, question?.question].filter(Boolean).join("\n")).toBe(
        "Which database?",
      );
      expect(question?.options).toEqual([
        { label: "Postgres", description: "needs a server" },
        { label: "SQLite" },
      ]);
      expect(question?.multiSelect).toBe(false);

      expect(
        await tab.send("ask:answer", { askId: card.id, answer: { type: "text", text: "2" } }),
      ).toEqual({ ok: true, status: "answered" });
      expect(await waitForClose(tab, card.id)).toEqual({
        askId: card.id,
        reason: "answered",
        summary: "SQLite",
      });

      // The run continues: a later model request (same conversation) has the answer as the user's words.
      const answered = await pollStub(async () => {
        const requests = await fetchStubRequests(stubModelUrl, tag);
        return requests.find(
          (r) => parseStubScript(lastUserText(r)) === null && lastUserText(r).includes("SQLite"),
        );
      }, "a model request carrying the answer");
      expect(lastUserText(answered)).toContain("SQLite");
      expect(lastUserText(answered)).not.toContain("Postgres");
      const first = (await fetchStubRequests(stubModelUrl, tag))[0]!;
      expect(answered.receivedAtMs).toBeGreaterThan(first.receivedAtMs);

      // The answer's own run (this service started it) closes nothing and asks nothing new here.
      expect((await server.store.get(card.id))?.status).toBe("answered");
      expect(tab.shown.filter((a) => a.sessionKey === sessionKey).map((a) => a.id)).toEqual([
        card.id,
      ]);
    },
    LIVE_TIMEOUT_MS,
  );

  it(
    "with no tab viewing the chat the ask ends as text at once and nothing is sent to the session",
    async () => {
      const chatId = newChat("tp-live");
      const sessionKey = keyOf(chatId);
      const tag = `no-tab-${randomUUID()}`;
      const elsewhere = await tabOn(newChat("tp-live")); // a tab, but on another chat
      await userSends(sessionKey, scripted(CHOICE_REPLY, tag));

      const ended = await watcher.waitFor(
        () => watcher.changed.find((a) => a.sessionKey === sessionKey && a.status !== "pending"),
        "the ask on the dashboard feed",
        WAIT_MS,
      );
      expect(ended).toMatchObject({ source: "text-prompt", chatId, status: "ended-as-text" });
      expect((await server.store.get(ended.id))?.status).toBe("ended-as-text");
      expect(
        watcher.changed.filter((a) => a.sessionKey === sessionKey).map((a) => a.status),
      ).not.toContain("pending");
      expect(elsewhere.shown).toEqual([]);

      // A tab opening the chat later gets nothing: the prompt stays in the reply as text. The broker
      // shows a chat's pending cards before it acks `chat:view`, so the ack is the barrier.
      const late = await tabOn(chatId);
      expect(late.shown).toEqual([]);

      // Nothing reached the agent: the model was asked once (the script), not again with an answer.
      // Barrier: the user's next message in the session. Anything this service had sent to the
      // session came before it, so the model request for it holds the whole conversation so far.
      const barrierTag = `barrier-${randomUUID()}`;
      const barrierRun = await userSends(sessionKey, scripted("Noted.", barrierTag));
      await user.waitForEvent(
        "chat",
        (p) => p.runId === barrierRun && p.state === "final",
        WAIT_MS,
      );
      const [barrier] = await fetchStubRequests(stubModelUrl, barrierTag);
      expect(barrier && userWords(barrier).map((text) => parseStubScript(text)?.tag)).toEqual([
        tag,
        barrierTag,
      ]);
      const beforeBarrier = (await fetchStubRequests(stubModelUrl, tag)).filter(
        (r) => !JSON.stringify(r.body).includes(barrierTag),
      );
      expect(beforeBarrier).toHaveLength(1);
      expect(late.shown).toEqual([]);
    },
    LIVE_TIMEOUT_MS,
  );

  it(
    "a message the user sends to the session while the card is open closes it with answered-elsewhere",
    async () => {
      const chatId = newChat("tp-live");
      const sessionKey = keyOf(chatId);
      const tag = `typed-${randomUUID()}`;
      const tab = await tabOn(chatId);
      await userSends(sessionKey, scripted(CHOICE_REPLY, tag));
      const card = await waitForCard(tab, sessionKey);

      const typed = `Let me think about the database first (${tag}).`;
      await userSends(sessionKey, typed);
      expect(await waitForClose(tab, card.id)).toMatchObject({
        askId: card.id,
        reason: "answered-elsewhere",
      });
      expect((await server.store.get(card.id))?.status).toBe("ended-as-text");
      expect(
        await tab.send("ask:answer", { askId: card.id, answer: { type: "text", text: "2" } }),
      ).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });

      // The model got the user's own words, and no answer from this service.
      const requests = await pollStub(async () => {
        const all = await fetchStubRequests(stubModelUrl, tag);
        return all.some((r) => lastUserText(r).includes("Let me think about the database first"))
          ? all
          : undefined;
      }, "the model request with the user's message");
      expect(
        requests
          .map(lastUserText)
          .filter((text) => parseStubScript(text) === null && text.includes("SQLite")),
      ).toEqual([]);
    },
    LIVE_TIMEOUT_MS,
  );
});
