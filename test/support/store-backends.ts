import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import { RedisAskStore } from "../../server/store/redis.ts";
import { SqliteAskStore } from "../../server/store/sqlite.ts";
import { startRedis, type TestRedis } from "./redis-server.ts";

/**
 * Both store implementations for one parametrized suite: `describe.each(storeBackends())`. SQLite is
 * a file in a temporary directory; Redis is one throwaway redis-server for the test file, each store under its own key
 * prefix so the tests never see each other's data. `shared()` opens a second store on the same data,
 * as another instance would (its own connection), where the implementation supports that.
 */

export type StoreUnderTest = SqliteAskStore | RedisAskStore;

export type StoreBackend = {
  name: "sqlite" | "redis";
  open(options?: { log?: (line: string) => void }): Promise<StoreUnderTest>;
  /** Another instance's view of the store last opened (Redis only; SQLite is one process now). */
  shared?(): Promise<StoreUnderTest>;
  /** Writes a row the way a hand edit or another version might have left it. */
  writeRaw(id: string, status: string, chatId: string, body: string): Promise<void>;
};

export function storeBackends(): StoreBackend[] {
  let redis: TestRedis | undefined;
  const clients: Redis[] = [];
  const stores: StoreUnderTest[] = [];
  let counter = 0;
  let last: { file?: string; prefix?: string } = {};
  const dirs: string[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const client of clients.splice(0)) client.disconnect();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  const client = () => {
    const connection = new Redis(redis!.url, { maxRetriesPerRequest: 1 });
    clients.push(connection);
    return connection;
  };

  return [
    {
      name: "sqlite",
      async open(options = {}) {
        const dir = mkdtempSync(path.join(tmpdir(), "asks-store-"));
        dirs.push(dir);
        const file = path.join(dir, "asks.sqlite");
        const store = new SqliteAskStore(file, options);
        stores.push(store);
        last = { file };
        return store;
      },
      async writeRaw(id, status, chatId, body) {
        const db = new DatabaseSync(last.file!);
        db.prepare("INSERT INTO asks (id, status, chat_id, created_at, updated_at, claimed_by, body) VALUES (?, ?, ?, 1, 1, NULL, ?)").run(id, status, chatId, body);
        db.close();
      },
    },
    {
      name: "redis",
      async open(options = {}) {
        const prefix = `test-${process.pid}-${++counter}:`;
        const store = new RedisAskStore(client(), { prefix, log: options.log });
        stores.push(store);
        last = { prefix };
        return store;
      },
      async shared() {
        const store = new RedisAskStore(client(), { prefix: last.prefix });
        stores.push(store);
        return store;
      },
      async writeRaw(id, status, chatId, body) {
        const p = last.prefix!;
        await client()
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
