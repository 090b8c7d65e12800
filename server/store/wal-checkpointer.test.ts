import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { WalCheckpointer } from "./wal-checkpointer.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
/** A checkpointer whose timer moves with `clock`, and what it logged and whether it said it was lost. */
function checkpointerOf(file: string, clock = new ManualClock()) {
  const seen = { logged: [] as string[], lost: 0 };
  const checkpointer = new WalCheckpointer(file, {
    clock,
    everyMs: 5_000,
    log: (message) => seen.logged.push(message),
    lost: () => (seen.lost += 1),
  });
  return { checkpointer, clock, seen };
}

function tempFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "asks-wal-"));
  dirs.push(dir);
  return path.join(dir, "asks.sqlite");
}

describe("WalCheckpointer: the WAL is copied into the database from a thread of its own", () => {
  it("copies every page of the WAL the writer left, one checkpoint at a time, and closes", async () => {
    const file = tempFile();
    const writer = new DatabaseSync(file);
    writer.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (x)");
    const insert = writer.prepare("INSERT INTO t VALUES (?)");
    for (let i = 0; i < 500; i++) insert.run("x".repeat(4_000));
    const { checkpointer, clock, seen } = checkpointerOf(file);
    const first = checkpointer.checkpoint();
    expect(checkpointer.checkpoint()).toBe(first);
    await first;
    const { log, checkpointed } = writer.prepare("PRAGMA wal_checkpoint(PASSIVE)").get() as {
      log: number;
      checkpointed: number;
    };
    expect(log).toBeGreaterThan(500);
    expect(checkpointed).toBe(log);
    expect(clock.pendingTimers).toBe(1);
    await checkpointer.close();
    expect(clock.pendingTimers).toBe(0);
    expect(checkpointer.stopped).toBe(true);
    await expect(checkpointer.checkpoint()).rejects.toThrow(/closed/);
    expect(seen).toEqual({ logged: [], lost: 0 });
    writer.close();
  });

  it("a thread that cannot open its file: the timer's checkpoint fails saying why, once, and the file's own connection is told to take over", async () => {
    const { checkpointer, clock, seen } = checkpointerOf(
      path.join(tempFile(), "missing-dir", "asks.sqlite"),
    );
    await expect(checkpointer.checkpoint()).rejects.toThrow(/unable to open/);
    expect(checkpointer.stopped).toBe(true);
    clock.advance(5_000);
    await expect.poll(() => seen.lost).toBe(1);
    expect(seen.logged).toEqual([
      expect.stringMatching(/^checkpointing the database failed: .*unable to open/),
    ]);
    expect(clock.pendingTimers).toBe(0);
    await checkpointer.close();
  });
});
