// The ask, devices and push stores open their files through PrivateDatabase: DATA_DIR 0700, the database
// and its -wal / -shm files 0600, also when an earlier run (or a umask) left them readable.
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PrivateDatabase } from "./private-database.ts";

const SCHEMA = "CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT NOT NULL);";
const STATEMENTS = {
  put: "INSERT INTO notes (id, body) VALUES (?, ?)",
  get: "SELECT body FROM notes WHERE id = ?",
};

const mode = (file: string) => statSync(file).mode & 0o777;

describe("PrivateDatabase", () => {
  const parents: string[] = [];
  afterEach(() => {
    for (const parent of parents.splice(0)) rmSync(parent, { recursive: true, force: true });
  });

  it("creates the directory 0700 and the database with its WAL files 0600, and tightens them when reopened", () => {
    const parent = mkdtempSync(path.join(tmpdir(), "private-db-"));
    parents.push(parent);
    const file = path.join(parent, "data", "notes.sqlite");
    const first = new PrivateDatabase(file, { schema: SCHEMA, statements: STATEMENTS });
    first.statements.put.run("n1", "kept");
    expect(mode(path.dirname(file))).toBe(0o700);
    for (const each of [file, `${file}-wal`, `${file}-shm`]) expect(mode(each), each).toBe(0o600);
    first.close();

    chmodSync(path.dirname(file), 0o755);
    for (const each of [file, `${file}-wal`, `${file}-shm`].filter(existsSync))
      chmodSync(each, 0o644);
    const second = new PrivateDatabase(file, { schema: SCHEMA, statements: STATEMENTS });
    expect(second.statements.get.get("n1")).toEqual({ body: "kept" });
    expect(mode(path.dirname(file))).toBe(0o700);
    for (const each of [file, `${file}-wal`, `${file}-shm`].filter(existsSync))
      expect(mode(each), each).toBe(0o600);
    second.close();
  });
});
