// Pages of another release (a dashboard left open through an upgrade, a rolling restart): the server
// refuses a page whose tab protocol differs, and the page says to reload it. The browser's CONNECT
// packet is rewritten to name the next version, as a page of a newer release would.
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { TAB_PROTOCOL_VERSION } from "../../lib/protocol-version.ts";
import { openPage } from "../support/browser.ts";
import { UI_TIMEOUT, uniqueChat, useE2e } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");

/** The page's Socket.IO handshakes name `protocol` instead of the page's own version while it is set. */
async function rewriteHandshakes(page: Page): Promise<{ protocol: number | null }> {
  const rewrite: { protocol: number | null } = { protocol: null };
  await page.routeWebSocket(/\/socket\.io\//, (client) => {
    const server = client.connectToServer();
    client.onMessage((message) => {
      const text = String(message);
      // The namespace CONNECT packet: `40` and the auth object.
      if (rewrite.protocol === null || !text.startsWith("40{")) return server.send(message);
      server.send(
        `40${JSON.stringify({ ...JSON.parse(text.slice(2)), protocol: rewrite.protocol })}`,
      );
    });
    server.onMessage((message) => client.send(message));
  });
  return rewrite;
}

describe.skipIf(!gatewayUrl)("pages of another release", () => {
  const e2e = useE2e();

  it("the widget says to reload when the server speaks another tab protocol", async () => {
    const { page } = await openPage(e2e.browser);
    (await rewriteHandshakes(page)).protocol = TAB_PROTOCOL_VERSION + 1;
    await page.goto(await e2e.embedUrl(uniqueChat("release")));
    const alert = page.getByRole("alert").filter({ hasText: "Not connected" });
    await alert.waitFor({ timeout: UI_TIMEOUT });
    expect(await alert.innerText()).toMatch(/older release than this page.*reload the page\.$/);
    expect(await alert.innerText()).not.toMatch(/new link/);
  });

  it("the dashboard says to reload, keeps its link, and works once reloaded with the server's release", async () => {
    const { page } = await openPage(e2e.browser);
    const rewrite = await rewriteHandshakes(page);
    rewrite.protocol = TAB_PROTOCOL_VERSION + 1;
    await page.goto(await e2e.dashboardUrl());
    await page.getByText("Out of date: reload the page").first().waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByRole("alert").filter({ hasText: "Not connected" }).innerText()).toMatch(
      /older release than this page.*reload the page\.$/,
    );

    // The same page of this release, reloaded: its link was kept (only a refused token is forgotten).
    rewrite.protocol = null;
    await page.reload();
    await page.getByText("Gateway connected").waitFor({ timeout: UI_TIMEOUT });
  });
});
