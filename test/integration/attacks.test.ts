// Issue 11: the holes an attacker found in an hour against a running copy, each as a test named after
// the attack, through real sockets against the server on the real OpenClaw Gateway.
import { request as httpRequest } from "node:http";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { VIEW_ONLY_WIDGET } from "../../lib/wording.ts";
import { filterSecret } from "../../server/auth/keys.ts";
import { mintActToken, mintTabToken, secretKey } from "../../server/auth/tokens.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import {
  newChat,
  requestApproval,
  requestQuestion,
  sessionKeyOf as chatKey,
  startOnGateway,
  stopOnGateway,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import { TEST_REPLY } from "../support/replies.ts";
import { SkippingClock } from "../support/skipping-clock.ts";
import {
  openTab,
  startTestServer,
  type Tab,
  TEST_AUTH_SECRET,
  TEST_OWNER,
  type TestServer,
  waitConnected,
} from "../support/tabs.ts";

const gatewayUrl = inject("gatewayUrl");
const gatewayToken = inject("gatewayToken");

let requester: OperatorConnection;
let elsewhere: OperatorConnection;
let server: TestServer;
/** The server's clock: the rate-limit test moves it instead of waiting for a refill. */
const clock = new SkippingClock();

const { tab, openOn } = useTabs({ server: () => server });

beforeAll(async () => {
  ({ requester, elsewhere, server } = await startOnGateway({ elsewhere: true, clock }));
});

afterAll(() => stopOnGateway({ server, requester, elsewhere }));

/** A server of its own with extra configuration, stopped when `use` ends. */
async function withServer(
  env: Record<string, string>,
  use: (target: TestServer) => Promise<void>,
): Promise<void> {
  const target = await startTestServer({
    gatewayUrl,
    gatewayToken,
    env: { AGENT_ID: TEST_AGENT, ...env },
  });
  try {
    await waitConnected(target);
    await use(target);
  } finally {
    await target.dispose();
  }
}

/** A Socket.IO connection attempt: resolves with the socket once connected, or the connect_error message. */
function connect(
  url: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<{ ok: true; close(): void } | { ok: false; message: string }> {
  const socket = io(url, {
    auth: { token },
    transports: ["websocket"],
    extraHeaders: headers,
    reconnection: false,
    forceNew: true,
  });
  return new Promise((resolve) => {
    socket.once("connect", () => resolve({ ok: true, close: () => socket.close() }));
    socket.once("connect_error", (error) => {
      socket.close();
      resolve({ ok: false, message: error.message });
    });
  });
}

/** An engine.io handshake over HTTP long-polling with these headers: the status the server answers. */
function handshakeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = httpRequest(
      `${url}/socket.io/?EIO=4&transport=polling`,
      { headers },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    call.once("error", reject);
    call.end();
  });
}

/** A bare engine.io WebSocket that speaks Socket.IO packets by hand, recording what it receives. */
async function rawEngineSocket(
  url: string,
): Promise<{ socket: WebSocket; frames: string[]; closed: Promise<void> }> {
  const socket = new WebSocket(
    `${url.replace(/^http/, "ws")}/socket.io/?EIO=4&transport=websocket`,
  );
  const frames: string[] = [];
  socket.addEventListener("message", (event) => frames.push(String(event.data)));
  const closed = new Promise<void>((resolve) => socket.addEventListener("close", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve());
    socket.addEventListener("error", () =>
      reject(new Error("raw engine.io socket failed to open")),
    );
  });
  return { socket, frames, closed };
}

/** A plugin's approval to deploy, asked in the chat's session. */
const requestDeploy = (chatId: string) =>
  requestApproval(requester, elsewhere, "plugin", {
    pluginId: "deploy-kit",
    title: "Deploy",
    description: "Deploys the build",
    toolName: "deploy",
    sessionKey: chatKey(chatId),
    timeoutMs: 120_000,
  });

