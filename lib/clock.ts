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
      setTimeout(
        () => {
          if (dueAt - Date.now() > 0) return arm(id, callback, dueAt);
          timers.delete(id);
          callback();
        },
        Math.min(delay, MAX_TIMER_DELAY_MS),
      ),
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
