// The real Open WebUI (pinned, from PyPI) runs our filter and frames the real OpenClaw Asks widget (the
// production build, on the real Gateway, as this file's agent). A person sends a message in a
// brand-new chat and Open WebUI's own inlet call and FullHeightIframe mount our widget URL on the reply
// while it is still streaming; more messages get their own widgets. Then an ask is raised for that
// chat's session and what a person sees is asserted as with the host page (live-widget.test.ts):
// exactly one card, in the last reply's iframe; every other iframe 0 px or a summary; at most one
// WebSocket to us; through an answer, a reload, a second tab, and the user writing again while a
// card is open.
// Slow (Open WebUI starts in about a minute): run it with `npm run test:openwebui`, which installs
// Open WebUI first and sets OPENCLAW_ASKS_OPEN_WEBUI=1.
import { jwtVerify } from "jose";
import type { Browser, BrowserContext, Frame, Page, WebSocket } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAppServer, type AppServer } from "../support/app-server.ts";
import { TEST_AGENT, gatewayOperator } from "../support/asks.ts";
import { launchBrowser } from "../support/browser.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import { startOpenWebui, type OpenWebui } from "../support/open-webui.ts";
import { freePort } from "../support/real-gateway.ts";
import { startStubModel, stubScript, type StubModel } from "../support/stub-model.ts";
import { createQuestion, waitAnswer } from "./fixtures.ts";

const UI_TIMEOUT = 60_000;
/** The issue's bound for things to settle on a loaded machine, once the page has loaded. */
const SETTLE_MS = 5_000;
const enabled = process.env.OPENCLAW_ASKS_OPEN_WEBUI === "1";
const gatewayUrl = inject("gatewayUrl");

/**
 * What a person sees in one reply's embed: the iframe's height, that of Open WebUI's embeds container
 * around it, and what the widget's page shows (`contentHeight`: its document's).
 */
type Seen = { messageId: string; height: number; containerHeight: number; contentHeight: number; cards: number; summaries: number };

