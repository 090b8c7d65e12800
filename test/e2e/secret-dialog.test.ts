// The masked secret dialog, end to end: a live agent run on the real Gateway (scripted stub model)
// calls the `secrets` tool; the dialog shows on the chat's tab; the value typed there reaches the
// Gateway's secret store, and afterwards it is nowhere in the page: not in the DOM, not in storage,
// not in the console.
import { randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { openPage } from "../support/browser.ts";
import { fetchStubRequests, stubScript } from "../support/stub-model.ts";
import { sessionKeyFor, UI_TIMEOUT, uniqueChat, useE2e } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");
const stubModelUrl = inject("stubModelUrl");

describe.skipIf(!gatewayUrl || !stubModelUrl)("secret dialog", () => {
  const e2e = useE2e();

  it("takes a secret in a masked dialog and keeps no trace of it", async () => {
    const chat = uniqueChat("secret");
    const value = `s3cr3t-${randomUUID()}`;
    const { page, console: consoleLines } = await openPage(e2e.browser);
    await page.goto(await e2e.embedUrl(chat));
    await page
      .locator('main[data-widget="live"][data-pending="0"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });

    const runId = randomUUID();
    await e2e.requester.request("chat.send", {
      sessionKey: sessionKeyFor(chat),
      idempotencyKey: runId,
      message: stubScript({
        tool: {
          id: "secrets",
          args: {
            action: "request",
            name: "DEMO_TOKEN",
            reason: "To call the demo API",
            allowedHosts: ["api.example.com"],
            timeoutSeconds: 120,
          },
        },
        then: "Stored, thanks.",
      }),
    });

    const dialog = page.getByRole("dialog", { name: "DEMO_TOKEN" });
    await dialog.waitFor({ timeout: 60_000 });
    expect(await dialog.getAttribute("aria-modal")).toBe("true");
    await expect.poll(() => dialog.textContent()).toContain("To call the demo API");
    await expect.poll(() => dialog.textContent()).toContain("api.example.com");
    const input = dialog.getByLabel("DEMO_TOKEN");
    expect(await input.getAttribute("type")).toBe("password");
    expect(await input.getAttribute("autocomplete")).toBe("off");
    // Focus is in the dialog, on the field.
    expect(await input.evaluate((element) => element === document.activeElement)).toBe(true);

    const requested = await e2e.requester.waitForEvent(
      "question.requested",
      (payload) => payload.sessionKey === sessionKeyFor(chat),
    );
    await input.fill(value);
    await dialog.getByRole("button", { name: "Submit" }).click();

    await page.getByText("Secret stored").waitFor({ timeout: UI_TIMEOUT });
    const event = await e2e.requester.waitForEvent(
      "question.resolved",
      (payload) => payload.id === requested.id,
      60_000,
    );
    expect(event).toMatchObject({
      status: "answered",
      answers: { answers: { secret_value: ["stored"] } },
    });
    expect(JSON.stringify(event)).not.toContain(value);
    await page.getByText("•••• (secret entered)").first().waitFor({ timeout: UI_TIMEOUT });

    // Nowhere in the page afterwards.
    const html = await page.evaluate(() => document.documentElement.outerHTML);
    expect(html).not.toContain(value);
    const inputs = await page.evaluate(() =>
      [...document.querySelectorAll("input")].map((element) => element.value),
    );
    expect(inputs.join("\n")).not.toContain(value);
    const storage = await page.evaluate(() =>
      JSON.stringify({
        local: { ...localStorage },
        session: { ...sessionStorage },
        history: history.state,
      }),
    );
    expect(storage).not.toContain(value);
    expect(consoleLines.join("\n")).not.toContain(value);

    // The run went on with only "stored": the model never saw the value.
    await e2e.requester.waitForEvent(
      "chat",
      (payload) => payload.runId === runId && payload.state === "final",
      60_000,
    );
    const requests = await fetchStubRequests(stubModelUrl);
    expect(JSON.stringify(requests)).not.toContain(value);
  });

  it("cancels with Esc: the agent is told, and nothing is entered", async () => {
    const chat = uniqueChat("secret-esc");
    const { page } = await openPage(e2e.browser);
    await page.goto(await e2e.embedUrl(chat));
    await page
      .locator('main[data-widget="live"][data-pending="0"]')
      .waitFor({ state: "attached", timeout: UI_TIMEOUT });
    await e2e.requester.request("chat.send", {
      sessionKey: sessionKeyFor(chat),
      idempotencyKey: randomUUID(),
      message: stubScript({
        tool: {
          id: "secrets",
          args: {
            action: "request",
            name: "OTHER_TOKEN",
            reason: "Testing cancel",
            timeoutSeconds: 120,
          },
        },
      }),
    });
    const dialog = page.getByRole("dialog", { name: "OTHER_TOKEN" });
    await dialog.waitFor({ timeout: 60_000 });
    await page.keyboard.press("Escape");
    await page.getByText("Secret request cancelled").waitFor({ timeout: UI_TIMEOUT });
    await page.getByText("Cancelled (nothing entered)").first().waitFor({ timeout: UI_TIMEOUT });
    expect(await dialog.count()).toBe(0);
  });
});
