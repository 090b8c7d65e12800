import type { Clock, TimerHandle } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import type { RetentionStore } from "./store.ts";

/**
 * Retention: answered (terminal) history older than HISTORY_DAYS is deleted, and so is the ownership
 * record of every chat nobody viewed in that time. Pending asks are never touched. Pruning runs at
 * start and then every hour on the injected clock, a batch at a time so a large backlog never holds
 * the event loop (node:sqlite is synchronous) or Redis (a script runs alone): while batches come back
 * full, the next one follows soon.
 */

const DAY_MS = 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
const BACKLOG_PAUSE_MS = 50;
const BATCH_ROWS = 2_000;

export type RetentionOptions = {
  store: RetentionStore;
  clock: Clock;
  historyDays: number;
  log: (message: string) => void;
  batchRows?: number;
};

export class Retention {
  private readonly options: RetentionOptions;
  private timer: TimerHandle | null = null;
  private running = false;

  constructor(options: RetentionOptions) {
    this.options = options;
  }

  start(): void {
    this.running = true;
    this.tick();
  }

  stop(): void {
    this.running = false;
    if (this.timer) this.options.clock.clearTimer(this.timer);
    this.timer = null;
  }

  /** Deletes one batch of what is past HISTORY_DAYS; true when a batch came back full (more is due). */
  async pruneBatch(): Promise<boolean> {
    const { store, clock, historyDays, log } = this.options;
    const limit = this.options.batchRows ?? BATCH_ROWS;
    const pruned = await store.prune(clock.now() - historyDays * DAY_MS, limit);
    if (pruned.asks > 0 || pruned.chats > 0)
      log(
        `retention: deleted ${pruned.asks} finished asks and ${pruned.chats} chats older than ${historyDays} days`,
      );
    return pruned.asks === limit || pruned.chats === limit;
  }

  /**
   * The next run is due an hour from this one whatever this one takes (runs may overlap on a slow
   * store: pruning is idempotent); a full batch brings the next one forward.
   */
  private tick(): void {
    this.timer = null;
    if (!this.running) return;
    this.schedule(PRUNE_EVERY_MS);
    this.pruneBatch().then(
      (backlog) => {
        if (backlog) this.schedule(BACKLOG_PAUSE_MS);
      },
      (error: unknown) => {
        // A busy or failing store is tried again at the next run; the service goes on.
        this.options.log(`retention: pruning failed: ${errorMessage(error)}`);
      },
    );
  }

  /** Stopped while a batch ran: no timer is left behind. */
  private schedule(delayMs: number): void {
    if (!this.running) return;
    if (this.timer) this.options.clock.clearTimer(this.timer);
    this.timer = this.options.clock.setTimer(() => this.tick(), delayMs);
  }
}
