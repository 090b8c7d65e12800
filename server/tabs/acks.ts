import { errorMessage } from "../../lib/error-message.ts";
import { type ClientEvent, type ClientEvents, fail } from "../../lib/protocol.ts";
import type { TabHandler, TabSocket } from "./handlers.ts";

/**
 * A socket's event handlers, each behind the socket's rate limit, and each event acked exactly once:
 * with the handler's answer (sent early when it acknowledges before its work is done), RATE_LIMITED,
 * or INTERNAL when the handler threw before acknowledging. A failure is logged here, once, and goes
 * no further.
 */
export function ackedHandlers(
  socket: TabSocket,
  options: { eventsPerSecond: number; now: () => number; log: (message: string) => void },
) {
  const allow = tokenBucket(options.eventsPerSecond, options.eventsPerSecond * 2, options.now);
  return <E extends ClientEvent>(event: E, handler: TabHandler<E>) =>
    (
      payload: ClientEvents[E]["payload"],
      ack: (response: ClientEvents[E]["ack"]) => void,
    ): void => {
      // A client may leave out the callback: the event is still handled, with nobody to answer.
      const callback = typeof ack === "function" ? ack : () => {};
      if (!allow()) return callback(fail("RATE_LIMITED", "too many events; slow down"));
      let acked = false;
      const respond = (response: ClientEvents[E]["ack"]): void => {
        if (acked) return;
        acked = true;
        callback(response);
      };
      const handle = async (): Promise<void> => {
        let response: ClientEvents[E]["ack"];
        try {
          response = await handler(socket, payload, respond);
        } catch (error) {
          options.log(`${event} from ${socket.id} failed: ${errorMessage(error)}`);
          response = fail("INTERNAL", "the server could not handle this event; it has been logged");
        }
        respond(response);
      };
      handle().catch((error: unknown) =>
        options.log(`acking ${event} to ${socket.id} failed: ${errorMessage(error)}`),
      );
    };
}

/** Inbound events per second with a burst, refilled at the injected clock's time. */
function tokenBucket(ratePerSecond: number, burst: number, now: () => number): () => boolean {
  let tokens = burst;
  let last = now();
  return () => {
    const current = now();
    tokens = Math.min(burst, tokens + ((current - last) / 1000) * ratePerSecond);
    last = current;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}
