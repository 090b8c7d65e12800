// One live widget per chat page (docs/ARCHITECTURE.md#live-and-idle-widgets, #routing), in the host page that mounts embeds as Open WebUI
// does (test/support/openwebui-host, EMBEDS.md): a widget per reply, the last 8 messages mounted and 8
// more on scroll up, the user writing again, a second browser, a tab coming back to the front, and
// replies saved by the first filter (tokens without `msg`). What a person sees is asserted: exactly
// one card, in the last reply's iframe; every other iframe 0 px or a summary; at most one WebSocket.
import type { Browser, Frame, Page, WebSocket } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type AppServer, startAppServer } from "../support/app-server.ts";
import { launchBrowser, openPage } from "../support/browser.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import { gatewayOperator, sessionKeyOf, TEST_AGENT } from "../support/on-gateway.ts";
import {
  appendReply,
  chatOfReplies,
  openChat,
  type OpenWebuiHost,
  startOpenWebuiHost,
} from "../support/openwebui-host/index.ts";
import { createQuestion, UI_TIMEOUT, uniqueChat, waitAnswer } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");
/** The bound for things to settle on a loaded machine, once the page has loaded. */
const SETTLE_MS = 5_000;

/** What a person sees in one reply's embed. */
type Seen = { messageId: string; height: number; cards: number; summaries: number };

/** Open WebSockets of a page, all frames included. */
function countSockets(page: Page): () => number {
  let sockets: WebSocket[] = [];
  page.on("websocket", (socket) => sockets.push(socket));
  // A navigation of the page (reload, reopen) ends its documents' sockets; Playwright reports no close for them.
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) sockets = [];
  });
  return () => sockets.filter((socket) => !socket.isClosed()).length;
}

async function frameOf(page: Page, messageId: string): Promise<Frame | null> {
  const handle = await page.locator(`#${messageId}-embeds-container iframe`).elementHandle();
  return (await handle?.contentFrame()) ?? null;
}

/** Every mounted reply's embed: its height in the host and what its page shows. */
async function seen(page: Page): Promise<Seen[]> {
  const ids: string[] = await page
    .locator(".embeds-container")
    .evaluateAll((containers) =>
      containers.map((container) => container.id.replace(/-embeds-container$/, "")),
    );
  return Promise.all(
    ids.map(async (messageId) => {
      const height = await page
        .locator(`#${messageId}-embeds-container iframe`)
        .evaluate((iframe) => Math.round(iframe.getBoundingClientRect().height));
      const frame = await frameOf(page, messageId);
      const counts = frame
        ? await frame
            .evaluate(() => ({
              cards: document.querySelectorAll("[data-ask-id]").length,
              summaries: document.querySelectorAll("details").length,
            }))
            .catch(() => ({ cards: -1, summaries: -1 }))
        : { cards: -1, summaries: -1 };
      return { messageId, height, ...counts };
    }),
  );
}

/** One card, in `live`'s iframe and taller than nothing; every other iframe 0 px or showing summaries only. */
function oneCardIn(live: string | null, view: Seen[]): boolean {
  return view.every((reply) =>
    reply.messageId === live
      ? reply.cards === 1 && reply.height > 0
      : reply.cards === 0 && (reply.height === 0 || (reply.summaries > 0 && reply.height > 0)),
  );
}

async function settlesTo(
  page: Page,
  sockets: () => number,
  live: string | null,
  extra: (view: Seen[]) => boolean = () => true,
): Promise<Seen[]> {
  let last: Seen[] = [];
  await expect
    .poll(
      async () => {
        last = await seen(page);
        return oneCardIn(live, last) && extra(last) && sockets() <= 1;
      },
      { timeout: SETTLE_MS, interval: 100 },
    )
    .toBe(true)
    .catch((error: unknown) => {
      throw new Error(
        `did not settle within ${SETTLE_MS} ms (sockets: ${sockets()}): ${JSON.stringify(last)}`,
        { cause: error },
      );
    });
  return last;
}

