// Several instances on one Redis (issue 12): every routing rule (docs/ARCHITECTURE.md#routing) across instances, in-process
// instances sharing a real redis-server, against the real OpenClaw Gateway where it faces the Gateway
// (every instance is connected to it as an operator client). The fake Gateway counts what reaches it
// when two tabs on two instances answer at once, and stands in while Redis restarts mid-run.
// The SIGKILL tests with separate processes are in test/redis/.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import type { AnswerAck } from "../../lib/protocol.ts";
import { REDIS_DOWN } from "../../server/status.ts";
import { type FakeGateway, startFakeGateway } from "../support/fake-gateway.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import {
  gatewayOperator,
  newChat,
  requestApproval,
  requestQuestion,
  sessionKeyOf,
  TEST_AGENT,
  useTabs,
  waitAnswer,
} from "../support/on-gateway.ts";
import { startRedis, type TestRedis } from "../support/redis-server.ts";
import {
  startTestServer,
  type Tab,
  TEST_AUTH_SECRET,
  TEST_OWNER,
  type TestServer,
  waitConnected,
} from "../support/tabs.ts";

let redis: TestRedis;
const { openOn } = useTabs();

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** An instance on the shared Redis; instances of one deployment share a key prefix. */
async function instance(
  gatewayUrl: string,
  gatewayToken: string,
  prefix: string,
  redisUrl = redis.url,
): Promise<TestServer> {
  const server = await startTestServer({
    gatewayUrl,
    gatewayToken,
    env: {
      AGENT_ID: TEST_AGENT,
      REDIS_URL: redisUrl,
      AUTH_SECRET: TEST_AUTH_SECRET,
      REDIS_KEY_PREFIX: prefix,
    },
  });
  await waitConnected(server);
  return server;
}

const showsOf = (tab: { shown: Ask[] }, id: string) =>
  tab.shown.filter((ask) => ask.id === id).length;

