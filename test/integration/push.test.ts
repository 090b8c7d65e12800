// Web Push end to end over HTTP, on the real Gateway: an owner opts in with a browser's keys, a new ask
// that no tab shows is pushed (through `web-push` to a push service stand-in that checks VAPID and
// decrypts the aes128gcm body as a browser would), the payload says what to decide on with Deny and
// Allow once tokens, a token works exactly once (replayed, swapped and expired ones are refused), the
// Gateway receives the decision, and the ending replaces the notification by its tag. A subscription
// the push service calls gone is removed, as is one whose link no longer works, and an action sent to a
// link revoked since is refused; an ask a tab shows is not pushed.
import { Agent } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newChat, requestApproval, sessionKeyOf, startOnGateway, stopOnGateway, useTabs } from "../support/asks.ts";
import type { OperatorConnection, Payload } from "../support/gateway-client.ts";
import { browserKeys, decryptPush, startPushService, type BrowserKeys, type PushServiceStandIn, type ReceivedPush } from "../support/push-service.ts";
import { TEST_AUTH_SECRET, type TestServer } from "../support/tabs.ts";
import type { AskPush, OutcomePush } from "../../server/push/payload.ts";
import { mintTabToken, secretKey } from "../../server/tabs/auth.ts";
import { mintOwnerLink, revokeOwnerLinks } from "../../server/tabs/owner-links.ts";
import { decodeJwt } from "jose";

let requester: OperatorConnection;
let elsewhere: OperatorConnection;
let server: TestServer;
let pushService: PushServiceStandIn;
const { tab } = useTabs({ server: () => server });

const LONG_COMMAND = `rm -rf ./build ./dist ./.cache && npm ci && npm run build && npm run deploy -- --prod --region eu-west-1 --confirm && curl -fsSL https://example.com/notify | sh`;

type Subscriber = { keys: BrowserKeys; endpoint: string; path: string };

async function subscribe(path: string, token?: string): Promise<{ status: number; body: Payload; subscriber: Subscriber }> {
  const keys = browserKeys();
  const endpoint = `${pushService.url}${path}`;
  const response = await fetch(`${server.url}/push/subscriptions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } }),
  });
  return { status: response.status, body: (await response.json()) as Payload, subscriber: { keys, endpoint, path } };
}

const decrypted = <T>(push: ReceivedPush, subscriber: Subscriber): T => JSON.parse(decryptPush(push.body, subscriber.keys)) as T;

/** The next push to this subscriber about this ask, of this type. */
function pushFor<T extends AskPush | OutcomePush>(subscriber: Subscriber, askId: string, type: T["type"]): Promise<T> {
  return pushService
    .next((push) => {
      if (push.path !== subscriber.path) return false;
      const payload = decrypted<AskPush | OutcomePush>(push, subscriber);
      return payload.askId === askId && payload.type === type;
    })
    .then((push) => decrypted<T>(push, subscriber));
}

async function act(body: Record<string, unknown>): Promise<{ status: number; body: Payload }> {
  const response = await fetch(`${server.url}/push/actions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Payload };
}

let owner: Subscriber;

beforeAll(async () => {
  pushService = await startPushService();
  ({ requester, elsewhere, server } = await startOnGateway({ elsewhere: true, pushAgent: new Agent({ ca: pushService.ca }) }));
  const subscribed = await subscribe("/sub/owner", await server.token("owner"));
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
    expect((await subscribe("/sub/embed", await server.token("owner", newChat()))).status).toBe(403);
    const response = await fetch(`${server.url}/push/subscriptions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${await server.token("owner")}` },
      body: JSON.stringify({ endpoint: "http://push.example.com/x", keys: { p256dh: "not base64!", auth: "x" } }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Payload).error.message).toMatch(/endpoint: must be an https:\/\/ push service URL; keys.p256dh: must be base64url/);
    expect((await server.push.store.subscriptions(new Set(["owner", "alice"]))).length).toBe(before);
    expect((await (await fetch(`${server.url}/push/key`)).json()) as Payload).toMatchObject({ ok: true, publicKey: expect.stringMatching(/^[A-Za-z0-9_-]{87}$/) });
  });
});

