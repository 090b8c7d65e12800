import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { question } from "../../test/support/ask-fixtures.ts";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { CHECKPOINT_EVERY_MS, SqliteAskStore } from "./sqlite.ts";

const dirs: string[] = [];
const stores: SqliteAskStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "asks-store-"));
  dirs.push(dir);
  return dir;
}

function open(file: string): SqliteAskStore {
  const store = new SqliteAskStore(file);
  stores.push(store);
  return store;
}

const mode = (file: string) => statSync(file).mode & 0o777;

describe("file permissions (DATA_DIR holds questions, approval commands and text answers)", () => {
  it("a new DATA_DIR is 0700 and the database, -wal and -shm files 0600", async () => {
    const dir = path.join(tempDir(), "data");
    const file = path.join(dir, "asks.sqlite");
    await open(file).put(question("q1", "c"));
    expect(mode(dir)).toBe(0o700);
    for (const suffix of ["", "-wal", "-shm"]) {
      expect(existsSync(file + suffix), file + suffix).toBe(true);
      expect(mode(file + suffix), file + suffix).toBe(0o600);
    }
  });

  it("a DATA_DIR left 0755 with database files 0644 (as earlier versions made them) is locked down at open", () => {
    const dir = path.join(tempDir(), "data");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const file = path.join(dir, "asks.sqlite");
    const earlier = new DatabaseSync(file);
    earlier.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    for (const suffix of ["", "-wal", "-shm"]) chmodSync(file + suffix, 0o644);
    open(file);
    earlier.close();
    expect(mode(dir)).toBe(0o700);
    for (const suffix of ["", "-wal", "-shm"])
      if (existsSync(file + suffix)) expect(mode(file + suffix), file + suffix).toBe(0o600);
  });

  it("a shared directory (sticky bit, like /tmp) is refused rather than locked down", () => {
    const dir = path.join(tempDir(), "shared");
    mkdirSync(dir);
    chmodSync(dir, 0o1777);
    expect(() => open(path.join(dir, "asks.sqlite"))).toThrow(/sticky bit/);
    expect(statSync(dir).mode & 0o7777).toBe(0o1777);
  });
});

describe("WAL checkpoints (before: inside whichever write crossed the threshold, an answer's or a card's)", () => {
  it("with a clock, the WAL is checkpointed on the store's own timer, not by writes; the timer ends with the store", async () => {
    const file = path.join(tempDir(), "asks.sqlite");
    const clock = new ManualClock();
    const store = new SqliteAskStore(file, { clock });
    // Far past SQLite's 1,000-page threshold: no write checkpoints on its own.
    const big = "x".repeat(8_000);
    for (let i = 0; i < 600; i++)
      await store.put(
        question(`q${i}`, "c", {
          questions: [
            {
              id: "db",
              header: "DB",
              question: big,
              options: [{ label: "A" }],
              multiSelect: false,
              allowOther: false,
            },
          ],
        }),
      );
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(1500 * 4096);
    // The pages are all in the WAL: the database file itself has only its first ones.
    expect(statSync(file).size).toBeLessThan(100 * 4096);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(CHECKPOINT_EVERY_MS);
    expect(clock.pendingTimers).toBe(1);
    // The checkpoint runs on its own thread: the WAL's pages land in the database file.
    await expect.poll(() => statSync(file).size, { timeout: 10_000 }).toBeGreaterThan(1200 * 4096);
    await store.close();
    expect(clock.pendingTimers).toBe(0);
  });

  it("the checkpoint runs on a connection of its own: a write right after the timer fired is kept, and closing waits for the checkpoint", async () => {
    const file = path.join(tempDir(), "asks.sqlite");
    const clock = new ManualClock();
    const store = new SqliteAskStore(file, { clock });
    for (let i = 0; i < 200; i++) await store.put(question(`q${i}`, "c"));
    clock.advance(CHECKPOINT_EVERY_MS);
    await store.put(question("during", "c"));
    await store.close();
    expect(clock.pendingTimers).toBe(0);
    const reopened = new SqliteAskStore(file);
    for (const id of ["q0", "q199", "during"])
      expect(await reopened.get(id)).toMatchObject({ id, status: "pending" });
    await reopened.close();
  });
});

describe("the live widget's note across a reopen", () => {
  it("the chat's newest embed outlives the process", async () => {
    const file = path.join(tempDir(), "asks.sqlite");
    const store = open(file);
    await store.noteEmbed("c1", { msg: "a3", mts: 3_000 }, 13);
    await store.close();
    stores.splice(0);
    expect(await open(file).noteEmbed("c1", { msg: "a0", mts: 0 }, 14)).toEqual({
      msg: "a3",
      mts: 3_000,
    });
  });
});

describe("claims without reading the file (the store keeps which ids are pending)", () => {
  const answered = (id: string) =>
    question(id, "c", {
      status: "answered",
      resolution: { by: "owner", at: 1_700_000_001_000, summary: "SQLite", tabId: null },
    });

  it("a reopened file knows its pending ids: a pending ask of the earlier run can be claimed, an ended one cannot", async () => {
    const file = path.join(tempDir(), "asks.sqlite");
    const earlier = open(file);
    await earlier.put(question("waiting", "c"));
    await earlier.put(question("done", "c"));
    await earlier.put(answered("done"));
    await earlier.close();
    stores.splice(0);
    const reopened = open(file);
    expect(await reopened.claim("waiting", "a")).toBe(true);
    expect(await reopened.claim("done", "a")).toBe(false);
    expect(await reopened.claim("never-written", "a")).toBe(false);
  });

  it("a rolled-back transaction leaves no pending id behind", async () => {
    const store = open(path.join(tempDir(), "asks.sqlite"));
    await store.put(question("kept", "c"));
    // SQLite writes at once: each put is done when it returns, and its promise is awaited after the rollback.
    const writes: Promise<boolean>[] = [];
    expect(() =>
      store.inTransaction(() => {
        writes.push(store.put(question("rolled-back", "c")), store.put(answered("kept")));
        throw new Error("abandoned");
      }),
    ).toThrow("abandoned");
    await Promise.all(writes);
    expect(await store.claim("rolled-back", "a")).toBe(false);
    expect(await store.claim("kept", "a")).toBe(true);
  });
});
