// The dashboard's service worker in Chromium, on the real Gateway: the app registers it and is an
// installable PWA (manifest, icons); a real push (the app server sends it with web-push to the push
// service stand-in, which decrypts it) is delivered to the worker with the DevTools protocol
// (`ServiceWorker.deliverPushMessage`) and shows a notification with the ask's title and Deny /
// Allow once; the worker's click handler, called with Allow once (no DevTools command clicks a
// notification), sends the action token and the Gateway receives allow-once; a second click is refused.
// The app runs on a Redis of its own (issue 22, item 8): pressed while Redis is away, Allow once says to
// try again and the notification keeps its buttons, and the same button decides once Redis is back.
// The Devices tab lists the browsers pushed to, each with a Remove button (item 4).
import type { Worker } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPage } from "../support/browser.ts";
import type { Payload } from "../support/gateway-client.ts";
import { sessionKeyOf, silence, TEST_AGENT } from "../support/on-gateway.ts";
import {
  type BrowserKeys,
  browserKeys,
  decryptPush,
  type PushServiceStandIn,
  startPushService,
} from "../support/push-service.ts";
import { startRedis, type TestRedis } from "../support/redis-server.ts";
import { seriousViolations, UI_TIMEOUT, uniqueChat, useE2e } from "./fixtures.ts";

const gatewayUrl = inject("gatewayUrl");

