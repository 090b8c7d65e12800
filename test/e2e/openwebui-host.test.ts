// The Open WebUI host page itself behaves as EMBEDS.md says, so tests of the widget inside it mean
// something: sandboxed iframes that start at 150 px and size only from their own window, embeds above
// the reply text, the last 8 messages mounted and 8 more on scroll up, and `replace` semantics.
import type { Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage } from "../support/browser.ts";
import {
  appendReply,
  chatOfReplies,
  openChat,
  type OpenWebuiHost,
  startOpenWebuiHost,
} from "../support/openwebui-host/index.ts";

// Embed pages on their own origin (the widget is never served by Open WebUI): `?height=N` reports
// N once loaded, `?pong` asks for pong:ack and reports 77 px once it arrives, anything else is silent.
const EMBED_PAGE = `<!doctype html><html><body style="margin:0">embed<script>
  const query = new URLSearchParams(location.search);
  window.addEventListener("message", (event) => {
    if (event.source === parent && event.data && event.data.type === "pong:ack") parent.postMessage({ type: "iframe:height", height: 77 }, "*");
  });
  if (query.has("height")) parent.postMessage({ type: "iframe:height", height: Number(query.get("height")) }, "*");
  if (query.has("pong")) parent.postMessage({ type: "pong" }, "*");
</script></body></html>`;

let browser: Browser;
let host: OpenWebuiHost;
let embeds: Server;
let embedOrigin: string;

beforeAll(async () => {
  embeds = createServer((_request, response) =>
    response.writeHead(200, { "content-type": "text/html" }).end(EMBED_PAGE),
  );
  await new Promise<void>((resolve) => embeds.listen(0, "127.0.0.1", () => resolve()));
  embedOrigin = `http://127.0.0.1:${(embeds.address() as AddressInfo).port}`;
  host = await startOpenWebuiHost();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await host?.stop();
  embeds?.closeAllConnections();
  await new Promise<void>((resolve) => (embeds ? embeds.close(() => resolve()) : resolve()));
});

const embedUrl = (chatId: string, messageId: string, query = "") =>
  `${embedOrigin}/embed/${chatId}/${messageId}${query ? `?${query}` : ""}`;
const frameOf = (page: Page, messageId: string, index = 0) =>
  page.locator(`#${messageId}-embeds-${index} iframe`);
const heightOf = (page: Page, messageId: string) =>
  frameOf(page, messageId).evaluate((iframe) => iframe.getBoundingClientRect().height);
const mountedIds = (page: Page) =>
  page.evaluate(() =>
    (
      window as unknown as { openWebuiHost: { mountedMessageIds(): string[] } }
    ).openWebuiHost.mountedMessageIds(),
  );

async function embedFrame(page: Page, messageId: string): Promise<Frame> {
  const handle = await frameOf(page, messageId).elementHandle();
  const frame = await handle.contentFrame();
  await frame!.waitForLoadState("load");
  return frame!;
}

