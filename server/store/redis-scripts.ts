import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { z } from "zod";
import { StoreUnavailable } from "./store.ts";

/**
 * Lua scripts run by their hash (EVALSHA), each loaded once per Redis: a Redis that restarted has
 * forgotten them, and the first call after that sends the script itself. The key prefix is always the
 * first argument. A command that fails because Redis is away rejects with StoreUnavailable.
 *
 * Each script names the schema of its reply: what Redis hands back is read through it, so a reply of
 * another shape (another version's script, a bug) is a MalformedReply naming the script, never a value
 * of the wrong type further on.
 */

export type RedisScript<Reply extends z.ZodType> = { lua: string; reply: Reply };

/** A JSON value this service stored (in Redis or a file), read through its schema: null when it is absent or no longer parses. */
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

/** A script's reply that does not have the shape its schema says. */
export class MalformedReply extends Error {}

export function redisScripts<Scripts extends Record<string, RedisScript<z.ZodType>>>(
  redis: Redis,
  prefix: string,
  sources: Scripts,
): <Name extends keyof Scripts & string>(
  name: Name,
  ...args: (string | number)[]
) => Promise<z.output<Scripts[Name]["reply"]>> {
  const hashes = new Map(
    Object.entries(sources).map(([name, script]) => [
      name,
      createHash("sha1").update(script.lua).digest("hex"),
    ]),
  );
  return async <Name extends keyof Scripts & string>(name: Name, ...args: (string | number)[]) => {
    const script: Scripts[Name] = sources[name];
    return readReply<Scripts[Name]["reply"]>(
      name,
      script.reply,
      await evaluate(redis, script.lua, hashes.get(name)!, [prefix, ...args]),
    );
  };
}

function readReply<Reply extends z.ZodType>(
  name: string,
  schema: Reply,
  reply: unknown,
): z.output<Reply> {
  const parsed = schema.safeParse(reply);
  if (parsed.success) return parsed.data;
  // The path and the issue only: a reply may hold an ask's body.
  const issue = parsed.error.issues[0];
  throw new MalformedReply(
    `the Redis script ${name} gave a malformed reply (${issue?.path.join(".") || "reply"}: ${issue?.message ?? "invalid"})`,
  );
}

async function evaluate(
  redis: Redis,
  lua: string,
  sha: string,
  args: (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(sha, 0, ...args);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("NOSCRIPT"))
      return unavailableAs(redis, () => redis.eval(lua, 0, ...args));
    throw unavailable(redis, error);
  }
}

/** A script's yes or no (Lua's 1 or 0). */
export const Flag = z.union([z.literal(0), z.literal(1)]).transform((flag) => flag === 1);

/** A script that answers nothing of use (its Lua returns 0). */
export const Done = z.literal(0);

/** A count a script returns. */
export const Count = z.number().int().nonnegative();

/** A script's flat reply of rows of `row`'s width ([a1, b1, a2, b2, ...]), read row by row. */
export function flatRows<Row extends z.ZodTuple>(row: Row) {
  const width = row.def.items.length;
  return z
    .array(z.unknown())
    .refine((flat) => flat.length % width === 0, `is not rows of ${width} fields`)
    .transform((flat) =>
      Array.from({ length: flat.length / width }, (_, index) =>
        flat.slice(index * width, (index + 1) * width),
      ),
    )
    .pipe(z.array(row));
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
  return redis.status === "ready"
    ? error
    : new StoreUnavailable(
        `the store the instances share (Redis) is unreachable (${redis.status})`,
      );
}
