import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startRedis, type TestRedis } from "../../test/support/redis-server.ts";
import { Flag, flatRows, MalformedReply, redisScripts } from "./redis-scripts.ts";

/** A script's reply is read through its schema: the value comes back typed, or a clear error names the script. */

let redis: TestRedis;
let client: Redis;
beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  client.disconnect();
  await redis.stop();
});

describe("redisScripts", () => {
  const run = () =>
    redisScripts(client, "p:", {
      yes: { lua: "return 1", reply: Flag },
      rows: {
        lua: "return { ARGV[1], 'a', 'b', 'c' }",
        reply: flatRows(z.tuple([z.string(), z.string()])),
      },
      odd: { lua: "return { 'a', 'b', 'c' }", reply: flatRows(z.tuple([z.string(), z.string()])) },
      text: { lua: "return 'secret body'", reply: Flag },
    });

  it("parses a reply with its schema (the prefix first among the arguments)", async () => {
    const scripts = run();
    expect(await scripts("yes")).toBe(true);
    expect(await scripts("rows")).toEqual([
      ["p:", "a"],
      ["b", "c"],
    ]);
  });

  it("a reply of another shape is a MalformedReply naming the script, never quoting the reply", async () => {
    const scripts = run();
    await expect(scripts("odd")).rejects.toThrow(MalformedReply);
    await expect(scripts("odd")).rejects.toThrow(
      /the Redis script odd gave a malformed reply \(reply: is not rows of 2 fields\)/,
    );
    const error = await scripts("text").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MalformedReply);
    expect((error as Error).message).toMatch(/^the Redis script text gave a malformed reply/);
    expect((error as Error).message).not.toContain("secret body");
  });
});
