import type { Clock, TimerHandle } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";

/**
 * The sockets of a revoked link are closed. A device revoked on the dashboard has its sockets closed at
 * once, on every instance, through the Socket.IO adapter; an owner link revoked by the `owner-link`
 * command is revoked by another process, which cannot reach the running instances. So each instance
 * checks, every LINK_CHECK_EVERY_MS on the injected clock, the link key ids its own sockets were
 * opened with (one store read per key id in use, a handful) and closes those of one no longer known.
 * A check due while the one before still runs is skipped.
 */

export const LINK_CHECK_EVERY_MS = 10_000;

export type LinkCheckOptions = {
  /** Closes this instance's sockets whose link key id is no longer known. */
  check: () => Promise<void>;
  clock: Clock;
  log: (message: string) => void;
};

/** Checks every LINK_CHECK_EVERY_MS until stopped; the next check is armed before one runs, so the timer is there whatever a check takes. */
export function startLinkCheck({ check, clock, log }: LinkCheckOptions): { stop(): void } {
  let timer: TimerHandle | null = null;
  let checking = false;
  const arm = () => {
    timer = clock.setTimer(run, LINK_CHECK_EVERY_MS);
  };
  const run = () => {
    arm();
    if (checking) return;
    checking = true;
    check().then(
      () => (checking = false),
      (error: unknown) => {
        checking = false;
        // A store that is away is asked again at the next check; the sockets stay until then.
        log(`checking the sockets' links failed: ${errorMessage(error)}`);
      },
    );
  };
  arm();
  return {
    stop() {
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
  };
}
