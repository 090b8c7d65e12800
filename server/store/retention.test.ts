import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { question } from "../../test/support/ask-fixtures.ts";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { storeBackends, type StoreUnderTest } from "../../test/support/store-backends.ts";
import { Retention } from "./retention.ts";
import { SqliteAskStore } from "./sqlite.ts";

const DAY = 86_400_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function retentionOn(store: StoreUnderTest, historyDays: number, batchRows?: number) {
  const clock = new ManualClock();
  const logs: string[] = [];
  const retention = new Retention({
    store,
    clock,
    historyDays,
    log: (line) => logs.push(line),
    batchRows,
  });
  cleanups.push(() => retention.stop());
  return { clock, retention, logs };
}

/** An ask that arrives now and is answered at once, as it passes through the broker. */
async function passThrough(
  store: StoreUnderTest,
  clock: ManualClock,
  id: string,
  chatId: string,
): Promise<void> {
  const ask = question(id, chatId, { createdAt: clock.now(), expiresAt: clock.now() + 900_000 });
  await store.put(ask);
  await store.put({
    ...ask,
    status: "answered",
    resolution: { by: "owner", at: clock.now(), summary: "SQLite", tabId: "tab" },
  });
}

describe.each(storeBackends())(
  "retention on $name (before: nothing was ever deleted)",
  (backend) => {
    it("answered history older than HISTORY_DAYS is deleted with the chats nobody viewed since; pending asks, recent history and recently viewed chats stay", async () => {
      const store = await backend.open();
      const { clock, retention, logs } = retentionOn(store, 90);
      await store.chatViewed("old-chat", "alice", clock.now());
      await store.chatViewed("viewed-again", "alice", clock.now());
      await store.chatViewed("waiting-chat", "alice", clock.now());
      await passThrough(store, clock, "old", "old-chat");
      await store.put(
        question("still-pending", "waiting-chat", { createdAt: clock.now(), expiresAt: null }),
      );
      clock.advance(60 * DAY);
      expect(await retention.pruneBatch()).toBe(false);
      await passThrough(store, clock, "recent", "viewed-again");
      await store.chatViewed("viewed-again", "alice", clock.now());
      clock.advance(31 * DAY);
      await retention.pruneBatch();
      expect(await store.get("old")).toBeNull();
      expect(await store.chatOwner("old-chat")).toBeNull();
      expect((await store.get("recent"))?.status).toBe("answered");
      expect(await store.chatOwner("viewed-again")).toBe("alice");
      expect((await store.get("still-pending"))?.status).toBe("pending");
      // Its pending ask keeps the chat's owner (the guest rules of that ask depend on it).
      expect(await store.chatOwner("waiting-chat")).toBe("alice");
      expect(logs).toContain("retention: deleted 1 finished asks and 1 chats older than 90 days");
    });

    it("runs at start and then on its own timer; a backlog is pruned a batch at a time in short steps, and the timer is cleared on stop", async () => {
      const store = await backend.open();
      const { clock, retention } = retentionOn(store, 1, 100);
      for (let i = 0; i < 450; i++) await passThrough(store, clock, `ask-${i}`, `chat-${i % 10}`);
      clock.advance(2 * DAY);
      retention.start();
      const answered = async () => (await store.list({ status: "answered", limit: 1000 })).length;
      // The batch is done once its rows are gone; what it schedules next follows within the same turn.
      const batchDone = async (left: number) => {
        await expect.poll(answered).toBe(left);
        await new Promise((resolve) => setImmediate(resolve));
      };
      // One batch now; the rest follows in short steps, not an hour later.
      await batchDone(350);
      for (const left of [250, 150, 50, 0]) {
        clock.advance(1000);
        await batchDone(left);
      }
      expect(clock.pendingTimers).toBe(1);
      retention.stop();
      expect(clock.pendingTimers).toBe(0);
    });
  },
);

describe("retention on SQLite: the file stays the same size", () => {
  it("soak: 100,000 asks pass through over 100 days and the database stays the same size once pruning runs", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "asks-retention-"));
    const file = path.join(dir, "asks.sqlite");
    const store = new SqliteAskStore(file);
    cleanups.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const { clock, retention } = retentionOn(store, 7);
    const sizeOf = () =>
      [file, `${file}-wal`].reduce(
        (total, name) => total + (existsSync(name) ? statSync(name).size : 0),
        0,
      );
    const perDay = 1_000;
    const sizes = new Map<number, number>();
    const started = performance.now();
    // A day in 40 steps of 25 asks, each step one transaction (as a busy server's writes would be,
    // batched for speed), and a pruning run after each step (the hourly run, a little more often).
    const steps = 40;
    for (let day = 1; day <= 100; day++) {
      for (let step = 0; step < steps; step++) {
        const writes: Promise<void>[] = [];
        // SQLite writes inside the async calls at once, so they all land in this transaction.
        store.inTransaction(() => {
          for (let i = 0; i < perDay / steps; i++) {
            const n = (day - 1) * perDay + step * (perDay / steps) + i;
            const chatId = `chat-${Math.floor(n / 10)}`;
            if (n % 10 === 0) writes.push(store.chatViewed(chatId, "alice", clock.now()));
            writes.push(passThrough(store, clock, `ask-${n}`, chatId));
          }
        });
        await Promise.all(writes);
        clock.advance(DAY / steps);
        await retention.pruneBatch();
      }
      sizes.set(day, sizeOf());
    }
    const elapsedMs = performance.now() - started;
    const rows = (await store.list({ status: "answered", limit: 1_000_000 })).length;
    const figures = {
      rows,
      kB: Object.fromEntries(
        [10, 25, 50, 75, 100].map((day) => [`day ${day}`, Math.round(sizes.get(day)! / 1024)]),
      ),
      seconds: Math.round(elapsedMs / 100) / 10,
    };
    console.info(`retention soak (HISTORY_DAYS=7, 1,000 asks a day): ${JSON.stringify(figures)}`);
    // What is kept is a week and a little: the last run is at most a step old.
    expect(rows).toBeLessThanOrEqual(7 * perDay + perDay / steps + 25);
    expect(rows).toBeGreaterThanOrEqual(7 * perDay - perDay / steps - 25);
    // Flat: freed pages are reused, so the file stops growing once pruning keeps pace.
    expect(sizes.get(100)!).toBeLessThanOrEqual(sizes.get(25)! * 1.1);
    expect(sizes.get(50)!).toBeLessThanOrEqual(sizes.get(25)! * 1.1);
    expect(sizes.get(25)!).toBeGreaterThan(sizes.get(10)! * 0.5);
  }, 240_000);
});
