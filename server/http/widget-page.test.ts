// The idle widget page (docs/ARCHITECTURE.md#live-and-idle-widgets): which requests it answers (every reply's widget but the chat's
// latest, tokens of the first filter, expired tokens) and what it holds, on the real broker and an
// in-memory store; the Next.js app is the `false` answer.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QuestionAsk } from "../../lib/ask.ts";
import { question } from "../../test/support/ask-fixtures.ts";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { mintTabToken, secretKey } from "../auth/tokens.ts";
import { AskBroker } from "../broker/broker.ts";
import type { AskChannel, AskChannelEvents } from "../broker/ports.ts";
import { MemoryPresence } from "../broker/presence.ts";
import { Emitter } from "../events.ts";
import { SqliteAskStore } from "../store/sqlite.ts";
import { createWidgetPageRoute } from "./widget-page.ts";

// Tokens are minted on the system clock (jose), so the route's clock starts there.
const T0 = Date.now();
const key = secretKey("k".repeat(40));

/** The Gateway side is not part of these requests: nothing arrives, nothing is delivered. */
class SilentChannel extends Emitter<AskChannelEvents> implements AskChannel {
  async deliver(): Promise<void> {}
  async refuse(): Promise<void> {}
}

let clock: ManualClock;
let store: SqliteAskStore;
let broker: AskBroker;
let server: Server;
let base: string;

beforeEach(async () => {
  clock = new ManualClock(T0);
  store = new SqliteAskStore(":memory:");
  broker = new AskBroker({
    store,
    presence: new MemoryPresence(),
    source: new SilentChannel(),
    clock,
    owners: new Set(["owner"]),
    instanceId: "one",
    log: () => {},
  });
  const route = createWidgetPageRoute({
    broker,
    key,
    owners: new Set(["owner"]),
    maxTokenDays: 30,
    frameAncestors: ["https://chat.example"],
    now: () => clock.now(),
  });
  server = createServer((request, response) => {
    route(request, response).then(
      (served) => served || response.writeHead(299).end("the app"),
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  broker.shutdown();
  await store.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const embed = (chat: string, msg: string, mts: number, user = "alice", ttlSeconds = 3600) =>
  mintTabToken(key, { userId: user, chat, reply: { msg, mts: T0 + mts }, ttlSeconds });
const page = async (chat: string, token: string) =>
  fetch(`${base}/embed/chat/${encodeURIComponent(chat)}?token=${token}`);

function finished(id: string, chatId: string, replyId: string, summary: string): QuestionAsk {
  return question(id, chatId, {
    replyId,
    status: "answered",
    resolution: { by: "alice", at: T0, summary, tabId: "t" },
  });
}

describe("the idle widget page", () => {
  it("the chat's latest reply gets the app; every older reply, requested before or after it, the idle page", async () => {
    expect((await page("c1", await embed("c1", "a11", 11))).status).toBe(299);
    expect((await page("c1", await embed("c1", "a12", 12))).status).toBe(299);
    const older = await page("c1", await embed("c1", "a11", 11));
    expect(older.status).toBe(200);
    expect(await older.text()).toContain('<main aria-label="Agent questions"></main>');
    expect((await page("c1", await embed("c1", "a1", 1))).status).toBe(200);
    // Another chat is judged on its own.
    expect((await page("c2", await embed("c2", "a1", 1))).status).toBe(299);
  });

  it("holds the reply's finished asks as summaries (question and answer, escaped; a secret never its value) and no socket or app script", async () => {
    await store.recordChatOwner("c1", "alice");
    await store.put(finished("q1", "c1", "a3", "<b>SQLite</b>"));
    await store.put({
      ...finished("s1", "c1", "a3", "•••• (secret entered)"),
      kind: "secret",
      secret: { name: "API_TOKEN", prompt: "Paste the token", allowedHostsEditable: false },
    });
    await store.put(finished("elsewhere", "c1", "a2", "Postgres"));
    await page("c1", await embed("c1", "a9", 9));
    const response = await page("c1", await embed("c1", "a3", 3));
    const html = await response.text();
    expect(html).toContain("&lt;b&gt;SQLite&lt;/b&gt;");
    expect(html).toContain("Which?");
    expect(html).toContain("•••• (secret entered)");
    expect(html).toContain("Paste the token");
    expect(html).not.toContain("Postgres");
    expect(html.match(/<details/g)).toHaveLength(2);
    // Each record says what it was.
    expect(html).toContain(
      '<b data-record="question"><span aria-hidden="true">❓</span> Ask User</b>',
    );
    expect(html).toContain('<b data-record="secret"><span aria-hidden="true">🔑</span> Secret</b>');
    // One inline script, with the response's nonce; nothing loaded from anywhere.
    const nonce = /'nonce-([^']+)'/.exec(response.headers.get("content-security-policy")!)![1];
    expect(html.match(/<script/g)).toHaveLength(1);
    // It asks the host page for Open WebUI's chosen theme, as the live widget does.
    expect(html).toContain('parent.postMessage({type:"openclaw-asks:theme?"},"*")');
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).not.toMatch(/src=|href=|socket/);
    expect(response.headers.get("content-security-policy")).toContain(
      "frame-ancestors https://chat.example",
    );
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(Buffer.byteLength(html)).toBeLessThan(10_000);
  });

  it("another user's token for the chat shows none of its summaries", async () => {
    await store.recordChatOwner("c1", "alice");
    await store.put(finished("q1", "c1", "a3", "SQLite"));
    await page("c1", await embed("c1", "a9", 9));
    expect(await (await page("c1", await embed("c1", "a3", 3, "mallory"))).text()).not.toContain(
      "SQLite",
    );
  });

  it("an expired token still shows its reply's summaries, never the live widget, even for the latest reply", async () => {
    await store.recordChatOwner("c1", "alice");
    await store.put(finished("q1", "c1", "a3", "SQLite"));
    const token = await embed("c1", "a3", 3, "alice", 60);
    clock.advance(3600_000);
    const response = await page("c1", token);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("SQLite");
  });

  it("a token of the first filter (no msg) is never live: the idle page, empty", async () => {
    const response = await page(
      "c1",
      await mintTabToken(key, { userId: "alice", chat: "c1", ttlSeconds: 3600 }),
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<main aria-label="Agent questions"></main>');
  });

  it("leaves to the app what it cannot judge: no token, a forged one, another chat's, a token with no chat", async () => {
    expect((await fetch(`${base}/embed/chat/c1`)).status).toBe(299);
    const forged = await new SignJWT({
      sub: "alice",
      chat: "c1",
      msg: "a1",
      mts: T0,
      exp: Math.floor(T0 / 1000) - 10,
    })
      .setProtectedHeader({ alg: "HS256" })
      .sign(secretKey("x".repeat(40)));
    expect((await page("c1", forged)).status).toBe(299);
    expect((await page("c1", await embed("c2", "a1", 1))).status).toBe(299);
    expect(
      (await page("c1", await mintTabToken(key, { userId: "owner", ttlSeconds: 60 }))).status,
    ).toBe(299);
    expect((await fetch(`${base}/embed/chat/c1/extra`)).status).toBe(299);
  });
});
