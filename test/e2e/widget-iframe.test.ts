// The widget inside a host page that frames it exactly as Open WebUI does (sandboxed, opaque origin):
// a question created at the real Gateway shows in the iframe, is answered there, and the requester's
// question.waitAnswer returns exactly that answer.
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { PROJECT_ROOT } from "../support/app-server.ts";
import { openPage } from "../support/browser.ts";
import { stubScript } from "../support/stub-model.ts";
import {
  createQuestion,
  requestApproval,
  sessionKeyFor,
  UI_TIMEOUT,
  uniqueChat,
  useE2e,
  waitAnswer,
} from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");
const stubModelUrl = inject("stubModelUrl");

/** The theme relay the Open WebUI filter sends for a widget at `asksUrl` (its `execute` event's code). */
function themeRelayCode(asksUrl: string): string {
  return execFileSync(
    "python3",
    [
      "-c",
      "import sys; import openclaw_asks_filter as f; print(f.theme_relay_event(sys.argv[1])['data']['code'])",
      asksUrl,
    ],
    { cwd: `${PROJECT_ROOT}/integrations/open-webui`, encoding: "utf8" },
  );
}

describe.skipIf(!gatewayUrl)("widget in Open WebUI's sandboxed iframe", () => {
  const e2e = useE2e({ hostPage: true });

  it("shows a Gateway question in the iframe and delivers the picked option", async () => {
    const chat = uniqueChat("iframe");
    const { page, errors } = await openPage(e2e.browser);
    await page.goto(e2e.host.urlFor(await e2e.embedUrl(chat)));
    const widget = page.frameLocator("iframe#widget");
    await widget
      .locator('main[data-widget="live"][data-pending="0"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });

    // Opaque origin (no allow-same-origin), and the token is gone from the frame's address.
    const frame = page
      .frames()
      .find((candidate) => candidate.url().includes(`/embed/chat/${chat}`));
    expect(frame).toBeDefined();
    expect(await frame!.evaluate(() => self.origin)).toBe("null");
    expect(frame!.url()).not.toContain("token=");

    const id = await createQuestion(e2e.requester, chat);
    const answered = waitAnswer(e2e.requester, id);
    await widget.getByRole("radio", { name: /^SQLite/ }).click({ timeout: UI_TIMEOUT });
    // The host sized the iframe to the whole card (its last reported height), not to the idle status line.
    const lastHeight = () =>
      page.evaluate(() => (window as unknown as { __heights: number[] }).__heights.at(-1) ?? 0);
    await expect.poll(lastHeight).toBeGreaterThan(200);
    const submit = widget.getByRole("button", { name: "Submit" });
    const frameBox = await page.locator("iframe#widget").boundingBox();
    const submitBox = await submit.boundingBox();
    expect(submitBox!.y + submitBox!.height).toBeLessThanOrEqual(frameBox!.y + frameBox!.height);
    await submit.click();

    expect(await answered).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["SQLite"] } },
    });
    // The finished ask stays as a collapsible ❓ Ask User record with the answer.
    await widget.getByText("❓ Ask User").waitFor({ timeout: UI_TIMEOUT });
    await expect.poll(() => widget.locator("details").first().textContent()).toContain("SQLite");
    await widget
      .locator('main[data-widget="live"][data-pending="0"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });

    // The host page got the widget's height and sized the iframe with it.
    const heights = await page.evaluate(
      () => (window as unknown as { __heights: number[] }).__heights,
    );
    expect(heights.length).toBeGreaterThan(0);
    // Nothing pending at first: 0 px, no gap under the reply; then the card's height, then the summary's.
    expect(heights[0]).toBe(0);
    expect(heights.every((height) => Number.isInteger(height) && height >= 0)).toBe(true);
    expect(heights.at(-1)).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });

  it("lays a Hebrew question out right to left", async () => {
    const chat = uniqueChat("rtl");
    const { page, errors } = await openPage(e2e.browser, { viewport: { width: 420, height: 800 } });
    await page.goto(e2e.host.urlFor(await e2e.embedUrl(chat)));
    const widget = page.frameLocator("iframe#widget");
    await widget
      .locator('main[data-widget="live"][data-pending="0"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    const id = await createQuestion(e2e.requester, chat, [
      {
        questionId: "db",
        header: "מסד נתונים",
        question: "באיזה מסד נתונים להשתמש?",
        options: [
          { label: "Postgres", description: "דורש שרת" },
          { label: "SQLite", description: "קובץ יחיד" },
        ],
      },
    ]);
    await widget.getByRole("radio", { name: /^Postgres/ }).waitFor({ timeout: UI_TIMEOUT });
    expect(await widget.locator("section[data-ask-id]").getAttribute("dir")).toBe("rtl");
    // Right to left for real: the option's radio sits to the right of its label.
    const radio = await widget.getByRole("radio", { name: /^Postgres/ }).boundingBox();
    const label = await widget.getByText("Postgres", { exact: true }).boundingBox();
    expect(radio!.x).toBeGreaterThan(label!.x);
    const answered = waitAnswer(e2e.requester, id);
    await widget.getByRole("button", { name: "Cancel" }).click();
    expect(await answered).toMatchObject({ status: "cancelled" });
    expect(errors).toEqual([]);
  });

  // 27.6: Open WebUI 0.12 leaves allow-forms out of the frame's sandbox when a person turns "Allow
  // forms" off; a <form> there never submits. Every card and the dialog still answer, by click and by key.
  it("27.6 with Allow forms off, a question (click, Enter) and an approval are answered", async () => {
    const chat = uniqueChat("no-forms");
    const { page, errors } = await openPage(e2e.browser);
    await page.goto(e2e.host.urlFor(await e2e.embedUrl(chat), { allowForms: false }));
    expect(await page.locator("iframe#widget").getAttribute("sandbox")).toBe(
      "allow-scripts allow-popups allow-downloads",
    );
    const widget = page.frameLocator("iframe#widget");
    await widget
      .locator('main[data-widget="live"][data-pending="0"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });

    // A click on Submit answers.
    const clicked = await createQuestion(e2e.requester, chat);
    const clickedAnswer = waitAnswer(e2e.requester, clicked);
    await widget.getByRole("radio", { name: /^SQLite/ }).click({ timeout: UI_TIMEOUT });
    await widget.getByRole("button", { name: "Submit answers" }).click();
    expect(await clickedAnswer).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["SQLite"] } },
    });

    // Enter in Other answers.
    const typed = await createQuestion(e2e.requester, chat);
    const typedAnswer = waitAnswer(e2e.requester, typed);
    const other = widget
      .locator(`[data-ask-id="${typed}"]`)
      .getByRole("textbox", { name: "Other" });
    await other.fill("MariaDB", { timeout: UI_TIMEOUT });
    await other.press("Enter");
    expect(await typedAnswer).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["MariaDB"] } },
    });

    // An approval's decision.
    const decided = requestApproval(e2e.requester, chat, { title: "Deploy the site" });
    await widget.getByRole("button", { name: "Allow once" }).click({ timeout: UI_TIMEOUT });
    expect(await decided).toMatchObject({ decision: "allow-once" });
    // Each finished ask's record says what it was: two questions, then the approval, not "Ask User".
    await expect
      .poll(() => widget.locator("details summary").allTextContents(), { timeout: UI_TIMEOUT })
      .toEqual([
        expect.stringMatching(/^▶❓ Ask User.*SQLite/),
        expect.stringMatching(/^▶❓ Ask User.*MariaDB/),
        expect.stringMatching(/^▶🛡️ Approval.*Allow once/),
      ]);
    expect(errors).toEqual([]);
  });

  it.skipIf(!stubModelUrl)(
    "27.6 with Allow forms off, the secret dialog takes a secret with Enter",
    async () => {
      const chat = uniqueChat("no-forms-secret");
      const { page, errors } = await openPage(e2e.browser);
      await page.goto(e2e.host.urlFor(await e2e.embedUrl(chat), { allowForms: false }));
      const widget = page.frameLocator("iframe#widget");
      await widget
        .locator('main[data-widget="live"][data-pending="0"]')
        .waitFor({ state: "attached", timeout: UI_TIMEOUT });
      await e2e.requester.request("chat.send", {
        sessionKey: sessionKeyFor(chat),
        idempotencyKey: randomUUID(),
        message: stubScript({
          tool: {
            id: "secrets",
            args: { action: "request", name: "FORMLESS_TOKEN", timeoutSeconds: 120 },
          },
          then: "Stored.",
        }),
      });
      const dialog = widget.getByRole("dialog", { name: "FORMLESS_TOKEN" });
      await dialog.waitFor({ timeout: 60_000 });
      const requested = await e2e.requester.waitForEvent(
        "question.requested",
        (payload) => payload.sessionKey === sessionKeyFor(chat),
      );
      await dialog.getByLabel("FORMLESS_TOKEN").fill(`v-${randomUUID()}`);
      await dialog.getByLabel("FORMLESS_TOKEN").press("Enter");
      const resolved = await e2e.requester.waitForEvent(
        "question.resolved",
        (payload) => payload.id === requested.id,
        60_000,
      );
      expect(resolved).toMatchObject({
        status: "answered",
        answers: { answers: { secret_value: ["stored"] } },
      });
      await expect
        .poll(() => widget.locator("details summary").allTextContents(), { timeout: UI_TIMEOUT })
        .toEqual([expect.stringMatching(/^▶🔑 Secret.*secret entered/)]);
      expect(errors).toEqual([]);
    },
  );

  // Open WebUI keeps the chosen theme in its page (the `dark` class on its root) and tells embeds
  // nothing; the frame's prefers-color-scheme is the system's. The filter's relay tells the widget.
  it("27.4 takes the theme chosen in Open WebUI, not the system's: Dark on a light system, then Light", async () => {
    const chat = uniqueChat("theme");
    const { page, errors } = await openPage(e2e.browser, { colorScheme: "light" });
    await page.goto(e2e.host.urlFor(await e2e.embedUrl(chat)));
    // Dark chosen in Open WebUI (index.html: `document.documentElement.classList.add('dark')`).
    await page.evaluate(() => document.documentElement.classList.add("dark"));
    const widget = page.frameLocator("iframe#widget");
    await widget
      .locator('main[data-widget="live"][data-pending="0"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    const id = await createQuestion(e2e.requester, chat);
    const card = widget.locator(`[data-ask-id="${id}"]`);
    await card.waitFor({ timeout: UI_TIMEOUT });
    // The card's own background (styles.ts askCard: Open WebUI's card on its light and dark page).
    const colours = () => card.evaluate((element) => getComputedStyle(element).backgroundColor);
    const LIGHT = "rgb(251, 251, 251)";
    const DARK = "rgb(31, 31, 31)";
    // Before the relay, the system's light: the white box on a dark page that 27.4 is about.
    expect(await colours()).toBe(LIGHT);

    // The filter's relay, run as Open WebUI runs an `execute` event (Chat.svelte:1765-1776).
    const relay = themeRelayCode(e2e.app.url);
    const run = (code: string) =>
      page.evaluate(
        // eslint-disable-next-line @typescript-eslint/no-implied-eval -- as Open WebUI runs the code
        (body) => new Function(`return (async () => { ${body} })()`)() as unknown,
        code,
      );
    await run(relay);
    await expect.poll(colours, { timeout: UI_TIMEOUT }).toBe(DARK);

    // Light chosen in Open WebUI's settings (General.svelte applyTheme): the card follows at once.
    await page.evaluate(() => {
      document.documentElement.classList.remove("dark");
      document.documentElement.classList.add("light");
    });
    await expect.poll(colours, { timeout: UI_TIMEOUT }).toBe(LIGHT);

    // Dark again, and the relay sent once more (the next reply's inlet): installed once, it still tells.
    await page.evaluate(() => document.documentElement.classList.replace("light", "dark"));
    await run(relay);
    await expect.poll(colours, { timeout: UI_TIMEOUT }).toBe(DARK);
    expect(await page.evaluate(() => "__openclawAsksThemeRelay" in window)).toBe(true);

    // A widget loaded after the relay (a reload of its frame) asks for the theme itself.
    await page.locator("iframe#widget").evaluate((frame: HTMLIFrameElement) => {
      frame.setAttribute("src", frame.src);
    });
    await widget.locator(`[data-ask-id="${id}"]`).waitFor({ timeout: UI_TIMEOUT });
    await expect.poll(colours, { timeout: UI_TIMEOUT }).toBe(DARK);
    expect(errors).toEqual([]);
  });
});
