import { Worker } from "node:worker_threads";

/**
 * Checkpoints an SQLite file's WAL from a worker thread with a connection of its own, so the copy and
 * the sync it ends with never run on the event loop: inside a write they held up the answer or the
 * card that wrote (docs/BENCHMARK.md#wal-checkpoints), and on the main thread after 5,000 tabs had
 * opened their chats one took 50-150 ms. One checkpoint at a time; `close` waits for the one running.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private running: Promise<void> | null = null;
  private settle: { resolve: () => void; reject: (error: Error) => void } | null = null;
  private failure: Error | null = null;

  constructor(file: string) {
    this.worker = new Worker(new URL("./wal-checkpoint-worker.ts", import.meta.url), {
      workerData: { file },
    });
    // The store's timer keeps the process alive while it should be; this thread never does.
    this.worker.unref();
    this.worker.on("message", (result: { ok: true } | { ok: false; message: string }) =>
      this.finish(result.ok ? null : new Error(result.message)),
    );
    this.worker.on("error", (error: Error) => this.lost(error));
    this.worker.on("exit", (code) => this.lost(new Error(`its thread exited (${code})`)));
  }

  /** Closed, or its thread is gone: no checkpoint runs any more. */
  get stopped(): boolean {
    return this.failure !== null;
  }

  /** One checkpoint; rejects when it failed or the thread is gone (then every later one rejects too). */
  checkpoint(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.running) return this.running;
    this.running = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.worker.postMessage("checkpoint");
    return this.running;
  }

  /** Waits for a running checkpoint, then closes the thread's connection and ends the thread. */
  async close(): Promise<void> {
    await this.running?.catch(() => {});
    if (this.failure) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.failure = new Error("the checkpointer is closed");
    this.worker.postMessage("close");
    await exited;
  }

  private finish(error: Error | null): void {
    const settle = this.settle;
    this.settle = null;
    this.running = null;
    if (error) settle?.reject(error);
    else settle?.resolve();
  }

  private lost(error: Error): void {
    this.failure ??= error;
    this.finish(this.failure);
  }
}
