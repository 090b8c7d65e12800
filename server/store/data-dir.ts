import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";

/**
 * DATA_DIR holds questions, approval commands, text answers and the auth secret: only the service's
 * own user may read it. The directory is 0700 and every file in it 0600, also when an older version
 * (or a umask) left them readable by others.
 */

const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;
const STICKY = 0o1000;

export class DataDirError extends Error {}

/** Creates DATA_DIR as 0700, or tightens an existing one that others could read. */
export function preparePrivateDir(dir: string): void {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    return;
  }
  const stat = statSync(dir);
  if (!stat.isDirectory()) throw new DataDirError(`DATA_DIR ${dir} is not a directory`);
  // A shared directory such as /tmp must not be locked down: it is not ours to change.
  if (stat.mode & STICKY)
    throw new DataDirError(
      `DATA_DIR ${dir} is a shared directory (sticky bit): give the service a directory of its own`,
    );
  if ((stat.mode & 0o777) !== PRIVATE_DIR) chmodSync(dir, PRIVATE_DIR);
}

/** Makes each existing file 0600 (SQLite creates its -wal and -shm files with the database's mode). */
export function restrictFiles(...files: string[]): void {
  for (const file of files) {
    if (existsSync(file) && (statSync(file).mode & 0o777) !== PRIVATE_FILE)
      chmodSync(file, PRIVATE_FILE);
  }
}

export const PRIVATE_FILE_MODE = PRIVATE_FILE;
