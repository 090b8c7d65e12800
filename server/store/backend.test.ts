import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../lib/clock.ts";
import { question } from "../../test/support/ask-fixtures.ts";
import { startRedis, type TestRedis } from "../../test/support/redis-server.ts";
import { MemoryPresence } from "../broker/presence.ts";
import { RedisPresence } from "../broker/redis-presence.ts";
import { parseConfig } from "../config.ts";
import { type Backend, openBackend } from "./backend.ts";

/** The composition root: one configuration gives every store of one kind, under one DATA_DIR or one key prefix. */

const SECRET = "backend-test-secret-backend-test-secret-0123";
const log = () => {};
const clock = systemClock();

let redis: TestRedis;
let client: Redis;
const dirs: string[] = [];
const opened: Backend[] = [];
beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
});
afterEach(async () => {
  for (const backend of opened.splice(0)) await backend.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
afterAll(async () => {
  client.disconnect();
  await redis.stop();
});

async function open(
  env: Record<string, string> = {},
): Promise<{ backend: Backend; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "asks-backend-"));
  dirs.push(dataDir);
  const backend = await openBackend(
    parseConfig({ DATA_DIR: dataDir, AUTH_SECRET: SECRET, ...env }),
    SECRET,
    { log, clock },
  );
  opened.push(backend);
  return { backend, dataDir };
}

/** Writes through every part of the backend once. */
async function useEveryPart(backend: Backend): Promise<void> {
  await backend.start();
  await backend.store.put(question("q1", "c1"));
  await backend.store.recordChatOwner("c1", "owner");
  await backend.store.setOwnerLinkKid("kid-1");
  await backend.devices.add({
    kid: "device-1",
    owner: "owner",
    name: "Phone",
    createdAt: clock.now(),
    expiresAt: clock.now() + 60_000,
    mintedBy: { kind: "command-line" },
  });
  await backend.push.store.subscribe(
    {
      owner: "owner",
      link: { kid: "kid-1", expiresAt: clock.now() + 60_000 },
      endpoint: "https://push.example/1",
      p256dh: "key",
      auth: "auth",
    },
    clock.now(),
  );
  await backend.push.announcements.claim(question("q1", "c1"), clock.now());
  await backend.push.vapidKeys();
  await backend.presence.view(
    { id: "tab-1", userId: "owner", isOwner: true, chatClaim: null, reply: null },
    "c1",
  );
}

describe("openBackend", () => {
  it("without REDIS_URL: SQLite files in DATA_DIR, presence in memory, no Socket.IO adapter, always reachable; the VAPID pair only once asked for", async () => {
    const { backend, dataDir } = await open();
    expect(
      readdirSync(dataDir)
        .filter((file) => file.endsWith(".sqlite"))
        .sort(),
    ).toEqual(["asks.sqlite", "devices.sqlite", "push.sqlite"]);
    expect(backend.presence).toBeInstanceOf(MemoryPresence);
    expect(backend.socketAdapter).toBeUndefined();
    expect(backend.link.up).toBe(true);
    expect(backend.link.health()).toEqual({});
    expect(existsSync(path.join(dataDir, "vapid.json"))).toBe(false);
    await useEveryPart(backend);
    expect(existsSync(path.join(dataDir, "vapid.json"))).toBe(true);
    expect(await backend.store.ownerLinkKid()).toBe("kid-1");
  });

  it("with REDIS_URL: every key any part writes starts with REDIS_KEY_PREFIX, and nothing lands in DATA_DIR", async () => {
    const { backend, dataDir } = await open({
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: "deploy-1:",
    });
    expect(backend.presence).toBeInstanceOf(RedisPresence);
    expect(backend.socketAdapter).toBeDefined();
    expect(backend.link.health()).toEqual({ redis: { connected: true } });
    await useEveryPart(backend);
    const keys = await client.keys("*");
    expect(keys.length).toBeGreaterThan(10);
    expect(keys.filter((key) => !key.startsWith("deploy-1:"))).toEqual([]);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it("with REDIS_URL, opened and closed without start (npm run owner-link): it never joins presence", async () => {
    const { backend } = await open({ REDIS_URL: redis.url, REDIS_KEY_PREFIX: "deploy-2:" });
    await backend.store.setOwnerLinkKid("kid-2");
    await backend.close();
    opened.splice(0);
    expect((await client.keys("deploy-2:*")).sort()).toEqual([
      "deploy-2:deployment",
      "deploy-2:store:settings",
    ]);
  });
});
