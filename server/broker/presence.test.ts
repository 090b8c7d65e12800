import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../lib/clock.ts";
import { newestWhoMaySee } from "../../lib/policy.ts";
import { questionAsk } from "../../test/support/ask-fixtures.ts";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { startRedis, type TestRedis } from "../../test/support/redis-server.ts";
import type { Presence, ReplyClaim, Tab } from "./ports.ts";
import { MemoryPresence } from "./presence.ts";
import {
  CARD_PROTOCOL_VERSION,
  HEARTBEAT_EVERY_MS,
  HEARTBEAT_TTL_MS,
  RedisPresence,
} from "./redis-presence.ts";

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
async function instance(
  prefix: string,
  clock = systemClock(),
  instanceId: string = randomUUID(),
): Promise<RedisPresence> {
  const presence = new RedisPresence({
    redis: connect(),
    instanceId,
    clock,
    prefix,
    log: () => {},
  });
  presences.push(presence);
  await presence.start();
  return presence;
}

const tab = (
  id: string,
  userId = "owner",
  chatClaim: string | null = null,
  reply: ReplyClaim | null = null,
): Tab => ({ id, userId, isOwner: userId === "owner", chatClaim, reply });
const ids = (tabs: readonly Tab[]) => tabs.map((t) => t.id);

/** An ask of chat c1. */
const ask = (askId: string) =>
  questionAsk(
    [
      {
        question: "Which database?",
        header: "DB",
        id: "db",
        options: [],
        multiSelect: false,
        allowOther: true,
      },
    ],
    { id: askId, chatId: "c1" },
  ) as ReturnType<typeof questionAsk> & { chatId: string };
const closing = (askId: string) => ({
  askId,
  reason: "answered" as const,
  summary: "Answered: SQLite",
});

/** What the presence told the tabs of its instance, in the order it told them. */
function told(presence: Presence): string[] {
  const lines: string[] = [];
  presence.on("card:show", (tabId, ask) => lines.push(`show ${ask.id} on ${tabId}`));
  presence.on("card:close", (tabId, close) =>
    lines.push(`close ${close.askId} on ${tabId}: ${close.reason}`),
  );
  return lines;
}

const kinds: { name: string; open(): Promise<Presence> }[] = [
  { name: "memory", open: async () => new MemoryPresence() },
  { name: "redis", open: () => instance(`p-${randomUUID()}:`) },
];