describe("Open WebUI host page", () => {
  it("mounts sandboxed iframes above the reply text, sized only by their own window", async () => {
    const chatId = "host-sizing";
    host.setChat(chatId, [
      { id: "u1", role: "user", content: "Hi" },
      {
        id: "a1",
        role: "assistant",
        content: "Sized reply",
        embeds: [embedUrl(chatId, "a1", "height=0")],
      },
      { id: "u2", role: "user", content: "Again" },
      { id: "a2", role: "assistant", content: "Silent reply", embeds: [embedUrl(chatId, "a2")] },
      { id: "u3", role: "user", content: "Once more" },
      {
        id: "a3",
        role: "assistant",
        content: "Pong reply",
        embeds: [embedUrl(chatId, "a3", "pong")],
      },
    ]);
    const { page, errors } = await openPage(browser);
    await openChat(page, host, chatId);

    const attributes = await frameOf(page, "a2").evaluate((iframe) =>
      Object.fromEntries(
        ["sandbox", "referrerpolicy", "width", "frameborder", "style", "allow"].map((name) => [
          name,
          iframe.getAttribute(name),
        ]),
      ),
    );
    expect(attributes).toEqual({
      sandbox: "allow-scripts allow-forms allow-popups allow-downloads",
      referrerpolicy: "strict-origin-when-cross-origin",
      width: "100%",
      frameborder: "0",
      style: null,
      allow: null,
    });
    const above = await page.evaluate(() => {
      const embeds = document.getElementById("a2-embeds-container")!;
      const text = embeds.parentElement!.querySelector(".response-content")!;
      return Boolean(embeds.compareDocumentPosition(text) & Node.DOCUMENT_POSITION_FOLLOWING);
    });
    expect(above).toBe(true);

    // Height 0 is applied; pong gets pong:ack (the embed then reports 77 px).
    await expect.poll(() => heightOf(page, "a1")).toBe(0);
    await expect.poll(() => heightOf(page, "a3")).toBe(77);
    expect(await (await embedFrame(page, "a2")).evaluate(() => self.origin)).toBe("null");

    // The top window and a sibling embed post heights; the silent embed ignores both. Messages to a
    // window arrive in the order they were posted, so once the sibling's own height applies, the
    // silent embed has seen them too.
    const sibling = await embedFrame(page, "a1");
    const silent = await embedFrame(page, "a2");
    await page.evaluate(() => window.postMessage({ type: "iframe:height", height: 999 }, "*"));
    await sibling.evaluate(() => parent.postMessage({ type: "iframe:height", height: 333 }, "*"));
    await expect.poll(() => heightOf(page, "a1")).toBe(333);
    expect(await heightOf(page, "a2")).toBe(150);
    expect(await heightOf(page, "a3")).toBe(77);
    // A height that is not a number is ignored; a negative one becomes 0.
    await silent.evaluate(() => parent.postMessage({ type: "iframe:height", height: "40" }, "*"));
    await sibling.evaluate(() => parent.postMessage({ type: "iframe:height", height: 334 }, "*"));
    await expect.poll(() => heightOf(page, "a1")).toBe(334);
    expect(await heightOf(page, "a2")).toBe(150);
    await silent.evaluate(() => parent.postMessage({ type: "iframe:height", height: -5 }, "*"));
    await expect.poll(() => heightOf(page, "a2")).toBe(0);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("mounts the last 8 messages, 8 more on scroll up, and drops the oldest when a reply arrives", async () => {
    const chatId = "host-paging";
    // Silent embeds stay 150 px, so 8 messages overflow the page and the loader starts offscreen
    // (a short chat would keep loading while the loader is visible, as Open WebUI does).
    host.setChat(
      chatId,
      chatOfReplies(12, (_n, messageId) => [embedUrl(chatId, messageId)]),
    );
    const { page, errors } = await openPage(browser, { viewport: { width: 900, height: 600 } });
    await openChat(page, host, chatId);
    expect(await mountedIds(page)).toEqual(["u9", "a9", "u10", "a10", "u11", "a11", "u12", "a12"]);
    expect(await page.locator("iframe").count()).toBe(4);
    await frameOf(page, "a9").evaluate((iframe) =>
      iframe.setAttribute("data-mark", "mounted-first"),
    );

    // Open WebUI keeps loading every 100 ms while its loader stays visible, so on a loaded machine one
    // scroll may bring 16 more rather than 8: what must hold is that older messages arrive 8 at a time,
    // newest first, without a gap.
    const allIds = host.messages(chatId).map((message) => message.id);
    await page.locator("#messages-container").evaluate((container) => (container.scrollTop = 0));
    await expect.poll(async () => (await mountedIds(page)).length).toBeGreaterThanOrEqual(16);
    const afterOneScroll = await mountedIds(page);
    expect([16, 24]).toContain(afterOneScroll.length);
    expect(afterOneScroll).toEqual(allIds.slice(-afterOneScroll.length));
    if (afterOneScroll.length === 16) {
      expect(afterOneScroll[0]).toBe("u5");
      await page.locator("#messages-container").evaluate((container) => (container.scrollTop = 0));
    }
    await expect.poll(() => mountedIds(page)).toEqual(allIds);
    await page.locator(".loader").waitFor({ state: "detached" });
    // Mounted first, never torn down or moved.
    expect(await frameOf(page, "a9").getAttribute("data-mark")).toBe("mounted-first");

    await appendReply(page, { id: "u13", content: "New question" }, { id: "a13", content: "" });
    expect((await mountedIds(page)).slice(-2)).toEqual(["u13", "a13"]);
    expect(await mountedIds(page)).toHaveLength(24);
    expect((await mountedIds(page))[0]).toBe("u2");
    expect(
      host
        .messages(chatId)
        .map((message) => message.id)
        .slice(-2),
    ).toEqual(["u13", "a13"]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("applies an embeds event as the tab and the backend do, with and without replace", async () => {
    const chatId = "host-replace";
    host.setChat(
      chatId,
      chatOfReplies(2, (n, messageId) =>
        n === 1 ? [embedUrl(chatId, messageId, "height=20")] : [],
      ),
    );
    const { page, errors } = await openPage(browser);
    await openChat(page, host, chatId);
    expect(await page.locator("#a2-embeds-container").count()).toBe(0);
    await expect.poll(() => heightOf(page, "a1")).toBe(20);
    await frameOf(page, "a1").evaluate((iframe) => iframe.setAttribute("data-mark", "first"));

    // replace: the same iframe (same element, height kept) now loads the new URL.
    const second = embedUrl(chatId, "a1", "second");
    host.emit(chatId, "a1", { type: "embeds", data: { embeds: [second], replace: true } });
    await expect.poll(() => frameOf(page, "a1").getAttribute("src")).toBe(second);
    expect(await frameOf(page, "a1").getAttribute("data-mark")).toBe("first");
    expect(await heightOf(page, "a1")).toBe(20);
    expect(host.messages(chatId).find((message) => message.id === "a1")?.embeds).toEqual([second]);

    // Without replace the backend prepends, but the open tab shows only what the event carried.
    const third = embedUrl(chatId, "a1", "third");
    host.emit(chatId, "a1", { type: "embeds", data: { embeds: [third] } });
    await expect.poll(() => frameOf(page, "a1").getAttribute("src")).toBe(third);
    expect(await page.locator("#a1-embeds-container iframe").count()).toBe(1);
    expect(host.messages(chatId).find((message) => message.id === "a1")?.embeds).toEqual([
      third,
      second,
    ]);

    // An embed for a reply that had none creates its container; an empty list removes it.
    const fresh = embedUrl(chatId, "a2", "height=10");
    host.emit(chatId, "a2", { type: "embeds", data: { embeds: [fresh], replace: true } });
    await expect.poll(() => heightOf(page, "a2")).toBe(10);
    host.emit(chatId, "a1", { type: "embeds", data: { embeds: [], replace: true } });
    await page.locator("#a1-embeds-container").waitFor({ state: "detached" });

    // A reload mounts what was stored.
    await openChat(page, host, chatId);
    expect(await page.locator("#a1-embeds-container").count()).toBe(0);
    expect(await frameOf(page, "a2").getAttribute("src")).toBe(fresh);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