describe.skipIf(!gatewayUrl)("one live widget per chat page, in an Open WebUI host", () => {
  let app: AppServer;
  let host: OpenWebuiHost;
  let browser: Browser;
  let requester: OperatorConnection;
  /** Mint times of the replies: reply n was written at BASE + n seconds. */
  const BASE = Date.now() - 3600_000;

  beforeAll(async () => {
    host = await startOpenWebuiHost();
    app = await startAppServer({
      gatewayUrl,
      gatewayToken: inject("gatewayToken"),
      env: { AGENT_ID: TEST_AGENT, OPENWEBUI_ORIGINS: host.origin },
    });
    browser = await launchBrowser({ actTokenFor: (token) => app.actTokenFor(token) });
    requester = await gatewayOperator("requester");
  });

  afterAll(async () => {
    await browser?.close();
    await requester?.stop();
    await app?.stop();
    await host?.stop();
  });

  /** The widget URL the filter's inlet puts on reply `a<n>`; `firstFilter` mints it as the first filter did (no msg). */
  async function embedOf(
    chat: string,
    n: number,
    options: { firstFilter?: boolean } = {},
  ): Promise<string> {
    const token = await app.mintToken(
      "owner",
      chat,
      options.firstFilter ? null : { msg: `a${n}`, mts: BASE + n * 1000 },
    );
    return `${app.url}/embed/chat/${encodeURIComponent(chat)}?token=${token}`;
  }

  async function chatWithReplies(chat: string, count: number, firstFilterUpTo = 0): Promise<void> {
    const embeds = await Promise.all(
      Array.from({ length: count }, (_, index) =>
        embedOf(chat, index + 1, { firstFilter: index + 1 <= firstFilterUpTo }),
      ),
    );
    // Replies as long as real ones, so that 8 messages fill the page and older ones mount only on scroll up.
    const text = (n: number) =>
      `Reply ${n}. ${"The agent explains what it did and what comes next. ".repeat(60)}`;
    host.setChat(
      chat,
      chatOfReplies(count, (n) => [embeds[n - 1]!]).map((message) =>
        message.role === "assistant"
          ? { ...message, content: text(Number(message.id.slice(1))) }
          : message,
      ),
    );
  }

  it("a 12-reply chat with a pending question: one card in the last reply, through reload, scroll up, a second browser, a tab back in front, and a new reply", async () => {
    const chat = uniqueChat("live");
    // Replies 1-6 were saved by the first filter (no msg); an ask was answered in reply 10 while it was the latest.
    await chatWithReplies(chat, 10, 6);
    const first = await openPage(browser, { viewport: { width: 900, height: 600 } });
    const firstSockets = countSockets(first.page);
    await openChat(first.page, host, chat);
    const earlier = await createQuestion(requester, chat);
    const earlierAnswer = waitAnswer(requester, earlier);
    const a10 = first.page.frameLocator("#a10-embeds-container iframe");
    await a10.getByRole("radio", { name: /^SQLite/ }).click({ timeout: UI_TIMEOUT });
    await a10.getByRole("button", { name: "Submit" }).click();
    expect(await earlierAnswer).toMatchObject({ status: "answered" });

    // Two more replies came (written elsewhere); a question is pending; the chat is reopened.
    await chatWithReplies(chat, 12, 6);
    const id = await createQuestion(requester, chat);
    const answered = waitAnswer(requester, id);
    await openChat(first.page, host, chat);
    await first.page
      .frameLocator("#a12-embeds-container iframe")
      .getByRole("radio", { name: /^Postgres/ })
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    let view = await settlesTo(
      first.page,
      firstSockets,
      "a12",
      (replies) => replies.find((reply) => reply.messageId === "a10")?.summaries === 1,
    );
    expect(view.map((reply) => reply.messageId)).toEqual(["a9", "a10", "a11", "a12"]);

    // Reload: the same.
    await first.page.reload();
    await first.page.waitForSelector("body[data-ready=true]");
    await first.page
      .frameLocator("#a12-embeds-container iframe")
      .getByRole("radio", { name: /^Postgres/ })
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await settlesTo(first.page, firstSockets, "a12");

    // Scroll up: older widgets mount (replies 5-8, two of them the first filter's) and never take the card.
    await first.page
      .locator("#messages-container")
      .evaluate((container) => (container.scrollTop = 0));
    await first.page
      .locator("#a5-embeds-container iframe")
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    view = await settlesTo(first.page, firstSockets, "a12");
    // 8 more at a time while the loader shows: at least replies 5-12 now, maybe more.
    expect(view.map((reply) => reply.messageId)).toEqual(
      expect.arrayContaining(["a5", "a6", "a7", "a8", "a9", "a10", "a11", "a12"]),
    );
    // The first filter's widgets (and every older reply's) got the idle page: no app, no script to load.
    for (const messageId of ["a5", "a6", "a7"]) {
      const idle = await (await frameOf(first.page, messageId))!.evaluate(() => ({
        app: document.querySelector("main[data-widget]") !== null,
        scripts: document.querySelectorAll("script[src]").length,
      }));
      expect(idle, messageId).toEqual({ app: false, scripts: 0 });
    }

    // A second browser opens the chat: the newest view of the latest reply takes the card, once.
    const second = await openPage(browser, { viewport: { width: 900, height: 600 } });
    const secondSockets = countSockets(second.page);
    await openChat(second.page, host, chat);
    await second.page
      .frameLocator("#a12-embeds-container iframe")
      .getByRole("radio", { name: /^Postgres/ })
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await settlesTo(second.page, secondSockets, "a12");
    await first.page
      .frameLocator("#a12-embeds-container iframe")
      .getByText("Moved to a newer tab")
      .waitFor({ timeout: UI_TIMEOUT });
    expect(
      await first.page
        .frameLocator("#a12-embeds-container iframe")
        .locator("[data-ask-id]")
        .count(),
    ).toBe(0);

    // The first tab comes back to the front: it takes the card, and the second shows it moved.
    const firstLive = (await frameOf(first.page, "a12"))!;
    await firstLive.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
    await first.page
      .frameLocator("#a12-embeds-container iframe")
      .getByRole("radio", { name: /^Postgres/ })
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await second.page
      .frameLocator("#a12-embeds-container iframe")
      .getByText("Moved to a newer tab")
      .waitFor({ timeout: UI_TIMEOUT });
    await settlesTo(first.page, firstSockets, "a12");
    expect(
      await second.page
        .frameLocator("#a12-embeds-container iframe")
        .locator("[data-ask-id]")
        .count(),
    ).toBe(0);
    await second.context.close();

    // The user writes again in the first tab: the new reply's widget (from the filter's inlet) takes the
    // card, and reply 12's widget collapses to 0 px and lets its socket go.
    await appendReply(
      first.page,
      { id: "u13", content: "One more thing" },
      { id: "a13", content: "" },
    );
    host.emit(chat, "a13", {
      type: "embeds",
      data: { embeds: [await embedOf(chat, 13)], replace: true },
    });
    await first.page
      .frameLocator("#a13-embeds-container iframe")
      .getByRole("radio", { name: /^Postgres/ })
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    view = await settlesTo(first.page, firstSockets, "a13");
    expect(view.find((reply) => reply.messageId === "a12")).toMatchObject({ height: 0, cards: 0 });

    // Answered in reply 13: the summary stays there, and the widget stays live (one socket).
    const a13 = first.page.frameLocator("#a13-embeds-container iframe");
    await a13.getByRole("radio", { name: /^Postgres/ }).click();
    await a13.getByRole("button", { name: "Submit" }).click();
    expect(await answered).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["Postgres"] } },
    });
    await a13.getByText("❓ Ask User").waitFor({ timeout: UI_TIMEOUT });
    await settlesTo(first.page, firstSockets, null);
    expect(first.errors).toEqual([]);
    await first.context.close();
  });

  it("a new reply while an approval is open moves the card to it", async () => {
    const chat = uniqueChat("live-approval");
    await chatWithReplies(chat, 2);
    // Dark mode: the host keeps the default scheme (as Open WebUI does); the widget's page stays transparent.
    const { page, context, errors } = await openPage(browser, {
      colorScheme: "dark",
      viewport: { width: 900, height: 600 },
    });
    const sockets = countSockets(page);
    await openChat(page, host, chat);
    await page
      .frameLocator("#a2-embeds-container iframe")
      .locator('main[data-widget="live"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    const backdrop = await (await frameOf(page, "a2"))!.evaluate(() => ({
      scheme: getComputedStyle(document.documentElement).colorScheme,
      html: getComputedStyle(document.documentElement).backgroundColor,
      body: getComputedStyle(document.body).backgroundColor,
    }));
    // A root scheme other than the host's would paint an opaque backdrop behind the card.
    expect(backdrop).toEqual({
      scheme: "light",
      html: "rgba(0, 0, 0, 0)",
      body: "rgba(0, 0, 0, 0)",
    });
    const decision = requester.request(
      "plugin.approval.request",
      {
        pluginId: "e2e-plugin",
        title: "Deploy the build",
        description: "Deploys to production.",
        severity: "warning",
        toolName: "deploy",
        agentId: TEST_AGENT,
        sessionKey: sessionKeyOf(chat),
        timeoutMs: 300_000,
      },
      { timeoutMs: 330_000 },
    );
    await page
      .frameLocator("#a2-embeds-container iframe")
      .getByRole("button", { name: "Deny" })
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await appendReply(page, { id: "u3", content: "Wait" }, { id: "a3", content: "" });
    host.emit(chat, "a3", {
      type: "embeds",
      data: { embeds: [await embedOf(chat, 3)], replace: true },
    });
    const a3 = page.frameLocator("#a3-embeds-container iframe");
    await a3
      .getByRole("button", { name: "Deny" })
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await settlesTo(page, sockets, "a3");
    await a3.getByRole("button", { name: "Deny" }).click();
    expect(await decision).toMatchObject({ decision: "deny" });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("a 50-reply chat, all mounted, costs one socket and no empty space (measured)", async () => {
    const chat = uniqueChat("live-50");
    await chatWithReplies(chat, 50);
    const { page, context, errors } = await openPage(browser, {
      viewport: { width: 900, height: 800 },
    });
    const sockets = countSockets(page);
    let opened = 0;
    page.on("websocket", () => (opened += 1));
    await openChat(page, host, chat);
    // Scroll up until every message is mounted (8 more each time the loader shows).
    await expect
      .poll(
        async () => {
          await page
            .locator("#messages-container")
            .evaluate((container) => (container.scrollTop = 0));
          return page.locator(".embeds-container iframe").count();
        },
        { timeout: UI_TIMEOUT, interval: 200 },
      )
      .toBe(50);
    await page
      .frameLocator("#a50-embeds-container iframe")
      .locator('main[data-widget="live"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    const view = await settlesTo(page, sockets, null, (replies) =>
      replies.every((reply) => reply.height === 0),
    );
    const emptyPixels = view.reduce((sum, reply) => sum + reply.height, 0);
    console.log(
      `50-reply chat, every widget mounted: ${sockets()} open WebSocket(s) (${opened} opened in all), ${emptyPixels} px of embeds with nothing to show`,
    );
    expect(sockets()).toBe(1);
    expect(emptyPixels).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});
