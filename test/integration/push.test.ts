// Web Push end to end over HTTP, on the real Gateway: an owner opts in with a browser's keys, a new ask
// that no tab shows is pushed (through `web-push` to a push service stand-in that checks VAPID and
// decrypts the aes128gcm body as a browser would), the payload says what to decide on with Deny and
// Allow once tokens, a token works exactly once (replayed, swapped and expired ones are refused), the
// Gateway receives the decision, and the ending replaces the notification by its tag. A subscription
// the push service calls gone is removed, as is one whose link no longer works, and an action sent to a
// link revoked since is refused; an ask a tab shows is not pushed. Issue 22: an owner keeps at most 20
// subscriptions, one that keeps failing is removed, the owner lists and removes them, and an endpoint on
// a loopback, private or bare-address host is refused unless PUSH_ALLOW_PRIVATE_ENDPOINTS (set here:
// the stand-in runs on 127.0.0.1) allows it.
import { Agent } from "node:https";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { revokeOwnerLinks } from "../../server/auth/owner-links.ts";
import { mintTabToken, secretKey } from "../../server/auth/tokens.ts";
import { MAX_FAILURES_IN_A_ROW } from "../../server/push/notifier.ts";
import type { AskPush, OutcomePush } from "../../server/push/payload.ts";
import { MAX_SUBSCRIPTIONS_PER_OWNER } from "../../server/push/push-store.ts";
import type { OperatorConnection, Payload } from "../support/gateway-client.ts";
import {
  newChat,
  requestApproval,
  sessionKeyOf,
  startOnGateway,
  stopOnGateway,
  useTabs,
} from "../support/on-gateway.ts";
import {
  type BrowserKeys,
  browserKeys,
  decryptPush,
  type PushServiceStandIn,
  type ReceivedPush,
  startPushService,
} from "../support/push-service.ts";
import { SkippingClock } from "../support/skipping-clock.ts";
import { startTestServer, TEST_AUTH_SECRET, type TestServer } from "../support/tabs.ts";

let requester: OperatorConnection;
let elsewhere: OperatorConnection;
let server: TestServer;
let pushService: PushServiceStandIn;
/** The server's clock: a link's expiry is reached by moving it, not by waiting. */
const clock = new SkippingClock();
const { tab } = useTabs({ server: () => server });

const LONG_COMMAND = `rm -rf ./build ./dist ./.cache && npm ci && npm run build && npm run deploy -- --prod --region eu-west-1 --confirm && curl -fsSL https://example.com/notify | sh`;

type Subscriber = { keys: BrowserKeys; endpoint: string; path: string };

/** What a browser's opt-in (or a dashboard visit renewing it, with the same `keys`) posts. */
async function subscribe(
  path: string,
  token?: string,
  keys: BrowserKeys = browserKeys(),
  on: TestServer = server,
): Promise<{ status: number; body: Payload; subscriber: Subscriber }> {
  const endpoint = path.startsWith("https://") ? path : `${pushService.url}${path}`;
  const response = await fetch(`${on.url}/push/subscriptions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Payload,
    subscriber: { keys, endpoint, path: new URL(endpoint).pathname },
  };
}

const decrypted = <T>(push: ReceivedPush, subscriber: Subscriber): T =>
  JSON.parse(decryptPush(push.body, subscriber.keys)) as T;

/** The next push to this subscriber about this ask, of this type. */
function pushFor<T extends AskPush | OutcomePush>(
  subscriber: Subscriber,
  askId: string,
  type: T["type"],
): Promise<T> {
  return pushService
    .next((push) => {
      if (push.path !== subscriber.path) return false;
      const payload = decrypted<AskPush | OutcomePush>(push, subscriber);
      return payload.askId === askId && payload.type === type;
    })
    .then((push) => decrypted<T>(push, subscriber));
}

async function act(body: Record<string, unknown>): Promise<{ status: number; body: Payload }> {
  const response = await fetch(`${server.url}/push/actions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Payload };
}

let owner: Subscriber;
/** The owner's own phone: a device link (its subscription outlives the owner links this file revokes). */
let ownerPhone: { kid: string; token: string };

