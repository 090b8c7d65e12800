// The dashboard's inbox against the real Gateway, at phone (390 px) and desktop (1280 px) width: the
// urgency order (critical approvals first, then time left), the exec approval's honest title and
// severity, compact rows that open in place, chat links into Open WebUI, 44 px touch targets and no
// sideways scrolling, axe; new asks that do not move the focused row; keyboard triage (j/k, Enter,
// number keys, a, d, ?), where the focus goes when a row leaves; and the history's filters.
//
// The app runs as this file's own agent, so no other test file's asks appear in this inbox and the
// order seen is the order of this file's asks.
import type { Locator, Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { openPage } from "../support/browser.ts";
import type { OperatorConnection, Payload } from "../support/gateway-client.ts";
import {
  requestQuestion,
  sessionKeyOf,
  silence,
  TEST_AGENT,
  waitAnswer,
} from "../support/on-gateway.ts";
import { seriousViolations, UI_TIMEOUT, uniqueChat, useE2e } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");

const OPENWEBUI_URL = "https://chat.example.test";
const DESTRUCTIVE = "rm -rf ./build && npm run deploy -- --prod";

type Decided = Promise<Payload>;

function question(
  requester: OperatorConnection,
  chat: string,
  text: string,
  timeoutMs = 600_000,
): Promise<string> {
  return requestQuestion(requester, sessionKeyOf(chat), {
    agentId: TEST_AGENT,
    timeoutMs,
    questions: [
      {
        questionId: "db",
        header: "Database",
        question: text,
        options: [{ label: "Postgres" }, { label: "SQLite" }],
      },
    ],
  }).then((created) => created.id);
}

function pluginApproval(
  requester: OperatorConnection,
  chat: string,
  title: string,
  severity: "warning" | "critical",
  timeoutMs = 300_000,
): Decided {
  return silence(
    requester.request<Payload>(
      "plugin.approval.request",
      {
        pluginId: "inbox-e2e",
        title,
        description: "The inbox test wants to run a tool.",
        severity,
        toolName: "shell.run",
        agentId: TEST_AGENT,
        sessionKey: sessionKeyOf(chat),
        timeoutMs,
      },
      { timeoutMs: timeoutMs + 30_000 },
    ),
  );
}

function execApproval(
  requester: OperatorConnection,
  chat: string,
  command: string,
  timeoutMs = 600_000,
): Decided {
  return silence(
    requester.request<Payload>(
      "exec.approval.request",
      {
        command,
        host: "gateway",
        cwd: "/srv/app",
        agentId: TEST_AGENT,
        sessionKey: sessionKeyOf(chat),
        timeoutMs,
      },
      { timeoutMs: timeoutMs + 30_000 },
    ),
  );
}

const rows = (page: Page, chat: string): Locator =>
  page.locator("[data-inbox-row]").filter({ hasText: chat });
const row = (page: Page, chat: string, text: string): Locator =>
  rows(page, chat).filter({ hasText: text });
const toggle = (target: Locator): Locator => target.locator("[data-row-toggle]");

/** The ask id of the row that holds the keyboard focus. */
function focusedRow(page: Page): Promise<string | null> {
  return page.evaluate(
    () =>
      document.activeElement?.closest<HTMLElement>("[data-inbox-row]")?.dataset.inboxRow ?? null,
  );
}

function rowIds(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>("[data-inbox-row]")].map(
      (element) => element.dataset.inboxRow ?? "",
    ),
  );
}

