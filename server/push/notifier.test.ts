// The push notifier with real parts: a SQLite push store, in-memory announcements, real VAPID keys and
// action tokens, and a push service stand-in on loopback that checks VAPID and decrypts each push as a
// browser would; the clock is a ManualClock. Nothing pushed is judged only after `idle()`: every send
// started has then been received or has failed.
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import webpush from "web-push";
import type { Ask } from "../../lib/ask.ts";
import { approval, question, T0 } from "../../test/support/ask-fixtures.ts";
import { ManualClock } from "../../test/support/manual-clock.ts";
import {
  type BrowserKeys,
  browserKeys,
  decryptPush,
  type PushServiceStandIn,
  type ReceivedPush,
  startPushService,
} from "../../test/support/push-service.ts";
import { actionTokenKey, mintActionToken, verifyActionToken } from "../auth/action-tokens.ts";
import { MemoryPushAnnouncements } from "./announcements.ts";
import { MAX_FAILURES_IN_A_ROW, PushNotifier } from "./notifier.ts";
import { askPush, outcomePush, type PushPayload } from "./payload.ts";
import type { PushStore } from "./push-store.ts";
import { SqlitePushStore } from "./sqlite-push-store.ts";
import { subscriptionKey } from "./subscription-signature.ts";

const DASHBOARD = "https://asks.example.test/";
const LINK_EXPIRES_AT = T0 + 3_600_000;
const tokenKey = actionTokenKey("a".repeat(32));
const vapid = webpush.generateVAPIDKeys();

let service: PushServiceStandIn;
let agent: Agent;
beforeAll(async () => {
  service = await startPushService();
  agent = new Agent({ ca: service.ca });
});
afterAll(async () => {
  agent.destroy();
  await service.stop();
});
beforeEach(() => {
  service.received.splice(0);
  service.failing.clear();
});

/** What the notifier asks the rest of the server, as each test sets it. */
type World = {
  shown: Set<string>;
  titles: Map<string, string>;
  revokedKids: Set<string>;
  titleAsked: string[];
  minted: string[];
  logs: string[];
  shownCheck: Promise<void>;
  titleFailure: Error | null;
};

const it = test
  .extend("clock", () => new ManualClock(T0))
  .extend("world", (): World => ({
    shown: new Set(),
    titles: new Map(),
    revokedKids: new Set(),
    titleAsked: [],
    minted: [],
    logs: [],
    shownCheck: Promise.resolve(),
    titleFailure: null,
  }))
  .extend("store", ({ world }, { onCleanup }) => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "notifier-test-"));
    const store = new SqlitePushStore(path.join(dataDir, "push.sqlite"), {
      signingKey: subscriptionKey("b".repeat(32)),
      log: (line) => world.logs.push(line),
    });
    onCleanup(() => {
      store.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    return store;
  })
  .extend("announcements", () => new MemoryPushAnnouncements())
  .extend("notifier", ({ clock, world, store, announcements }) =>
    notifierOn({ clock, world, store, announcements }),
  );

/** One instance's notifier (several share the store and announcements, as instances share Redis). */
function notifierOn({
  clock,
  world,
  store,
  announcements,
}: {
  clock: ManualClock;
  world: World;
  store: PushStore;
  announcements: MemoryPushAnnouncements;
}): PushNotifier {
  return new PushNotifier({
    store,
    announcements,
    vapid,
    subject: "mailto:owner@example.test",
    owners: new Set(["owner"]),
    clock,
    dashboardUrl: () => DASHBOARD,
    mintToken: (claims) => {
      world.minted.push(`${claims.askId} ${claims.decision}`);
      return mintActionToken(tokenKey, claims);
    },
    isShown: async (askId) => {
      await world.shownCheck;
      return world.shown.has(askId);
    },
    chatTitle: async (chatId) => {
      world.titleAsked.push(chatId);
      if (world.titleFailure) throw world.titleFailure;
      return world.titles.get(chatId);
    },
    isKnownKid: async (kid) => !world.revokedKids.has(kid),
    log: (line) => world.logs.push(line),
    agent,
  });
}

