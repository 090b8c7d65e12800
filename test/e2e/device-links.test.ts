// Signing in from a phone: the dashboard makes a device link and shows it as a QR code; the phone opens
// the link, keeps its token in localStorage (as the installed app does) and signs in again at `/` with
// no token in its address; the owner revokes the device on the dashboard and the phone's open page is
// disconnected, refused when it reconnects, says why and forgets the token. axe on the Devices tab.
// Issue 22: the list says when and through which link each device was made; the phone's own dashboard
// (a device link) lists the devices but cannot make or revoke one.
import { describe, expect, inject, it } from "vitest";
import { openPage } from "../support/browser.ts";
import { seriousViolations, UI_TIMEOUT, useE2e } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");
const DEVICE_TOKEN_KEY = "openclaw-asks:device-token";

describe.skipIf(!gatewayUrl)("devices", () => {
  const e2e = useE2e();

  it("a QR device link signs a phone in, the installed app keeps it, and revoking it signs the phone out", async () => {
    const { page: desk, errors } = await openPage(e2e.browser, {
      viewport: { width: 1280, height: 900 },
    });
    await desk.goto(await e2e.ownerLinkUrl());
    await desk.getByText("Gateway connected").waitFor({ timeout: UI_TIMEOUT });
    await desk.getByRole("tab", { name: "Devices" }).click();
    const name = `Phone ${Date.now()}`;
    await desk.getByLabel("Device name").fill(name);
    await desk.getByRole("button", { name: "Create device link" }).click();
    await desk
      .getByRole("img", { name: `QR code: device link for ${name}` })
      .waitFor({ timeout: UI_TIMEOUT });
    const link = await desk.getByRole("textbox", { name: `Device link for ${name}` }).inputValue();
    expect(link).toMatch(new RegExp(`^${e2e.app.url}/\\?device=1&token=`));
    await desk
      .getByRole("list", { name: "Devices" })
      .getByText(name)
      .waitFor({ timeout: UI_TIMEOUT });
    const listed = desk
      .getByRole("list", { name: "Devices" })
      .getByRole("listitem")
      .filter({ hasText: name });
    await expect
      .poll(() => listed.textContent())
      .toMatch(/added .+, made with an owner link \([A-Za-z0-9_-]{8}\) · until /);
    expect(await seriousViolations(desk)).toEqual([]);

    const { page: phone, context } = await openPage(e2e.browser, {
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    await phone.goto(link);
    await phone.getByText("Gateway connected").waitFor({ timeout: UI_TIMEOUT });
    expect(phone.url()).toBe(`${e2e.app.url}/`);
    expect(await phone.evaluate((key) => localStorage.getItem(key), DEVICE_TOKEN_KEY)).toBe(
      new URL(link).searchParams.get("token"),
    );
    // The installed app starts at `/` in a new window: no token in the address, none in sessionStorage.
    const app = await context.newPage();
    await app.goto(`${e2e.app.url}/`);
    await app.getByText("Gateway connected").waitFor({ timeout: UI_TIMEOUT });
    await app.close();
    // The phone lists the devices; making or revoking one needs an owner link.
    await phone.getByRole("tab", { name: "Devices" }).click();
    await phone
      .getByRole("list", { name: "Devices" })
      .getByText(name)
      .waitFor({ timeout: UI_TIMEOUT });
    await phone
      .getByText("Device links are made and revoked from a dashboard opened with an owner link")
      .waitFor({ timeout: UI_TIMEOUT });
    expect(await phone.getByRole("button", { name: "Create device link" }).count()).toBe(0);
    expect(await phone.getByRole("button", { name: `Revoke ${name}` }).count()).toBe(0);

    await desk.getByRole("button", { name: `Revoke ${name}` }).click();
    await desk
      .getByText(`${name} is revoked: its link no longer signs in.`)
      .waitFor({ timeout: UI_TIMEOUT });
    // The phone's open page is disconnected at once; its reconnect is refused, so it says why and forgets the token.
    await phone
      .getByRole("alert")
      .filter({ hasText: /revoked/ })
      .waitFor({ timeout: UI_TIMEOUT });
    await expect
      .poll(() => phone.evaluate((key) => localStorage.getItem(key), DEVICE_TOKEN_KEY))
      .toBeNull();
    expect(errors).toEqual([]);
    await context.close();
    await desk.context().close();
  });
});
