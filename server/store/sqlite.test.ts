import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteAskStore } from "./sqlite.ts";
import { question } from "../../test/support/stored-asks.ts";

const dirs: string[] = [];
const stores: SqliteAskStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "asks-store-"));
  dirs.push(dir);
  return dir;
}

function open(file: string, log?: (line: string) => void): SqliteAskStore {
  const store = new SqliteAskStore(file, { log });
  stores.push(store);
  return store;
}

const mode = (file: string) => statSync(file).mode & 0o777;

/** Writes a row the way a hand edit or another version might have left it. */
function writeRaw(file: string, id: string, status: string, body: string): void {
  const db = new DatabaseSync(file);
  db.prepare("INSERT INTO asks (id, status, chat_id, created_at, updated_at, claimed_by, body) VALUES (?, ?, 'c', 1, 1, NULL, ?)").run(id, status, body);
  db.close();
}

describe("file permissions (DATA_DIR holds questions, approval commands and text answers)", () => {
  it("a new DATA_DIR is 0700 and the database, -wal and -shm files 0600", () => {
    const dir = path.join(tempDir(), "data");
    const file = path.join(dir, "asks.sqlite");
    open(file).put(question("q1", "c"));
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
    for (const suffix of ["", "-wal", "-shm"]) if (existsSync(file + suffix)) expect(mode(file + suffix), file + suffix).toBe(0o600);
  });

  it("a shared directory (sticky bit, like /tmp) is refused rather than locked down", () => {
    const dir = path.join(tempDir(), "shared");
    mkdirSync(dir);
    chmodSync(dir, 0o1777);
    expect(() => open(path.join(dir, "asks.sqlite"))).toThrow(/sticky bit/);
    expect(statSync(dir).mode & 0o7777).toBe(0o1777);
  });
});

describe("one unreadable row", () => {
  it("a pending row that does not parse is set aside when pending asks are restored: logged once with its id, skipped, counted", () => {
    const file = path.join(tempDir(), "asks.sqlite");
    open(file).put(question("good", "c"));
    writeRaw(file, "bad-json", "pending", "{not json");
    writeRaw(file, "bad-shape", "pending", JSON.stringify({ ...question("bad-shape", "c"), kind: "riddle", questions: "which?" }));
    const logs: string[] = [];
    const store = open(file, (line) => logs.push(line));
    expect(store.pending().map((ask) => ask.id)).toEqual(["good"]);
    expect(store.pending().map((ask) => ask.id)).toEqual(["good"]);
    expect(store.setAsideRows()).toBe(2);
    expect(logs).toHaveLength(2);
    expect(logs.some((line) => line.includes("bad-json") && line.includes("not valid JSON"))).toBe(true);
    // The reason names the field, never the stored text.
    expect(logs.some((line) => line.includes("bad-shape") && !line.includes("which?"))).toBe(true);
  });

  it("a set-aside pending row that its source sends again (a backfill) is written over, readable and no longer counted", () => {
    const file = path.join(tempDir(), "asks.sqlite");
    open(file);
    writeRaw(file, "healed", "pending", "{not json");
    const store = open(file);
    expect(store.pending()).toEqual([]);
    expect(store.setAsideRows()).toBe(1);
    store.put(question("healed", "c"));
    expect(store.pending().map((ask) => ask.id)).toEqual(["healed"]);
    expect(store.setAsideRows()).toBe(0);
  });

  it("an answered row that does not parse no longer breaks listing: the rest of the history is listed", () => {
    const file = path.join(tempDir(), "asks.sqlite");
    const store = open(file);
    store.put(question("answered", "c", { status: "answered", resolution: { by: "owner", at: 1_700_000_000_500, summary: "SQLite", tabId: null } }));
    writeRaw(file, "bad-answered", "answered", JSON.stringify({ id: "bad-answered", status: "answered" }));
    expect(store.list({ status: "answered" }).map((ask) => ask.id)).toEqual(["answered"]);
    expect(store.list({}).map((ask) => ask.id)).toEqual(["answered"]);
    expect(store.get("bad-answered")).toBeNull();
    expect(store.setAsideRows()).toBe(1);
  });
});

describe("the live widget's notes (DESIGN §2)", () => {
  it("keeps the newest embed (reply and mint time) per chat, whatever order the embeds are seen in, across a reopen", async () => {
    const file = path.join(tempDir(), "asks.sqlite");
    const store = open(file);
    expect(await store.noteEmbed("c1", { msg: "a2", mts: 2_000 }, 10)).toEqual({ msg: "a2", mts: 2_000 });
    expect(await store.noteEmbed("c1", { msg: "a1", mts: 1_000 }, 11)).toEqual({ msg: "a2", mts: 2_000 });
    expect(await store.noteEmbed("c2", { msg: "b1", mts: 500 }, 12)).toEqual({ msg: "b1", mts: 500 });
    expect(await store.noteEmbed("c1", { msg: "a3", mts: 3_000 }, 13)).toEqual({ msg: "a3", mts: 3_000 });
    store.close();
    stores.splice(0);
    expect(await open(file).noteEmbed("c1", { msg: "a0", mts: 0 }, 14)).toEqual({ msg: "a3", mts: 3_000 });
  });

  it("lists the finished asks last shown in one reply, oldest first, never a pending one or another reply's", async () => {
    const store = open(path.join(tempDir(), "asks.sqlite"));
    const ended = (id: string, replyId: string | undefined, at: number) =>
      question(id, "c1", { replyId, status: "answered", resolution: { by: "u", at, summary: `answer ${id}`, tabId: "t" } });
    store.put(ended("late", "a2", 300));
    store.put(ended("early", "a2", 100));
    store.put(ended("other-reply", "a1", 200));
    store.put(ended("no-reply", undefined, 250));
    store.put(question("pending", "c1", { replyId: "a2" }));
    store.put({ ...ended("other-chat", "a2", 260), chatId: "c2" });
    expect((await store.finishedInReply("c1", "a2")).map((ask) => ask.id)).toEqual(["early", "late"]);
    expect(await store.finishedInReply("c1", "a3")).toEqual([]);
  });

  it("forgets a chat's embed note not renewed within the retention window", async () => {
    const store = open(path.join(tempDir(), "asks.sqlite"));
    await store.noteEmbed("old", { msg: "a9", mts: 1_000 }, 10);
    await store.noteEmbed("recent", { msg: "b9", mts: 1_000 }, 1_000);
    store.prune(500, 100);
    expect(await store.noteEmbed("old", { msg: "a1", mts: 5 }, 2_000)).toEqual({ msg: "a1", mts: 5 });
    expect(await store.noteEmbed("recent", { msg: "b1", mts: 5 }, 2_000)).toEqual({ msg: "b9", mts: 1_000 });
  });
});