/** A browser's subscription at `route` of the stand-in, made with the link `kid`. */
async function subscribe(
  store: PushStore,
  route: string,
  options: { owner?: string; kid?: string; linkExpiresAt?: number; endpoint?: string } = {},
): Promise<BrowserKeys & { endpoint: string }> {
  const keys = browserKeys();
  const endpoint = options.endpoint ?? `${service.url}${route}`;
  const link = {
    kid: options.kid ?? "owner-link",
    expiresAt: options.linkExpiresAt ?? LINK_EXPIRES_AT,
  };
  await store.subscribe(
    { owner: options.owner ?? "owner", link, endpoint, p256dh: keys.p256dh, auth: keys.auth },
    T0,
  );
  return { ...keys, endpoint };
}

const pushesTo = (route: string) => service.received.filter((push) => push.path === route);
const payloadOf = (push: ReceivedPush, keys: BrowserKeys) =>
  JSON.parse(decryptPush(push.body, keys)) as PushPayload;

describe("PushNotifier: a new ask no tab shows", () => {
  it("is pushed once to each owner's subscription: what to decide on, one action token per offered decision, its time left to live, high urgency for an approval", async ({
    clock,
    store,
    notifier,
  }) => {
    const desk = await subscribe(store, "/desk", { kid: "owner-link" });
    const phone = await subscribe(store, "/phone", {
      kid: "device-phone",
      linkExpiresAt: T0 + 60_000,
    });
    await subscribe(store, "/alice", { owner: "alice" });
    clock.advance(20_000);
    const ask = approval("p1", "c1");
    notifier.changed(ask);
    notifier.changed(ask);
    await notifier.idle();
    expect(service.received.map((push) => push.path).sort()).toEqual(["/desk", "/phone"]);
    for (const [route, keys, kid, linkExpiresAt] of [
      ["/desk", desk, "owner-link", LINK_EXPIRES_AT],
      ["/phone", phone, "device-phone", T0 + 60_000],
    ] as const) {
      const [push] = pushesTo(route);
      expect(push!.headers).toMatchObject({ ttl: "100", urgency: "high" });
      const payload = payloadOf(push!, keys);
      const tokens = Object.fromEntries(
        payload.type === "ask"
          ? payload.actions.map((action) => [action.action, action.token])
          : [],
      );
      expect(payload).toEqual(askPush(ask, { now: clock.now(), dashboardUrl: DASHBOARD, tokens }));
      // Deny and Allow once (never Always allow), for this subscription's owner and link, expiring with the ask or the link.
      expect(Object.keys(tokens)).toEqual(["deny", "allow-once"]);
      for (const decision of ["deny", "allow-once"] as const) {
        expect(await verifyActionToken(tokenKey, tokens[decision]!, clock.now())).toMatchObject({
          askId: "p1",
          decision,
          owner: "owner",
          kid,
          expiresAt: Math.min(ask.expiresAt!, linkExpiresAt),
        });
      }
    }
  });

  it("an approval that does not offer Allow once: only Deny is offered, and only its token minted", async ({
    store,
    world,
    notifier,
  }) => {
    const keys = await subscribe(store, "/desk");
    notifier.changed(
      approval("p1", "c1", {
        approval: {
          title: "Deploy",
          description: "",
          severity: "warning",
          decisions: ["deny", "allow-always"],
        },
      }),
    );
    await notifier.idle();
    const [push] = pushesTo("/desk");
    expect(payloadOf(push!, keys)).toMatchObject({ actions: [{ action: "deny" }] });
    expect(world.minted).toEqual(["p1 deny"]);
  });

  it("a question: normal urgency, no actions; without an expiry it lives an hour; the chat is named by its title when known", async ({
    store,
    world,
    notifier,
  }) => {
    const keys = await subscribe(store, "/desk");
    world.titles.set("c1", "Trip planning");
    notifier.changed(question("q1", "c1", { expiresAt: null }));
    notifier.changed(question("q2", null));
    await notifier.idle();
    const pushed = pushesTo("/desk").map((push) => ({
      headers: push.headers,
      payload: payloadOf(push, keys),
    }));
    const [titled, chatless] = ["q1", "q2"].map((askId) =>
      pushed.find((push) => push.payload.askId === askId),
    );
    expect(titled).toMatchObject({
      headers: { ttl: "3600", urgency: "normal" },
      payload: { askId: "q1", actions: [], body: expect.stringContaining("Chat Trip planning") },
    });
    expect(chatless).toMatchObject({
      headers: { ttl: "900", urgency: "normal" },
      payload: { askId: "q2", body: expect.stringContaining("No chat") },
    });
    expect(world.titleAsked).toEqual(["c1"]);
  });

  it("is not pushed when a tab shows it, when it is no longer pending, or when no owner has a subscription", async ({
    store,
    world,
    notifier,
  }) => {
    world.shown.add("shown");
    notifier.changed(question("no-subscription", "c1"));
    await notifier.idle();
    await subscribe(store, "/desk");
    notifier.changed(question("shown", "c1"));
    notifier.changed(question("answered", "c1", { status: "answered" }));
    await notifier.idle();
    expect(service.received).toEqual([]);
    // Their endings follow no push: none is sent.
    notifier.ended(question("shown", "c1", { status: "answered" }));
    notifier.ended(question("no-subscription", "c1", { status: "expired" }));
    await notifier.idle();
    expect(service.received).toEqual([]);
  });
});

