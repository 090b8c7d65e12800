import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { startRedis, type TestRedis } from "../../test/support/redis-server.ts";
import { loadSharedVapidKeys, loadVapidKeys } from "./vapid.ts";

const authSecret = "a".repeat(32);
const logs: string[] = [];
const keeping = { authSecret, log: (line: string) => logs.push(line) };
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  logs.length = 0;
});

const dataDir = () => {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), "vapid-")), "data");
  dirs.push(path.dirname(dir));
  return dir;
};

describe("VAPID keys", () => {
  it("are generated once into DATA_DIR/vapid.json (0600) and read back after", () => {
    const dir = dataDir();
    const first = loadVapidKeys({ ...keeping, dataDir: dir });
    expect(first.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect(statSync(path.join(dir, "vapid.json")).mode & 0o777).toBe(0o600);
    expect(loadVapidKeys({ ...keeping, dataDir: dir })).toEqual(first);
  });

  it("come from the environment when both are set", () => {
    const dir = dataDir();
    expect(
      loadVapidKeys({ ...keeping, dataDir: dir, publicKey: "pub", privateKey: "priv" }),
    ).toEqual({ publicKey: "pub", privateKey: "priv" });
  });

  it("22.3 keep the private key encrypted in DATA_DIR/vapid.json with a key derived from AUTH_SECRET; a clear one is read once and written back encrypted", () => {
    const dir = dataDir();
    const file = path.join(dir, "vapid.json");
    const generated = loadVapidKeys({ ...keeping, dataDir: dir });
    expect(readFileSync(file, "utf8")).not.toContain(generated.privateKey);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      publicKey: generated.publicKey,
      encryptedPrivateKey: expect.stringMatching(/^v1\./),
    });
    expect(() => loadVapidKeys({ ...keeping, authSecret: "b".repeat(32), dataDir: dir })).toThrow(
      /vapid\.json does not decrypt with this AUTH_SECRET/,
    );

    // An earlier version's file, in clear.
    const clear = webpush.generateVAPIDKeys();
    writeFileSync(file, JSON.stringify(clear), { mode: 0o600 });
    expect(loadVapidKeys({ ...keeping, dataDir: dir })).toEqual(clear);
    expect(logs).toEqual([`${file} held the VAPID private key in clear: written back encrypted`]);
    expect(readFileSync(file, "utf8")).not.toContain(clear.privateKey);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadVapidKeys({ ...keeping, dataDir: dir })).toEqual(clear);
    expect(logs).toHaveLength(1);
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
    const pairs = await Promise.all(
      [1, 2, 3].map(() => loadSharedVapidKeys({ ...keeping, redis: client(), key })),
    );
    expect(pairs[0]!.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect(pairs[1]).toEqual(pairs[0]);
    expect(pairs[2]).toEqual(pairs[0]);
    expect(await loadSharedVapidKeys({ ...keeping, redis: client(), key })).toEqual(pairs[0]);
    // Another deployment on the same Redis has its own.
    expect(
      (await loadSharedVapidKeys({ ...keeping, redis: client(), key: "deployment-b:push:vapid" }))
        .publicKey,
    ).not.toBe(pairs[0]!.publicKey);
  });

  it("come from the environment when both are set, and a stored value that is no pair is refused", async () => {
    const connection = client();
    expect(
      await loadSharedVapidKeys({
        ...keeping,
        redis: connection,
        key: "deployment-c:push:vapid",
        publicKey: "pub",
        privateKey: "priv",
      }),
    ).toEqual({ publicKey: "pub", privateKey: "priv" });
    expect(await connection.exists("deployment-c:push:vapid")).toBe(0);
    await connection.set("deployment-d:push:vapid", "{not json");
    await expect(
      loadSharedVapidKeys({ ...keeping, redis: connection, key: "deployment-d:push:vapid" }),
    ).rejects.toThrow(/is not a VAPID key pair/);
  });

  it("22.3 keep the private key encrypted in Redis, so reading Redis does not give it; a clear one is written back encrypted once, whichever instance reads it first", async () => {
    const connection = client();
    const key = "deployment-e:push:vapid";
    const generated = await loadSharedVapidKeys({ ...keeping, redis: connection, key });
    expect(await connection.get(key)).not.toContain(generated.privateKey);
    await expect(
      loadSharedVapidKeys({ ...keeping, authSecret: "b".repeat(32), redis: connection, key }),
    ).rejects.toThrow(/does not decrypt with this AUTH_SECRET/);

    const clear = webpush.generateVAPIDKeys();
    const old = "deployment-f:push:vapid";
    await connection.set(old, JSON.stringify(clear));
    const pairs = await Promise.all(
      [1, 2, 3].map(() => loadSharedVapidKeys({ ...keeping, redis: client(), key: old })),
    );
    expect(pairs).toEqual([clear, clear, clear]);
    expect(logs).toEqual([
      `Redis key ${old} held the VAPID private key in clear: written back encrypted`,
    ]);
    expect(await connection.get(old)).not.toContain(clear.privateKey);
    expect(await loadSharedVapidKeys({ ...keeping, redis: connection, key: old })).toEqual(clear);
  });
});
