// The system's clock, which a test may move ahead: time passes as usual (timers are real), and `skip`
// jumps over a wait the test would otherwise sit through (a link's expiry, a rate limit's refill).
import { type Clock, systemClock, type TimerHandle } from "../../lib/clock.ts";

export class SkippingClock implements Clock {
  private readonly system = systemClock();
  private ahead = 0;

  now(): number {
    return this.system.now() + this.ahead;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    return this.system.setTimer(callback, delayMs);
  }

  clearTimer(handle: TimerHandle): void {
    this.system.clearTimer(handle);
  }

  /** Moves this clock `ms` ahead of the system's, for good. */
  skip(ms: number): void {
    this.ahead += ms;
  }
}