describe.each(kinds)("Presence in $name", ({ open }) => {
  it("viewers oldest first; a tab views one chat; viewing again makes it newest; leave returns the chat", async () => {
    const presence = await open();
    expect(await presence.view(tab("t1"), "c1")).toBeNull();
    await presence.view(tab("t2", "alice", "c1", { msg: "reply-1", mts: 1_700_000_000_123 }), "c1");
    expect(await presence.viewers("c1")).toEqual([
      tab("t1"),
      tab("t2", "alice", "c1", { msg: "reply-1", mts: 1_700_000_000_123 }),
    ]);
    expect(await presence.view(tab("t1"), "c1")).toBe("c1");
    expect(ids(await presence.viewers("c1"))).toEqual(["t2", "t1"]);
    expect(await presence.view(tab("t1"), "c2")).toBe("c1");
    expect(ids(await presence.viewers("c1"))).toEqual(["t2"]);
    expect(ids(await presence.viewers("c2"))).toEqual(["t1"]);
    expect(await presence.leave("t1")).toBe("c2");
    expect(await presence.leave("t1")).toBeNull();
    expect(await presence.viewers("c2")).toEqual([]);
  });

  it("place puts the card on the newest viewer that may see it, moves it when that changes, and forget returns the holder once", async () => {
    const presence = await open();
    expect(await presence.place(ask("a1"), null)).toEqual({ tab: null, moved: false });
    await presence.view(tab("t1"), "c1");
    await presence.view(tab("guest", "alice", "c1"), "c1");
    // alice does not own c1 (nobody does): the owner's older tab gets it.
    expect(await presence.place(ask("a1"), null)).toEqual({ tab: tab("t1"), moved: true });
    expect(await presence.place(ask("a1"), null)).toEqual({ tab: tab("t1"), moved: false });
    expect(await presence.shownTo("a1")).toBe("t1");
    // alice owns c1: her newer tab gets it.
    expect(await presence.place(ask("a1"), "alice")).toEqual({
      tab: tab("guest", "alice", "c1"),
      moved: true,
    });
    await presence.leave("guest");
    await presence.leave("t1");
    // A tab that leaves drops its cards: the ask is nobody's.
    expect(await presence.shownTo("a1")).toBeNull();
    expect(await presence.place(ask("a1"), "alice")).toEqual({ tab: null, moved: false });
    await presence.view(tab("t3"), "c1");
    expect(await presence.place(ask("a1"), null)).toEqual({ tab: tab("t3"), moved: true });
    expect(await presence.forget("a1", closing("a1"))).toBe("t3");
    expect(await presence.forget("a1", closing("a1"))).toBeNull();
    // An ended ask is never placed again (a late replay of it).
    expect(await presence.place(ask("a1"), null)).toEqual({ tab: null, moved: false });
  });

  it("a move tells its tabs: the new holder gets the card in its reply, the old one a handoff while it views the chat; forget closes it", async () => {
    const presence = await open();
    const lines = told(presence);
    const cards: (string | undefined)[] = [];
    presence.on("card:show", (_tabId, card) => cards.push(card.replyId));
    await presence.view(tab("t1"), "c1");
    await presence.place(ask("a1"), null);
    await presence.view(tab("t2", "owner", "c1", { msg: "reply-2", mts: 2 }), "c1");
    await presence.place(ask("a1"), null);
    await presence.view(tab("t2", "owner", "c1", { msg: "reply-2", mts: 2 }), "c2"); // t2 left the chat: it knows, and is not told again
    await presence.place(ask("a1"), null);
    await presence.forget("a1", closing("a1"));
    await presence.forget("a1", closing("a1"));
    const expected = [
      "show a1 on t1",
      "close a1 on t1: handed-off",
      "show a1 on t2",
      "show a1 on t1",
      "close a1 on t1: answered",
    ];
    await expect.poll(() => lines.length).toBe(expected.length);
    expect(lines).toEqual(expected);
    expect(cards).toEqual([undefined, "reply-2", undefined]);
  });

  it("place picks as the policy does (newestWhoMaySee): any owner's tab, or the chat owner's, the newest first", async () => {
    const presence = await open();
    const viewers = [
      tab("o1"),
      tab("bob", "bob", "c1"),
      tab("alice", "alice", "c1"),
      tab("o2"),
      tab("carol", "carol", "c1"),
    ];
    for (const viewer of viewers) await presence.view(viewer, "c1");
    for (const [index, chatOwner] of [null, "alice", "bob", "carol", "dave", "owner"].entries()) {
      const expected = newestWhoMaySee(viewers, ask(`a${index}`), chatOwner);
      expect((await presence.place(ask(`a${index}`), chatOwner)).tab?.id ?? null).toBe(
        expected?.id ?? null,
      );
    }
  });
});

