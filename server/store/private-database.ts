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

  constructor(file: string, schema: string, statements: Record<Name, string>) {
    const onDisk = file !== ":memory:";
    if (onDisk) {
      preparePrivateDir(path.dirname(file));
      // Created 0600 before SQLite opens it, so the -wal and -shm files SQLite makes inherit that mode.
      if (!existsSync(file)) closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
    }
    this.db = new DatabaseSync(file);
    this.db.exec("PRAGMA journal_mode = WAL;");
    this.db.exec(schema);
    if (onDisk) restrictFiles(file, `${file}-wal`, `${file}-shm`);
    const prepared = Object.entries<string>(statements).map(([name, sql]) => [name, this.db.prepare(sql)]);
    this.statements = Object.fromEntries(prepared) as Record<Name, StatementSync>;
  }

  close(): void {
    this.db.close();
  }
}
