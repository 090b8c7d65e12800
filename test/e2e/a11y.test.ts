// axe-core on the widget (question + approval + a finished record) and on the dashboard, in light and
// dark, at desktop and phone width: no serious or critical violation.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAppServer, type AppServer } from "../support/app-server.ts";
import { launchBrowser, openPage } from "../support/browser.ts";
import { connectOperator, type OperatorConnection } from "../support/gateway-client.ts";
import { UI_TIMEOUT, createQuestion, requestApproval, seriousViolations, uniqueChat, waitAnswer } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");
const gatewayToken = inject("gatewayToken");

describe.skipIf(!gatewayUrl)("accessibility (axe-core)", () => {
  let app: AppServer;
  let browser: Browser;
  let requester: OperatorConnection;
  const chat = uniqueChat("axe");

  beforeAll(async () => {
    app = await startAppServer({ gatewayUrl, gatewayToken });
    browser = await launchBrowser();
    requester = await connectOperator({ url: gatewayUrl, token: gatewayToken, displayName: "requester" });
    // One finished ask (for the ❓ Ask User record), then a pending question and a pending approval.
    const finished = await createQuestion(requester, chat, [
      { questionId: "db", header: "Database", question: "Which database?", options: [{ label: "Postgres" }, { label: "SQLite" }] },
    ]);
    const finishedAnswer = waitAnswer(requester, finished);
    const { page, context } = await openPage(browser);
    await page.goto(`${app.url}/embed/chat/${chat}?token=${await app.mintToken("owner", chat)}`);
    await page.getByRole("radio", { name: /^SQLite/ }).click({ timeout: UI_TIMEOUT });
    await page.getByRole("button", { name: "Submit" }).click();
    await finishedAnswer;
    await context.close();
    await createQuestion(requester, chat, [
      { questionId: "db", header: "Database", question: "Which database?", options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }] },
      { questionId: "tags", header: "Toppings", question: "Which toppings?", multiSelect: true, options: [{ label: "Cheese" }, { label: "Mushrooms" }, { label: "Olives" }] },
    ]);
    void requestApproval(requester, chat, {
      title: "Run a shell command",
      description: "The agent wants to delete build artifacts.",
      detail: "rm -rf ./dist ./build\n".repeat(20),
      severity: "critical",
    });
  });

  afterAll(async () => {
    await browser?.close();
    await requester?.stop();
    await app?.stop();
  });

  const widgetPage = async (colorScheme: "light" | "dark", width: number): Promise<Page> => {
    const { page } = await openPage(browser, { colorScheme, viewport: { width, height: 900 } });
    await page.goto(`${app.url}/embed/chat/${chat}?token=${await app.mintToken("owner", chat)}`);
    await page.getByRole("radio", { name: /^Postgres/ }).waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole("button", { name: "Deny" }).waitFor({ timeout: UI_TIMEOUT });
    // A finished ask during this page's life leaves a ❓ Ask User record: answer a quick one here.
    const quick = await createQuestion(requester, chat, [
      { questionId: "ok", header: "Quick", question: `Ready for the ${colorScheme} check?`, options: [{ label: "Ready" }, { label: "Not yet" }] },
    ]);
    const quickAnswer = waitAnswer(requester, quick);
    await page.getByRole("radio", { name: /^Ready/ }).click({ timeout: UI_TIMEOUT });
    await page.locator(`[data-ask-id="${quick}"]`).getByRole("button", { name: "Submit" }).click();
    await quickAnswer;
    await page.getByText("❓ Ask User").first().waitFor({ timeout: UI_TIMEOUT });
    return page;
  };

  const dashboardPage = async (colorScheme: "light" | "dark", width: number): Promise<Page> => {
    const { page } = await openPage(browser, { colorScheme, viewport: { width, height: 900 } });
    await page.goto(`${app.url}/?token=${await app.mintToken("owner")}`);
    await page.getByRole("listitem").filter({ hasText: chat }).first().waitFor({ timeout: UI_TIMEOUT });
    return page;
  };

  for (const [colorScheme, width] of [["light", 900], ["dark", 360]] as const) {
    it(`widget, ${colorScheme}, ${width}px`, async () => {
      const page = await widgetPage(colorScheme, width);
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    });

    it(`dashboard, ${colorScheme}, ${width}px`, async () => {
      const page = await dashboardPage(colorScheme, width);
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole("tab", { name: /History/ }).click();
      await page.getByRole("row").filter({ hasText: chat }).first().waitFor({ timeout: UI_TIMEOUT });
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    });
  }
});
