// Replies on the Gateway's OpenAI-compatible endpoint (`POST /v1/chat/completions`), the way OpenClaw's
// own docs connect Open WebUI, against the REAL Gateway with the stub model behind it. Each reply is
// one streamed request, whose OpenAI `user` the Open WebUI filter sets to `openwebui:<chat>:<reply>`
// and whose start it reports (`POST /openwebui/replies`, signed) before the request goes out; both are
// done here as the filter does them. The reply's widget is a tab with that reply's embed token.
// What the real Open WebUI shows of all this is tested in test/e2e/open-webui-real.test.ts.
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { SECRET_MASKED_ENTRY_MESSAGE } from "../../lib/answers.ts";
import type { ReplyClaim } from "../../server/broker/ports.ts";
import {
  FILTER_SIGNATURE_HEADER,
  filterKey,
  signFilterRequest,
} from "../../server/http/filter-route.ts";
import { replySessionHeader, SESSION_HEADER } from "../../server/openwebui/plans.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import {
  newChat,
  startOnGateway,
  stopOnGateway,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import {
  type ChatCompletionStream,
  type ChatMessage,
  streamChatCompletion,
} from "../support/openai-http.ts";
import {
  fetchStubRequests,
  messageText,
  stubScript,
  type StubTool,
} from "../support/stub-model.ts";
import {
  openTab,
  type Tab,
  TEST_AUTH_SECRET,
  TEST_OWNER,
  type TestServer,
} from "../support/tabs.ts";

const gatewayUrl = inject("gatewayUrl");
const gatewayToken = inject("gatewayToken");
const stubModelUrl = inject("stubModelUrl");

let server: TestServer;
/** Sees the Gateway's events as any operator client does. */
let watcher: OperatorConnection;
let markers: string;
const { tab } = useTabs({ server: () => server });

beforeAll(async () => {
  ({ requester: watcher, server } = await startOnGateway({ requesterName: "watcher" }));
  markers = mkdtempSync(join(tmpdir(), "asks-openai-path-"));
});

afterAll(async () => {
  await stopOnGateway({ server, requester: watcher });
  rmSync(markers, { recursive: true, force: true });
});

type Reply = { chatId: string; reply: ReplyClaim; tag: string };

/** A reply of a chat as the filter's inlet sees it start: told to the server before the request goes out. */
async function startReply(userId = TEST_OWNER, chatId = newChat("v1")): Promise<Reply> {
  const reply = { msg: `msg-${randomUUID()}`, mts: Date.now() };
  const body = JSON.stringify({ chatId, replyId: reply.msg, userId, startedAt: reply.mts });
  const response = await fetch(`${server.url}/openwebui/replies`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      [FILTER_SIGNATURE_HEADER]: signFilterRequest(filterKey(TEST_AUTH_SECRET), body, Date.now()),
    },
    body,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return { chatId, reply, tag: `v1-${randomUUID()}` };
}

/** The reply's request, as Open WebUI sends it with the filter's `user`; the stub follows `script`. */
function request(at: Reply, script: Parameters<typeof stubScript>[0]): ChatCompletionStream {
  return streamChatCompletion({
    gatewayUrl,
    token: gatewayToken,
    model: `openclaw/${TEST_AGENT}`,
    user: `openwebui:${at.chatId}:${at.reply.msg}`,
    messages: [{ role: "user", content: stubScript({ ...script, tag: at.tag }) }],
  });
}

const widgets: Tab[] = [];
afterEach(() => {
  for (const opened of widgets.splice(0)) opened.close();
});

/** The reply's widget: a tab with an embed token of its chat and reply, viewing the chat. */
async function widget(at: Reply, userId = TEST_OWNER): Promise<Tab> {
  const opened = await server.widget(userId, at.chatId, at.reply);
  widgets.push(opened);
  expect(await opened.send("chat:view", { chatId: at.chatId })).toEqual({ ok: true });
  return opened;
}

const ASK_USER: StubTool = {
  id: "ask_user",
  args: {
    questions: [
      {
        id: "db",
        header: "Database",
        question: "Which database?",
        options: [{ label: "Postgres" }, { label: "SQLite" }],
      },
    ],
    timeoutSeconds: 300,
  },
};

/** The text the model got back from its last tool call in this reply. */
async function lastToolResult(at: Reply): Promise<string> {
  const requests = await fetchStubRequests(stubModelUrl, at.tag);
  const tools = (requests.at(-1)?.body.messages ?? []).filter((message) => message.role === "tool");
  return messageText(tools.at(-1));
}