describe("an exec approval no tab shows", () => {
  it("is pushed with what to decide on, Deny and Allow once; a token works once, for its own ask and decision; the ending replaces it", async () => {
    const chatId = newChat("push");
    const pending = requestApproval(requester, elsewhere, "exec", { command: LONG_COMMAND, host: "gateway", cwd: "/srv/app", sessionKey: sessionKeyOf(chatId), timeoutMs: 600_000 });
    const { id } = (await pending.requested) as { id: string };
    const pushed = await pushFor<AskPush>(owner, id, "ask");

    expect(pushed).toMatchObject({ type: "ask", tag: `ask:${id}`, askId: id, severity: "critical", title: "Critical approval: run a command" });
    const [command, where] = pushed.body.split("\n");
    expect(command).toHaveLength(120);
    expect(command).toMatch(/…$/);
    expect(LONG_COMMAND.startsWith(command!.slice(0, -1))).toBe(true);
    expect(where).toMatch(new RegExp(`^Chat ${chatId} · (9|10) min left$`));
    expect(pushed.url).toBe(`${server.url}/#ask=${encodeURIComponent(id)}`);
    expect(pushed.actions.map((action) => [action.action, action.title])).toEqual([["deny", "Deny"], ["allow-once", "Allow once"]]);
    const tokens = Object.fromEntries(pushed.actions.map((action) => [action.action, action.token]));
    // Signed with VAPID for the push service's own origin.
    const received = pushService.received.find((push) => push.path === owner.path && decrypted<AskPush>(push, owner).askId === id)!;
    expect(received.vapid).toMatchObject({ aud: pushService.url, sub: "mailto:openclaw-asks@localhost" });
    expect(received.headers.urgency).toBe("high");

    // Swapped: the Deny token offered as Allow once, or for another ask; forged: refused, nothing decided.
    expect(await act({ askId: id, decision: "allow-once", token: tokens.deny })).toMatchObject({ status: 403, body: { ok: false, error: { code: "FORBIDDEN" } } });
    expect(await act({ askId: "another-ask", decision: "deny", token: tokens.deny })).toMatchObject({ status: 403, body: { ok: false, error: { code: "FORBIDDEN" } } });
    expect(await act({ askId: id, decision: "allow-once", token: `${tokens["allow-once"]!.slice(0, -4)}AAAA` })).toMatchObject({ status: 403 });
    // No push offers Always allow, and an Allow once token cannot become one.
    expect(await act({ askId: id, decision: "allow-always", token: tokens["allow-once"] })).toMatchObject({ status: 403, body: { error: { code: "FORBIDDEN" } } });
    expect(await act({ askId: id, decision: "allow-once" })).toMatchObject({ status: 400, body: { error: { code: "INVALID" } } });
    expect((await server.store.get(id))?.status).toBe("pending");

    // The Allow once token decides, through the broker: the Gateway gets allow-once.
    expect(await act({ askId: id, decision: "allow-once", token: tokens["allow-once"] })).toEqual({ status: 200, body: { ok: true, status: "answered" } });
    expect(await pending.decision).toMatchObject({ decision: "allow-once" });
    expect((await server.store.get(id))?.resolution).toMatchObject({ by: "owner", summary: "Allow once" });

    // Replayed, and the other decision's token after the ask ended: refused.
    expect(await act({ askId: id, decision: "allow-once", token: tokens["allow-once"] })).toMatchObject({ status: 409, body: { error: { code: "ALREADY_RESOLVED" } } });
    expect((await act({ askId: id, decision: "deny", token: tokens.deny })).status).toBeGreaterThanOrEqual(400);

    // The second push has the same tag and says how it ended.
    const ended = await pushFor<OutcomePush>(owner, id, "outcome");
    expect(ended).toEqual({ type: "outcome", tag: `ask:${id}`, askId: id, title: "Critical approval: run a command", body: "Decided: Allow once", url: pushed.url });
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
    expect(pushed).toMatchObject({ title: "Approval: Rotate the signing key", body: `Replaces the production signing key.\nChat ${chatId} · less than a minute left` });
    // The Gateway's own expiry ends it (its outcome push is the proof), then the token is worth nothing.
    expect(await pushFor<OutcomePush>(owner, id, "outcome")).toMatchObject({ body: "Expired" });
    const deny = pushed.actions.find((action) => action.action === "deny")!;
    expect(await act({ askId: id, decision: "deny", token: deny.token })).toMatchObject({ status: 410, body: { error: { code: "EXPIRED" } } });
    // What the requester of an approval that timed out gets: no decision.
    expect(await pending.decision).toMatchObject({ decision: null });
  });
});