describe("three instances on one Redis and the real Gateway", () => {
  let requester: OperatorConnection;
  let elsewhere: OperatorConnection;
  let a: TestServer;
  let b: TestServer;
  let c: TestServer;
  /** ask:ended per ask id, summed over the instances: the end of an ask is reported once in all. */
  const endings = new Map<string, number>();
  const widgets: Tab[] = [];
  afterEach(() => {
    for (const opened of widgets.splice(0)) opened.close();
  });

  beforeAll(async () => {
    requester = await gatewayOperator("requester");
    elsewhere = await gatewayOperator("control-ui");
    const prefix = `deployment-${randomUUID()}:`;
    const servers = await Promise.all(
      [0, 1, 2].map(() => instance(inject("gatewayUrl"), inject("gatewayToken"), prefix)),
    );
    [a, b, c] = servers as [TestServer, TestServer, TestServer];
    for (const server of [a, b, c])
      server.broker.on("ask:ended", (ask) => endings.set(ask.id, (endings.get(ask.id) ?? 0) + 1));
  });
  afterAll(async () => {
    await Promise.all([a, b, c].map((server) => server?.dispose()));
    await requester?.stop();
    await elsewhere?.stop();
  });

  it("the newest tab wins even on another instance: an ask is shown there only, once, and answered once", async () => {
    const chatId = newChat();
    const older = await openOn(a, chatId);
    const newest = await openOn(b, chatId);
    const { id } = await requestQuestion(requester, sessionKeyOf(chatId));
    await newest.waitForShow((ask) => ask.id === id);
    for (const server of [a, b, c]) expect(await server.broker.shownTo(id)).toBe(newest.socket.id);
    const waiting = waitAnswer(requester, id);
    expect(
      await newest.send("ask:answer", {
        askId: id,
        answer: { type: "questions", answers: { db: ["SQLite"] } },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await waiting).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["SQLite"] } },
    });
    await newest.waitForClose(id);
    for (const server of [a, b, c])
      await expect.poll(() => server.broker.getPending(id)).toBeUndefined();
    expect(showsOf(newest, id)).toBe(1);
    expect(showsOf(older, id)).toBe(0);
    expect(endings.get(id)).toBe(1);
  });

  it("handoff: a newer tab on another instance takes the card; the tab on the first gets handed-off", async () => {
    const chatId = newChat();
    const first = await openOn(a, chatId);
    const { id } = await requestQuestion(requester, sessionKeyOf(chatId));
    await first.waitForShow((ask) => ask.id === id);
    const second = await openOn(c, chatId);
    await second.waitForShow((ask) => ask.id === id);
    expect(await first.waitForClose(id)).toMatchObject({ askId: id, reason: "handed-off" });
    // The card moves once more when the first tab comes to the front again.
    expect(await first.send("chat:view", { chatId })).toEqual({ ok: true });
    await first.waitFor(
      () => (showsOf(first, id) === 2 ? true : undefined),
      "the card back on the first tab",
    );
    expect(await second.waitForClose(id)).toMatchObject({ reason: "handed-off" });
    expect(showsOf(second, id)).toBe(1);
  });

  it("answered elsewhere reaches every instance: the card closes, every dashboard hears it once, and history lists it on each", async () => {
    const chatId = newChat();
    const dashboards = await Promise.all([a, b, c].map((server) => openOn(server, null)));
    for (const dashboard of dashboards)
      expect(await dashboard.send("asks:watch", {})).toEqual({ ok: true });
    const viewer = await openOn(b, chatId);
    const { id } = await requestQuestion(requester, sessionKeyOf(chatId));
    await viewer.waitForShow((ask) => ask.id === id);
    // The dashboard feed and asks:list on every instance show the ask, whichever saw it first.
    for (const dashboard of dashboards) {
      await dashboard.waitFor(
        () => dashboard.changed.find((ask) => ask.id === id),
        "ask:changed on every dashboard",
      );
      expect((await dashboard.list()).map((ask) => ask.id)).toContain(id);
    }
    await elsewhere.request("question.resolve", { id, answers: { answers: { db: ["Postgres"] } } });
    expect(await viewer.waitForClose(id)).toMatchObject({
      askId: id,
      reason: "answered-elsewhere",
    });
    for (const dashboard of dashboards) {
      await dashboard.waitFor(
        () => dashboard.changed.find((ask) => ask.id === id && ask.status === "answered"),
        "the answered ask on every dashboard",
      );
      expect(
        dashboard.changed.filter((ask) => ask.id === id && ask.status === "answered"),
      ).toHaveLength(1);
      expect((await dashboard.list("answered")).map((ask) => ask.id)).toContain(id);
    }
    expect(viewer.closed.filter((close) => close.askId === id)).toHaveLength(1);
    expect(endings.get(id)).toBe(1);
  });

  it("expiry fires once: every instance times the approval out, one close reaches the tab and one end is reported", async () => {
    const chatId = newChat();
    const viewer = await openOn(c, chatId);
    const approval = requestApproval(requester, elsewhere, "plugin", {
      pluginId: "deploy-kit",
      title: "Deploy",
      description: "Deploys the build",
      toolName: "deploy",
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 2_000,
    });
    const { id } = (await approval.requested) as { id: string };
    await viewer.waitForShow((ask) => ask.id === id);
    expect(await viewer.waitForClose(id)).toMatchObject({ reason: "expired" });
    for (const server of [a, b, c])
      await expect.poll(() => server.broker.getPending(id), { timeout: 10_000 }).toBeUndefined();
    expect((await a.store.get(id))?.status).toBe("expired");
    expect(viewer.closed.filter((close) => close.askId === id)).toHaveLength(1);
    expect(endings.get(id)).toBe(1);
  });

  it("the live widget across instances: a newer reply's widget on B supersedes the older reply's on A and takes the card, no handed-off", async () => {
    const chatId = newChat();
    const widgetOn = async (server: TestServer, reply: { msg: string; mts: number }) => {
      const opened = await server.widget(TEST_OWNER, chatId, reply);
      widgets.push(opened);
      expect(await opened.send("chat:view", { chatId })).toEqual({ ok: true });
      return opened;
    };
    const older = await widgetOn(a, { msg: "reply-1", mts: 1_000 });
    const { id } = await requestQuestion(requester, sessionKeyOf(chatId));
    await older.waitForShow((ask) => ask.id === id);
    const newer = await widgetOn(b, { msg: "reply-2", mts: 2_000 });
    await newer.waitForShow((ask) => ask.id === id);
    expect(newer.shown.find((ask) => ask.id === id)?.replyId).toBe("reply-2");
    // Instance B judged it; the notice crossed to the tab on A.
    await older.waitFor(() => older.superseded[0], "widget:superseded on instance A");
    expect(older.superseded).toEqual([{ chatId }]);
    for (const server of [a, b, c]) expect(await server.broker.shownTo(id)).toBe(newer.socket.id);
    // The older widget viewing again from A is judged against the reply B noted: superseded, no card.
    expect(await older.send("chat:view", { chatId })).toEqual({ ok: true });
    expect(older.superseded).toHaveLength(2);
    expect(await c.broker.isLiveReply(chatId, { msg: "reply-1", mts: 1_000 })).toBe(false);
    // The summary stays in the reply whose widget answered, listed by any instance.
    const waiting = waitAnswer(requester, id);
    expect(
      await newer.send("ask:answer", {
        askId: id,
        answer: { type: "questions", answers: { db: ["SQLite"] } },
      }),
    ).toEqual({ ok: true, status: "answered" });
    await waiting;
    await newer.waitForClose(id);
    await expect
      .poll(async () => (await c.store.finishedInReply(chatId, "reply-2")).map((ask) => ask.id))
      .toEqual([id]);
    expect(older.closed).toEqual([]);
    expect(showsOf(older, id)).toBe(1);
    expect(showsOf(newer, id)).toBe(1);
    expect(endings.get(id)).toBe(1);
  });

  it("a chat's recorded owner and the owner-link key id are the deployment's, not one instance's", async () => {
    const chatId = newChat();
    await openOn(a, chatId, "alice");
    expect(await c.store.chatOwner(chatId)).toBe("alice");
    const mallory = await openOn(b, null, "mallory", chatId);
    expect(await mallory.send("chat:view", { chatId })).toMatchObject({
      ok: false,
      error: { code: "FORBIDDEN" },
    });
    await a.store.setOwnerLinkKid("kid-of-the-deployment");
    expect(await b.store.ownerLinkKid()).toBe("kid-of-the-deployment");
  });
});