describe("Presence shared in Redis (several instances)", () => {
  it("instances see each other's viewers in one order, and one card moves once when two move it at once", async () => {
    const prefix = `p-${randomUUID()}:`;
    const [a, b] = [await instance(prefix), await instance(prefix)];
    await a.view(tab("on-a"), "c1");
    await b.view(tab("on-b", "alice", "c1", { msg: "reply-2", mts: 2_000 }), "c1");
    // A widget's reply travels with its view: the live-widget rule is judged on any instance.
    expect(await a.viewers("c1")).toEqual([
      tab("on-a"),
      tab("on-b", "alice", "c1", { msg: "reply-2", mts: 2_000 }),
    ]);
    const placements = await Promise.all([a.place(ask("q1"), null), b.place(ask("q1"), null)]);
    expect(placements.filter((placement) => placement.moved)).toHaveLength(1);
    expect(placements.map((placement) => placement.tab?.id)).toEqual(["on-a", "on-a"]);
    const forgotten = await Promise.all([
      a.forget("q1", closing("q1")),
      b.forget("q1", closing("q1")),
    ]);
    expect(forgotten.filter((holder) => holder !== null)).toHaveLength(1);
  });

  it("a card reaches the instance holding its tab, whoever moves it, in the order the moves happened", async () => {
    const prefix = `p-${randomUUID()}:`;
    const [a, b] = [await instance(prefix), await instance(prefix)];
    const [onA, onB] = [told(a), told(b)];
    // a places the card on b's tab; a's tab views anew and b moves it there; b's tab views anew and a moves it back; b ends it.
    await b.view(tab("on-b"), "c1");
    await a.place(ask("q1"), null);
    await a.view(tab("on-a"), "c1");
    await b.place(ask("q1"), null);
    await b.view(tab("on-b"), "c1");
    await a.place(ask("q1"), null);
    await b.forget("q1", closing("q1"));
    await expect.poll(() => onB.length).toBe(4);
    expect(onB).toEqual([
      "show q1 on on-b",
      "close q1 on on-b: handed-off",
      "show q1 on on-b",
      "close q1 on on-b: answered",
    ]);
    await expect.poll(() => onA.length).toBe(2);
    expect(onA).toEqual(["show q1 on on-a", "close q1 on on-a: handed-off"]);
  });

  it("drops a card message it cannot read, and logs it", async () => {
    const prefix = `p-${randomUUID()}:`;
    const logged: string[] = [];
    const presence = new RedisPresence({
      redis: connect(),
      instanceId: "reader",
      clock: systemClock(),
      prefix,
      log: (line) => logged.push(line),
    });
    presences.push(presence);
    await presence.start();
    const lines = told(presence);
    const publisher = connect();
    await publisher.publish(`${prefix}cards:reader`, "show\nt1\n\n{not json");
    await publisher.publish(`${prefix}cards:reader`, `show\nt1\n\n${JSON.stringify({ id: "q1" })}`);
    await publisher.publish(
      `${prefix}cards:reader`,
      `close\nt1\n\n${JSON.stringify(closing("q1"))}`,
    );
    await expect.poll(() => lines).toEqual(["close q1 on t1: answered"]);
    expect(logged).toHaveLength(2);
    expect(logged.every((line) => line.startsWith("dropped a card message for tab t1"))).toBe(true);
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
  });

  it("an instance joins only beside live instances of its card protocol, and says which one it is not", async () => {
    const prefix = `p-${randomUUID()}:`;
    const first = await instance(prefix, systemClock(), "first");
    await instance(prefix, systemClock(), "second");
    // A live instance of a release whose card messages this one cannot read, as its own join records it.
    const redis = connect();
    await redis.hset(
      `${prefix}card-protocols`,
      "newer-release-instance",
      String(CARD_PROTOCOL_VERSION + 1),
    );
    await redis.set(`${prefix}instance:newer-release-instance`, "1", "PX", 60_000);
    const third = new RedisPresence({
      redis: connect(),
      instanceId: randomUUID(),
      clock: systemClock(),
      prefix,
      log: () => {},
    });
    presences.push(third);
    await expect(third.start()).rejects.toThrow(
      `instance newer-re of this deployment speaks card protocol ${CARD_PROTOCOL_VERSION + 1}, this release ${CARD_PROTOCOL_VERSION}: instances of the two releases cannot pass cards to each other's tabs; stop the other release's instances, then start this one`,
    );
    // Refused before it joined: no heartbeat, no record, no tab of it is ever chosen.
    expect(await redis.hkeys(`${prefix}card-protocols`)).toHaveLength(3);
    // Once that instance is gone (its heartbeat lapsed or it stopped), the record is forgotten and the join goes through.
    await redis.del(`${prefix}instance:newer-release-instance`);
    await first.stop();
    await instance(prefix, systemClock(), "fourth");
    expect((await redis.hkeys(`${prefix}card-protocols`)).sort()).toEqual(["fourth", "second"]);
  });

  it("a dead instance's tabs stop counting by themselves once its heartbeat lapses: no cleanup by anyone", async () => {
    const prefix = `p-${randomUUID()}:`;
    const redisClient = connect();
    const heartbeatLeft = (instanceId: string) =>
      redisClient.pttl(`${prefix}instance:${instanceId}`);
    // The dead instance's clock never moves: its heartbeat is never renewed, as after a SIGKILL.
    const dead = await instance(prefix, new ManualClock(), "dead");
    const aliveClock = new ManualClock();
    const alive = await instance(prefix, aliveClock, "alive");
    await dead.view(tab("on-dead"), "c1");
    await alive.view(tab("on-alive"), "c1");
    expect(ids(await alive.viewers("c1"))).toEqual(["on-dead", "on-alive"]);
    // Each heartbeat lapses by itself in Redis within HEARTBEAT_TTL_MS; a running instance renews its own.
    for (const instanceId of ["dead", "alive"])
      expect(await heartbeatLeft(instanceId)).toSatisfy(
        (left: number) => left > 0 && left <= HEARTBEAT_TTL_MS,
      );
    await redisClient.pexpire(`${prefix}instance:alive`, HEARTBEAT_TTL_MS / 2);
    aliveClock.advance(HEARTBEAT_EVERY_MS);
    await expect.poll(() => heartbeatLeft("alive")).toBeGreaterThan(HEARTBEAT_TTL_MS / 2);
    // Redis's time, not this test's, ends the dead one's: its last moment comes now instead of in 10 s.
    await redisClient.pexpire(`${prefix}instance:dead`, 1);
    await expect
      .poll(async () => ids(await alive.viewers("c1")), { timeout: 5_000, interval: 50 })
      .toEqual(["on-alive"]);
  });
});