describe("PushNotifier: an ask that was pushed ends", () => {
  it("its outcome replaces the push: the same tag, a one-line outcome, high urgency, an hour to live; once", async ({
    store,
    notifier,
  }) => {
    const keys = await subscribe(store, "/desk");
    notifier.changed(question("q1", "c1"));
    await notifier.idle();
    const answered: Ask = question("q1", "c1", {
      status: "answered",
      resolution: { by: "owner", at: T0, summary: "SQLite", tabId: "t1" },
    });
    notifier.ended(answered);
    notifier.ended(answered);
    await notifier.idle();
    const [first, outcome, ...more] = pushesTo("/desk");
    expect(more).toEqual([]);
    expect(payloadOf(first!, keys)).toMatchObject({ type: "ask", tag: "ask:q1" });
    expect(payloadOf(outcome!, keys)).toEqual(outcomePush(answered, DASHBOARD));
    expect(outcome!.headers).toMatchObject({ ttl: "3600", urgency: "high" });
  });

  it("before its push went out: nothing is pushed, not even an outcome", async ({
    store,
    world,
    notifier,
  }) => {
    await subscribe(store, "/desk");
    const check = Promise.withResolvers<void>();
    world.shownCheck = check.promise;
    notifier.changed(question("q1", "c1"));
    notifier.ended(question("q1", "c1", { status: "cancelled" }));
    check.resolve();
    await notifier.idle();
    expect(service.received).toEqual([]);
  });

  it("several instances hear every ask: sharing the announcements, they push it once and its outcome once", async ({
    clock,
    world,
    store,
    announcements,
    notifier,
  }) => {
    const other = notifierOn({ clock, world, store, announcements });
    await subscribe(store, "/desk");
    notifier.changed(question("q1", "c1"));
    other.changed(question("q1", "c1"));
    await Promise.all([notifier.idle(), other.idle()]);
    // The broker reports an ending on one instance only.
    other.ended(question("q1", "c1", { status: "expired" }));
    await other.idle();
    expect(pushesTo("/desk")).toHaveLength(2);
  });
});