describe("two instances on the fake Gateway (counting what reaches it)", () => {
  let fake: FakeGateway;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    fake = await startFakeGateway({ agents: [TEST_AGENT] });
    const prefix = `deployment-${randomUUID()}:`;
    const servers = await Promise.all([0, 1].map(() => instance(fake.url, fake.token, prefix)));
    [a, b] = servers as [TestServer, TestServer];
  });
  afterAll(async () => {
    await Promise.all([a, b].map((server) => server?.dispose()));
    await fake?.stop();
  });

  const resolveCalls = (id: string) =>
    fake.requests.filter(
      (r) => r.method === "question.resolve" && (r.params as { id?: string }).id === id,
    );
  const fakeQuestion = (chatId: string) =>
    fake.createQuestion({
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 600_000,
      questions: [
        {
          questionId: "db",
          header: "Database",
          question: "Which database?",
          options: [{ label: "Postgres" }, { label: "SQLite" }],
          isOther: true,
        },
      ],
    });

  it("two tabs on two instances answering at once: exactly one question.resolve; the other gets ALREADY_RESOLVED", async () => {
    const chatId = newChat();
    const onA = await openOn(a, chatId);
    const onB = await openOn(b, null);
    const { id } = fakeQuestion(chatId);
    await onA.waitForShow((ask) => ask.id === id);
    await expect.poll(() => b.broker.getPending(id)?.status).toBe("pending");
    fake.setLatency(300, "question.resolve");
    let acks: AnswerAck[];
    try {
      acks = await Promise.all([
        onA.send("ask:answer", { askId: id, answer: { type: "text", text: "Postgres" } }),
        onB.send("ask:answer", { askId: id, answer: { type: "text", text: "SQLite" } }),
      ]);
    } finally {
      fake.setLatency(0, "question.resolve");
    }
    expect(acks.filter((ack) => ack.ok)).toHaveLength(1);
    expect(acks.filter((ack) => !ack.ok)).toEqual([
      { ok: false, error: { code: "ALREADY_RESOLVED", message: expect.any(String) } },
    ]);
    expect(resolveCalls(id)).toHaveLength(1);
    await onA.waitForClose(id);
    for (const server of [a, b])
      await expect.poll(() => server.broker.getPending(id), { timeout: 10_000 }).toBeUndefined();
  });
});

