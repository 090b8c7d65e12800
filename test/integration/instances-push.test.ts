// Several instances on one Redis (issue 12): device links, push subscriptions, action tokens, the VAPID
// key pair and which asks were announced are the deployment's, not one instance's. Two in-process
// instances share a real redis-server and the real OpenClaw Gateway (both hear every ask); a push service
// stand-in counts what reaches each subscription, so "one event gives one push" is counted, not assumed.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import type { AskPush, OutcomePush } from "../../server/push/payload.ts";
import { PROJECT_ROOT } from "../support/app-server.ts";
import type { OperatorConnection, Payload } from "../support/gateway-client.ts";
import {
  gatewayOperator,
  newChat,
  requestApproval,
  sessionKeyOf,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import {
  browserKeys,
  decryptPush,
  type PushServiceStandIn,
  startPushService,
} from "../support/push-service.ts";
import { startRedis, type TestRedis } from "../support/redis-server.ts";
import {
  startTestServer,
  TEST_AUTH_SECRET,
  type TestServer,
  waitConnected,
  watchesAsOwner,
} from "../support/tabs.ts";

let redis: TestRedis;
let pushService: PushServiceStandIn;
let requester: OperatorConnection;
let elsewhere: OperatorConnection;
let a: TestServer;
let b: TestServer;
const { tabs } = useTabs();
/** Per instance, the asks its broker reported as changed (its notifier hears the same). */
const changes = new Map<TestServer, Ask[]>();
const prefix = `deployment-${randomUUID()}:`;

beforeAll(async () => {
  redis = await startRedis();
  pushService = await startPushService();
  requester = await gatewayOperator("requester");
  elsewhere = await gatewayOperator("control-ui");
  const env = {
    AGENT_ID: TEST_AGENT,
    REDIS_URL: redis.url,
    AUTH_SECRET: TEST_AUTH_SECRET,
    REDIS_KEY_PREFIX: prefix,
    PUSH_ALLOW_PRIVATE_ENDPOINTS: "1",
  };
  const start = () =>
    startTestServer({
      gatewayUrl: inject("gatewayUrl"),
      gatewayToken: inject("gatewayToken"),
      env,
      pushAgent: new Agent({ ca: pushService.ca }),
    });
  [a, b] = await Promise.all([start(), start()]);
  for (const server of [a, b]) {
    await waitConnected(server);
    changes.set(server, []);
    server.broker.on("ask:changed", (ask) => changes.get(server)!.push(ask));
  }
});

afterAll(async () => {
  await Promise.all([a, b].map((server) => server?.dispose()));
  await requester?.stop();
  await elsewhere?.stop();
  await pushService?.stop();
  await redis?.stop();
});

async function call(
  server: TestServer,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<{ status: number; body: Payload }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Payload };
}

const connects = (server: TestServer, token: string) => watchesAsOwner(server.url, token, tabs);

/** Waits until both instances' brokers reported the ask in this state, then until both notifiers sent what that started. */
async function bothSettled(id: string, pending: boolean): Promise<void> {
  for (const server of [a, b])
    await expect
      .poll(
        () =>
          changes
            .get(server)!
            .some((ask) => ask.id === id && (ask.status === "pending") === pending),
        { timeout: 30_000 },
      )
      .toBe(true);
  await Promise.all([a, b].map((server) => server.push.notifier.idle()));
}