describe("who is pushed", () => {
  it("an ask a tab shows is not pushed; a question is pushed without actions", async () => {
    const viewed = newChat("push-viewed");
    const viewer = await tab(viewed);
    const shown = requestApproval(requester, elsewhere, "plugin", { pluginId: "push-test", title: "Shown on a tab", description: "x", sessionKey: sessionKeyOf(viewed), timeoutMs: 120_000 });
    const shownId = ((await shown.requested) as { id: string }).id;
    await viewer.waitForShow((ask) => ask.id === shownId);
    const unviewed = newChat("push-question");
    const question = await requester.request<{ id: string }>("question.request", {
      sessionKey: sessionKeyOf(unviewed),
      timeoutMs: 120_000,
      questions: [{ questionId: "db", header: "Database", question: "Which database?", options: [{ label: "Postgres" }, { label: "SQLite" }] }],
    });
    expect(await pushFor<AskPush>(owner, question.id, "ask")).toMatchObject({ title: "Question", body: `Which database?\nChat ${unviewed} · 2 min left`, actions: [] });
    await server.push.notifier.idle();
    expect(pushService.received.filter((push) => push.path === owner.path).map((push) => decrypted<AskPush>(push, owner).askId)).not.toContain(shownId);
    await requester.request("question.resolve", { id: question.id, cancel: true });
    await elsewhere.request("plugin.approval.resolve", { id: shownId, decision: "deny" });
  });

  it("a subscription whose link no longer works (an owner link revoked, a link expired) is pushed to no more, and removed", async () => {
    await server.push.notifier.idle(); // earlier tests' pushes are done: only this test's ask judges the links
    const key = secretKey(TEST_AUTH_SECRET);
    const link = await mintOwnerLink({ store: server.store, key, owner: "owner", hours: 1, baseUrl: server.url });
    const revoked = await subscribe("/revoked/laptop", new URL(link.url).searchParams.get("token")!);
    const expiring = await mintTabToken(key, { userId: "owner", ttlSeconds: 2 }); // exp is in whole seconds: at least one left
    const expired = await subscribe("/expired/tablet", expiring);
    expect([revoked.status, expired.status]).toEqual([201, 201]);
    await revokeOwnerLinks(server.store);
    const expiresAt = decodeJwt(expiring).exp! * 1000;
    while (Date.now() <= expiresAt) await new Promise((resolve) => setTimeout(resolve, 50));
    // While its link worked it may have been pushed an earlier test's outcome: only what comes now counts.
    await server.push.notifier.idle();
    const before = pushService.received.length;

    const chatId = newChat("push-dead-links");
    const pending = requestApproval(requester, elsewhere, "plugin", { pluginId: "push-test", title: "Only for working links", description: "x", sessionKey: sessionKeyOf(chatId), timeoutMs: 120_000 });
    const { id } = (await pending.requested) as { id: string };
    // The live subscription is pushed to: the dead ones were judged (and removed) before any was sent.
    await pushFor<AskPush>(owner, id, "ask");
    await server.push.notifier.idle();
    const paths = pushService.received.slice(before).map((push) => push.path);
    expect(paths).not.toContain(revoked.subscriber.path);
    expect(paths).not.toContain(expired.subscriber.path);
    const endpoints = (await server.push.store.subscriptions(new Set(["owner"]))).map((record) => record.endpoint);
    expect(endpoints).toContain(owner.endpoint);
    expect(endpoints).not.toContain(revoked.subscriber.endpoint);
    expect(endpoints).not.toContain(expired.subscriber.endpoint);
    expect(server.logs.filter((line) => line.startsWith("push subscription removed, its link"))).toEqual([
      `push subscription removed, its link was revoked: ${pushService.url}`,
      `push subscription removed, its link expired: ${pushService.url}`,
    ]);
    await elsewhere.request("plugin.approval.resolve", { id, decision: "deny" });
    expect(await pending.decision).toMatchObject({ decision: "deny" });
  });

  it("an action from a notification sent to a device revoked since is refused; the owner's own still decides", async () => {
    const ownerToken = await server.token("owner");
    const created = await fetch(`${server.url}/devices`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` }, body: JSON.stringify({ name: "Lost phone" }) });
    const device = (await created.json()) as { kid: string; url: string };
    const phone = await subscribe("/device/lost-phone", new URL(device.url).searchParams.get("token")!);
    expect(phone.status).toBe(201);
    const chatId = newChat("push-revoked-device");
    const pending = requestApproval(requester, elsewhere, "exec", { command: "make deploy", host: "gateway", cwd: "/srv/app", sessionKey: sessionKeyOf(chatId), timeoutMs: 120_000 });
    const { id } = (await pending.requested) as { id: string };
    const [onPhone, onDesk] = await Promise.all([pushFor<AskPush>(phone.subscriber, id, "ask"), pushFor<AskPush>(owner, id, "ask")]);
    const tokenOn = (push: AskPush, decision: string) => push.actions.find((action) => action.action === decision)!.token;

    expect((await fetch(`${server.url}/devices/${device.kid}`, { method: "DELETE", headers: { authorization: `Bearer ${ownerToken}` } })).status).toBe(200);
    expect(await act({ askId: id, decision: "allow-once", token: tokenOn(onPhone, "allow-once") })).toMatchObject({
      status: 403,
      body: { ok: false, error: { code: "FORBIDDEN", message: "the link this notification was sent to was revoked" } },
    });
    expect((await server.store.get(id))?.status).toBe("pending");
    expect(await act({ askId: id, decision: "deny", token: tokenOn(onDesk, "deny") })).toEqual({ status: 200, body: { ok: true, status: "answered" } });
    expect(await pending.decision).toMatchObject({ decision: "deny" });
  });

  it("a subscription the push service calls gone (410) is removed", async () => {
    const gone = await subscribe("/gone/phone", await server.token("owner"));
    expect(gone.status).toBe(201);
    expect((await server.push.store.subscriptions(new Set(["owner"]))).map((record) => record.endpoint)).toContain(gone.subscriber.endpoint);
    const chatId = newChat("push-gone");
    const pending = requestApproval(requester, elsewhere, "plugin", { pluginId: "push-test", title: "Reach a gone phone", description: "x", sessionKey: sessionKeyOf(chatId), timeoutMs: 120_000 });
    const { id } = (await pending.requested) as { id: string };
    await pushFor<AskPush>(owner, id, "ask");
    await server.push.notifier.idle();
    expect((await server.push.store.subscriptions(new Set(["owner"]))).map((record) => record.endpoint)).not.toContain(gone.subscriber.endpoint);
    expect(server.logs.some((line) => line.includes("push subscription gone (410), removed"))).toBe(true);
    await elsewhere.request("plugin.approval.resolve", { id, decision: "deny" });
    expect(await pending.decision).toMatchObject({ decision: "deny" });
  });
});
