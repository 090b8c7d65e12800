import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { Clock } from "../../lib/clock.ts";
import { RedisAskStore } from "../../server/store/redis.ts";
import { SqliteAskStore } from "../../server/store/sqlite.ts";
import { startRedis, type TestRedis } from "./redis-server.ts";

/**
 * Both store implementations for one parametrized suite: `describe.each(storeBackends())`. SQLite is
 * a file in a temporary directory; Redis is one throwaway redis-server for the test file, each store under its own key
 * prefix so the tests never see each other's data. `shared()` opens a second store on the same data,
 * as another instance would (its own connection), where the implementation supports that.
 * `sideStoreBackends` does the same for the device and push stores.
 */

export type StoreUnderTest = SqliteAskStore | RedisAskStore;

export type StoreBackend = {
  name: "sqlite" | "redis";
  open(options?: { log?: (line: string) => void; clock?: Clock }): Promise<StoreUnderTest>;
  /** Another instance's view of the store last opened (Redis only; SQLite is one process now). */
  shared?(): Promise<StoreUnderTest>;
  /** Writes a row the way a hand edit or another version might have left it. */
  writeRaw(id: string, status: string, chatId: string, body: string): Promise<void>;
};

/** What every backend suite needs: one throwaway redis-server per test file, and cleanup after each test. */
function backendResources() {
  let redis: TestRedis | undefined;
  const clients: Redis[] = [];
  const closers: (() => unknown)[] = [];
  const dirs: string[] = [];
  let counter = 0;

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    for (const client of clients.splice(0)) client.disconnect();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  return {
    /** A fresh file in a temporary directory removed after the test. */
    file(name: string): string {
      const dir = mkdtempSync(path.join(tmpdir(), "asks-store-"));
      dirs.push(dir);
      return path.join(dir, name);
    },
    client(): Redis {
      const connection = new Redis(redis!.url, { maxRetriesPerRequest: 1 });
      clients.push(connection);
      return connection;
    },
    /** A key prefix of its own, so the tests never see each other's data. */
    prefix: () => `test-${process.pid}-${++counter}:`,
    closeAfter<T extends { close(): unknown }>(store: T): T {
      closers.push(() => store.close());
      return store;
    },
  };
}

export function storeBackends(): StoreBackend[] {
  const resources = backendResources();
  let last: { file?: string; prefix?: string } = {};

  return [
    {
      name: "sqlite",
      async open(options = {}) {
        const file = resources.file("asks.sqlite");
        last = { file };
        return resources.closeAfter(new SqliteAskStore(file, options));
      },
      async writeRaw(id, status, chatId, body) {
        const db = new DatabaseSync(last.file!);
        db.prepare(
          "INSERT INTO asks (id, status, chat_id, created_at, updated_at, claimed_by, body) VALUES (?, ?, ?, 1, 1, NULL, ?)",
        ).run(id, status, chatId, body);
        db.close();
      },
    },
    {
      name: "redis",
      async open(options = {}) {
        const prefix = resources.prefix();
        last = { prefix };
        return resources.closeAfter(new RedisAskStore(resources.client(), { prefix, ...options }));
      },
      async shared() {
        return resources.closeAfter(
          new RedisAskStore(resources.client(), { prefix: last.prefix! }),
        );
      },
      async writeRaw(id, status, chatId, body) {
        const p = last.prefix!;
        await resources
          .client()
          .multi()
          .hset(`${p}ask:${id}`, { status, chat: chatId, updated: 1, body })
          .zadd(`${p}history`, 1, id)
          .zadd(`${p}status:${status}`, 1, id)
          .zadd(status === "pending" ? `${p}pending` : `${p}terminal`, 1, id)
          .zadd(`${p}chat-asks:${chatId}`, 1, id)
          .exec();
      },
    },
  ];
}

/**
 * The same for a deployment's smaller stores (devices, push): `open()` gives a fresh one, `shared()`
 * another instance's view of the last one opened (Redis only).
 */
export type SideStoreBackend<T> = {
  name: "sqlite" | "redis";
  open(): T;
  shared?(): T;
  /** Where the last store opened keeps its data, to write what a hand edit or another version might have left. */
  raw(): { name: "sqlite"; file: string } | { name: "redis"; client: Redis; prefix: string };
};

export function sideStoreBackends<T extends { close(): unknown }>(make: {
  sqlite(file: string): T;
  redis(client: Redis, prefix: string): T;
}): SideStoreBackend<T>[] {
  const resources = backendResources();
  let lastFile = "";
  let lastPrefix = "";
  return [
    {
      name: "sqlite",
      open() {
        lastFile = resources.file("store.sqlite");
        return resources.closeAfter(make.sqlite(lastFile));
      },
      raw: () => ({ name: "sqlite", file: lastFile }),
    },
    {
      name: "redis",
      open() {
        lastPrefix = resources.prefix();
        return resources.closeAfter(make.redis(resources.client(), lastPrefix));
      },
      shared: () => resources.closeAfter(make.redis(resources.client(), lastPrefix)),
      raw: () => ({ name: "redis", client: resources.client(), prefix: lastPrefix }),
    },
  ];
}
