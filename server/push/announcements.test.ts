import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { questionAsk } from "../../test/support/ask-fixtures.ts";
import { startRedis, type TestRedis } from "../../test/support/redis-server.ts";
import {
  MemoryPushAnnouncements,
  type PushAnnouncements,
  RedisPushAnnouncements,
} from "./announcements.ts";

let redis: TestRedis;
const clients: Redis[] = [];
let deployments = 0;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await redis?.stop();
});

/** One Redis connection per instance, as each instance has its own. */
function redisInstances(): () => PushAnnouncements {
  const prefix = `deployment-${++deployments}:push:`;
  return () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    clients.push(client);
    return new RedisPushAnnouncements(client, prefix);
  };
}

const backends: { name: string; instances(): () => PushAnnouncements; shared: boolean }[] = [
  { name: "memory", instances: () => () => new MemoryPushAnnouncements(), shared: false },
  { name: "redis", instances: redisInstances, shared: true },
];

const ask = (id: string) =>
  questionAsk(
    [
      {
        id: "q",
        header: "Q",
        question: "Which?",
        options: [],
        multiSelect: false,
        allowOther: true,
      },
    ],
    { id, expiresAt: Date.now() + 60_000 },
  );

describe.each(backends)("push announcements in $name", (backend) => {
  it("an ask is claimed once, pushed while claimed, and its ending says whether it was pushed", async () => {
    const announcements = backend.instances()();
    expect(await announcements.claim(ask("a1"), Date.now())).toBe(true);
    expect(await announcements.claim(ask("a1"), Date.now())).toBe(false);
    expect(await announcements.markPushed("a1")).toBe(true);
    expect(await announcements.ended("a1")).toBe(true);
    // Claimed but not pushed (a tab showed it, or nobody subscribed): no outcome push.
    expect(await announcements.claim(ask("a2"), Date.now())).toBe(true);
    expect(await announcements.ended("a2")).toBe(false);
    // Ended before its claimant pushed it: nothing is pushed.
    expect(await announcements.markPushed("a2")).toBe(false);
    expect(await announcements.markPushed("never-claimed")).toBe(false);
  });

  it.runIf(backend.shared)(
    "instances share them: one claims, another's ending sees the push, a late instance claims nothing",
    async () => {
      const instance = backend.instances();
      const [a, b, late] = [instance(), instance(), instance()];
      const claims = await Promise.all(
        [a, b].map((announcements) => announcements.claim(ask("s1"), Date.now())),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      const claimant = claims[0] ? a : b;
      expect(await claimant.markPushed("s1")).toBe(true);
      expect(await (claimant === a ? b : a).ended("s1")).toBe(true);
      expect(await late.claim(ask("s1"), Date.now())).toBe(false);
    },
  );
});