describe("a question asked in a /v1 reply is answered in that reply", () => {
  it("shows in the widget of the reply its session names, and the answer continues the same HTTP response", async () => {
    const at = await startReply();
    const opened = await widget(at);
    const response = request(at, { tool: ASK_USER, then: "CONTINUED after the answer" });
    const card = await opened.waitForShow();
    expect(card).toMatchObject({
      kind: "question",
      chatId: at.chatId,
      replyId: at.reply.msg,
      sessionKey: `agent:${TEST_AGENT}:openai-user:openwebui:${at.chatId}:${at.reply.msg}`,
    });
    expect(card.runId).toBe(response.id());
    expect(response.text()).toBe("");

    expect(
      await opened.send("ask:answer", {
        askId: card.id,
        answer: { type: "questions", answers: { db: ["SQLite"] } },
      }),
    ).toMatchObject({ ok: true, status: "answered" });
    const done = await response.done;
    expect(done).toMatchObject({
      status: 200,
      text: "CONTINUED after the answer",
      finishReason: "stop",
    });
    expect(await lastToolResult(at)).toContain("SQLite");
    // The reply keeps its summary.
    expect((await opened.list("all")).find((ask) => ask.id === card.id)).toMatchObject({
      status: "answered",
      replyId: at.reply.msg,
      resolution: { summary: "SQLite" },
    });
  });

  it("takes a secret in the masked dialog: stored at the Gateway, never in the response or the model's requests", async () => {
    const at = await startReply();
    const opened = await widget(at);
    const value = `sk-v1-${randomUUID()}`;
    const response = request(at, {
      tool: {
        id: "secrets",
        args: {
          action: "request",
          name: "DEMO_TOKEN",
          reason: "v1 path",
          allowedHosts: ["api.example.com"],
          timeoutSeconds: 120,
        },
      },
      then: "Key stored.",
    });
    const card = await opened.waitForShow();
    expect(card).toMatchObject({ kind: "secret", source: "gateway.secret", replyId: at.reply.msg });
    expect(
      await opened.send("ask:answer", { askId: card.id, answer: { type: "secret", value } }),
    ).toEqual({ ok: true, status: "answered", outcome: "stored" });
    expect((await response.done).text).toBe("Key stored.");
    expect(await lastToolResult(at)).toContain("stored");
    expect(JSON.stringify(await fetchStubRequests(stubModelUrl, at.tag))).not.toContain(value);
  });

  it("lets a real plugin's tool run once its approval is allowed in the reply's widget", async () => {
    const at = await startReply();
    const opened = await widget(at);
    const marker = join(markers, `marker-${randomUUID()}`);
    const response = request(at, {
      tool: { id: "asks_touch_marker", args: { path: marker } },
      then: "Marker done.",
    });
    const card = await opened.waitForShow();
    expect(card).toMatchObject({
      kind: "approval",
      source: "gateway.plugin-approval",
      replyId: at.reply.msg,
    });
    expect(
      await opened.send("ask:answer", {
        askId: card.id,
        answer: { type: "decision", decision: "allow-once" },
      }),
    ).toMatchObject({ ok: true });
    expect((await response.done).text).toBe("Marker done.");
    expect(existsSync(marker)).toBe(true);
  });
});

describe("Stop on the /v1 path", () => {
  it("closes the open card when the reply's request goes away, and its summary says it was stopped", async () => {
    const at = await startReply();
    const opened = await widget(at);
    const response = request(at, { tool: ASK_USER, then: "never streamed" });
    const card = await opened.waitForShow();
    response.abort();
    expect(await opened.waitForClose(card.id)).toEqual({
      askId: card.id,
      reason: "answered-elsewhere",
      summary: "Stopped: the reply ended before an answer",
    });
    expect((await opened.list("all")).find((ask) => ask.id === card.id)).toMatchObject({
      status: "cancelled",
      replyId: at.reply.msg,
      resolution: { summary: "Stopped: the reply ended before an answer" },
    });
  });

  it("closes an approval's card the same way: the Gateway denies it for the gone request, and nothing runs", async () => {
    const at = await startReply();
    const opened = await widget(at);
    const marker = join(markers, `marker-${randomUUID()}`);
    const response = request(at, { tool: { id: "asks_touch_marker", args: { path: marker } } });
    const card = await opened.waitForShow();
    response.abort();
    expect(await opened.waitForClose(card.id)).toMatchObject({
      summary: "Stopped: the reply ended before an answer",
    });
    expect(existsSync(marker)).toBe(false);
  });
});

