// Screenshots of the widget and the dashboard (light, dark, phone width) for people to look at:
// test-results/screenshots/*.png. They assert only that the pages rendered what they should.
import { randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { openPage } from "../support/browser.ts";
import { stubScript } from "../support/stub-model.ts";
import { UI_TIMEOUT, createQuestion, requestApproval, screenshotPath, sessionKeyFor, uniqueChat, useE2e, waitAnswer } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");
const stubModelUrl = inject("stubModelUrl");

describe.skipIf(!gatewayUrl)("screenshots", () => {
  const e2e = useE2e({ hostPage: true });

  const openWidget = async (chat: string, options: { colorScheme?: "light" | "dark"; width?: number } = {}): Promise<Page> => {
    const { page } = await openPage(e2e.browser, { colorScheme: options.colorScheme ?? "light", viewport: { width: options.width ?? 720, height: 900 } });
    await page.goto(await e2e.embedUrl(chat));
    await page.getByText("Nothing pending").waitFor({ timeout: UI_TIMEOUT });
    return page;
  };

  it("widget with a pending question (light, and inside the host page)", async () => {
    const chat = uniqueChat("shot-q");
    const page = await openWidget(chat);
    // A finished one first, so the ❓ Ask User record shows above the pending card.
    const done = await createQuestion(e2e.requester, chat, [
      { questionId: "env", header: "Environment", question: "Deploy to which environment?", options: [{ label: "Staging" }, { label: "Production" }] },
    ]);
    const doneAnswer = waitAnswer(e2e.requester, done);
    await page.getByRole("radio", { name: /^Staging/ }).click({ timeout: UI_TIMEOUT });
    await page.getByRole("button", { name: "Submit" }).click();
    await doneAnswer;
    await createQuestion(e2e.requester, chat, [
      {
        questionId: "db",
        header: "Database",
        question: "Which database should the new service use?",
        options: [
          { label: "Postgres", description: "Needs a server; best for concurrent writes" },
          { label: "SQLite", description: "A single file next to the app" },
          { label: "MySQL" },
        ],
      },
    ]);
    await page.getByRole("radio", { name: /^Postgres/ }).waitFor({ timeout: UI_TIMEOUT });
    await page.screenshot({ path: screenshotPath("widget-question-light"), fullPage: true });

    // The same chat, framed the way Open WebUI frames it (the card moves to this newer view).
    const { page: hostPage } = await openPage(e2e.browser, { viewport: { width: 760, height: 700 } });
    await hostPage.goto(e2e.host.urlFor(await e2e.embedUrl(chat)));
    await hostPage.frameLocator("iframe#widget").getByRole("radio", { name: /^Postgres/ }).waitFor({ timeout: UI_TIMEOUT });
    await expect.poll(() => hostPage.evaluate(() => (window as unknown as { __heights: number[] }).__heights.at(-1) ?? 0)).toBeGreaterThan(200);
    await hostPage.screenshot({ path: screenshotPath("widget-in-host-page"), fullPage: true });
    await page.getByText("Moved to a newer tab").waitFor({ timeout: UI_TIMEOUT });
    await page.screenshot({ path: screenshotPath("widget-moved"), fullPage: true });
    await page.context().close();
    await hostPage.context().close();
  });

  it("widget with three steps and an approval (dark, 360 px), and Hebrew (RTL)", async () => {
    const chat = uniqueChat("shot-dark");
    const page = await openWidget(chat, { colorScheme: "dark", width: 360 });
    await createQuestion(e2e.requester, chat, [
      { questionId: "db", header: "Database", question: "Which database?", options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }] },
      { questionId: "tags", header: "Toppings", question: "Which toppings?", multiSelect: true, options: [{ label: "Cheese" }, { label: "Mushrooms" }, { label: "Olives" }] },
      { questionId: "go", header: "Go ahead", question: "Start now?", options: [{ label: "Yes" }, { label: "Later" }] },
    ]);
    void requestApproval(e2e.requester, chat, {
      title: "Run a shell command",
      description: "The agent wants to clean the build folders before deploying.",
      detail: `rm -rf ./dist ./build ./.cache\n${"find . -name '*.log' -delete\n".repeat(12)}`,
      severity: "critical",
      toolName: "shell.run",
      pluginId: "safety-gate",
    });
    await page.getByRole("button", { name: "Deny" }).waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole("radio", { name: /^Postgres/ }).click();
    await page.keyboard.press("Enter");
    await page.getByRole("checkbox", { name: /^Cheese/ }).check();
    await page.getByRole("checkbox", { name: /^Olives/ }).check();
    await page.screenshot({ path: screenshotPath("widget-steps-approval-dark-360"), fullPage: true });
    await page.context().close();

    const hebrew = uniqueChat("shot-he");
    const rtl = await openWidget(hebrew, { width: 420 });
    await createQuestion(e2e.requester, hebrew, [
      { questionId: "db", header: "מסד נתונים", question: "באיזה מסד נתונים להשתמש?", options: [{ label: "Postgres", description: "דורש שרת" }, { label: "SQLite", description: "קובץ יחיד" }] },
    ]);
    await rtl.getByRole("radio", { name: /^Postgres/ }).waitFor({ timeout: UI_TIMEOUT });
    expect(await rtl.locator("form[data-ask-id]").getAttribute("dir")).toBe("rtl");
    await rtl.screenshot({ path: screenshotPath("widget-hebrew-rtl"), fullPage: true });
    await rtl.context().close();
  });

  it.skipIf(!stubModelUrl)("widget with the secret dialog", async () => {
    const chat = uniqueChat("shot-secret");
    const page = await openWidget(chat, { width: 480 });
    await e2e.requester.request("chat.send", {
      sessionKey: sessionKeyFor(chat),
      idempotencyKey: randomUUID(),
      message: stubScript({
        tool: { id: "secrets", args: { action: "request", name: "GITHUB_TOKEN", reason: "To open the pull request for you", allowedHosts: ["api.github.com"], timeoutSeconds: 120 } },
      }),
    });
    const dialog = page.getByRole("dialog", { name: "GITHUB_TOKEN" });
    await dialog.waitFor({ timeout: 60_000 });
    await dialog.getByLabel("GITHUB_TOKEN").fill("not-a-real-token");
    await page.screenshot({ path: screenshotPath("widget-secret-dialog"), fullPage: true });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await page.getByText("Secret request cancelled").waitFor({ timeout: UI_TIMEOUT });
    await page.context().close();
  });

  it("dashboard (light and dark at 360 px), and its history", async () => {
    const chatA = uniqueChat("shot-dash-a");
    const chatB = uniqueChat("shot-dash-b");
    await createQuestion(e2e.requester, chatA, [
      { questionId: "db", header: "Database", question: "Which database?", options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }] },
    ]);
    void requestApproval(e2e.requester, chatB, { title: "Send an email to the team", description: "The agent wants to email 14 people.", severity: "warning", toolName: "mail.send", pluginId: "mailer" });
    const finished = await createQuestion(e2e.requester, chatB, [
      { questionId: "tone", header: "Tone", question: "Formal or casual?", options: [{ label: "Formal" }, { label: "Casual" }] },
    ]);
    const finishedAnswer = waitAnswer(e2e.requester, finished);

    // Other test files share the Gateway, so the list holds their asks too: the shots are of the
    // viewport, scrolled to this test's asks.
    const { page } = await openPage(e2e.browser, { viewport: { width: 1280, height: 1000 } });
    await page.goto(await e2e.dashboardUrl());
    const ofChat = (chat: string) => page.getByRole("listitem").filter({ hasText: chat });
    await ofChat(chatA).first().waitFor({ timeout: UI_TIMEOUT });
    await ofChat(chatB).filter({ hasText: "Send an email" }).waitFor({ timeout: UI_TIMEOUT });
    await ofChat(chatB).filter({ hasText: "Formal or casual?" }).getByRole("radio", { name: /^Casual/ }).click();
    await ofChat(chatB).filter({ hasText: "Formal or casual?" }).getByRole("button", { name: "Submit" }).click();
    await finishedAnswer;
    await ofChat(chatB).filter({ hasText: "Send an email" }).getByRole("checkbox", { name: "Select: Send an email to the team" }).check();
    await page.screenshot({ path: screenshotPath("dashboard-light-top") });
    await ofChat(chatA).first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshotPath("dashboard-light") });

    await page.getByRole("tab", { name: /History/ }).click();
    await page.getByRole("row").filter({ hasText: chatB }).first().waitFor({ timeout: UI_TIMEOUT });
    await page.screenshot({ path: screenshotPath("dashboard-history") });
    await page.context().close();

    const { page: phone } = await openPage(e2e.browser, { colorScheme: "dark", viewport: { width: 360, height: 800 } });
    await phone.goto(await e2e.dashboardUrl());
    await phone.getByRole("listitem").filter({ hasText: chatA }).first().waitFor({ timeout: UI_TIMEOUT });
    await phone.screenshot({ path: screenshotPath("dashboard-dark-360-top") });
    await phone.getByRole("listitem").filter({ hasText: chatB }).filter({ hasText: "Send an email" }).scrollIntoViewIfNeeded();
    await phone.screenshot({ path: screenshotPath("dashboard-dark-360") });
    await phone.context().close();
  });
});