describe.skipIf(!gatewayUrl)("service worker and push", () => {
  let pushService: PushServiceStandIn;
  let redis: TestRedis;
  // The stand-in runs on 127.0.0.1: a loopback push service is taken only with this test setting.
  const env: Record<string, string> = { PUSH_ALLOW_PRIVATE_ENDPOINTS: "1" };
  // Registered before useE2e's own: the app server must trust the stand-in's certificate from its start.
  beforeAll(async () => {
    pushService = await startPushService();
    redis = await startRedis();
    env.NODE_EXTRA_CA_CERTS = pushService.caFile;
    env.REDIS_URL = redis.url;
  });
  const e2e = useE2e({ env });
  afterAll(async () => {
    await pushService?.stop();
    await redis?.stop();
  });
  let keys: BrowserKeys;

  type Shown = {
    title: string;
    body: string;
    tag: string;
    actions: string[];
    data: Record<string, unknown>;
  };

  /** A phone-sized dashboard whose service worker is active, with what pushes deliver to it and what it shows. */
  async function dashboardWithWorker() {
    const { page, context, errors } = await openPage(e2e.browser, {
      viewport: { width: 390, height: 844 },
    });
    await context.grantPermissions(["notifications"], { origin: e2e.app.url });
    const workerReady = context.waitForEvent("serviceworker", { timeout: UI_TIMEOUT });
    await page.goto(await e2e.dashboardUrl());
    const worker: Worker =
      context.serviceWorkers().find((candidate) => candidate.url().endsWith("/sw.js")) ??
      (await workerReady);
    expect(worker.url()).toBe(`${e2e.app.url}/sw.js`);
    await expect
      .poll(
        () =>
          page.evaluate(() =>
            navigator.serviceWorker.ready.then((registration) => registration.active?.state),
          ),
        { timeout: UI_TIMEOUT },
      )
      .toBe("activated");
    const cdp = await context.newCDPSession(page);
    const registrations: { registrationId: string; scopeURL: string }[] = [];
    cdp.on(
      "ServiceWorker.workerRegistrationUpdated",
      (event: { registrations: { registrationId: string; scopeURL: string }[] }) =>
        registrations.push(...event.registrations),
    );
    await cdp.send("ServiceWorker.enable");
    const deliver = async (data: string) => {
      // DevTools reports the registration some time after ServiceWorker.enable: as long as the UI may take.
      await expect
        .poll(
          () => registrations.find((registration) => registration.scopeURL === `${e2e.app.url}/`),
          { timeout: UI_TIMEOUT },
        )
        .toBeTruthy();
      const { registrationId } = registrations.find(
        (registration) => registration.scopeURL === `${e2e.app.url}/`,
      )!;
      await cdp.send("ServiceWorker.deliverPushMessage", {
        origin: e2e.app.url,
        registrationId,
        data,
      });
    };
    const shown = async (): Promise<Shown[]> =>
      page.evaluate(async () =>
        (await (await navigator.serviceWorker.ready).getNotifications()).map((notification) => ({
          title: notification.title,
          body: notification.body,
          tag: notification.tag,
          actions: (
            (notification as Notification & { actions?: { action: string }[] }).actions ?? []
          ).map((action) => action.action),
          data: notification.data as Record<string, unknown>,
        })),
      );
    return { page, context, errors, worker, deliver, shown };
  }

  /** A new exec approval no tab shows, and its push as the server sent it to the push service. */
  async function pushedApproval(label: string) {
    const chat = uniqueChat(label);
    const decided = silence(
      e2e.requester.request<Payload>(
        "exec.approval.request",
        {
          command: "git push --force origin main",
          host: "gateway",
          cwd: "/srv/app",
          agentId: TEST_AGENT,
          sessionKey: sessionKeyOf(chat),
          timeoutMs: 600_000,
        },
        { timeoutMs: 630_000 },
      ),
    );
    const received = await pushService.next(
      (push) =>
        push.path === "/sub/chromium" &&
        JSON.parse(decryptPush(push.body, keys)).body?.includes(chat),
    );
    return { chat, decided, payload: decryptPush(received.body, keys) };
  }

  /** The worker's click handler with an action (no DevTools command clicks a notification). */
  const press = (worker: Worker, action: string, data: unknown) =>
    worker.evaluate(
      ({ action, data }) =>
        (
          self as unknown as {
            handleNotificationClick(action: string, data: unknown): Promise<unknown>;
          }
        ).handleNotificationClick(action, data),
      { action, data },
    );

  it("shows a pushed approval with Deny and Allow once, and Allow once from the notification reaches the Gateway once", async () => {
    keys = browserKeys();
    const subscribed = await fetch(`${e2e.app.url}/push/subscriptions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${await e2e.app.ownerLink()}`,
      },
      body: JSON.stringify({
        endpoint: `${pushService.url}/sub/chromium`,
        keys: { p256dh: keys.p256dh, auth: keys.auth },
      }),
    });
    expect(subscribed.status).toBe(201);

    const { page, context, errors, worker, deliver, shown } = await dashboardWithWorker();

    // Installable: the manifest the page links names the icons, and they are served.
    const manifestHref = await page.locator('link[rel="manifest"]').getAttribute("href");
    const manifest = (await (await fetch(new URL(manifestHref!, e2e.app.url))).json()) as {
      display: string;
      icons: { src: string; sizes: string }[];
    };
    expect(manifest.display).toBe("standalone");
    expect(manifest.icons.map((icon) => icon.sizes)).toEqual(
      expect.arrayContaining(["192x192", "512x512"]),
    );
    for (const icon of manifest.icons)
      expect((await fetch(new URL(icon.src, e2e.app.url))).status).toBe(200);
    // The shell is cached, and nothing else: no page.
    await expect
      .poll(() =>
        page.evaluate(async () =>
          (
            await Promise.all(
              (await caches.keys()).map(async (name) =>
                (await (await caches.open(name)).keys()).map(
                  (request) => new URL(request.url).pathname,
                ),
              ),
            )
          ).flat(),
        ),
      )
      .toEqual(expect.arrayContaining(["/manifest.webmanifest", "/icon-192.png"]));
    expect(
      await page.evaluate(async () =>
        (
          await Promise.all(
            (await caches.keys()).map(async (name) =>
              (await (await caches.open(name)).keys()).map(
                (request) => new URL(request.url).pathname,
              ),
            ),
          )
        )
          .flat()
          .filter((pathname) => pathname === "/" || pathname.startsWith("/push")),
      ),
    ).toEqual([]);

    // A real push of a new exec approval, as the server sent it to the push service.
    const { chat, decided, payload } = await pushedApproval("sw");
    await deliver(payload);
    await expect
      .poll(async () => (await shown()).length, { timeout: UI_TIMEOUT })
      .toBeGreaterThan(0);
    const [notification] = await shown();
    const askId = JSON.parse(payload).askId as string;
    expect(notification).toMatchObject({
      title: "Critical approval: run a command",
      tag: `ask:${askId}`,
      actions: ["deny", "allow-once"],
    });
    expect(notification!.body).toMatch(
      // What to decide on, whose run asked (an Open WebUI chat's session: lib/wording.ts originText), where.
      new RegExp(
        `^git push --force origin main\\nAsked from an Open WebUI chat \\(the Pipe\\)\\nChat ${chat} · (9|10) min left$`,
      ),
    );

    // The click handler with Allow once: the worker posts the token; the Gateway gets allow-once.
    const click = () => press(worker, "allow-once", notification!.data);
    expect(await click()).toEqual({ ok: true, status: "answered" });
    expect(await decided).toMatchObject({ decision: "allow-once" });
    await expect
      .poll(async () => (await shown()).find((item) => item.tag === `ask:${askId}`)?.body)
      .toMatch(/^(Allow once: sent|Decided: Allow once)$/);
    // The same token again is refused, and the worker says so.
    expect(await click()).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("22.8 Allow once pressed while Redis is away says to try again and keeps the notification's buttons; once Redis is back the same button decides", async () => {
    const { context, errors, worker, deliver, shown } = await dashboardWithWorker();
    const { decided, payload } = await pushedApproval("sw-outage");
    const askId = JSON.parse(payload).askId as string;
    await deliver(payload);
    const notification = async () => (await shown()).find((item) => item.tag === `ask:${askId}`);
    // Over every notification shown, so that a failure says what the worker showed instead.
    await expect
      .poll(async () => (await shown()).map(({ tag, actions }) => ({ tag, actions })), {
        timeout: UI_TIMEOUT,
      })
      .toContainEqual({ tag: `ask:${askId}`, actions: ["deny", "allow-once"] });
    const health = async () =>
      ((await (await fetch(`${e2e.app.url}/healthz`)).json()) as { status: string }).status;

    await redis.kill();
    await expect.poll(health, { timeout: UI_TIMEOUT }).toBe("degraded");
    expect(await press(worker, "allow-once", (await notification())!.data)).toMatchObject({
      ok: false,
      error: { code: "UNAVAILABLE" },
    });
    await expect
      .poll(async () => (await notification())?.body, { timeout: UI_TIMEOUT })
      .toMatch(/try again/i);
    expect((await notification())!.actions).toEqual(["deny", "allow-once"]);

    await redis.restart();
    await expect.poll(health, { timeout: UI_TIMEOUT }).toBe("ok");
    expect(await press(worker, "allow-once", (await notification())!.data)).toEqual({
      ok: true,
      status: "answered",
    });
    expect(await decided).toMatchObject({ decision: "allow-once" });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("22.4 the Devices tab lists the browsers pushed to, and Remove ends one", async () => {
    const { page, context, errors } = await openPage(e2e.browser, {
      viewport: { width: 1280, height: 900 },
    });
    await page.goto(await e2e.ownerLinkUrl());
    await page.getByRole("tab", { name: "Devices" }).click();
    const host = new URL(pushService.url).host;
    const pushed = page
      .getByRole("list", { name: "Push notifications" })
      .getByRole("listitem")
      .filter({ hasText: host });
    await expect
      .poll(() => pushed.textContent(), { timeout: UI_TIMEOUT })
      .toMatch(/since .+, with an owner link \([A-Za-z0-9_-]{8}\)/);
    expect(await seriousViolations(page)).toEqual([]);
    await pushed
      .getByRole("button", { name: new RegExp(`^Remove push to ${host.replace(/\./g, "\\.")}`) })
      .click();
    await page
      .getByText(`Push to ${pushService.url} is removed: that browser gets no more notifications.`)
      .waitFor({ timeout: UI_TIMEOUT });
    await page.getByText("No browser gets push notifications.").waitFor({ timeout: UI_TIMEOUT });
    const listed = await fetch(`${e2e.app.url}/push/subscriptions`, {
      headers: { authorization: `Bearer ${await e2e.app.ownerLink()}` },
    });
    expect(((await listed.json()) as { subscriptions: unknown[] }).subscriptions).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
