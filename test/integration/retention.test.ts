// Retention, wired into the running server (issue 11, item 9). Before: nothing was ever deleted.
// Now answered history older than HISTORY_DAYS goes, with the chats nobody viewed since; pending
// asks and their chats stay. Pruning runs on the server's injected clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeGateway } from "../support/fake-gateway.ts";
import { ManualClock } from "../support/manual-clock.ts";
import {
  newChat,
  sessionKeyOf,
  startOnFakeGateway,
  stopOnFakeGateway,
  useTabs,
} from "../support/on-gateway.ts";
import type { TestServer } from "../support/tabs.ts";

const DAY = 86_400_000;
const DB = {
  questionId: "db",
  header: "Database",
  question: "Which database?",
  options: [{ label: "Postgres" }, { label: "SQLite" }],
  isOther: true,
};
const { openOn } = useTabs();

describe("retention (HISTORY_DAYS=7)", () => {
  const clock = new ManualClock();
  let fake: FakeGateway;
  let server: TestServer;

  beforeAll(async () => {
    ({ fake, server } = await startOnFakeGateway({ clock, env: { HISTORY_DAYS: "7" } }));
  });
  afterAll(() => stopOnFakeGateway({ fake, server }));

  it("an answered ask and its chat, unviewed for more than HISTORY_DAYS, are deleted; a pending ask, its chat and a chat viewed since stay", async () => {
    const answeredChat = newChat();
    const waitingChat = newChat();
    const revisitedChat = newChat();
    (await openOn(server, revisitedChat)).close();
    const viewer = await openOn(server, answeredChat);
    const answered = fake.createQuestion({
      sessionKey: sessionKeyOf(answeredChat),
      timeoutMs: 600_000,
      questions: [DB],
    });
    await viewer.waitForShow((ask) => ask.id === answered.id);
    expect(
      await viewer.send("ask:answer", {
        askId: answered.id,
        answer: { type: "text", text: "SQLite" },
      }),
    ).toEqual({ ok: true, status: "answered" });
    viewer.close();
    const waitingTab = await openOn(server, waitingChat);
    const waiting = fake.createQuestion({
      sessionKey: sessionKeyOf(waitingChat),
      timeoutMs: 600_000,
      questions: [DB],
    });
    await waitingTab.waitForShow((ask) => ask.id === waiting.id);
    expect((await server.store.get(answered.id))?.status).toBe("answered");

    clock.advance(6 * DAY);
    expect((await server.store.get(answered.id))?.status).toBe("answered");
    (await openOn(server, revisitedChat)).close();
    clock.advance(2 * DAY);
    expect(await server.store.get(answered.id)).toBeNull();
    expect(await server.store.chatOwner(answeredChat)).toBeNull();
    expect(
      server.logs.some((line) =>
        /^retention: deleted 1 finished asks and 1 chats older than 7 days$/.test(line),
      ),
    ).toBe(true);
    const dashboard = await openOn(server, null);
    expect((await dashboard.list("all")).map((ask) => ask.id)).not.toContain(answered.id);

    expect((await server.store.get(waiting.id))?.status).toBe("pending");
    expect(await server.store.chatOwner(waitingChat)).toBe("owner");
    // Viewed on day 6: its owner is kept for another HISTORY_DAYS.
    expect(await server.store.chatOwner(revisitedChat)).toBe("owner");
    clock.advance(6 * DAY);
    expect(await server.store.chatOwner(revisitedChat)).toBeNull();
  });
});
