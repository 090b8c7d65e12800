import path from "node:path";
import type { Redis } from "ioredis";
import type { Clock } from "../../lib/clock.ts";
import type { Config } from "../config.ts";
import { claimDeploymentPrefix } from "./deployment-marker.ts";
import { RedisAskStore } from "./redis.ts";
import { connectRedis } from "./redis-client.ts";
import { SqliteAskStore } from "./sqlite.ts";
import type { ServiceStore } from "./store.ts";

/**
 * The store the configuration asks for: with REDIS_URL, the Redis every instance shares (and its
 * connection, for presence and Socket.IO), once its REDIS_KEY_PREFIX is known to be this deployment's
 * (signed with the same AUTH_SECRET); without it, this process's SQLite file in DATA_DIR.
 */
export async function openStore(
  config: Pick<Config, "REDIS_URL" | "REDIS_KEY_PREFIX" | "DATA_DIR">,
  authSecret: string,
  log: (message: string) => void,
  clock?: Clock,
): Promise<{ store: ServiceStore; redis: Redis | null }> {
  if (config.REDIS_URL) {
    const redis = await connectRedis(config.REDIS_URL, log);
    try {
      await claimDeploymentPrefix(redis, config.REDIS_KEY_PREFIX, authSecret);
    } catch (error) {
      redis.disconnect();
      throw error;
    }
    return { store: new RedisAskStore(redis, { prefix: `${config.REDIS_KEY_PREFIX}store:`, log }), redis };
  }
  return { store: new SqliteAskStore(path.join(config.DATA_DIR, "asks.sqlite"), { log, clock }), redis: null };
}
