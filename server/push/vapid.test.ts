import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../test/support/redis-server.ts";
import { loadSharedVapidKeys, loadVapidKeys } from "./vapid.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("VAPID keys", () => {
  it("are generated once into DATA_DIR/vapid.json (0600) and read back after", () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), "vapid-")), "data");
    dirs.push(path.dirname(dataDir));
    const first = loadVapidKeys({ dataDir });
    expect(first.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect(statSync(path.join(dataDir, "vapid.json")).mode & 0o777).toBe(0o600);
    expect(loadVapidKeys({ dataDir })).toEqual(first);
  });

  it("come from the environment when both are set", () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "vapid-"));
    dirs.push(dataDir);
    expect(loadVapidKeys({ dataDir, publicKey: "pub", privateKey: "priv" })).toEqual({ publicKey: "pub", privateKey: "priv" });
  });
});

describe("VAPID keys of several instances", () => {
  let redis: TestRedis;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await redis?.stop();
  });
  const client = () => {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    clients.push(connection);
    return connection;
  };

  it("are generated once per deployment in Redis: instances starting together all get the first one's pair", async () => {
    const key = "deployment-a:push:vapid";
    const pairs = await Promise.all([1, 2, 3].map(() => loadSharedVapidKeys({ redis: client(), key })));
    expect(pairs[0]!.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect(pairs[1]).toEqual(pairs[0]);
    expect(pairs[2]).toEqual(pairs[0]);
    expect(await loadSharedVapidKeys({ redis: client(), key })).toEqual(pairs[0]);
    // Another deployment on the same Redis has its own.
    expect((await loadSharedVapidKeys({ redis: client(), key: "deployment-b:push:vapid" })).publicKey).not.toBe(pairs[0]!.publicKey);
  });

  it("come from the environment when both are set, and a stored value that is no pair is refused", async () => {
    const connection = client();
    expect(await loadSharedVapidKeys({ redis: connection, key: "deployment-c:push:vapid", publicKey: "pub", privateKey: "priv" })).toEqual({ publicKey: "pub", privateKey: "priv" });
    expect(await connection.exists("deployment-c:push:vapid")).toBe(0);
    await connection.set("deployment-d:push:vapid", "{not json");
    await expect(loadSharedVapidKeys({ redis: connection, key: "deployment-d:push:vapid" })).rejects.toThrow(/is not a VAPID key pair/);
  });
});
