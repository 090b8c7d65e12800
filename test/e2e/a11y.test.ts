// axe-core on the widget (question + approval + a finished record) and on the dashboard, in light and
// dark, at desktop and phone width: no serious or critical violation.
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { openPage } from "../support/browser.ts";
import {
  createQuestion,
  requestApproval,
  seriousViolations,
  UI_TIMEOUT,
  uniqueChat,
  useE2e,
  waitAnswer,
} from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");

describe.skipIf(!gatewayUrl)("accessibility (axe-core)", () => {
  const chat = uniqueChat("axe");
  const e2e = useE2e();

  beforeAll(async () => {
    // One finished ask (for the ❓ Ask User record), then a pending question and a pending approval.
    const finished = await createQuestion(e2e.requester, chat, [
      {
        questionId: "db",
        header: "Database",
        question: "Which database?",
        options: [{ label: "Postgres" }, { label: "SQLite" }],
      },
    ]);
    const finishedAnswer = waitAnswer(e2e.requester, finished);
    const { page, context } = await openPage(e2e.browser);
    await page.goto(await e2e.embedUrl(chat));
    await page.getByRole("radio", { name: /^SQLite/ }).click({ timeout: UI_TIMEOUT });
    await page.getByRole("button", { name: "Submit" }).click();
    await finishedAnswer;
    await context.close();
    await createQuestion(e2e.requester, chat, [
      {
        questionId: "db",
        header: "Database",
        question: "Which database?",
        options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }],
      },
      {
        questionId: "tags",
        header: "Toppings",
        question: "Which toppings?",
        multiSelect: true,
        options: [{ label: "Cheese" }, { label: "Mushrooms" }, { label: "Olives" }],
      },
    ]);
    void requestApproval(e2e.requester, chat, {
      title: "Run a shell command",
      description: "The agent wants to delete build artifacts.",
      detail: "rm -rf ./dist ./build\n".repeat(20),
      severity: "critical",
    });
  });

  const widgetPage = async (colorScheme: "light" | "dark", width: number): Promise<Page> => {
    const { page } = await openPage(e2e.browser, { colorScheme, viewport: { width, height: 900 } });
    await page.goto(await e2e.embedUrl(chat));
    await page.getByRole("radio", { name: /^Postgres/ }).waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole("button", { name: "Deny" }).waitFor({ timeout: UI_TIMEOUT });
    // A finished ask during this page's life leaves a ❓ Ask User record: answer a quick one here.
    const quick = await createQuestion(e2e.requester, chat, [
      {
        questionId: "ok",
        header: "Quick",
        question: `Ready for the ${colorScheme} check?`,
        options: [{ label: "Ready" }, { label: "Not yet" }],
      },
    ]);
    const quickAnswer = waitAnswer(e2e.requester, quick);
    await page.getByRole("radio", { name: /^Ready/ }).click({ timeout: UI_TIMEOUT });
    await page.locator(`[data-ask-id="${quick}"]`).getByRole("button", { name: "Submit" }).click();
    await quickAnswer;
    await page.getByText("❓ Ask User").first().waitFor({ timeout: UI_TIMEOUT });
    return page;
  };

  const dashboardPage = async (colorScheme: "light" | "dark", width: number): Promise<Page> => {
    const { page } = await openPage(e2e.browser, { colorScheme, viewport: { width, height: 900 } });
    await page.goto(await e2e.dashboardUrl());
    const rows = page.locator("[data-inbox-row]").filter({ hasText: chat });
    await rows.first().waitFor({ timeout: UI_TIMEOUT });
    // Open every row of this file's chat, so the cards inside are checked too.
    for (const row of await rows.all())
      await row.locator('[data-row-toggle][aria-expanded="false"]').click();
    await page
      .getByRole("radio", { name: /^Postgres/ })
      .first()
      .waitFor({ timeout: UI_TIMEOUT });
    return page;
  };

  for (const [colorScheme, width] of [
    ["light", 900],
    ["dark", 360],
  ] as const) {
    it(`widget, ${colorScheme}, ${width}px`, async () => {
      const page = await widgetPage(colorScheme, width);
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    });

    it(`dashboard, ${colorScheme}, ${width}px`, async () => {
      const page = await dashboardPage(colorScheme, width);
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole("tab", { name: /History/ }).click();
      await page
        .getByRole("row")
        .filter({ hasText: chat })
        .first()
        .waitFor({ timeout: UI_TIMEOUT });
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    });
  }
});
