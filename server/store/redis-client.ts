import { Redis } from "ioredis";
import { errorMessage } from "../../lib/error-message.ts";

/**
 * The Redis connection of an instance. Commands are never queued while Redis is away: they fail at
 * once, so an answer is refused with a clear error rather than held where it could be lost, and the
 * client reconnects by itself (every 0.2-2 s). Connection errors are logged once per outage.
 */
export async function connectRedis(url: string, log: (message: string) => void): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  let down = false;
  redis.on("error", (error: Error) => {
    if (down) return;
    down = true;
    log(`redis: ${error.message}; reconnecting`);
  });
  redis.on("ready", () => {
    if (down) log("redis: connected again");
    down = false;
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`cannot reach Redis at ${redactUrl(url)}: ${errorMessage(error)}`);
  }
  return redis;
}

/** A Redis URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable REDIS_URL)";
  }
}