describe("authorization", () => {
  it("1. embed tokens read other users' history: mallory's embed token for alice's chat lists none of alice's asks or answers", async () => {
    const aliceChat = newChat();
    const alice = await tab(aliceChat, "alice");
    const { id: answered } = await requestQuestion(requester, chatKey(aliceChat));
    await alice.waitForShow((a) => a.id === answered);
    expect(
      await alice.send("ask:answer", {
        askId: answered,
        answer: { type: "text", text: "alice's private answer" },
      }),
    ).toEqual({ ok: true, status: "answered" });
    const { id: pending } = await requestQuestion(requester, chatKey(aliceChat));
    await alice.waitForShow((a) => a.id === pending);

    const mallory = await openOn(server, null, "mallory", aliceChat);
    for (const status of ["all", "answered", "pending"] as const) {
      // tab.list fails the test unless the ack is ok.
      const listed = await mallory.list(status);
      expect(
        listed.filter((ask: Ask) => ask.chatId === aliceChat),
        `asks:list ${status} leaks alice's chat`,
      ).toEqual([]);
    }
    // alice's own widget and her unclaimed token (an Open WebUI session) still list her history.
    expect((await alice.list("all")).map((ask: Ask) => ask.id)).toEqual(
      expect.arrayContaining([answered, pending]),
    );
    const aliceSession = await openOn(server, null, "alice");
    expect((await aliceSession.list("answered")).map((ask: Ask) => ask.id)).toContain(answered);
  });

  it("2. chat squatting: an unclaimed token views the owner's chat first, and the owner's approvals are not auto-denied", async () => {
    const chatId = newChat();
    const squatter = await openOn(server, null, "mallory");
    const squat = await squatter.send("chat:view", { chatId });
    // The real user (here the owner) opens the chat from its widget; an approval is then asked there.
    const widget = await openOn(server, chatId, "owner", chatId);
    const approval = requestDeploy(chatId);
    const { id } = await approval.requested;
    const outcome = await widget.waitFor(
      async () =>
        widget.shown.some((a) => a.id === id)
          ? "shown"
          : ((await server.store.get(id))?.resolution?.summary ?? undefined),
      "the approval to be shown or ended",
    );
    expect(outcome, "the owner's approval was auto-denied in a squatted chat").toBe("shown");
    expect(squat).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    expect(await server.store.chatOwner(chatId)).toBe("owner");
    expect(
      await widget.send("ask:answer", {
        askId: id,
        answer: { type: "decision", decision: "deny" },
      }),
    ).toEqual({ ok: true, status: "answered" });
  });

  it("5. FORBIDDEN vs NOT_FOUND tells a caller that an ask id exists: another user's pending ask reads as no such ask", async () => {
    const aliceChat = newChat();
    const alice = await tab(aliceChat, "alice");
    const { id } = await requestQuestion(requester, chatKey(aliceChat));
    await alice.waitForShow((a) => a.id === id);
    const mallory = await tab(newChat(), "mallory");
    const existing = await mallory.send("ask:answer", { askId: id, answer: { type: "cancel" } });
    const missing = await mallory.send("ask:answer", {
      askId: `${id}-missing`,
      answer: { type: "cancel" },
    });
    expect(existing).toEqual(missing);
    expect(existing).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
    expect(server.broker.getPending(id)?.status).toBe("pending");
  });

  it("28.2 a token stored in a chat never approves: from a share's copy of the widget URL a pending approval is seen, not decided; the person's own act token decides it", async () => {
    const chatId = newChat();
    // The owner's own widget, as the filter put it on the reply, and its act token as the filter
    // handed it to the owner's page; the reader has only what the message stores (a share copies it).
    const own = await server.widget(TEST_OWNER, chatId, TEST_REPLY);
    const reader = await server.widget(TEST_OWNER, chatId, TEST_REPLY, { act: false });
    expect(await own.send("chat:view", { chatId })).toEqual({ ok: true });
    const approval = requestDeploy(chatId);
    const { id: approvalId } = await approval.requested;
    await own.waitForShow((ask) => ask.id === approvalId);
    // The reader sees it (it may view the chat) but cannot decide it.
    expect((await reader.list()).map((ask) => ask.id)).toContain(approvalId);
    const refused = { ok: false, error: { code: "FORBIDDEN", message: VIEW_ONLY_WIDGET } };
    const allow = { type: "decision", decision: "allow-once" } as const;
    expect(await reader.send("ask:answer", { askId: approvalId, answer: allow })).toEqual(refused);
    const deny = { type: "decision", decision: "deny" } as const;
    expect(await reader.send("ask:answer", { askId: approvalId, answer: deny })).toEqual(refused);
    // Nor with an act token of another reply, another user, another chat, or the filter's key.
    const otherReply = { msg: "another-reply", mts: TEST_REPLY.mts };
    const wrongActs = [
      await server.actToken(TEST_OWNER, chatId, otherReply),
      await server.actToken("mallory", chatId),
      await server.actToken(TEST_OWNER, newChat()),
      await mintTabToken(secretKey(filterSecret(TEST_AUTH_SECRET)), {
        userId: TEST_OWNER,
        chat: chatId,
        reply: TEST_REPLY,
        ttlSeconds: 3600,
        scope: "act",
      }),
      // The widget's own token, sent as if it were an act token.
      await server.token(TEST_OWNER, chatId),
    ];
    for (const act of wrongActs) {
      const ack = await reader.send("ask:answer", { askId: approvalId, answer: allow, act });
      expect(ack).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    }
    expect(server.broker.getPending(approvalId)?.status).toBe("pending");
    // The page that sent the message answers.
    expect(await own.send("ask:answer", { askId: approvalId, answer: allow })).toEqual({
      ok: true,
      status: "answered",
    });
    expect(await approval.decision).toMatchObject({ decision: "allow-once" });
    // A bad or expired act token counts as none: a question, which needs none, is still answered.
    const { id: question } = await requestQuestion(requester, chatKey(chatId));
    await own.waitForShow((ask) => ask.id === question);
    const expired = await mintActToken(secretKey(TEST_AUTH_SECRET), {
      userId: TEST_OWNER,
      chat: chatId,
      reply: TEST_REPLY,
      ttlSeconds: 60,
      now: Date.now() - 3_600_000,
    });
    expect(
      await reader.send("ask:answer", {
        askId: question,
        answer: { type: "text", text: "SQLite" },
        act: expired,
      }),
    ).toEqual({ ok: true, status: "answered" });
    reader.close();
    own.close();
  });

  it("6. origins: a sandboxed frame (Origin null) gets no owner's full rights, only an embed token's", async () => {
    const chatId = newChat();
    const unclaimed = await connect(server.url, await server.token("owner"), { origin: "null" });
    expect(unclaimed).toMatchObject({ ok: false, message: expect.stringMatching(/embed token/) });
    const embed = await connect(server.url, await server.token("owner", chatId), {
      origin: "null",
    });
    expect(embed.ok).toBe(true);
    if (embed.ok) embed.close();
  });

  it("28.7 the filter's valve: its secret signs a widget's token for one chat, never an owner's socket or request", async () => {
    const valveKey = secretKey(filterSecret(TEST_AUTH_SECRET));
    const mint = (chat?: string) =>
      mintTabToken(valveKey, {
        userId: TEST_OWNER,
        chat,
        reply: chat ? TEST_REPLY : undefined,
        ttlSeconds: 600,
        now: clock.now(),
      });
    const widget = await connect(server.url, await mint(newChat()), { origin: "null" });
    expect(widget.ok).toBe(true);
    if (widget.ok) widget.close();
    expect(await connect(server.url, await mint())).toMatchObject({
      ok: false,
      message: expect.stringMatching(/bound to one chat/),
    });
    const health = await fetch(`${server.url}/healthz`, {
      headers: { authorization: `Bearer ${await mint()}` },
    });
    // An owner's /healthz names the Gateway; anyone else's does not.
    expect(await health.json()).not.toHaveProperty("gateway");
    const ownerHealth = await fetch(`${server.url}/healthz`, {
      headers: { authorization: `Bearer ${await server.token()}` },
    });
    expect(await ownerHealth.json()).toHaveProperty("gateway");
  });

  it("6. origins: with PUBLIC_URL set, a page whose Host header matches its own origin is not taken for the app", async () => {
    await withServer({ PUBLIC_URL: "https://asks.example.test" }, async (target) => {
      expect(
        await handshakeStatus(target.url, { origin: "http://evil.test", host: "evil.test" }),
      ).toBe(403);
      expect(
        await handshakeStatus(target.url, {
          origin: "https://asks.example.test",
          host: "127.0.0.1",
        }),
      ).toBe(200);
    });
  });
});

