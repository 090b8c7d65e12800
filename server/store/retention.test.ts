import { mkdtempSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { Retention } from "./retention.ts";
import { SqliteAskStore } from "./sqlite.ts";
import { question } from "../../test/support/stored-asks.ts";

const DAY = 86_400_000;

const dirs: string[] = [];
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup(historyDays: number, batchRows?: number) {
  const dir = mkdtempSync(path.join(tmpdir(), "asks-retention-"));
  dirs.push(dir);
  const file = path.join(dir, "asks.sqlite");
  const store = new SqliteAskStore(file);
  const clock = new ManualClock();
  const logs: string[] = [];
  const retention = new Retention({ store, clock, historyDays, log: (line) => logs.push(line), batchRows });
  cleanups.push(() => {
    retention.stop();
    store.close();
  });
  return { file, store, clock, retention, logs };
}

/** An ask that arrives now and is answered at once, as it passes through the broker. */
function passThrough(store: SqliteAskStore, clock: ManualClock, id: string, chatId: string): void {
  const ask = question(id, chatId, { createdAt: clock.now(), expiresAt: clock.now() + 900_000 });
  store.put(ask);
  store.put({ ...ask, status: "answered", resolution: { by: "owner", at: clock.now(), summary: "SQLite", tabId: "tab" } });
}

const sizeOf = (file: string) => [file, `${file}-wal`].reduce((total, name) => total + (existsSync(name) ? statSync(name).size : 0), 0);

describe("retention (before: nothing was ever deleted)", () => {
  it("answered history older than HISTORY_DAYS is deleted with the chats nobody viewed since; pending asks, recent history and recently viewed chats stay", () => {
    const { store, clock, retention, logs } = setup(90);
    store.chatViewed("old-chat", "alice", clock.now());
    store.chatViewed("viewed-again", "alice", clock.now());
    store.chatViewed("waiting-chat", "alice", clock.now());
    passThrough(store, clock, "old", "old-chat");
    store.put(question("still-pending", "waiting-chat", { createdAt: clock.now(), expiresAt: null }));
    retention.start();
    clock.advance(60 * DAY);
    passThrough(store, clock, "recent", "viewed-again");
    store.chatViewed("viewed-again", "alice", clock.now());
    clock.advance(31 * DAY);
    expect(store.get("old")).toBeNull();
    expect(store.chatOwner("old-chat")).toBeNull();
    expect(store.get("recent")?.status).toBe("answered");
    expect(store.chatOwner("viewed-again")).toBe("alice");
    expect(store.get("still-pending")?.status).toBe("pending");
    // Its pending ask keeps the chat's owner (the guest rules of that ask depend on it).
    expect(store.chatOwner("waiting-chat")).toBe("alice");
    expect(logs).toContain("retention: deleted 1 finished asks and 1 chats older than 90 days");
  });

  it("a backlog is pruned a batch at a time, and the timer it owns is cleared on stop", () => {
    const { store, clock, retention } = setup(1, 100);
    for (let i = 0; i < 450; i++) passThrough(store, clock, `ask-${i}`, `chat-${i % 10}`);
    clock.advance(2 * DAY);
    retention.start();
    // One batch now; the rest follows in short steps, not an hour later.
    expect(store.list({ status: "answered", limit: 1000 })).toHaveLength(350);
    clock.advance(1000);
    expect(store.list({ status: "answered", limit: 1000 })).toHaveLength(0);
    expect(clock.pendingTimers).toBe(1);
    retention.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it("soak: 100,000 asks pass through over 100 days and the database stays the same size once pruning runs", () => {
    const { file, store, clock, retention } = setup(7);
    retention.start();
    const perDay = 1_000;
    const sizes = new Map<number, number>();
    const started = performance.now();
    // A day in 40 steps of 25 asks, each step one transaction (as a busy server's writes would be, batched for speed).
    const steps = 40;
    for (let day = 1; day <= 100; day++) {
      for (let step = 0; step < steps; step++) {
        store.inTransaction(() => {
          for (let i = 0; i < perDay / steps; i++) {
            const n = (day - 1) * perDay + step * (perDay / steps) + i;
            const chatId = `chat-${Math.floor(n / 10)}`;
            if (n % 10 === 0) store.chatViewed(chatId, "alice", clock.now());
            passThrough(store, clock, `ask-${n}`, chatId);
          }
        });
        clock.advance(DAY / steps);
      }
      sizes.set(day, sizeOf(file));
    }
    const elapsedMs = performance.now() - started;
    const rows = store.list({ status: "answered", limit: 1_000_000 }).length;
    const figures = { rows, kB: Object.fromEntries([10, 25, 50, 75, 100].map((day) => [`day ${day}`, Math.round(sizes.get(day)! / 1024)])), seconds: Math.round(elapsedMs / 100) / 10 };
    console.info(`retention soak (HISTORY_DAYS=7, 1,000 asks a day): ${JSON.stringify(figures)}`);
    // What is kept is a week and a little: the last run is at most an hour old.
    expect(rows).toBeLessThanOrEqual(7 * perDay + perDay / 24 + 25);
    expect(rows).toBeGreaterThanOrEqual(7 * perDay - perDay / 24 - 25);
    // Flat: freed pages are reused, so the file stops growing once pruning keeps pace.
    expect(sizes.get(100)!).toBeLessThanOrEqual(sizes.get(25)! * 1.1);
    expect(sizes.get(50)!).toBeLessThanOrEqual(sizes.get(25)! * 1.1);
    expect(sizes.get(25)!).toBeGreaterThan(sizes.get(10)! * 0.5);
  }, 240_000);
});
