/**
 * Time as a dependency: the broker never reads the wall clock or starts a timer on its own, so expiry
 * and handoff are tested deterministically with a ManualClock.
 */
export type TimerHandle = { readonly id: number };

export interface Clock {
  now(): number;
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

// setTimeout fires at once for delays past 2^31-1 ms; longer waits are re-armed in steps.
const MAX_TIMER_DELAY_MS = 2_147_483_647;

export function systemClock(): Clock {
  let nextId = 0;
  const timers = new Map<number, ReturnType<typeof setTimeout>>();
  const arm = (id: number, callback: () => void, dueAt: number) => {
    const delay = Math.max(0, dueAt - Date.now());
    timers.set(
      id,
      setTimeout(() => {
        if (dueAt - Date.now() > 0) return arm(id, callback, dueAt);
        timers.delete(id);
        callback();
      }, Math.min(delay, MAX_TIMER_DELAY_MS)),
    );
  };
  return {
    now: () => Date.now(),
    setTimer(callback, delayMs) {
      const id = ++nextId;
      arm(id, callback, Date.now() + delayMs);
      return { id };
    },
    clearTimer(handle) {
      clearTimeout(timers.get(handle.id));
      timers.delete(handle.id);
    },
  };
}

/** A clock that moves only when told to; `pendingTimers` lets a test prove nothing is left running. */
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