describe("resource limits", () => {
  it("7. unbounded chat registration: views of 100 distinct chats by an unclaimed token write no rows, and listing still answers", async () => {
    const spammer = await openOn(server, null, "mallory");
    const chats = Array.from({ length: 100 }, () => newChat("spam"));
    // Sent in bursts the per-socket rate limit (20/s, bursts of 40) admits, so every view is judged:
    // a second of the server's clock between two refills the bucket, with no wait.
    for (let i = 0; i < chats.length; i += 20) {
      if (i > 0) clock.skip(1_000);
      const acks = await Promise.all(
        chats.slice(i, i + 20).map((chatId) => spammer.send("chat:view", { chatId })),
      );
      for (const ack of acks)
        expect(ack).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    }
    const db = new DatabaseSync(path.join(server.dataDir, "asks.sqlite"), { readOnly: true });
    try {
      const row = db
        .prepare("SELECT COUNT(*) AS n FROM chats WHERE chat_id LIKE 'spam-%'")
        .get() as { n: number };
      expect(row.n).toBe(0);
    } finally {
      db.close();
    }
    expect(await spammer.send("asks:list", { status: "all" })).toMatchObject({ ok: true });
  });

  it("8. unauthenticated sockets are cheap to hold: a connection that never sends CONNECT is closed within seconds", async () => {
    const raw = await rawEngineSocket(server.url);
    const opened = Date.now();
    await Promise.race([
      raw.closed,
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error("still open after 20 s (Socket.IO's default keeps it 45 s)")),
          20_000,
        ),
      ),
    ]);
    expect(Date.now() - opened).toBeLessThan(20_000);
  });

  it("8. a connection that leaves its authenticated namespace is not kept without one", async () => {
    const raw = await rawEngineSocket(server.url);
    raw.socket.send(`40${JSON.stringify({ token: await server.token("owner") })}`);
    await expect
      .poll(() => raw.frames.some((frame) => frame.startsWith("40{")), {
        message: "the CONNECT ack",
        timeout: 20_000,
        interval: 20,
      })
      .toBe(true);
    raw.socket.send("41");
    await Promise.race([
      raw.closed,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("still open 20 s after leaving the namespace")), 20_000),
      ),
    ]);
  });

  it("8. failed CONNECTs are not throttled: the connection is closed after three", async () => {
    const raw = await rawEngineSocket(server.url);
    const connectErrors = () => raw.frames.filter((frame) => frame.startsWith("44")).length;
    let closed = false;
    void raw.closed.then(() => (closed = true));
    for (let i = 0; i < 10 && !closed; i++) {
      raw.socket.send(`40${JSON.stringify({ token: `forged-${i}` })}`);
      await expect
        .poll(() => connectErrors() > i || closed, {
          message: `CONNECT_ERROR ${i + 1}`,
          timeout: 20_000,
          interval: 20,
        })
        .toBe(true);
    }
    await expect
      .poll(() => closed, {
        message: "the connection to close after repeated failed CONNECTs",
        timeout: 5_000,
        interval: 20,
      })
      .toBe(true);
    expect(connectErrors()).toBe(3);
  });

  it("8. connections per address are capped (MAX_CONNECTIONS_PER_ADDRESS); X-Forwarded-For counts only from TRUSTED_PROXIES", async () => {
    await withServer({ MAX_CONNECTIONS_PER_ADDRESS: "3" }, async (target) => {
      const token = await target.token("owner");
      const admitted: Tab[] = [];
      for (let i = 0; i < 3; i++) admitted.push(await openTab(target.url, token));
      expect(await connect(target.url, token)).toMatchObject({ ok: false });
      // A forged X-Forwarded-For from an untrusted peer changes nothing.
      expect(await connect(target.url, token, { "x-forwarded-for": "203.0.113.9" })).toMatchObject({
        ok: false,
      });
      // A closed tab frees its slot (the server hears of the close a moment later).
      admitted.pop()!.close();
      const again = await vi.waitFor(
        async () => {
          const attempt = await connect(target.url, token);
          if (!attempt.ok) throw new Error(`a freed slot is still refused: ${attempt.message}`);
          return attempt;
        },
        { timeout: 5_000, interval: 100 },
      );
      again.close();
      for (const opened of admitted) opened.close();
    });
    await withServer(
      { MAX_CONNECTIONS_PER_ADDRESS: "2", TRUSTED_PROXIES: "127.0.0.1" },
      async (target) => {
        const token = await target.token("owner");
        const behind = (client: string) =>
          connect(target.url, token, { "x-forwarded-for": client });
        const first = [await behind("203.0.113.5"), await behind("203.0.113.5")];
        expect(first.every((attempt) => attempt.ok)).toBe(true);
        expect(await behind("203.0.113.5")).toMatchObject({ ok: false });
        const other = await behind("198.51.100.7");
        expect(other.ok).toBe(true);
        for (const attempt of [...first, other]) if (attempt.ok) attempt.close();
      },
    );
  });
});