describe("two instances on one Redis", () => {
  it("use the same VAPID public key, generated once for the deployment", async () => {
    const [keyA, keyB] = await Promise.all(
      [a, b].map((server) => call(server, "GET", "/push/key", null)),
    );
    expect(keyA!.body).toMatchObject({
      ok: true,
      publicKey: expect.stringMatching(/^[A-Za-z0-9_-]{87}$/),
    });
    expect(keyB!.body.publicKey).toBe(keyA!.body.publicKey);
  });

  it("a device link minted on one works on the other, and revoking it on the other refuses it on the first", async () => {
    const owner = await a.ownerLink();
    const created = await call(a, "POST", "/devices", owner, { name: "Phone" });
    expect(created.status).toBe(201);
    const token = new URL(created.body.url as string).searchParams.get("token")!;
    expect(await connects(b, token)).toBe("owner");
    expect((await call(b, "GET", "/devices", owner)).body.devices).toEqual([
      expect.objectContaining({ kid: created.body.kid, name: "Phone" }),
    ]);
    expect(await call(b, "DELETE", `/devices/${created.body.kid}`, owner)).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(await connects(a, token)).toMatch(/revoked/);
    expect((await call(a, "GET", "/devices", owner)).body.devices).toEqual([]);
  });

  it("npm run owner-link -- --device with REDIS_URL mints a device link every instance knows, whatever its DATA_DIR", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "owner-link-"));
    try {
      const child = spawn(
        process.execPath,
        ["server/owner-link.ts", "--device", "Kitchen tablet"],
        {
          cwd: PROJECT_ROOT,
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            NODE_ENV: "production",
            DATA_DIR: dataDir,
            AUTH_SECRET: TEST_AUTH_SECRET,
            OWNER_USERS: "owner",
            REDIS_URL: redis.url,
            REDIS_KEY_PREFIX: prefix,
          },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      expect(await new Promise((resolve) => child.once("exit", resolve))).toBe(0);
      const url = /^Device link for "Kitchen tablet" .*: (\S+)$/m.exec(output)?.[1];
      expect(url, output).toBeDefined();
      const token = new URL(url!).searchParams.get("token")!;
      expect(await connects(a, token)).toBe("owner");
      expect(await connects(b, token)).toBe("owner");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("a subscription made on one gets one push for a new ask both hear, one outcome push, and a token redeemed on one is a replay on the other", async () => {
    const keys = browserKeys();
    const endpoint = `${pushService.url}/sub/${randomUUID()}`;
    const subscribed = await call(a, "POST", "/push/subscriptions", await a.ownerLink(), {
      endpoint,
      keys: { p256dh: keys.p256dh, auth: keys.auth },
    });
    expect(subscribed.status).toBe(201);
    const subscriptionPath = new URL(endpoint).pathname;
    const pushesOf = (id: string) =>
      pushService.received
        .filter((push) => push.path === subscriptionPath)
        .map((push) => JSON.parse(decryptPush(push.body, keys)) as AskPush | OutcomePush)
        .filter((push) => push.askId === id);

    const chatId = newChat("instances-push");
    const pending = requestApproval(requester, elsewhere, "plugin", {
      pluginId: "instances-push",
      title: "Deploy",
      description: "x",
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 120_000,
    });
    const { id } = (await pending.requested) as { id: string };
    await pushService.next((push) => push.path === subscriptionPath);
    // Both instances heard the ask and each notifier is done with it: still exactly one push.
    await bothSettled(id, true);
    const announced = pushesOf(id);
    expect(announced.map((push) => push.type)).toEqual(["ask"]);
    const token = (announced[0] as AskPush).actions.find(
      (action) => action.action === "allow-once",
    )!.token;

    const act = (server: TestServer) =>
      call(server, "POST", "/push/actions", null, { askId: id, decision: "allow-once", token });
    expect(await act(a)).toEqual({ status: 200, body: { ok: true, status: "answered" } });
    expect(await act(b)).toMatchObject({
      status: 409,
      body: { error: { code: "ALREADY_RESOLVED" } },
    });
    expect(await pending.decision).toMatchObject({ decision: "allow-once" });

    // Both instances saw the ending and each notifier is done with it: one outcome push.
    await bothSettled(id, false);
    // Whichever instance's write ended it sends it (the other may have heard the Gateway's end first).
    expect(pushesOf(id)).toEqual([
      announced[0],
      {
        type: "outcome",
        tag: `ask:${id}`,
        askId: id,
        title: "Approval: Deploy",
        body: expect.stringMatching(/^Decided: Allow once/),
        url: expect.any(String),
      },
    ]);
  });
});

describe("22.3 what Redis holds for push", () => {
  it("22.3 a subscription written straight into Redis (no link of the server's making, a far-future expiry) gets no push and is removed, logged once; the VAPID private key is not in Redis in clear", async () => {
    const client = new Redis(redis.url);
    try {
      // What the attacker can read there: the current owner-link key id. Their subscription names it.
      const ownerLink = await a.ownerLink();
      const kid = await a.store.ownerLinkKid();
      expect(kid).toEqual(expect.any(String));
      const forgedKeys = browserKeys();
      const forgedPath = `/forged/${randomUUID()}`;
      await client.hset(
        `${prefix}push:subscriptions`,
        `${pushService.url}${forgedPath}`,
        JSON.stringify({
          owner: "owner",
          link: { kid, expiresAt: Date.now() + 10 * 365 * 24 * 3600_000 },
          p256dh: forgedKeys.p256dh,
          auth: forgedKeys.auth,
          createdAt: Date.now(),
        }),
      );
      const keys = browserKeys();
      const realPath = `/real/${randomUUID()}`;
      expect(
        (
          await call(a, "POST", "/push/subscriptions", ownerLink, {
            endpoint: `${pushService.url}${realPath}`,
            keys: { p256dh: keys.p256dh, auth: keys.auth },
          })
        ).status,
      ).toBe(201);

      const chatId = newChat("instances-forged");
      const pending = requestApproval(requester, elsewhere, "plugin", {
        pluginId: "instances-push",
        title: "Deploy to production",
        description: "x",
        sessionKey: sessionKeyOf(chatId),
        timeoutMs: 120_000,
      });
      const { id } = (await pending.requested) as { id: string };
      await pushService.next(
        (push) =>
          push.path === realPath &&
          (JSON.parse(decryptPush(push.body, keys)) as AskPush).askId === id,
      );
      await bothSettled(id, true);
      expect(pushService.received.filter((push) => push.path === forgedPath)).toEqual([]);
      expect(
        await client.hexists(`${prefix}push:subscriptions`, `${pushService.url}${forgedPath}`),
      ).toBe(0);
      const removed = [a, b]
        .flatMap((server) => server.logs)
        .filter((line) => line.includes("is not signed by this server"));
      expect(removed).toEqual([
        `push subscription for ${pushService.url} is not signed by this server: ignored and removed`,
      ]);
      await elsewhere.request("plugin.approval.resolve", { id, decision: "deny" });
      expect(await pending.decision).toMatchObject({ decision: "deny" });

      const vapid = JSON.parse((await client.get(`${prefix}push:vapid`))!) as Record<
        string,
        string
      >;
      expect(Object.keys(vapid).sort()).toEqual(["encryptedPrivateKey", "publicKey"]);
      expect(vapid.publicKey).toBe((await call(a, "GET", "/push/key", null)).body.publicKey);
    } finally {
      client.disconnect();
    }
  });
});

describe("22.8 Redis away when a notification's button is pressed", () => {
  let own: TestRedis;
  let server: TestServer;

  beforeAll(async () => {
    own = await startRedis();
    const env = {
      AGENT_ID: TEST_AGENT,
      REDIS_URL: own.url,
      AUTH_SECRET: TEST_AUTH_SECRET,
      REDIS_KEY_PREFIX: `outage-${randomUUID()}:`,
      PUSH_ALLOW_PRIVATE_ENDPOINTS: "1",
    };
    server = await startTestServer({
      gatewayUrl: inject("gatewayUrl"),
      gatewayToken: inject("gatewayToken"),
      env,
      pushAgent: new Agent({ ca: pushService.ca }),
    });
    await waitConnected(server);
  });
  afterAll(async () => {
    await server?.dispose();
    await own?.stop();
  });

  const health = async () =>
    ((await (await fetch(`${server.url}/healthz`)).json()) as { status: string }).status;

  it("22.8 a Redis outage answers a notification's Allow once with 503 and try again, and the same action decides once Redis is back", async () => {
    const keys = browserKeys();
    const endpoint = `${pushService.url}/outage/${randomUUID()}`;
    expect(
      (
        await call(server, "POST", "/push/subscriptions", await server.ownerLink(), {
          endpoint,
          keys: { p256dh: keys.p256dh, auth: keys.auth },
        })
      ).status,
    ).toBe(201);
    const chatId = newChat("push-outage");
    const pending = requestApproval(requester, elsewhere, "plugin", {
      pluginId: "push-outage",
      title: "Deploy during an outage",
      description: "x",
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 120_000,
    });
    const { id } = (await pending.requested) as { id: string };
    const received = await pushService.next(
      (push) =>
        push.path === new URL(endpoint).pathname &&
        (JSON.parse(decryptPush(push.body, keys)) as AskPush).askId === id,
    );
    const token = (JSON.parse(decryptPush(received.body, keys)) as AskPush).actions.find(
      (action) => action.action === "allow-once",
    )!.token;
    const act = () =>
      call(server, "POST", "/push/actions", null, { askId: id, decision: "allow-once", token });

    await own.kill();
    await expect.poll(health, { timeout: 20_000 }).toBe("degraded");
    expect(await act()).toMatchObject({
      status: 503,
      body: {
        ok: false,
        error: { code: "UNAVAILABLE", message: expect.stringMatching(/try again/) },
      },
    });

    await own.restart();
    await expect.poll(health, { timeout: 20_000 }).toBe("ok");
    // Nothing was decided nor used up while Redis was away: the same button decides now, once.
    expect(await act()).toEqual({ status: 200, body: { ok: true, status: "answered" } });
    expect(await pending.decision).toMatchObject({ decision: "allow-once" });
  }, 90_000);
});