describe.skipIf(!enabled || !gatewayUrl)("the real Open WebUI with the real widget", () => {
  let stub: StubModel;
  let openWebui: OpenWebui;
  let app: AppServer;
  let browser: Browser;
  let requester: OperatorConnection;
  // One person's tab, shared by the tests in order: the chat the first one creates is the one the next one asks in.
  let context: BrowserContext;
  let page: Page;
  let chatId: string;
  const errors: string[] = [];
  const widgetRequests: string[] = [];
  /** Open WebSockets to our server from `page`'s frames. */
  let openSockets: () => number;

  beforeAll(async () => {
    stub = await startStubModel();
    // Both start at once: our server only needs to know Open WebUI's origin, to let it frame the widget.
    const openWebuiPort = await freePort();
    // Each is kept as soon as it is up, so that afterAll stops it even when the other failed.
    const started = await Promise.allSettled([
      startOpenWebui({ openaiBaseUrl: `${stub.url}/v1`, port: openWebuiPort }).then((started) => (openWebui = started)),
      startAppServer({ gatewayUrl, gatewayToken: inject("gatewayToken"), env: { AGENT_ID: TEST_AGENT, OPENWEBUI_ORIGINS: `http://127.0.0.1:${openWebuiPort}` } }).then((started) => (app = started)),
    ]);
    for (const result of started) if (result.status === "rejected") throw result.reason;
    await openWebui.installFilter({ asks_url: app.url, auth_secret: app.authSecret, model_ids: "scripted" });
    // The rich text input turns typed quotes into typographic ones, which would break the stub's script.
    await openWebui.setInterfaceSettings({ richTextInput: false });
    browser = await launchBrowser();
    requester = await gatewayOperator("requester");
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await requester?.stop();
    await app?.stop();
    await openWebui?.stop();
    await stub?.stop();
  });

  async function send(text: string): Promise<void> {
    // As a person does, the next message once the reply before it is done: Open WebUI queues a message
    // sent while the chat is still active and sends it later (once, a queued reply never showed).
    await page.locator('button[aria-label="Stop"]').waitFor({ state: "hidden", timeout: UI_TIMEOUT });
    await page.locator("#chat-input").click();
    await page.keyboard.type(text);
    await page.keyboard.press("Enter");
  }

  const widgets = () => page.locator(`iframe[src^="${app.url}/embed/chat/"]`);
  // The user's message shows the script too: look for reply words in replies only.
  const replyText = (text: string) => page.locator("#response-content-container", { hasText: text });
  const embedsOf = (messageId: string, on = page) => on.locator(`[id="${messageId}-embeds-container"]`);

  /** Counts a page's open WebSockets to our server (Open WebUI has its own), from every frame. */
  function trackSockets(on: Page): () => number {
    let sockets: WebSocket[] = [];
    on.on("websocket", (socket) => {
      if (socket.url().startsWith(app.url.replace(/^http/, "ws"))) sockets.push(socket);
    });
    // A reload ends its documents' sockets; Playwright reports no close for them.
    on.on("framenavigated", (frame) => {
      if (frame === on.mainFrame()) sockets = [];
    });
    return () => sockets.filter((socket) => !socket.isClosed()).length;
  }

  /** The assistant messages that have an embed, in the chat's order. */
  const replyIds = (on = page): Promise<string[]> =>
    on.locator("[id$='-embeds-container']").evaluateAll((containers) => containers.filter((container) => container.querySelector("iframe")).map((container) => container.id.replace(/-embeds-container$/, "")));

  async function frameOf(messageId: string, on = page): Promise<Frame | null> {
    const handle = await embedsOf(messageId, on).locator("iframe").elementHandle();
    return (await handle?.contentFrame()) ?? null;
  }

  async function seen(on: Page): Promise<Seen[]> {
    return Promise.all(
      (await replyIds(on)).map(async (messageId) => {
        const height = await embedsOf(messageId, on).locator("iframe").evaluate((iframe) => Math.round(iframe.getBoundingClientRect().height));
        const containerHeight = await embedsOf(messageId, on).evaluate((container) => Math.round(container.getBoundingClientRect().height));
        const frame = await frameOf(messageId, on);
        const counts = frame
          ? await frame
              .evaluate(() => ({
                cards: document.querySelectorAll("[data-ask-id]").length,
                summaries: document.querySelectorAll("details").length,
                contentHeight: Math.round(document.body.getBoundingClientRect().height),
              }))
              .catch(() => ({ cards: -1, summaries: -1, contentHeight: -1 }))
          : { cards: -1, summaries: -1, contentHeight: -1 };
        return { messageId, height, containerHeight, ...counts };
      }),
    );
  }

  /**
   * One card, in `live`'s iframe (none with `live` null), which is as tall as the card's page: no gap,
   * nothing cut off; every other iframe 0 px or showing summaries only.
   */
  function oneCardIn(live: string | null, view: Seen[]): boolean {
    return view.every((reply) =>
      reply.messageId === live
        ? reply.cards === 1 && reply.height > 0 && Math.abs(reply.height - reply.contentHeight) <= 1
        : reply.cards === 0 && (reply.height === 0 || (reply.summaries > 0 && reply.height > 0)),
    );
  }

  async function settlesTo(live: string | null, on = page, sockets = openSockets): Promise<Seen[]> {
    let last: Seen[] = [];
    await expect
      .poll(
        async () => {
          last = await seen(on);
          return oneCardIn(live, last) && sockets() <= 1;
        },
        { timeout: SETTLE_MS, interval: 100 },
      )
      .toBe(true)
      .catch((error: unknown) => {
        throw new Error(`did not settle within ${SETTLE_MS} ms (sockets: ${sockets()}): ${JSON.stringify(last)}`, { cause: error });
      });
    return last;
  }

  const lastReply = async () => (await replyIds()).at(-1)!;
  const card = (messageId: string, on = page) => on.frameLocator(`[id="${messageId}-embeds-container"] iframe`);

  it("mounts our widget from the inlet on the reply being written, in a new chat and after", async () => {
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    // Logged in as the admin; only the top page (the widget frames have no storage: opaque origin).
    await context.addInitScript((token) => {
      if (window === window.top) localStorage.setItem("token", token);
    }, openWebui.adminToken);
    page = await context.newPage();
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("request", (request) => {
      if (request.url().startsWith(`${app.url}/embed/chat/`)) widgetRequests.push(request.url().slice(app.url.length));
    });
    openSockets = trackSockets(page);
    await page.goto(`${openWebui.url}/?models=scripted`);
    // A first login shows the release notes; a person closes them.
    const releaseNotes = page.getByRole("button", { name: "Okay, Let's Go!" });
    await Promise.race([releaseNotes.waitFor({ timeout: UI_TIMEOUT }), page.locator("#chat-input").waitFor({ timeout: UI_TIMEOUT })]);
    if (await releaseNotes.isVisible()) await releaseNotes.click();

    // The tab learns a new chat's id from the HTTP answer to its request and drops events for other
    // chats until then (Chat.svelte:952, 3235-3236). Holding that answer back for 1 s makes the tab
    // miss the inlet's event and the first chunk's every time (unheld, about one time in five): the
    // filter's later send must still put the widget on the reply while it streams.
    await page.route("**/api/chat/completions", async (route) => {
      const response = await route.fetch();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await route.fulfill({ response });
    });
    // About 7 s of streaming: the widget must be there before the reply's last word.
    const words = Array.from({ length: 40 }, (_, index) => `word${index}`).join(" ");
    await send(stubScript({ reply: `${words} THE-END`, chunkSize: 8, chunkDelayMs: 200 }));
    await widgets().first().waitFor({ state: "attached", timeout: UI_TIMEOUT });
    expect(await replyText("THE-END").count()).toBe(0);
    await expect.poll(() => page.url(), { timeout: UI_TIMEOUT }).toMatch(/\/c\/[^/]+$/);
    chatId = new URL(page.url()).pathname.split("/").pop()!;
    await page.unroute("**/api/chat/completions");

    const first = widgets().first();
    const attributes = await first.evaluate((iframe) => ({
      sandbox: iframe.getAttribute("sandbox"),
      referrerpolicy: iframe.getAttribute("referrerpolicy"),
      messageId: iframe.closest("[id$='-embeds-container']")?.id.replace(/-embeds-container$/, ""),
      textAfterEmbeds: Boolean(
        iframe.closest("[id$='-embeds-container']")!.compareDocumentPosition(document.getElementById("response-content-container")!) & Node.DOCUMENT_POSITION_FOLLOWING,
      ),
    }));
    expect(attributes).toMatchObject({ sandbox: "allow-scripts allow-forms allow-popups allow-downloads", referrerpolicy: "strict-origin-when-cross-origin", textAfterEmbeds: true });
    // The live widget, framed by Open WebUI, with nothing pending: FullHeightIframe applied the 0 px it reported.
    await card(attributes.messageId!).locator('main[data-widget="live"]').waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await expect.poll(() => first.evaluate((iframe) => iframe.getBoundingClientRect().height), { timeout: UI_TIMEOUT }).toBe(0);

    const src = new URL((await first.getAttribute("src"))!);
    expect(src.pathname).toBe(`/embed/chat/${chatId}`);
    const secret = new TextEncoder().encode(app.authSecret);
    const { payload } = await jwtVerify(src.searchParams.get("token")!, secret, { algorithms: ["HS256"] });
    expect(payload).toMatchObject({ sub: openWebui.admin.id, chat: chatId, msg: attributes.messageId });
    expect(payload.exp! - payload.iat!).toBe(24 * 3600);
    expect(payload.mts).toBeTypeOf("number");
    expect(widgetRequests).toContain(`${src.pathname}${src.search}`);

    await replyText("THE-END").waitFor({ timeout: UI_TIMEOUT });
    expect(await widgets().count()).toBe(1);

    // The chat exists now: the next reply gets its own widget, minted later.
    await send(stubScript({ reply: "Second reply SECOND-END", chunkSize: 4, chunkDelayMs: 100 }));
    await expect.poll(() => widgets().count(), { timeout: UI_TIMEOUT }).toBe(2);
    const secondToken = new URL((await widgets().nth(1).getAttribute("src"))!).searchParams.get("token")!;
    const second = (await jwtVerify(secondToken, secret)).payload;
    expect(second.msg).not.toBe(payload.msg);
    expect(second.mts as number).toBeGreaterThan(payload.mts as number);
    await replyText("SECOND-END").waitFor({ timeout: UI_TIMEOUT });

    // A third reply, so that two older widgets are on the page.
    await send(stubScript({ reply: "Third reply THIRD-END", chunkSize: 4, chunkDelayMs: 50 }));
    await replyText("THIRD-END").waitFor({ timeout: UI_TIMEOUT });
    await expect.poll(() => widgets().count(), { timeout: UI_TIMEOUT }).toBe(3);

    // Stored on the messages: a reload mounts all three again, none with anything to show.
    await page.reload();
    await expect.poll(() => widgets().count(), { timeout: UI_TIMEOUT }).toBe(3);
    await settlesTo(null);
    expect(errors).toEqual([]);
  }, 240_000);

  it("an ask for the chat shows as one card, in the last reply, through an answer, a reload, a second tab and a new reply", async () => {
    expect(chatId, "the first test made the chat").toBeTruthy();
    const replies = await replyIds();
    expect(replies).toHaveLength(3);
    const last = replies.at(-1)!;

    // The agent asks (ask_user on the chat's session, agent:<agent>:openwebui:<chatId>).
    const id = await createQuestion(requester, chatId);
    const answered = waitAnswer(requester, id);
    await card(last).getByRole("radio", { name: /^SQLite/ }).waitFor({ state: "attached", timeout: UI_TIMEOUT });
    const view = await settlesTo(last);
    const measured = (label: string, replies: Seen[]) =>
      console.log(
        `${label}: ${openSockets()} WebSocket(s) to us; iframes ${replies.map((reply) => `${reply.height} px`).join(", ")}; embed containers ${replies.map((reply) => `${reply.containerHeight} px`).join(", ")}`,
      );
    measured("card pending, 3 replies", view);
    // The older replies' widgets got the idle page: no app, no script to load.
    for (const messageId of replies.slice(0, -1)) {
      const idle = await (await frameOf(messageId))!.evaluate(() => ({ app: document.querySelector("main[data-widget]") !== null, scripts: document.querySelectorAll("script[src]").length }));
      expect(idle, messageId).toEqual({ app: false, scripts: 0 });
    }

    // Answered in the last reply: the Gateway gets it, and the reply keeps the summary.
    await card(last).getByRole("radio", { name: /^SQLite/ }).click();
    await card(last).getByRole("button", { name: "Submit" }).click();
    expect(await answered).toMatchObject({ status: "answered", answers: { answers: { db: ["SQLite"] } } });
    await card(last).getByText("❓ Ask User").waitFor({ timeout: UI_TIMEOUT });
    await settlesTo(null);

    // A new question, then a reload: the card lands in the last reply only; the answered one stays a summary.
    const pending = await createQuestion(requester, chatId);
    const pendingAnswer = waitAnswer(requester, pending);
    await page.reload();
    await card(last).getByRole("radio", { name: /^Postgres/ }).waitFor({ state: "attached", timeout: UI_TIMEOUT });
    measured("after reload", await settlesTo(last));

    // The chat opened in a second tab: the newest view takes the card, in the last reply there too.
    const other = await context.newPage();
    other.on("pageerror", (error) => errors.push(String(error)));
    const otherSockets = trackSockets(other);
    await other.goto(`${openWebui.url}/c/${chatId}`);
    await card(last, other).getByRole("radio", { name: /^Postgres/ }).waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await settlesTo(last, other, otherSockets);
    await card(last).getByText("Moved to a newer tab").waitFor({ timeout: UI_TIMEOUT });
    expect(await card(last).locator("[data-ask-id]").count()).toBe(0);
    // The first tab comes back to the front: it takes the card back, and the second shows it moved.
    await (await frameOf(last))!.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
    await card(last).getByRole("radio", { name: /^Postgres/ }).waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await card(last, other).getByText("Moved to a newer tab").waitFor({ timeout: UI_TIMEOUT });
    expect(await card(last, other).locator("[data-ask-id]").count()).toBe(0);
    await other.close();
    await settlesTo(last);

    // The user writes again while the card is open: it moves to the new reply's widget.
    await send(stubScript({ reply: "Fourth reply FOURTH-END", chunkSize: 4, chunkDelayMs: 50 }));
    await expect.poll(() => widgets().count(), { timeout: UI_TIMEOUT }).toBe(4);
    const newest = await lastReply();
    expect(newest).not.toBe(last);
    await card(newest).getByRole("radio", { name: /^Postgres/ }).waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await replyText("FOURTH-END").waitFor({ timeout: UI_TIMEOUT });
    const moved = await settlesTo(newest);
    measured("after a new reply", moved);
    // The reply that was answered in keeps its summary line; the one that lost the card collapsed.
    expect(moved.find((reply) => reply.messageId === last)).toMatchObject({ cards: 0, summaries: 1 });

    await card(newest).getByRole("radio", { name: /^Postgres/ }).click();
    await card(newest).getByRole("button", { name: "Submit" }).click();
    expect(await pendingAnswer).toMatchObject({ status: "answered", answers: { answers: { db: ["Postgres"] } } });
    await settlesTo(null);
    expect(errors).toEqual([]);
  }, 120_000);
});