describe("a guest's /v1 reply", () => {
  it("never shows an approval: the first reply of a brand-new chat is denied at once, and its widget says it needs the owner", async () => {
    // The filter told the server whose chat it is before the request went out: the chat is the guest's.
    const at = await startReply("guest");
    const marker = join(markers, `marker-${randomUUID()}`);
    // No widget has opened yet: the reply ends (the tool call denied, not waiting) only because the
    // server knew whose chat it is from the reply's start.
    const done = await request(at, {
      tool: { id: "asks_touch_marker", args: { path: marker } },
      then: "Told it was denied.",
    }).done;
    expect(done.text).toBe("Told it was denied.");
    expect(await lastToolResult(at)).toContain("Denied");
    expect(existsSync(marker)).toBe(false);
    const opened = await widget(at, "guest");
    expect((await opened.list("all")).filter((ask) => ask.replyId === at.reply.msg)).toMatchObject([
      {
        kind: "approval",
        status: "denied",
        resolution: { summary: "Denied: this needs the owner's approval" },
      },
    ]);
    expect(opened.shown).toEqual([]);
  });

  it("never shows a secret request: it is cancelled at once, and the reply's open widget is told why", async () => {
    const at = await startReply("guest");
    const opened = await widget(at, "guest");
    const response = request(at, {
      tool: {
        id: "secrets",
        args: { action: "request", name: "DEMO_TOKEN", reason: "guest", timeoutSeconds: 120 },
      },
      then: "No secret.",
    });
    const close = await opened.waitFor(
      () => opened.closed.find((item) => item.reason === "denied"),
      "the refusal in the reply's widget",
    );
    expect(close.summary).toBe("Cancelled: secrets can only be entered by the owner");
    expect((await response.done).text).toBe("No secret.");
    expect(await lastToolResult(at)).toContain("cancelled");
    expect(opened.shown).toEqual([]);
  });
});

describe("a /v1 run no reply start vouches for (deny by default)", () => {
  /** A run as a temporary chat, a task or a direct call makes it: no reply start; `user` as given. */
  function unvouched(user: string | undefined, script: Parameters<typeof stubScript>[0]) {
    const tag = `v1-${randomUUID()}`;
    const response = streamChatCompletion({
      gatewayUrl,
      token: gatewayToken,
      model: `openclaw/${TEST_AGENT}`,
      ...(user === undefined ? {} : { user }),
      messages: [{ role: "user", content: stubScript({ ...script, tag }) }],
    });
    return { response, tag };
  }

  it.for([
    ["no `user` (a temporary chat, a task)", (): string | undefined => undefined],
    ["the filter's unvouched session (a task it saw)", () => `openwebui-unvouched:${randomUUID()}`],
  ] as const)(
    "%s: its approval is denied at once, nothing runs, and the dashboard says why",
    async ([, user]) => {
      const marker = join(markers, `marker-${randomUUID()}`);
      const dashboard = await tab(null);
      const started = Date.now();
      const { response, tag } = unvouched(user(), {
        tool: { id: "asks_touch_marker", args: { path: marker } },
        then: "Told it was denied.",
      });
      expect((await response.done).text).toBe("Told it was denied.");
      expect(existsSync(marker)).toBe(false);
      const requests = await fetchStubRequests(stubModelUrl, tag);
      const tools = (requests.at(-1)?.body.messages ?? []).filter((m) => m.role === "tool");
      expect(messageText(tools.at(-1))).toContain("Denied");
      const denied = (await dashboard.list("all")).find(
        (ask) => ask.kind === "approval" && ask.createdAt >= started,
      );
      expect(denied).toMatchObject({
        status: "denied",
        origin: { kind: "unvouched" },
        resolution: {
          summary:
            "Denied: no owner started this run in an Open WebUI chat (a temporary chat, a background task or a direct /v1 request)",
        },
      });
    },
  );

  it("a `user` naming the owner's chat and a reply no reply start names: denied at once, never shown in the owner's open widget", async () => {
    const at = await startReply();
    const opened = await widget(at);
    const marker = join(markers, `marker-${randomUUID()}`);
    const { response } = unvouched(`openwebui:${at.chatId}:forged-${randomUUID()}`, {
      tool: { id: "asks_touch_marker", args: { path: marker } },
      then: "Told it was denied.",
    });
    expect((await response.done).text).toBe("Told it was denied.");
    expect(existsSync(marker)).toBe(false);
    expect(opened.shown).toEqual([]);
  });
});