async function newDevice(name: string): Promise<{ kid: string; token: string }> {
  const response = await fetch(`${server.url}/devices`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${await server.ownerLink()}`,
    },
    body: JSON.stringify({ name }),
  });
  expect(response.status).toBe(201);
  const created = (await response.json()) as { kid: string; url: string };
  return { kid: created.kid, token: new URL(created.url).searchParams.get("token")! };
}

beforeAll(async () => {
  pushService = await startPushService();
  ({ requester, elsewhere, server } = await startOnGateway({
    elsewhere: true,
    clock,
    pushAgent: new Agent({ ca: pushService.ca }),
    env: { PUSH_ALLOW_PRIVATE_ENDPOINTS: "1" },
  }));
  ownerPhone = await newDevice("Owner's phone");
  const subscribed = await subscribe("/sub/owner", ownerPhone.token);
  expect(subscribed.status).toBe(201);
  owner = subscribed.subscriber;
});

afterAll(async () => {
  await stopOnGateway({ server, requester, elsewhere });
  await pushService?.stop();
});

describe("opting in", () => {
  it("takes a subscription only with an owner's dashboard token, and a valid body; a bad one changes nothing", async () => {
    const before = (await server.push.store.subscriptions(new Set(["owner", "alice"]))).length;
    expect((await subscribe("/sub/anyone")).status).toBe(403);
    expect((await subscribe("/sub/guest", await server.token("alice"))).status).toBe(403);
    expect((await subscribe("/sub/embed", await server.token("owner", newChat()))).status).toBe(
      403,
    );
    const response = await fetch(`${server.url}/push/subscriptions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${await server.ownerLink()}`,
      },
      body: JSON.stringify({
        endpoint: "http://push.example.com/x",
        keys: { p256dh: "not base64!", auth: "x" },
      }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Payload).error.message).toMatch(
      /endpoint: must be an https:\/\/ push service URL; keys.p256dh: must be base64url/,
    );
    expect((await server.push.store.subscriptions(new Set(["owner", "alice"]))).length).toBe(
      before,
    );
    expect((await (await fetch(`${server.url}/push/key`)).json()) as Payload).toMatchObject({
      ok: true,
      publicKey: expect.stringMatching(/^[A-Za-z0-9_-]{87}$/),
    });
  });
});

describe("an exec approval no tab shows", () => {
  it("is pushed with what to decide on, Deny and Allow once; a token works once, for its own ask and decision; the ending replaces it", async () => {
    const chatId = newChat("push");
    const pending = requestApproval(requester, elsewhere, "exec", {
      command: LONG_COMMAND,
      host: "gateway",
      cwd: "/srv/app",
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 600_000,
    });
    const { id } = (await pending.requested) as { id: string };
    const pushed = await pushFor<AskPush>(owner, id, "ask");

    expect(pushed).toMatchObject({
      type: "ask",
      tag: `ask:${id}`,
      askId: id,
      severity: "critical",
      title: "Critical approval: run a command",
    });
    // What to decide on, whose run asked (an Open WebUI chat's session: lib/wording.ts originText), where.
    const [command, origin, where] = pushed.body.split("\n");
    expect(command).toHaveLength(120);
    expect(command).toMatch(/…$/);
    expect(LONG_COMMAND.startsWith(command!.slice(0, -1))).toBe(true);
    expect(origin).toBe("Asked from an Open WebUI chat (the Pipe)");
    expect(where).toMatch(new RegExp(`^Chat ${chatId} · (9|10) min left$`));
    expect(pushed.url).toBe(`${server.url}/#ask=${encodeURIComponent(id)}`);
    expect(pushed.actions.map((action) => [action.action, action.title])).toEqual([
      ["deny", "Deny"],
      ["allow-once", "Allow once"],
    ]);
    const tokens = Object.fromEntries(
      pushed.actions.map((action) => [action.action, action.token]),
    );
    // Signed with VAPID for the push service's own origin.
    const received = pushService.received.find(
      (push) => push.path === owner.path && decrypted<AskPush>(push, owner).askId === id,
    )!;
    expect(received.vapid).toMatchObject({
      aud: pushService.url,
      sub: "mailto:openclaw-asks@localhost",
    });
    expect(received.headers.urgency).toBe("high");

    // Swapped: the Deny token offered as Allow once, or for another ask; forged: refused, nothing decided.
    expect(await act({ askId: id, decision: "allow-once", token: tokens.deny })).toMatchObject({
      status: 403,
      body: { ok: false, error: { code: "FORBIDDEN" } },
    });
    expect(await act({ askId: "another-ask", decision: "deny", token: tokens.deny })).toMatchObject(
      { status: 403, body: { ok: false, error: { code: "FORBIDDEN" } } },
    );
    expect(
      await act({
        askId: id,
        decision: "allow-once",
        token: `${tokens["allow-once"]!.slice(0, -4)}AAAA`,
      }),
    ).toMatchObject({ status: 403 });
    // No push offers Always allow, and an Allow once token cannot become one.
    expect(
      await act({ askId: id, decision: "allow-always", token: tokens["allow-once"] }),
    ).toMatchObject({ status: 403, body: { error: { code: "FORBIDDEN" } } });
    expect(await act({ askId: id, decision: "allow-once" })).toMatchObject({
      status: 400,
      body: { error: { code: "INVALID" } },
    });
    expect((await server.store.get(id))?.status).toBe("pending");

    // The Allow once token decides, through the broker: the Gateway gets allow-once.
    expect(await act({ askId: id, decision: "allow-once", token: tokens["allow-once"] })).toEqual({
      status: 200,
      body: { ok: true, status: "answered" },
    });
    expect(await pending.decision).toMatchObject({ decision: "allow-once" });
    expect((await server.store.get(id))?.resolution).toMatchObject({
      by: "owner",
      summary: "Allow once",
    });

    // Replayed, and the other decision's token after the ask ended: refused.
    expect(
      await act({ askId: id, decision: "allow-once", token: tokens["allow-once"] }),
    ).toMatchObject({ status: 409, body: { error: { code: "ALREADY_RESOLVED" } } });
    expect(
      (await act({ askId: id, decision: "deny", token: tokens.deny })).status,
    ).toBeGreaterThanOrEqual(400);

    // The second push has the same tag and says how it ended.
    const ended = await pushFor<OutcomePush>(owner, id, "outcome");
    expect(ended).toEqual({
      type: "outcome",
      tag: `ask:${id}`,
      askId: id,
      title: "Critical approval: run a command",
      body: "Decided: Allow once",
      url: pushed.url,
    });
  });

  it("an expired ask's token is refused as expired", async () => {
    const chatId = newChat("push-expiry");
    const pending = requestApproval(requester, elsewhere, "plugin", {
      pluginId: "push-test",
      title: "Rotate the signing key",
      description: "Replaces the production signing key.",
      severity: "warning",
      toolName: "keys.rotate",
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 3_000,
    });
    const { id } = (await pending.requested) as { id: string };
    const pushed = await pushFor<AskPush>(owner, id, "ask");
    expect(pushed).toMatchObject({
      title: "Approval: Rotate the signing key",
      body: `Replaces the production signing key.\nAsked from an Open WebUI chat (the Pipe)\nChat ${chatId} · less than a minute left`,
    });
    // The Gateway's own expiry ends it (its outcome push is the proof), then the token is worth nothing.
    expect(await pushFor<OutcomePush>(owner, id, "outcome")).toMatchObject({ body: "Expired" });
    const deny = pushed.actions.find((action) => action.action === "deny")!;
    expect(await act({ askId: id, decision: "deny", token: deny.token })).toMatchObject({
      status: 410,
      body: { error: { code: "EXPIRED" } },
    });
    // What the requester of an approval that timed out gets: no decision.
    expect(await pending.decision).toMatchObject({ decision: null });
  });
});

