import { Worker } from "node:worker_threads";
import type { Clock, TimerHandle } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";

export type WalCheckpointerOptions = {
  clock: Clock;
  /** Between the starts of two checkpoints (one still running is not started again). */
  everyMs: number;
  log: (message: string) => void;
  /** Its thread is gone (no checkpoint runs any more): the file's own connection takes over. */
  lost: () => void;
};

/**
 * Checkpoints an SQLite file's WAL on a timer, from a worker thread with a connection of its own, so the
 * copy and the sync it ends with never run on the event loop: inside a write they held up the answer or
 * the card that wrote, and on the main thread after 5,000 tabs had opened their chats one took 50-150 ms
 * (docs/BENCHMARK.md#wal-checkpoints). One checkpoint at a time; `close` waits for the one running.
 */
export class WalCheckpointer {
  private readonly file: string;
  private readonly options: WalCheckpointerOptions;
  /** Started by the first checkpoint: a store closed before its first one (a command, a test) starts none. */
  private worker: Worker | null = null;
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  private settle: { resolve: () => void; reject: (error: Error) => void } | null = null;
  private failure: Error | null = null;
  private closed = false;

  constructor(file: string, options: WalCheckpointerOptions) {
    this.file = file;
    this.options = options;
    this.schedule();
  }

  /** Closed, or its thread is gone: no checkpoint runs any more. */
  get stopped(): boolean {
    return this.failure !== null;
  }

  /** One checkpoint now (the timer's, or the one running); rejects when it failed or the thread is gone. */
  checkpoint(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.running) return this.running;
    this.running = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.thread().postMessage("checkpoint");
    return this.running;
  }

  /** Ends the timer, waits for a running checkpoint, then closes the thread's connection and the thread. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) this.options.clock.clearTimer(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
    const worker = this.failure ? null : this.worker;
    this.failure ??= new Error("the checkpointer is closed");
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    // Held until it has closed its connection: else a process with nothing else to do ends first.
    worker.ref();
    worker.postMessage("close");
    await exited;
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./wal-checkpoint-worker.ts", import.meta.url), {
      workerData: { file: this.file },
    });
    // The timer keeps the process alive while it should be; this thread never does.
    worker.unref();
    worker.on("message", (result: { ok: true } | { ok: false; message: string }) =>
      this.finish(result.ok ? null : new Error(result.message)),
    );
    worker.on("error", (error: Error) => this.lose(error));
    worker.on("exit", (code) => this.lose(new Error(`its thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  /** A checkpoint every `everyMs`, unless the last one is still running. */
  private schedule(): void {
    this.timer = this.options.clock.setTimer(() => {
      this.schedule();
      if (this.running) return;
      this.checkpoint().catch((error: unknown) => {
        if (this.closed) return;
        this.options.log(`checkpointing the database failed: ${errorMessage(error)}`);
        if (!this.stopped) return;
        if (this.timer) this.options.clock.clearTimer(this.timer);
        this.timer = null;
        this.options.lost();
      });
    }, this.options.everyMs);
  }

  private finish(error: Error | null): void {
    const settle = this.settle;
    this.settle = null;
    this.running = null;
    if (error) settle?.reject(error);
    else settle?.resolve();
  }

  private lose(error: Error): void {
    this.failure ??= error;
    this.finish(this.failure);
  }
}
