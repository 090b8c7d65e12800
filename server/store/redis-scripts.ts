import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * Lua scripts run by their hash (EVALSHA), each loaded once per Redis: a Redis that restarted has
 * forgotten them, and the first call after that sends the script itself. The key prefix is always the
 * first argument.
 */
export function redisScripts<Name extends string>(redis: Redis, prefix: string, sources: Record<Name, string>): (name: Name, ...args: (string | number)[]) => Promise<unknown> {
  const scripts = new Map<Name, { lua: string; sha: string }>();
  for (const [name, lua] of Object.entries(sources) as [Name, string][]) scripts.set(name, { lua, sha: createHash("sha1").update(lua).digest("hex") });
  return async (name, ...args) => {
    const script = scripts.get(name)!;
    try {
      return await redis.evalsha(script.sha, 0, prefix, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return redis.eval(script.lua, 0, prefix, ...args);
    }
  };
}
