// The WAL checkpointer's thread (wal-checkpointer.ts): its own connection to the store's file, which
// copies the WAL into the database when asked. A checkpoint syncs the file, so it takes milliseconds to
// a tenth of a second; here it never holds up the server's event loop.
import { DatabaseSync } from "node:sqlite";
import { parentPort, workerData } from "node:worker_threads";

const port = parentPort;
if (!port) throw new Error("wal-checkpoint-worker.ts runs as a worker thread");
const db = new DatabaseSync((workerData as { file: string }).file);

port.on("message", (message: "checkpoint" | "close") => {
  if (message === "close") {
    db.close();
    port.close();
    return;
  }
  try {
    // PASSIVE: copies what it can without waiting for the server's writes; the rest goes next time.
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    port.postMessage({ ok: true });
  } catch (error) {
    port.postMessage({
      ok: false,
      message: error instanceof Error ? error.message : String(error),
    });
  }
});