describe("PushNotifier: which subscriptions stay", () => {
  it("one whose link expired or was revoked is removed, logged, and not pushed to; the others are", async ({
    clock,
    store,
    world,
    notifier,
  }) => {
    await subscribe(store, "/expired", { kid: "device-tablet", linkExpiresAt: T0 + 1_000 });
    await subscribe(store, "/revoked", { kid: "device-lost" });
    await subscribe(store, "/desk");
    world.revokedKids.add("device-lost");
    clock.advance(1_000);
    notifier.changed(question("q1", "c1"));
    await notifier.idle();
    expect(service.received.map((push) => push.path)).toEqual(["/desk"]);
    expect(
      (await store.subscriptions(new Set(["owner"]))).map((subscription) => subscription.endpoint),
    ).toEqual([`${service.url}/desk`]);
    expect(world.logs).toEqual([
      `push subscription removed, its link expired: ${service.url}`,
      `push subscription removed, its link was revoked: ${service.url}`,
    ]);
  });

  it(`gone (410) is removed at once; any other failure counts, ${MAX_FAILURES_IN_A_ROW} in a row remove it, and a push that goes through starts the count again`, async ({
    store,
    world,
    notifier,
  }) => {
    await subscribe(store, "/gone/old");
    await subscribe(store, "/flaky");
    const failures = async () =>
      (await store.subscriptions(new Set(["owner"]))).map((subscription) => [
        subscription.endpoint.slice(service.url.length),
        subscription.failures,
      ]);
    let asks = 0;
    const pushOnce = async () => {
      notifier.changed(question(`q${asks++}`, "c1"));
      await notifier.idle();
    };
    service.failing.add("/flaky");
    await pushOnce();
    expect(await failures()).toEqual([["/flaky", 1]]);
    // The two were pushed at once: their lines come in either order.
    expect([...world.logs].sort()).toEqual(
      [
        `push subscription gone (410), removed: ${service.url}`,
        `push to ${service.url} failed (1 of ${MAX_FAILURES_IN_A_ROW} in a row): HTTP 500`,
      ].sort(),
    );
    for (let i = 2; i < MAX_FAILURES_IN_A_ROW; i++) await pushOnce();
    service.failing.clear();
    await pushOnce();
    expect(await failures()).toEqual([["/flaky", 0]]);
    service.failing.add("/flaky");
    for (let i = 1; i < MAX_FAILURES_IN_A_ROW; i++) await pushOnce();
    expect(await failures()).toEqual([["/flaky", MAX_FAILURES_IN_A_ROW - 1]]);
    await pushOnce();
    expect(await failures()).toEqual([]);
    expect(world.logs.at(-1)).toBe(
      `push subscription removed after ${MAX_FAILURES_IN_A_ROW} failed pushes in a row: ${service.url} (HTTP 500)`,
    );
  });

  it("a push service that cannot be reached counts as a failure, with the reason logged", async ({
    store,
    world,
    notifier,
  }) => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await subscribe(store, "", { endpoint: `https://127.0.0.1:${port}/push` });
    notifier.changed(question("q1", "c1"));
    await notifier.idle();
    expect(world.logs).toEqual([
      expect.stringMatching(
        new RegExp(
          `^push to https://127\\.0\\.0\\.1:${port} failed \\(1 of ${MAX_FAILURES_IN_A_ROW} in a row\\): .*ECONNREFUSED`,
        ),
      ),
    ]);
    expect((await store.subscriptions(new Set(["owner"])))[0]?.failures).toBe(1);
  });
});

describe("PushNotifier: sends run in the background", () => {
  it("a failure before the sends (the chat's title could not be read) is caught and logged, and idle() still resolves", async ({
    store,
    world,
    notifier,
  }) => {
    await subscribe(store, "/desk");
    world.titleFailure = new Error("the store is away");
    notifier.changed(question("q1", "c1"));
    await notifier.idle();
    expect(world.logs).toEqual(["push failed: the store is away"]);
    expect(service.received).toEqual([]);
  });
});
