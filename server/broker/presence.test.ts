import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../lib/clock.ts";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { startRedis, type TestRedis } from "../../test/support/redis-server.ts";
import type { Presence, ReplyClaim, Tab } from "./ports.ts";
import { MemoryPresence } from "./presence.ts";
import { HEARTBEAT_TTL_MS, RedisPresence } from "./redis-presence.ts";

/** The presence contract, in memory and in a real Redis; then what only shared presence has to do. */

let redis: TestRedis;
const clients: Redis[] = [];
const presences: RedisPresence[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  for (const presence of presences.splice(0)) await presence.stop().catch(() => {});
  for (const client of clients.splice(0)) client.disconnect();
});
afterAll(async () => {
  await redis.stop();
});

function connect(): Redis {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  clients.push(client);
  return client;
}

/** One instance's presence on the shared Redis (its own connection, as another process would have). */
async function instance(prefix: string, clock = systemClock()): Promise<RedisPresence> {
  const presence = new RedisPresence({ redis: connect(), instanceId: randomUUID(), clock, prefix, log: () => {} });
  presences.push(presence);
  await presence.start();
  return presence;
}

const tab = (id: string, userId = "owner", chatClaim: string | null = null, reply: ReplyClaim | null = null): Tab => ({ id, userId, isOwner: userId === "owner", chatClaim, reply });
const ids = (tabs: readonly Tab[]) => tabs.map((t) => t.id);

const kinds: { name: string; open(): Promise<Presence> }[] = [
  { name: "memory", open: async () => new MemoryPresence() },
  { name: "redis", open: () => instance(`p-${randomUUID()}:`) },
];

describe.each(kinds)("Presence in $name", ({ open }) => {
  it("viewers oldest first; a tab views one chat; viewing again makes it newest; leave returns the chat", async () => {
    const presence = await open();
    expect(await presence.view(tab("t1"), "c1")).toBeNull();
    await presence.view(tab("t2", "alice", "c1", { msg: "reply-1", mts: 1_700_000_000_123 }), "c1");
    expect(await presence.viewers("c1")).toEqual([tab("t1"), tab("t2", "alice", "c1", { msg: "reply-1", mts: 1_700_000_000_123 })]);
    expect(await presence.view(tab("t1"), "c1")).toBe("c1");
    expect(ids(await presence.viewers("c1"))).toEqual(["t2", "t1"]);
    expect(await presence.view(tab("t1"), "c2")).toBe("c1");
    expect(ids(await presence.viewers("c1"))).toEqual(["t2"]);
    expect(await presence.chatOf("t1")).toBe("c2");
    expect(await presence.leave("t1")).toBe("c2");
    expect(await presence.leave("t1")).toBeNull();
    expect(await presence.chatOf("t1")).toBeNull();
    expect(await presence.viewers("c2")).toEqual([]);
  });

  it("show moves a card only from the tab the caller saw holding it; forget returns the holder once", async () => {
    const presence = await open();
    expect(await presence.shownTo("a1")).toBeNull();
    expect(await presence.show("a1", "t1", null)).toBe(true);
    expect(await presence.show("a1", "t2", null)).toBe(false);
    expect(await presence.shownTo("a1")).toBe("t1");
    expect(await presence.show("a1", "t2", "t1")).toBe(true);
    expect(await presence.show("a1", null, "t2")).toBe(true);
    expect(await presence.shownTo("a1")).toBeNull();
    await presence.show("a1", "t3", null);
    expect(await presence.forget("a1")).toBe("t3");
    expect(await presence.forget("a1")).toBeNull();
  });
});

describe("Presence shared in Redis (several instances)", () => {
  it("instances see each other's viewers in one order, and one card moves once when two move it at once", async () => {
    const prefix = `p-${randomUUID()}:`;
    const [a, b] = [await instance(prefix), await instance(prefix)];
    await a.view(tab("on-a"), "c1");
    await b.view(tab("on-b", "alice", "c1", { msg: "reply-2", mts: 2_000 }), "c1");
    // A widget's reply travels with its view: the live-widget rule is judged on any instance.
    expect(await a.viewers("c1")).toEqual([tab("on-a"), tab("on-b", "alice", "c1", { msg: "reply-2", mts: 2_000 })]);
    expect(await a.chatOf("on-b")).toBe("c1");
    const moves = await Promise.all([a.show("q1", "on-a", null), b.show("q1", "on-b", null)]);
    expect(moves.filter(Boolean)).toHaveLength(1);
    const forgotten = await Promise.all([a.forget("q1"), b.forget("q1")]);
    expect(forgotten.filter((holder) => holder !== null)).toHaveLength(1);
  });

  it("records since when and on which instance a tab views; a clean stop removes its tabs at once", async () => {
    const prefix = `p-${randomUUID()}:`;
    const clock = new ManualClock();
    const a = await instance(prefix, clock);
    const b = await instance(prefix);
    await a.view(tab("on-a"), "c1");
    await b.view(tab("on-b"), "c1");
    expect(await b.viewingSince("on-a")).toBe(clock.now());
    await a.stop();
    expect(ids(await b.viewers("c1"))).toEqual(["on-b"]);
    expect(await b.chatOf("on-a")).toBeNull();
  });

  it("a dead instance's tabs stop counting by themselves once its heartbeat lapses: no cleanup by anyone", async () => {
    const prefix = `p-${randomUUID()}:`;
    // The dead instance's clock never moves: its heartbeat is never renewed, as after a SIGKILL.
    const dead = await instance(prefix, new ManualClock());
    const alive = await instance(prefix);
    await dead.view(tab("on-dead"), "c1");
    await alive.view(tab("on-alive"), "c1");
    expect(ids(await alive.viewers("c1"))).toEqual(["on-dead", "on-alive"]);
    await expect.poll(async () => ids(await alive.viewers("c1")), { timeout: HEARTBEAT_TTL_MS + 10_000, interval: 500 }).toEqual(["on-alive"]);
    expect(await alive.chatOf("on-dead")).toBeNull();
  }, 30_000);
});