describe("who is pushed", () => {
  it("an ask a tab shows is not pushed; a question is pushed without actions", async () => {
    const viewed = newChat("push-viewed");
    const viewer = await tab(viewed);
    const shown = requestApproval(requester, elsewhere, "plugin", {
      pluginId: "push-test",
      title: "Shown on a tab",
      description: "x",
      sessionKey: sessionKeyOf(viewed),
      timeoutMs: 120_000,
    });
    const shownId = ((await shown.requested) as { id: string }).id;
    await viewer.waitForShow((ask) => ask.id === shownId);
    const unviewed = newChat("push-question");
    const question = await requester.request<{ id: string }>("question.request", {
      sessionKey: sessionKeyOf(unviewed),
      timeoutMs: 120_000,
      questions: [
        {
          questionId: "db",
          header: "Database",
          question: "Which database?",
          options: [{ label: "Postgres" }, { label: "SQLite" }],
        },
      ],
    });
    expect(await pushFor<AskPush>(owner, question.id, "ask")).toMatchObject({
      title: "Question",
      body: `Which database?\nAsked from an Open WebUI chat (the Pipe)\nChat ${unviewed} · 2 min left`,
      actions: [],
    });
    await server.push.notifier.idle();
    expect(
      pushService.received
        .filter((push) => push.path === owner.path)
        .map((push) => decrypted<AskPush>(push, owner).askId),
    ).not.toContain(shownId);
    await requester.request("question.resolve", { id: question.id, cancel: true });
    await elsewhere.request("plugin.approval.resolve", { id: shownId, decision: "deny" });
  });

  it("a subscription whose link no longer works (an owner link revoked, a link expired) is pushed to no more, and removed", async () => {
    await server.push.notifier.idle(); // earlier tests' pushes are done: only this test's ask judges the links
    const revoked = await subscribe("/revoked/laptop", await server.ownerLink());
    // A device's link that expires (exp is in whole seconds: at least one left); the device itself is not revoked.
    const tablet = await newDevice("Tablet");
    const expiring = await mintTabToken(secretKey(TEST_AUTH_SECRET), {
      userId: "owner",
      ttlSeconds: 2,
      kid: tablet.kid,
    });
    const expired = await subscribe("/expired/tablet", expiring);
    expect([revoked.status, expired.status]).toEqual([201, 201]);
    await revokeOwnerLinks(server.store);
    // The tablet's link expires: the server's clock is moved past it, with no wait.
    const expiresAt = decodeJwt(expiring).exp! * 1000;
    clock.skip(Math.max(0, expiresAt - clock.now()) + 1);
    // While its link worked it may have been pushed an earlier test's outcome: only what comes now counts.
    await server.push.notifier.idle();
    const before = pushService.received.length;

    const chatId = newChat("push-dead-links");
    const pending = requestApproval(requester, elsewhere, "plugin", {
      pluginId: "push-test",
      title: "Only for working links",
      description: "x",
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 120_000,
    });
    const { id } = (await pending.requested) as { id: string };
    // The live subscription is pushed to: the dead ones were judged (and removed) before any was sent.
    await pushFor<AskPush>(owner, id, "ask");
    await server.push.notifier.idle();
    const paths = pushService.received.slice(before).map((push) => push.path);
    expect(paths).not.toContain(revoked.subscriber.path);
    expect(paths).not.toContain(expired.subscriber.path);
    const endpoints = (await server.push.store.subscriptions(new Set(["owner"]))).map(
      (record) => record.endpoint,
    );
    expect(endpoints).toContain(owner.endpoint);
    expect(endpoints).not.toContain(revoked.subscriber.endpoint);
    expect(endpoints).not.toContain(expired.subscriber.endpoint);
    expect(
      server.logs.filter((line) => line.startsWith("push subscription removed, its link")),
    ).toEqual([
      `push subscription removed, its link was revoked: ${pushService.url}`,
      `push subscription removed, its link expired: ${pushService.url}`,
    ]);
    await elsewhere.request("plugin.approval.resolve", { id, decision: "deny" });
    expect(await pending.decision).toMatchObject({ decision: "deny" });
  });

  it("an action from a notification sent to a device revoked since is refused; the owner's own still decides", async () => {
    const ownerToken = await server.ownerLink();
    const created = await fetch(`${server.url}/devices`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
      body: JSON.stringify({ name: "Lost phone" }),
    });
    const device = (await created.json()) as { kid: string; url: string };
    const phone = await subscribe(
      "/device/lost-phone",
      new URL(device.url).searchParams.get("token")!,
    );
    expect(phone.status).toBe(201);
    const chatId = newChat("push-revoked-device");
    const pending = requestApproval(requester, elsewhere, "exec", {
      command: "make deploy",
      host: "gateway",
      cwd: "/srv/app",
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 120_000,
    });
    const { id } = (await pending.requested) as { id: string };
    const [onPhone, onDesk] = await Promise.all([
      pushFor<AskPush>(phone.subscriber, id, "ask"),
      pushFor<AskPush>(owner, id, "ask"),
    ]);
    const tokenOn = (push: AskPush, decision: string) =>
      push.actions.find((action) => action.action === decision)!.token;

    expect(
      (
        await fetch(`${server.url}/devices/${device.kid}`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${ownerToken}` },
        })
      ).status,
    ).toBe(200);
    expect(
      await act({ askId: id, decision: "allow-once", token: tokenOn(onPhone, "allow-once") }),
    ).toMatchObject({
      status: 403,
      body: {
        ok: false,
        error: { code: "FORBIDDEN", message: "the link this notification was sent to was revoked" },
      },
    });
    expect((await server.store.get(id))?.status).toBe("pending");
    expect(await act({ askId: id, decision: "deny", token: tokenOn(onDesk, "deny") })).toEqual({
      status: 200,
      body: { ok: true, status: "answered" },
    });
    expect(await pending.decision).toMatchObject({ decision: "deny" });
  });

  it("a subscription the push service calls gone (410) is removed", async () => {
    const gone = await subscribe("/gone/phone", await server.ownerLink());
    expect(gone.status).toBe(201);
    expect(
      (await server.push.store.subscriptions(new Set(["owner"]))).map((record) => record.endpoint),
    ).toContain(gone.subscriber.endpoint);
    const chatId = newChat("push-gone");
    const pending = requestApproval(requester, elsewhere, "plugin", {
      pluginId: "push-test",
      title: "Reach a gone phone",
      description: "x",
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 120_000,
    });
    const { id } = (await pending.requested) as { id: string };
    await pushFor<AskPush>(owner, id, "ask");
    await server.push.notifier.idle();
    expect(
      (await server.push.store.subscriptions(new Set(["owner"]))).map((record) => record.endpoint),
    ).not.toContain(gone.subscriber.endpoint);
    expect(server.logs.some((line) => line.includes("push subscription gone (410), removed"))).toBe(
      true,
    );
    await elsewhere.request("plugin.approval.resolve", { id, decision: "deny" });
    expect(await pending.decision).toMatchObject({ decision: "deny" });
  });
});

async function owned(
  method: string,
  path: string,
  token: string,
): Promise<{ status: number; body: Payload }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: (await response.json()) as Payload };
}

const storedEndpoints = async () =>
  (await server.push.store.subscriptions(new Set(["owner"]))).map((record) => record.endpoint);

describe("22.4 an owner's subscriptions", () => {
  it(`22.4 push subscriptions per owner are capped at ${MAX_SUBSCRIPTIONS_PER_OWNER}: storing one more removes the oldest, logged`, async () => {
    const token = await server.ownerLink();
    const before = await storedEndpoints();
    const made: string[] = [];
    for (let i = 0; made.length + before.length <= MAX_SUBSCRIPTIONS_PER_OWNER; i++) {
      const subscribed = await subscribe(`/cap/${i}`, token);
      expect(subscribed.status).toBe(201);
      made.push(subscribed.subscriber.endpoint);
    }
    const now = await storedEndpoints();
    expect(now).toHaveLength(MAX_SUBSCRIPTIONS_PER_OWNER);
    // The oldest went: the subscription made first (this file's own), not the one made last.
    expect(now).not.toContain(before[0] ?? made[0]);
    expect(now).toContain(made.at(-1));
    expect(server.logs).toContain(
      `push subscription removed, its owner has more than the most kept: ${pushService.url}`,
    );
    // This file's other tests push to the owner's first subscription: it comes back as the dashboard renews it.
    for (const endpoint of made) await server.push.store.forget(endpoint);
    expect((await subscribe(owner.path, ownerPhone.token, owner.keys)).status).toBe(201);
  });

  it(`22.4 an endpoint whose pushes fail ${MAX_FAILURES_IN_A_ROW} times in a row is removed; a push that goes through in between starts the count again`, async () => {
    const failing = await subscribe("/failing/phone", await server.ownerLink());
    expect(failing.status).toBe(201);
    const failuresNow = async () =>
      (await server.push.store.subscriptions(new Set(["owner"]))).find(
        (record) => record.endpoint === failing.subscriber.endpoint,
      )?.failures;
    /** One question no tab shows, pushed (to the owner's working subscription too) and then cancelled (an outcome push). */
    const oneAsk = async () => {
      await server.push.notifier.idle();
      const chatId = newChat("push-failing");
      const question = await requester.request<{ id: string }>("question.request", {
        sessionKey: sessionKeyOf(chatId),
        timeoutMs: 120_000,
        questions: [
          {
            questionId: "q",
            header: "Q",
            question: "Which one?",
            options: [{ label: "A" }, { label: "B" }],
          },
        ],
      });
      await pushFor<AskPush>(owner, question.id, "ask");
      // Every push of the ask is done (the failing one too) before its ending is pushed: one failure at a time.
      await server.push.notifier.idle();
      await requester.request("question.resolve", { id: question.id, cancel: true });
      await pushFor<OutcomePush>(owner, question.id, "outcome");
      await server.push.notifier.idle();
    };
    pushService.failing.add(failing.subscriber.path);
    await oneAsk();
    expect(await failuresNow()).toBe(2);
    pushService.failing.delete(failing.subscriber.path);
    await oneAsk();
    expect(await failuresNow()).toBe(0);
    pushService.failing.add(failing.subscriber.path);
    while ((await failuresNow()) !== undefined) await oneAsk();
    const lines = server.logs.filter(
      (line) =>
        line.startsWith(`push to ${pushService.url} failed`) ||
        line.startsWith("push subscription removed after"),
    );
    expect(lines.slice(-MAX_FAILURES_IN_A_ROW)).toEqual([
      ...Array.from(
        { length: MAX_FAILURES_IN_A_ROW - 1 },
        (_, i) =>
          `push to ${pushService.url} failed (${i + 1} of ${MAX_FAILURES_IN_A_ROW} in a row): HTTP 500`,
      ),
      `push subscription removed after ${MAX_FAILURES_IN_A_ROW} failed pushes in a row: ${pushService.url} (HTTP 500)`,
    ]);
    expect(await storedEndpoints()).toContain(owner.endpoint);
  });

  it("22.4 the owner lists their subscriptions and removes one with an owner link; a device link lists them only", async () => {
    const token = await server.ownerLink();
    const created = (await (
      await fetch(`${server.url}/devices`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ name: "Listing phone" }),
      })
    ).json()) as { kid: string; url: string };
    const phoneToken = new URL(created.url).searchParams.get("token")!;
    const phone = await subscribe("/listed/phone", phoneToken);
    expect(phone.status).toBe(201);

    const listed = await owned("GET", "/push/subscriptions", token);
    expect(listed.status).toBe(200);
    expect(listed.body.canManage).toBe(true);
    const entries = listed.body.subscriptions as {
      id: string;
      service: string;
      linkKid: string;
      createdAt: number;
      failures: number;
    }[];
    const entry = entries.find((candidate) => candidate.linkKid === created.kid)!;
    expect(entry).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      service: pushService.url,
      linkKid: created.kid,
      createdAt: expect.any(Number),
      failures: 0,
    });
    // The endpoint's path is the subscription's capability: it is never listed.
    expect(JSON.stringify(listed.body)).not.toContain(phone.subscriber.path);

    expect(await owned("GET", "/push/subscriptions", phoneToken)).toMatchObject({
      status: 200,
      body: { ok: true, canManage: false },
    });
    expect(await owned("DELETE", `/push/subscriptions/${entry.id}`, phoneToken)).toMatchObject({
      status: 403,
      body: { error: { code: "FORBIDDEN" } },
    });
    expect(
      await owned("DELETE", `/push/subscriptions/${entry.id}`, await server.token("owner")),
    ).toMatchObject({ status: 403 });
    expect(await storedEndpoints()).toContain(phone.subscriber.endpoint);

    expect(await owned("DELETE", `/push/subscriptions/${entry.id}`, token)).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(await storedEndpoints()).not.toContain(phone.subscriber.endpoint);
    expect(await owned("DELETE", `/push/subscriptions/${entry.id}`, token)).toMatchObject({
      status: 404,
      body: { error: { code: "NOT_FOUND" } },
    });
  });
});

describe("22.5 push endpoints on a server without PUSH_ALLOW_PRIVATE_ENDPOINTS", () => {
  let plain: TestServer;
  beforeAll(async () => {
    // An agent no test asks for: this server only takes subscriptions.
    plain = await startTestServer({
      gatewayUrl: inject("gatewayUrl"),
      gatewayToken: inject("gatewayToken"),
      env: { AGENT_ID: "push-hosts-only" },
    });
  });
  afterAll(() => plain?.dispose());

  it("22.5 a subscription whose endpoint is loopback, private, link-local or a bare address in any spelling is refused with 400 and the reason; nothing is stored", async () => {
    const token = await plain.ownerLink();
    for (const endpoint of [
      "https://127.0.0.1/push",
      "https://0x7f000001/push",
      "https://2130706433/push",
      "https://[::1]/push",
      "https://[::ffff:127.0.0.1]/push",
      "https://169.254.169.254/latest",
      "https://10.0.0.7/push",
      "https://[fd00::1]/push",
      "https://localhost/push",
      "https://api.localhost/push",
      pushService.url,
    ]) {
      const refused = await subscribe(endpoint, token, browserKeys(), plain);
      expect(refused, endpoint).toMatchObject({
        status: 400,
        body: {
          ok: false,
          error: {
            code: "INVALID",
            message: expect.stringMatching(
              /^endpoint: is not a public push service: its host .+ is (an IP address|a local or private name)/,
            ),
          },
        },
      });
    }
    expect(await plain.push.store.subscriptions(new Set(["owner"]))).toEqual([]);
    expect(
      await subscribe("https://push.example.test/phone", token, browserKeys(), plain),
    ).toMatchObject({ status: 201 });
  });
});
