// A failed backfill is retried with backoff (issue 11, item 12). Before: when a *.list call failed
// after a (re)connect, nothing tried again, and asks restored from the store stayed hidden until the
// next reconnect. The fake Gateway fails the list call on demand; the retry timer runs on the
// server's injected clock and is cleared on disconnect and on stop.
import { afterEach, describe, expect, it } from "vitest";
import type { FakeGateway } from "../support/fake-gateway.ts";
import { ManualClock } from "../support/manual-clock.ts";
import {
  newChat,
  sessionKeyOf,
  startOnFakeGateway,
  stopOnFakeGateway,
  useTabs,
} from "../support/on-gateway.ts";
import { type TestServer, waitConnected } from "../support/tabs.ts";

const { openOn } = useTabs();
const LIST_FAILS = { code: "UNAVAILABLE", message: "question store busy" };
const DB = {
  questionId: "db",
  header: "Database",
  question: "Which database?",
  options: [{ label: "Postgres" }, { label: "SQLite" }],
  isOther: true,
};

let started: { fake?: FakeGateway; server?: TestServer } = {};
afterEach(() => stopOnFakeGateway(started));

async function logged(server: TestServer, pattern: RegExp, after = 0): Promise<void> {
  await expect
    .poll(() => server.logs.slice(after).some((line) => pattern.test(line)), { timeout: 20_000 })
    .toBe(true);
}

describe("backfill retry", () => {
  it("a restored ask is shown after a failed backfill is retried (1 s, then 2 s), not only at the next reconnect", async () => {
    const clock = new ManualClock();
    const { fake, server } = await startOnFakeGateway({ clock });
    started = { fake, server };
    const chatId = newChat();
    const first = await openOn(server, chatId);
    const record = fake.createQuestion({
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 600_000,
      questions: [DB],
    });
    await first.waitForShow((ask) => ask.id === record.id);

    fake.failNext("question.list", LIST_FAILS, 2);
    const restarted = await server.restart();
    started = { fake, server: restarted };
    await waitConnected(restarted);
    const viewer = await openOn(restarted, chatId);
    await logged(restarted, /gateway backfill failed: .*question store busy; retrying in 1 s/);
    expect(viewer.shown).toEqual([]);
    const mark = restarted.logs.length;
    clock.advance(1_000);
    await logged(restarted, /retrying in 2 s/, mark);
    expect(viewer.shown).toEqual([]);
    clock.advance(2_000);
    const shown = await viewer.waitForShow((ask) => ask.id === record.id);
    expect(shown).toMatchObject({ id: record.id, status: "pending" });
  });

  it("the retry timer is owned: cleared when the connection drops, and on stop", async () => {
    const clock = new ManualClock();
    const { fake, server } = await startOnFakeGateway({ clock });
    started = { fake, server };
    const idle = clock.pendingTimers;

    fake.failNext("question.list", LIST_FAILS, 1_000);
    fake.rejectConnects("startup");
    fake.dropConnections();
    await expect.poll(() => server.gateway.status.connected, { timeout: 10_000 }).toBe(false);
    fake.rejectConnects(null);
    await waitConnected(server);
    await logged(server, /retrying in 1 s/);
    expect(clock.pendingTimers).toBe(idle + 1);

    fake.rejectConnects("startup");
    fake.dropConnections();
    await expect.poll(() => server.gateway.status.connected, { timeout: 10_000 }).toBe(false);
    expect(clock.pendingTimers).toBe(idle);

    const mark = server.logs.length;
    fake.rejectConnects(null);
    await waitConnected(server);
    await logged(server, /retrying in 1 s/, mark);
    await server.stop();
    expect(clock.pendingTimers).toBe(0);
  });
});