describe("never die on bad data", () => {
  it("10. handler errors reach nobody: a failing store write ends the event with one INTERNAL ack, logged once, and the chat's ask stays answerable", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { id } = await requestQuestion(requester, chatKey(chatId));
    await viewer.waitForShow((a) => a.id === id);
    // The database refuses exactly this write (recording this chat), as a full disk or a broken file
    // would; nothing else the shared Gateway sends meanwhile is touched. (An answer's claim writes
    // nothing since one process owns the file; a claim that fails is the broker's test and, with
    // Redis away, instances.test.ts.)
    const failingChat = newChat();
    const db = new DatabaseSync(path.join(server.dataDir, "asks.sqlite"));
    db.exec(
      `CREATE TRIGGER refuse_chat BEFORE INSERT ON chats WHEN NEW.chat_id = '${failingChat}' BEGIN SELECT RAISE(ABORT, 'disk I/O error (test)'); END;`,
    );
    const logsBefore = server.logs.length;
    try {
      expect(await viewer.send("chat:view", { chatId: failingChat })).toMatchObject({
        ok: false,
        error: { code: "INTERNAL" },
      });
    } finally {
      db.exec("DROP TRIGGER refuse_chat;");
      db.close();
    }
    const logged = server.logs
      .slice(logsBefore)
      .filter((line) => line.includes("disk I/O error (test)"));
    expect(logged.filter((line) => line.includes("chat:view"))).toHaveLength(1);
    expect(server.broker.getPending(id)?.status).toBe("pending");
    expect(await viewer.send("chat:view", { chatId })).toEqual({ ok: true });
    expect(
      await viewer.send("ask:answer", { askId: id, answer: { type: "text", text: "SQLite" } }),
    ).toEqual({ ok: true, status: "answered" });
  });
});
