import { closeSync, existsSync, openSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { errorMessage } from "../../lib/error-message.ts";
import { preparePrivateDir, PRIVATE_FILE_MODE, restrictFiles } from "./data-dir.ts";

/** What a store keeps in its file: its tables, and the statements it runs on them. */
export type DatabaseLayout<Name extends string> = {
  schema: string;
  /** Prepared once, at open. */
  statements: Record<Name, string>;
  /** Columns a later version added to an existing table (`{table: {column: "TYPE"}}`), added to a file that lacks them. */
  added?: Record<string, Record<string, string>>;
  /** PRAGMAs set at open besides WAL mode. */
  pragmas?: string;
};

/**
 * One of DATA_DIR's SQLite files (asks, devices, push), in WAL mode with its schema and its prepared
 * statements: the directory 0700 and the files 0600. `:memory:` is for tests. A file SQLite cannot
 * use (not a database, a schema it cannot take) fails the open with one line naming it.
 */
export class PrivateDatabase<Name extends string> {
  readonly statements: Record<Name, StatementSync>;
  /** A file, not `:memory:`. */
  readonly onDisk: boolean;
  private readonly db: DatabaseSync;

  constructor(file: string, layout: DatabaseLayout<Name>) {
    this.onDisk = file !== ":memory:";
    if (this.onDisk) {
      preparePrivateDir(path.dirname(file));
      // Created 0600 before SQLite opens it, so the -wal and -shm files SQLite makes inherit that mode.
      if (!existsSync(file)) closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
    }
    this.db = new DatabaseSync(file);
    try {
      this.db.exec(`PRAGMA journal_mode = WAL; ${layout.pragmas ?? ""}`);
      this.db.exec(layout.schema);
      for (const [table, columns] of Object.entries(layout.added ?? {}))
        addMissingColumns(this.db, table, columns);
    } catch (error) {
      this.db.close();
      throw new Error(`cannot use the database ${file}: ${errorMessage(error)}`);
    }
    if (this.onDisk) restrictFiles(file, `${file}-wal`, `${file}-shm`);
    const prepared = Object.entries<string>(layout.statements).map(([name, sql]) => [
      name,
      this.db.prepare(sql),
    ]);
    this.statements = Object.fromEntries(prepared) as Record<Name, StatementSync>;
  }

  /** A statement whose text is known only when it runs (a listing's filters). */
  prepare(sql: string): StatementSync {
    return this.db.prepare(sql);
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  /** Runs `work` as one transaction: many writes for the price of one commit. */
  inTransaction<T>(work: () => T): T {
    this.db.exec("BEGIN");
    try {
      const result = work();
      this.db.exec("COMMIT");
      return result;
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  close(): void {
    this.db.close();
  }
}

/** Adds the columns an older file's table lacks (SQLite has no ADD COLUMN IF NOT EXISTS), in one transaction. */
function addMissingColumns(db: DatabaseSync, table: string, columns: Record<string, string>): void {
  db.exec("BEGIN IMMEDIATE");
  try {
    const present = new Set(
      (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map(
        (column) => column.name,
      ),
    );
    for (const [name, type] of Object.entries(columns))
      if (!present.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
    db.exec("COMMIT");
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}