describe("Redis restarting mid-run", () => {
  let fake: FakeGateway;
  let own: TestRedis;
  let server: TestServer;

  beforeAll(async () => {
    fake = await startFakeGateway({ agents: [TEST_AGENT] });
    own = await startRedis();
    server = await instance(fake.url, fake.token, "restart:", own.url);
  });
  afterAll(async () => {
    await server?.dispose();
    await own?.stop();
    await fake?.stop();
  });

  async function healthz(token?: string): Promise<Record<string, unknown>> {
    const response = await fetch(
      `${server.url}/healthz`,
      token ? { headers: { authorization: `Bearer ${token}` } } : {},
    );
    return (await response.json()) as Record<string, unknown>;
  }

  it("the instance reports degraded, refuses answers with a clear error and loses nothing, then recovers by itself", async () => {
    const chatId = newChat();
    const viewer = await openOn(server, chatId);
    const record = fake.createQuestion({
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 600_000,
      questions: [
        {
          questionId: "db",
          header: "Database",
          question: "Which database?",
          options: [{ label: "Postgres" }, { label: "SQLite" }],
          isOther: true,
        },
      ],
    });
    await viewer.waitForShow((ask) => ask.id === record.id);
    const token = await server.token();
    expect(await healthz(token)).toMatchObject({ status: "ok", redis: { connected: true } });

    await own.kill();
    await viewer.waitFor(
      () => viewer.statuses.find((status) => status.degraded === REDIS_DOWN),
      "gateway:status degraded",
    );
    expect(await healthz()).toEqual({ status: "degraded" });
    const refused = await viewer.send("ask:answer", {
      askId: record.id,
      answer: { type: "text", text: "SQLite" },
    });
    expect(refused).toMatchObject({
      ok: false,
      error: {
        code: "UNAVAILABLE",
        message: expect.stringMatching(/Redis.*unreachable.*answer again/s),
      },
    });
    expect(fake.requests.filter((r) => r.method === "question.resolve")).toEqual([]);

    await own.restart();
    await expect.poll(async () => (await healthz()).status, { timeout: 20_000 }).toBe("ok");
    expect(viewer.statuses.at(-1)).not.toHaveProperty("degraded");
    // Nothing was lost: the ask is still pending in Redis (AOF) and the same card takes the answer now.
    expect((await server.store.get(record.id))?.status).toBe("pending");
    expect(
      await viewer.send("ask:answer", {
        askId: record.id,
        answer: { type: "text", text: "SQLite" },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(fake.requests.filter((r) => r.method === "question.resolve")).toHaveLength(1);
    // The ack comes once the Gateway took the answer; the end is stored before the card closes.
    expect(await viewer.waitForClose(record.id)).toMatchObject({ reason: "answered" });
    expect((await server.store.get(record.id))?.status).toBe("answered");
  }, 60_000);
});
