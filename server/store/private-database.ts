import { closeSync, existsSync, openSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { PRIVATE_FILE_MODE, preparePrivateDir, restrictFiles } from "./data-dir.ts";

/**
 * One of DATA_DIR's small SQLite files (devices, push), in WAL mode with its schema and its prepared
 * statements: the directory 0700 and the files 0600, like the ask store's. `:memory:` is for tests.
 */
export class PrivateDatabase<Name extends string> {
  readonly statements: Record<Name, StatementSync>;
  private readonly db: DatabaseSync;

  /** `added`: columns a later version added to an existing table (`{table: {column: "TYPE"}}`), added to a file that lacks them. */
  constructor(file: string, schema: string, statements: Record<Name, string>, added: Record<string, Record<string, string>> = {}) {
    const onDisk = file !== ":memory:";
    if (onDisk) {
      preparePrivateDir(path.dirname(file));
      // Created 0600 before SQLite opens it, so the -wal and -shm files SQLite makes inherit that mode.
      if (!existsSync(file)) closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
    }
    this.db = new DatabaseSync(file);
    this.db.exec("PRAGMA journal_mode = WAL;");
    this.db.exec(schema);
    for (const [table, columns] of Object.entries(added)) addMissingColumns(this.db, table, columns);
    if (onDisk) restrictFiles(file, `${file}-wal`, `${file}-shm`);
    const prepared = Object.entries<string>(statements).map(([name, sql]) => [name, this.db.prepare(sql)]);
    this.statements = Object.fromEntries(prepared) as Record<Name, StatementSync>;
  }

  close(): void {
    this.db.close();
  }
}

/** Adds the columns an older file's table lacks (SQLite has no ADD COLUMN IF NOT EXISTS), in one transaction. */
export function addMissingColumns(db: DatabaseSync, table: string, columns: Record<string, string>): void {
  db.exec("BEGIN IMMEDIATE");
  try {
    const present = new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((column) => column.name));
    for (const [name, type] of Object.entries(columns)) if (!present.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
    db.exec("COMMIT");
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}