describe("a text prompt in a /v1 reply", () => {
  it("is answered as the person's next message in the chat: the widget gets it to submit, and the Gateway is sent nothing", async () => {
    const at = await startReply();
    const opened = await widget(at);
    const done = await request(at, {
      reply: "Almost there.\nOpenClaw needs input: Which database?\n1. Postgres\n2. SQLite",
    }).done;
    expect(done.text).toContain("OpenClaw needs input:"); // the Gateway streams it as written: the filter removes it
    const card = await opened.waitForShow();
    expect(card).toMatchObject({
      source: "text-prompt",
      replyId: at.reply.msg,
      textPrompt: { continues: "chat", fallbackText: "Which database?\n1. Postgres\n2. SQLite" },
    });

    // The dashboard cannot put the answer into the chat.
    const dashboard = await tab(null);
    expect(
      await dashboard.send("ask:answer", { askId: card.id, answer: { type: "text", text: "2" } }),
    ).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });

    const runsBefore = watcher.events
      .filter((event) => event.event === "chat" && event.payload.sessionKey === card.sessionKey)
      .map((event) => event.payload.runId);
    expect(
      await opened.send("ask:answer", { askId: card.id, answer: { type: "text", text: "2" } }),
    ).toEqual({ ok: true, status: "answered", chatMessage: "SQLite" });
    // Answered in the store; and the answer's own fetch comes after the ack: no run was started in the session.
    expect((await opened.list("all")).find((ask) => ask.id === card.id)).toMatchObject({
      status: "answered",
      resolution: { summary: "SQLite" },
    });
    const runsAfter = watcher.events
      .filter((event) => event.event === "chat" && event.payload.sessionKey === card.sessionKey)
      .map((event) => event.payload.runId);
    expect(new Set(runsAfter)).toEqual(new Set(runsBefore));
  });

  it("never takes a secret asked for in text: the dialog's one action asks the agent for masked entry, as the next message", async () => {
    const at = await startReply();
    const opened = await widget(at);
    await request(at, { reply: "OpenClaw needs input: Please paste your API key for the deploy." })
      .done;
    const card = await opened.waitForShow();
    expect(card).toMatchObject({
      kind: "secret",
      source: "text-prompt",
      textPrompt: { continues: "chat" },
    });
    const typed = await opened.send("ask:answer", {
      askId: card.id,
      answer: { type: "secret", value: "sk-never-sent" },
    });
    expect(typed).toMatchObject({ ok: false, error: { code: "INVALID" } });
    expect(JSON.stringify(typed)).not.toContain("sk-never-sent");
    expect(await opened.send("ask:answer", { askId: card.id, answer: { type: "cancel" } })).toEqual(
      {
        ok: true,
        status: "cancelled",
        outcome: "cancelled",
        chatMessage: SECRET_MASKED_ENTRY_MESSAGE,
      },
    );
  });
});

describe("the filter's endpoint", () => {
  it("records the chat's owner from its first reply, before any widget opens, and never changes it", async () => {
    const at = await startReply("alice");
    const later = await startReply("mallory", at.chatId);
    const mallory = await openTab(
      server.url,
      await server.token("mallory", at.chatId, later.reply),
    );
    widgets.push(mallory);
    expect(await mallory.send("chat:view", { chatId: at.chatId })).toMatchObject({
      ok: false,
      error: { code: "FORBIDDEN", message: "this chat belongs to another user" },
    });
    await widget(later, "alice");
  });
});

describe("which Gateway session a /v1 reply runs in", () => {
  /** Three turns of one chat as Open WebUI sends them (its whole branch each time); each turn's user message carries its own tag. */
  async function chatOfThreeTurns(userOfTurn: (turn: number) => string) {
    const chat = `sessions-${randomUUID()}`;
    const tags = [1, 2, 3].map((turn) => `${chat}-turn${turn}`);
    const history: ChatMessage[] = [];
    for (const [index, tag] of tags.entries()) {
      history.push({ role: "user", content: stubScript({ reply: `Answer ${index + 1}.`, tag }) });
      const done = await streamChatCompletion({
        gatewayUrl,
        token: gatewayToken,
        model: `openclaw/${TEST_AGENT}`,
        user: userOfTurn(index + 1),
        messages: [...history],
      }).done;
      history.push({ role: "assistant", content: done.text });
    }
    const last = (await fetchStubRequests(stubModelUrl, tags[2]))
      .at(-1)!
      .body.messages!.filter((item) => item.role !== "system");
    const text = JSON.stringify(last);
    return {
      copiesOfTurn1: text.split(tags[0]!).length - 1,
      messages: last.length,
      characters: text.length,
    };
  }

  it("one per reply (the filter's user): the model gets the chat's earlier messages once; one per chat would give it them again with each turn", async () => {
    const chat = `sessions-${randomUUID()}`;
    const perReply = await chatOfThreeTurns((turn) => `openwebui:${chat}:m${turn}`);
    const perChat = await chatOfThreeTurns(() => `openwebui:${chat}`);
    console.log(
      `the model's third request of a three-turn chat: one session per reply ${JSON.stringify(perReply)}, one per chat ${JSON.stringify(perChat)}`,
    );
    expect(perReply.copiesOfTurn1).toBe(1);
    // The session's own transcript, then Open WebUI's messages flattened into the current one: twice and more.
    expect(perChat.copiesOfTurn1).toBeGreaterThanOrEqual(2);
    expect(perChat.characters).toBeGreaterThan(perReply.characters);
  });
});

