// A clock that moves only when told to, for tests of expiry and handoff (the product uses systemClock).
import type { Clock, TimerHandle } from "../../lib/clock.ts";

/** `pendingTimers` lets a test prove nothing is left running. */
export class ManualClock implements Clock {
  private current: number;
  private nextId = 0;
  private readonly timers = new Map<number, { dueAt: number; callback: () => void }>();

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const id = ++this.nextId;
    this.timers.set(id, { dueAt: this.current + Math.max(0, delayMs), callback });
    return { id };
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete(handle.id);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let due: [number, { dueAt: number; callback: () => void }] | undefined;
      for (const entry of this.timers) {
        if (entry[1].dueAt <= target && (!due || entry[1].dueAt < due[1].dueAt)) due = entry;
      }
      if (!due) break;
      this.timers.delete(due[0]);
      this.current = Math.max(this.current, due[1].dueAt);
      due[1].callback();
    }
    this.current = target;
  }
}