describe.skipIf(!gatewayUrl)("inbox", () => {
  const e2e = useE2e({ env: { OPENWEBUI_URL } });

  for (const width of [1280, 390]) {
    it(`${width} px: most urgent first, compact rows that open in place, links to the chat, touch-sized, axe-clean`, async () => {
      const chat = uniqueChat(`inbox-${width}`);
      const decided: Decided[] = [];
      await question(e2e.requester, chat, `Which database, ${width}?`);
      decided.push(
        pluginApproval(e2e.requester, chat, `Send the weekly report ${width}`, "warning"),
      );
      decided.push(execApproval(e2e.requester, chat, DESTRUCTIVE));
      decided.push(pluginApproval(e2e.requester, chat, `Pay invoice ${width}`, "critical"));

      const { page, errors } = await openPage(e2e.browser, { viewport: { width, height: 900 } });
      await page.goto(await e2e.dashboardUrl());
      await expect.poll(() => rows(page, chat).count(), { timeout: UI_TIMEOUT }).toBe(4);

      // Critical approvals first (the sooner expiry first), then by time left: the 5-minute approval
      // before the 10-minute question.
      const titles = await rows(page, chat).locator("[data-row-toggle]").allInnerTexts();
      expect(titles.map((text) => text.replace(/\s+/g, " "))).toEqual([
        expect.stringMatching(new RegExp(`^Critical approval Pay invoice ${width} \\d+ min left$`)),
        expect.stringMatching(
          /^Critical approval Run rm -rf \.\/build && npm run deploy -- --prod \d+ min left$/,
        ),
        expect.stringMatching(
          new RegExp(`^Approval Send the weekly report ${width} \\d+ min left$`),
        ),
        expect.stringMatching(new RegExp(`^Question Which database, ${width}\\? \\d+ min left$`)),
      ]);

      // A row: its checkbox inside it, the chat as a link back into Open WebUI, no card until opened.
      const exec = row(page, chat, "Run rm -rf");
      await exec.getByRole("checkbox", { name: `Select: Run ${DESTRUCTIVE}` }).waitFor();
      expect(await exec.getByRole("link", { name: new RegExp(chat) }).getAttribute("href")).toBe(
        `${OPENWEBUI_URL}/c/${chat}`,
      );
      expect(await exec.getByRole("button", { name: "Deny" }).count()).toBe(0);
      expect(await toggle(exec).getAttribute("aria-expanded")).toBe("false");

      // Opens in place: the card is inside the row, and the next row still follows it.
      await toggle(exec).click();
      expect(await toggle(exec).getAttribute("aria-expanded")).toBe("true");
      const card = exec.locator('[data-severity="critical"]');
      await card.waitFor({ timeout: UI_TIMEOUT });
      expect(await card.getByRole("code").or(card.locator("code")).first().innerText()).toBe(
        DESTRUCTIVE,
      );
      await card.getByRole("button", { name: "Deny" }).waitFor();
      const [rowBox, cardBox, nextBox] = await Promise.all([
        exec.boundingBox(),
        card.boundingBox(),
        row(page, chat, "Send the weekly report").boundingBox(),
      ]);
      expect(cardBox!.y).toBeGreaterThan(rowBox!.y);
      expect(cardBox!.y + cardBox!.height).toBeLessThanOrEqual(rowBox!.y + rowBox!.height + 1);
      expect(nextBox!.y).toBeGreaterThanOrEqual(rowBox!.y + rowBox!.height);
      await toggle(row(page, chat, "Which database")).click();
      await row(page, chat, "Which database")
        .getByRole("radio", { name: /^SQLite/ })
        .waitFor({ timeout: UI_TIMEOUT });

      // No sideways scrolling, and every control of the inbox is at least 44 px tall (and a checkbox's target as wide).
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      ).toBe(true);
      const small = await page.evaluate(() =>
        [
          ...document.querySelectorAll<HTMLElement>(
            "[role=tabpanel]:not([hidden]) :is(button, a, label, select, input[type=search]), [role=tablist] button, header button",
          ),
        ]
          .filter((element) => element.getClientRects().length > 0 && !element.closest("p"))
          .map((element) => ({ element, box: element.getBoundingClientRect() }))
          .filter(
            ({ element, box }) =>
              box.height < 44 ||
              (element.matches("label:has(> input[type=checkbox]:only-child)") && box.width < 44),
          )
          .map(
            ({ element, box }) =>
              `${element.tagName} "${element.textContent?.trim().slice(0, 30)}" ${Math.round(box.width)}x${Math.round(box.height)}`,
          ),
      );
      expect(small).toEqual([]);

      expect(await seriousViolations(page)).toEqual([]);

      // Clear this test's asks in one bulk action; the approvals' requesters hear "deny".
      for (const target of await rows(page, chat).all()) await target.getByRole("checkbox").check();
      await page.getByRole("button", { name: "Deny or cancel selected" }).click();
      for (const decision of decided) expect(await decision).toMatchObject({ decision: "deny" });
      await expect.poll(() => rows(page, chat).count(), { timeout: UI_TIMEOUT }).toBe(0);
      expect(errors).toEqual([]);
      await page.context().close();
    });
  }

  it("a new ask that sorts above the focused row neither takes the focus nor scrolls that row away", async () => {
    const chat = uniqueChat("inbox-anchor");
    const decided: Decided[] = [];
    for (let i = 1; i <= 8; i++)
      decided.push(
        pluginApproval(e2e.requester, chat, `Routine step ${i}`, "warning", 300_000 + i * 1000),
      );
    const { page, errors } = await openPage(e2e.browser, {
      viewport: { width: 1280, height: 420 },
    });
    await page.goto(await e2e.dashboardUrl());
    await expect.poll(() => rows(page, chat).count(), { timeout: UI_TIMEOUT }).toBe(8);

    const focused = row(page, chat, "Routine step 6");
    await toggle(focused).focus();
    await toggle(focused).evaluate((element) => element.scrollIntoView({ block: "center" }));
    const id = await focusedRow(page);
    const before = (await focused.boundingBox())!.y;
    const scrolled = await page.evaluate(() => window.scrollY);
    expect(scrolled).toBeGreaterThan(0);

    decided.push(pluginApproval(e2e.requester, chat, "Urgent: rotate the leaked key", "critical"));
    await row(page, chat, "Urgent: rotate the leaked key").waitFor({ timeout: UI_TIMEOUT });
    const order = await rowIds(page);
    expect(
      order.indexOf(
        (await row(page, chat, "Urgent: rotate the leaked key").getAttribute("data-inbox-row"))!,
      ),
    ).toBeLessThan(order.indexOf(id!));
    expect(await focusedRow(page)).toBe(id);
    expect(Math.abs((await focused.boundingBox())!.y - before)).toBeLessThanOrEqual(1);

    for (const target of await rows(page, chat).all()) await target.getByRole("checkbox").check();
    await page.getByRole("button", { name: "Deny or cancel selected" }).click();
    for (const decision of decided) expect(await decision).toMatchObject({ decision: "deny" });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("keyboard triage: ? help, j/k, number keys and Enter, a allows once, d denies, the focus stays on a sensible row; then the history's filters", async () => {
    const chat = uniqueChat("inbox-keys");
    const critical = pluginApproval(e2e.requester, chat, "Wipe the staging database", "critical");
    const routine = pluginApproval(e2e.requester, chat, "Post the release notes", "warning");
    const questionId = await question(
      e2e.requester,
      chat,
      "Which database for the keys test?",
      900_000,
    );
    const answered = waitAnswer(e2e.requester, questionId);

    const { page, errors } = await openPage(e2e.browser, {
      viewport: { width: 1280, height: 900 },
    });
    await page.goto(await e2e.dashboardUrl());
    await expect.poll(() => rows(page, chat).count(), { timeout: UI_TIMEOUT }).toBe(3);
    const [criticalId, routineId, questionRowId] = await Promise.all(
      ["Wipe the staging", "Post the release", "Which database for the keys"].map((text) =>
        row(page, chat, text).getAttribute("data-inbox-row"),
      ),
    );

    // ? opens the help; Esc closes it.
    await page.locator("body").press("?");
    const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
    await help.waitFor({ timeout: UI_TIMEOUT });
    expect(await help.innerText()).toContain("never Always allow");
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "hidden" });

    // j from nowhere goes to the first row; j and k walk the list in its order.
    await page.locator("body").press("j");
    const order = await rowIds(page);
    expect(await focusedRow(page)).toBe(order[0]);
    expect(order.indexOf(criticalId!)).toBeLessThan(order.indexOf(routineId!));
    await toggle(row(page, chat, "Wipe the staging")).focus();
    await page.keyboard.press("j");
    expect(await focusedRow(page)).toBe(order[order.indexOf(criticalId!) + 1]);
    await page.keyboard.press("k");
    expect(await focusedRow(page)).toBe(criticalId);

    // Enter opens the row's card in place, and closes it again.
    await page.keyboard.press("Enter");
    await row(page, chat, "Wipe the staging")
      .getByRole("button", { name: "Deny" })
      .waitFor({ timeout: UI_TIMEOUT });
    await page.keyboard.press("Enter");
    await row(page, chat, "Wipe the staging")
      .getByRole("button", { name: "Deny" })
      .waitFor({ state: "detached" });

    // a on a question allows nothing.
    await toggle(row(page, chat, "Which database for the keys")).focus();
    await page.keyboard.press("a");
    await page
      .getByText("Only an approval that offers Allow once can be allowed with a.")
      .waitFor({ timeout: UI_TIMEOUT });

    // A number key opens the question and picks that option; Enter submits it.
    await page.keyboard.press("2");
    const sqlite = row(page, chat, "Which database for the keys").getByRole("radio", {
      name: /^SQLite/,
    });
    await expect.poll(() => sqlite.isChecked(), { timeout: UI_TIMEOUT }).toBe(true);
    let current = await rowIds(page);
    await page.keyboard.press("Enter");
    expect(await answered).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["SQLite"] } },
    });
    await row(page, chat, "Which database for the keys").waitFor({
      state: "detached",
      timeout: UI_TIMEOUT,
    });
    // The focus went to the row that followed the answered one (or, when it was last, the one before).
    const after = (ids: string[], gone: string) =>
      ids.slice(ids.indexOf(gone) + 1)[0] ?? ids[ids.indexOf(gone) - 1];
    await expect
      .poll(() => focusedRow(page), { timeout: UI_TIMEOUT })
      .toBe(after(current, questionRowId!));

    // a allows the routine approval once (never always).
    await toggle(row(page, chat, "Post the release")).focus();
    current = await rowIds(page);
    await page.keyboard.press("a");
    expect(await routine).toMatchObject({ decision: "allow-once" });
    await row(page, chat, "Post the release").waitFor({ state: "detached", timeout: UI_TIMEOUT });
    await expect
      .poll(() => focusedRow(page), { timeout: UI_TIMEOUT })
      .toBe(after(current, routineId!));

    // d denies the critical one.
    await toggle(row(page, chat, "Wipe the staging")).focus();
    await page.keyboard.press("d");
    expect(await critical).toMatchObject({ decision: "deny" });
    await row(page, chat, "Wipe the staging").waitFor({ state: "detached", timeout: UI_TIMEOUT });

    // History: filter by chat, kind, outcome and text.
    await page.getByRole("tab", { name: /History/ }).click();
    const history = page.getByRole("tabpanel", { name: /History/ });
    const filters = history.getByRole("search", { name: "Filter the history" });
    await filters.getByLabel("Chat").selectOption(chat);
    const bodyRows = history.locator("tbody tr");
    await expect.poll(() => bodyRows.count(), { timeout: UI_TIMEOUT }).toBe(3);
    await filters.getByLabel("Kind").selectOption("approval");
    await expect.poll(() => bodyRows.count()).toBe(2);
    await filters.getByLabel("Outcome").selectOption("denied");
    await expect
      .poll(() => bodyRows.allInnerTexts())
      .toEqual([expect.stringContaining("Wipe the staging database")]);
    await filters.getByLabel("Outcome").selectOption("all");
    await filters.getByLabel("Kind").selectOption("all");
    await filters.getByLabel("Search questions and titles").fill("release NOTES");
    await expect
      .poll(() => bodyRows.allInnerTexts())
      .toEqual([expect.stringContaining("Post the release notes")]);
    // Answers are not searched: the question's answer, "SQLite", is one of its options (found), "Allow once" is not.
    await filters.getByLabel("Search questions and titles").fill("allow once");
    await history
      .getByText("Nothing finished matches these filters")
      .waitFor({ timeout: UI_TIMEOUT });
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
