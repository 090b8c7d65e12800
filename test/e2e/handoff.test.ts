// Two browser contexts (two tabs, or a tab and a phone) on the same chat: the card moves to the newer
// one, and reloading the older one moves it back, once.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAppServer, type AppServer } from "../support/app-server.ts";
import { launchBrowser, openPage } from "../support/browser.ts";
import { connectOperator, type OperatorConnection } from "../support/gateway-client.ts";
import { UI_TIMEOUT, createQuestion, uniqueChat, waitAnswer } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");
const gatewayToken = inject("gatewayToken");

describe.skipIf(!gatewayUrl)("handoff between tabs", () => {
  let app: AppServer;
  let browser: Browser;
  let requester: OperatorConnection;

  beforeAll(async () => {
    app = await startAppServer({ gatewayUrl, gatewayToken });
    browser = await launchBrowser();
    requester = await connectOperator({ url: gatewayUrl, token: gatewayToken, displayName: "requester" });
  });

  afterAll(async () => {
    await browser?.close();
    await requester?.stop();
    await app?.stop();
  });

  it("moves the card to the newer tab, and back to the old one when it reloads", async () => {
    const chat = uniqueChat("handoff");
    const embedUrl = async () => `${app.url}/embed/chat/${chat}?token=${await app.mintToken("owner", chat)}`;
    const older = await openPage(browser);
    const newer = await openPage(browser);

    await older.page.goto(await embedUrl());
    await older.page.getByText("Nothing pending").waitFor({ timeout: UI_TIMEOUT });
    const id = await createQuestion(requester, chat);
    const answered = waitAnswer(requester, id);
    const optionIn = (page: typeof older.page) => page.getByRole("radio", { name: /^Postgres/ });
    await optionIn(older.page).waitFor({ timeout: UI_TIMEOUT });

    // A newer tab opens the chat: the card moves there.
    await newer.page.goto(await embedUrl());
    await optionIn(newer.page).waitFor({ timeout: UI_TIMEOUT });
    await older.page.getByText("Moved to a newer tab").waitFor({ timeout: UI_TIMEOUT });
    expect(await optionIn(older.page).count()).toBe(0);

    // The older tab reloads (its token survives the reload, though not in the address bar): back again.
    await older.page.reload();
    expect(older.page.url()).not.toContain("token=");
    await optionIn(older.page).waitFor({ timeout: UI_TIMEOUT });
    await newer.page.getByText("Moved to a newer tab").waitFor({ timeout: UI_TIMEOUT });
    expect(await optionIn(newer.page).count()).toBe(0);
    // Once: one card, on one tab.
    expect(await older.page.locator(`[data-ask-id="${id}"]`).count()).toBe(1);

    await optionIn(older.page).click();
    await older.page.getByRole("button", { name: "Submit" }).click();
    expect(await answered).toMatchObject({ status: "answered", answers: { answers: { db: ["Postgres"] } } });
    expect(older.errors).toEqual([]);
    expect(newer.errors).toEqual([]);
    await older.context.close();
    await newer.context.close();
  });
});