describe("a Gateway that ignores `user`: the connection's session header names the reply (27.8)", () => {
  /** The header's value as Open WebUI fills it in for one request (utils/headers.py:139-167 in 0.12.4). */
  function sessionHeader(vars: { chat?: string; message?: string; task?: string; user?: string }) {
    const values: Record<string, string> = {
      CHAT_ID: vars.chat ?? "",
      MESSAGE_ID: vars.message ?? "",
      TASK: vars.task ?? "",
      USER_ID: vars.user ?? "",
    };
    return {
      [SESSION_HEADER]: replySessionHeader(TEST_AGENT).replace(
        /\{\{(\w+)\}\}/g,
        (_, name: string) => values[name] ?? "",
      ),
    };
  }

  it("a reply's question, with no `user` in the request, shows in that reply's widget and the answer continues it", async () => {
    const at = await startReply();
    const opened = await widget(at);
    const response = streamChatCompletion({
      gatewayUrl,
      token: gatewayToken,
      model: `openclaw/${TEST_AGENT}`,
      headers: sessionHeader({ chat: at.chatId, message: at.reply.msg, user: TEST_OWNER }),
      messages: [
        {
          role: "user",
          content: stubScript({ tool: ASK_USER, then: "CONTINUED by header", tag: at.tag }),
        },
      ],
    });
    const card = await opened.waitForShow();
    expect(card).toMatchObject({
      kind: "question",
      chatId: at.chatId,
      replyId: at.reply.msg,
      sessionKey: `agent:${TEST_AGENT}:openai-user:openwebui:${at.chatId}:${at.reply.msg}:${TEST_OWNER}`,
    });
    expect(
      await opened.send("ask:answer", {
        askId: card.id,
        answer: { type: "questions", answers: { db: ["Postgres"] } },
      }),
    ).toMatchObject({ ok: true, status: "answered" });
    expect((await response.done).text).toBe("CONTINUED by header");
    expect(await lastToolResult(at)).toContain("Postgres");
  });

  it("a reply's approval is the owner's to allow in its widget; the same reply's title task is denied at once", async () => {
    const at = await startReply();
    const opened = await widget(at);
    const marker = join(markers, `marker-${randomUUID()}`);
    const run = (task: string | undefined, tag: string) =>
      streamChatCompletion({
        gatewayUrl,
        token: gatewayToken,
        model: `openclaw/${TEST_AGENT}`,
        headers: sessionHeader({ chat: at.chatId, message: at.reply.msg, user: TEST_OWNER, task }),
        // The header wins over any `user` (what a Gateway that ignores `user` does anyway).
        user: `openwebui-unvouched:${randomUUID()}`,
        messages: [
          {
            role: "user",
            content: stubScript({
              tool: { id: "asks_touch_marker", args: { path: marker } },
              then: "Marker step over.",
              tag,
            }),
          },
        ],
      });
    // Open WebUI's title task runs the chat's model on the same chat and message ids.
    const task = run("title_generation", `${at.tag}-task`);
    expect((await task.done).text).toBe("Marker step over.");
    expect(existsSync(marker)).toBe(false);
    expect(opened.shown).toEqual([]);

    const reply = run(undefined, at.tag);
    const card = await opened.waitForShow();
    expect(card).toMatchObject({ kind: "approval", chatId: at.chatId, replyId: at.reply.msg });
    expect(
      await opened.send("ask:answer", {
        askId: card.id,
        answer: { type: "decision", decision: "allow-once" },
      }),
    ).toMatchObject({ ok: true, status: "answered" });
    expect((await reply.done).text).toBe("Marker step over.");
    expect(existsSync(marker)).toBe(true);
  });
});
