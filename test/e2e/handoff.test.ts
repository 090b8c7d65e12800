// Two browser contexts (two tabs, or a tab and a phone) on the same chat: the card moves to the newer
// one, and reloading the older one moves it back, once.
import { describe, expect, inject, it } from "vitest";
import { openPage } from "../support/browser.ts";
import { createQuestion, UI_TIMEOUT, uniqueChat, useE2e, waitAnswer } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");

describe.skipIf(!gatewayUrl)("handoff between tabs", () => {
  const e2e = useE2e();

  it("moves the card to the newer tab, and back to the old one when it reloads", async () => {
    const chat = uniqueChat("handoff");
    const older = await openPage(e2e.browser);
    const newer = await openPage(e2e.browser);

    await older.page.goto(await e2e.embedUrl(chat));
    await older.page
      .locator('main[data-widget="live"][data-pending="0"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    const id = await createQuestion(e2e.requester, chat);
    const answered = waitAnswer(e2e.requester, id);
    const optionIn = (page: typeof older.page) => page.getByRole("radio", { name: /^Postgres/ });
    await optionIn(older.page).waitFor({ timeout: UI_TIMEOUT });

    // A newer tab opens the chat: the card moves there.
    await newer.page.goto(await e2e.embedUrl(chat));
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
    expect(await answered).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["Postgres"] } },
    });
    expect(older.errors).toEqual([]);
    expect(newer.errors).toEqual([]);
    await older.context.close();
    await newer.context.close();
  });
});
