import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { WalCheckpointer } from "./wal-checkpointer.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
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
    const checkpointer = new WalCheckpointer(file);
    const first = checkpointer.checkpoint();
    expect(checkpointer.checkpoint()).toBe(first);
    await first;
    const { log, checkpointed } = writer.prepare("PRAGMA wal_checkpoint(PASSIVE)").get() as {
      log: number;
      checkpointed: number;
    };
    expect(log).toBeGreaterThan(500);
    expect(checkpointed).toBe(log);
    await checkpointer.close();
    expect(checkpointer.stopped).toBe(true);
    await expect(checkpointer.checkpoint()).rejects.toThrow(/closed/);
    writer.close();
  });

  it("a thread that cannot open its file: the checkpoint fails saying why, and it counts as stopped", async () => {
    const checkpointer = new WalCheckpointer(path.join(tempFile(), "missing-dir", "asks.sqlite"));
    await expect(checkpointer.checkpoint()).rejects.toThrow(/unable to open/);
    expect(checkpointer.stopped).toBe(true);
    await checkpointer.close();
  });
});
