// The owners' dashboard against the real Gateway: pending asks of two chats, one answered inline in its
// opened row, two plugin approvals denied in one bulk action (their requesters get "deny"), and the
// history; a notification's `#ask=` address that does not decode. The inbox's order, triage keys and
// filters are in inbox.test.ts.
import { describe, expect, inject, it } from "vitest";
import { openPage } from "../support/browser.ts";
import {
  createQuestion,
  requestApproval,
  UI_TIMEOUT,
  uniqueChat,
  useE2e,
  waitAnswer,
} from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");

describe.skipIf(!gatewayUrl)("dashboard", () => {
  const e2e = useE2e();

  it("lists asks of two chats, answers one inline and bulk-denies two approvals", async () => {
    const chatA = uniqueChat("dash-a");
    const chatB = uniqueChat("dash-b");
    const questionId = await createQuestion(e2e.requester, chatA);
    const answered = waitAnswer(e2e.requester, questionId);
    const titleA = `Deploy ${chatA}`;
    const titleB = `Delete files in ${chatB}`;
    const approvalA = requestApproval(e2e.requester, chatA, {
      title: titleA,
      severity: "critical",
    });
    const approvalB = requestApproval(e2e.requester, chatB, { title: titleB });

    const { page, errors } = await openPage(e2e.browser, {
      viewport: { width: 1100, height: 900 },
    });
    await page.goto(await e2e.dashboardUrl());
    await page.getByText("Gateway connected").waitFor({ timeout: UI_TIMEOUT });
    expect(page.url()).not.toContain("token=");

    // Each ask by its chat and text (the file's own agent sees no other test file's asks).
    const item = (chat: string, text: string) =>
      page.getByRole("listitem").filter({ hasText: chat }).filter({ hasText: text });
    const question = item(chatA, "Which database?");
    await question.waitFor({ timeout: UI_TIMEOUT });
    await item(chatA, titleA).waitFor({ timeout: UI_TIMEOUT });
    await item(chatB, titleB).waitFor({ timeout: UI_TIMEOUT });

    // Open its row and answer the question inline, with the same card the widget uses.
    await question.locator("[data-row-toggle]").click();
    await question.getByRole("radio", { name: /^Postgres/ }).click();
    await question.getByRole("button", { name: "Submit" }).click();
    expect(await answered).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["Postgres"] } },
    });
    await question.waitFor({ state: "detached", timeout: UI_TIMEOUT });

    // Select both approvals and deny them in one action.
    await page.getByRole("checkbox", { name: `Select: ${titleA}` }).check();
    await page.getByRole("checkbox", { name: `Select: ${titleB}` }).check();
    await page.getByRole("button", { name: "Deny or cancel selected" }).click();
    expect(await approvalA).toMatchObject({ decision: "deny" });
    expect(await approvalB).toMatchObject({ decision: "deny" });
    await page.getByText("2 asks denied or cancelled.").waitFor({ timeout: UI_TIMEOUT });
    await item(chatA, titleA).waitFor({ state: "detached", timeout: UI_TIMEOUT });
    await item(chatB, titleB).waitFor({ state: "detached", timeout: UI_TIMEOUT });

    // History: who answered, the outcome.
    await page.getByRole("tab", { name: /History/ }).click();
    const history = page.getByRole("tabpanel", { name: /History/ });
    const row = (text: string) => history.getByRole("row").filter({ hasText: text });
    await row(titleA).waitFor({ timeout: UI_TIMEOUT });
    await expect.poll(() => row(titleA).textContent()).toContain("Deny");
    await expect.poll(() => row(titleA).textContent()).toContain("owner");
    await expect.poll(() => row(titleB).textContent()).toContain("Deny");
    await expect
      .poll(() =>
        history
          .getByRole("row")
          .filter({ hasText: chatA })
          .filter({ hasText: "Database" })
          .textContent(),
      )
      .toContain("Postgres");
    expect(errors).toEqual([]);
  });

  it("22.9 an #ask= address that is not valid percent-encoding is ignored: the dashboard runs and lists the asks", async () => {
    const chat = uniqueChat("dash-hash");
    const questionId = await createQuestion(e2e.requester, chat);
    const { page, errors } = await openPage(e2e.browser);
    await page.goto(`${await e2e.dashboardUrl()}#ask=%E0%A4%A`);
    await page.getByRole("listitem").filter({ hasText: chat }).waitFor({ timeout: UI_TIMEOUT });
    expect(errors).toEqual([]);
    await page.context().close();
    // A well-formed one still opens its row.
    const opened = await openPage(e2e.browser);
    await opened.page.goto(`${await e2e.dashboardUrl()}#ask=${encodeURIComponent(questionId)}`);
    await opened.page
      .getByRole("listitem")
      .filter({ hasText: chat })
      .getByRole("radio", { name: /^Postgres/ })
      .waitFor({ timeout: UI_TIMEOUT });
    expect(opened.errors).toEqual([]);
    await opened.context.close();
  });
});
