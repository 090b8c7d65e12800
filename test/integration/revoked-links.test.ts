// Revoking a link closes the sockets opened with it. Before: a revoked device link or owner link was
// refused from its next connect on, and a socket already open with it kept answering cards and watching
// the dashboard feed until it disconnected. Now a device revoked on the dashboard has its sockets
// closed at once on every instance (through the Socket.IO adapter), and an owner link revoked by
// `npm run owner-link -- --revoke` (another process) has them closed at each instance's next check of
// its sockets' links, as have the device links minted through it (issue 22). The instances run on ManualClocks that only the owner-link test moves: a socket
// closed while no clock moved was closed by the revocation itself, not by a check.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LINK_CHECK_EVERY_MS } from "../../server/auth/link-check.ts";
import { PROJECT_ROOT } from "../support/app-server.ts";
import { type FakeGateway, startFakeGateway } from "../support/fake-gateway.ts";
import type { Payload } from "../support/gateway-client.ts";
import { ManualClock } from "../support/manual-clock.ts";
import {
  startOnFakeGateway,
  stopOnFakeGateway,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import { startRedis, type TestRedis } from "../support/redis-server.ts";
import {
  openTab,
  startTestServer,
  type Tab,
  TEST_AUTH_SECRET,
  type TestServer,
  waitConnected,
  watchesAsOwner,
} from "../support/tabs.ts";

const { tabs } = useTabs();

async function call(
  server: TestServer,
  method: string,
  path: string,
  token: string,
): Promise<{ status: number; body: Payload }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    ...(method === "POST" ? { body: JSON.stringify({ name: "Phone" }) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Payload };
}

/** A new device link's token and key id, minted on `server` through an owner link (`through`, or a new one). */
async function newDevice(
  server: TestServer,
  through?: string,
): Promise<{ token: string; kid: string }> {
  const created = await call(server, "POST", "/devices", through ?? (await server.ownerLink()));
  expect(created.status).toBe(201);
  return {
    token: new URL(created.body.url as string).searchParams.get("token")!,
    kid: created.body.kid as string,
  };
}

/** A tab signed in as the owner that watches the dashboard feed. */
async function watching(server: TestServer, token: string): Promise<Tab> {
  const tab = await openTab(server.url, token);
  tabs.push(tab);
  expect(await tab.send("asks:watch", {})).toMatchObject({ ok: true });
  return tab;
}

/** Resolves with the reason of the tab's next disconnect. */
const disconnected = (tab: Tab) =>
  new Promise<string>((resolve) => tab.socket.once("disconnect", resolve));

describe("one instance (SQLite)", () => {
  let started: Awaited<ReturnType<typeof startOnFakeGateway>>;
  let clock: ManualClock;

  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    started = await startOnFakeGateway({ clock });
  });
  afterAll(() => stopOnFakeGateway(started));

  it("revoking a device closes its link's open sockets at once, and their reconnect is refused as revoked; other links' sockets stay", async () => {
    const { server } = started;
    const phone = await newDevice(server);
    const tablet = await newDevice(server);
    const [onPhone, secondOnPhone, onTablet, onDesk] = await Promise.all([
      watching(server, phone.token),
      watching(server, phone.token),
      watching(server, tablet.token),
      watching(server, await server.token("owner")),
    ]);
    const closed = Promise.all([disconnected(onPhone), disconnected(secondOnPhone)]);
    expect(await call(server, "DELETE", `/devices/${phone.kid}`, await server.ownerLink())).toEqual(
      { status: 200, body: { ok: true } },
    );
    expect(await closed).toEqual(["io server disconnect", "io server disconnect"]);
    expect(await watchesAsOwner(server.url, phone.token, tabs)).toMatch(
      /this owner link was revoked/,
    );
    for (const tab of [onTablet, onDesk])
      expect(await tab.send("asks:list", {})).toMatchObject({ ok: true });
  });

  it("22.1 an owner link revoked by npm run owner-link -- --revoke has its open sockets closed at the next check of the sockets' links, and so have the device links minted through it", async () => {
    const { server } = started;
    const token = await server.ownerLink();
    const onOwnerLink = await watching(server, token);
    const device = await newDevice(server, token);
    const onDevice = await watching(server, device.token);
    const stays = await watching(server, await server.token("owner"));
    const closed = Promise.all([disconnected(onOwnerLink), disconnected(onDevice)]);

    const child = spawn(process.execPath, ["server/owner-link.ts", "--revoke"], {
      cwd: PROJECT_ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: "production",
        DATA_DIR: server.dataDir,
        AUTH_SECRET: TEST_AUTH_SECRET,
        OWNER_USERS: "owner",
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    expect(await new Promise((resolve) => child.once("exit", resolve))).toBe(0);
    // The command cannot reach the server: the socket is still open until the server checks.
    expect(await onOwnerLink.send("asks:list", {})).toMatchObject({ ok: true });

    clock.advance(LINK_CHECK_EVERY_MS);
    expect(await closed).toEqual(["io server disconnect", "io server disconnect"]);
    expect(await watchesAsOwner(server.url, token, tabs)).toMatch(/this owner link was revoked/);
    expect(await watchesAsOwner(server.url, device.token, tabs)).toMatch(
      /this owner link was revoked/,
    );
    expect(await stays.send("asks:list", {})).toMatchObject({ ok: true });
  });
});

describe("two instances on one Redis", () => {
  let redis: TestRedis;
  let fake: FakeGateway;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeGateway();
    const env = {
      AGENT_ID: TEST_AGENT,
      REDIS_URL: redis.url,
      AUTH_SECRET: TEST_AUTH_SECRET,
      REDIS_KEY_PREFIX: "revoked-links:",
    };
    const start = () =>
      startTestServer({
        gatewayUrl: fake.url,
        gatewayToken: fake.token,
        env,
        clock: new ManualClock(Date.now()),
      });
    [a, b] = await Promise.all([start(), start()]);
    await Promise.all([a, b].map((server) => waitConnected(server)));
  });
  afterAll(async () => {
    await Promise.all([a, b].map((server) => server?.dispose()));
    await fake?.stop();
    await redis?.stop();
  });

  it("a device revoked through one instance has its link's socket on the other closed at once, and the reconnect is refused as revoked", async () => {
    const phone = await newDevice(a);
    const onB = await watching(b, phone.token);
    const stays = await watching(b, await b.token("owner"));
    const closed = disconnected(onB);
    expect(await call(a, "DELETE", `/devices/${phone.kid}`, await a.ownerLink())).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(await closed).toBe("io server disconnect");
    expect(await watchesAsOwner(b.url, phone.token, tabs)).toMatch(/this owner link was revoked/);
    expect(await stays.send("asks:list", {})).toMatchObject({ ok: true });
  });
});
