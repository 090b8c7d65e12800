import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { z } from "zod";
import { StoreUnavailable } from "./store.ts";

/**
 * Lua scripts run by their hash (EVALSHA), each loaded once per Redis: a Redis that restarted has
 * forgotten them, and the first call after that sends the script itself. The key prefix is always the
 * first argument. A command that fails because Redis is away rejects with StoreUnavailable.
 */
export function redisScripts<Name extends string>(redis: Redis, prefix: string, sources: Record<Name, string>): (name: Name, ...args: (string | number)[]) => Promise<unknown> {
  const scripts = new Map<Name, { lua: string; sha: string }>();
  for (const [name, lua] of Object.entries(sources) as [Name, string][]) scripts.set(name, { lua, sha: createHash("sha1").update(lua).digest("hex") });
  return async (name, ...args) => {
    const script = scripts.get(name)!;
    try {
      return await redis.evalsha(script.sha, 0, prefix, ...args);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("NOSCRIPT")) return unavailableAs(redis, () => redis.eval(script.lua, 0, prefix, ...args));
      throw unavailable(redis, error);
    }
  };
}

/** Runs a command; a failure because Redis is away becomes StoreUnavailable. */
export async function unavailableAs<T>(redis: Redis, command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (error) {
    throw unavailable(redis, error);
  }
}

/** With the offline queue off, a command sent while the connection is down fails at once. */
function unavailable(redis: Redis, error: unknown): unknown {
  return redis.status === "ready" ? error : new StoreUnavailable(`the store the instances share (Redis) is unreachable (${redis.status})`);
}

/** A JSON value this service stored in Redis, checked against its schema: null when it is absent or no longer parses. */
export function parseStored<T>(schema: z.ZodType<T>, text: string | null): T | null {
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : null;
}
