// The routing rules (docs/ARCHITECTURE.md#routing), "Who sees an ask, and when it ends", where it faces the Gateway and the sockets: each row's
// Gateway methods and events end to end (one describe per row, named after it), the rules under the
// table (two tabs answering at once, tombstones; several instances: instances.test.ts), §9 chat ownership over the wire and
// §10 restart reconciliation. The rules themselves, every case and every expiry, are checked on the
// broker with an injected clock (server/broker/broker-*.test.ts). The real OpenClaw Gateway carries the
// contract; the in-repo fake Gateway is used where a test must count what reaches the Gateway or
// script a replay.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import type { AskClose } from "../../lib/protocol.ts";
import { type FakeGateway, FakeGatewayError } from "../support/fake-gateway.ts";
import type { OperatorConnection, Payload } from "../support/gateway-client.ts";
import {
  DB_QUESTION,
  newChat,
  requestApproval,
  requestQuestion,
  sessionKeyOf as chatKey,
  startOnFakeGateway,
  startOnGateway,
  stopOnFakeGateway,
  stopOnGateway,
  TEST_AGENT,
  useTabs,
  waitAnswer,
} from "../support/on-gateway.ts";
import { type Tab, TEST_OWNER, type TestServer, waitConnected } from "../support/tabs.ts";

let requester: OperatorConnection;
let elsewhere: OperatorConnection;
let server: TestServer;
/** Per tab, every ask:show / ask:close in arrival order, to tell who holds a card at any moment. */
const timelines = new Map<Tab, { event: string; askId: string; reason?: string }[]>();

const { tab, openOn } = useTabs({
  server: () => server,
  onOpen(opened) {
    const timeline: { event: string; askId: string; reason?: string }[] = [];
    timelines.set(opened, timeline);
    opened.socket.on("ask:show", (ask: Ask) => timeline.push({ event: "show", askId: ask.id }));
    opened.socket.on("ask:close", (close: AskClose) =>
      timeline.push({ event: "close", askId: close.askId, reason: close.reason }),
    );
  },
});

/** Does this tab hold the card now (its last show/close for the ask was a show)? */
function holds(opened: Tab, askId: string): boolean {
  const last = (timelines.get(opened) ?? []).filter((entry) => entry.askId === askId).at(-1);
  return last?.event === "show";
}
const showsOf = (opened: Tab, askId: string) =>
  opened.shown.filter((ask) => ask.id === askId).length;
const closesOf = (opened: Tab, askId: string) =>
  opened.closed.filter((close) => close.askId === askId);

const askQuestion = (sessionKey: string, timeoutMs?: number) =>
  requestQuestion(requester, sessionKey, { timeoutMs });

const requestPlugin = (sessionKey: string, timeoutMs = 120_000) =>
  requestApproval(requester, elsewhere, "plugin", {
    pluginId: "deploy-kit",
    title: "Deploy",
    description: "Deploys the build",
    toolName: "deploy",
    sessionKey,
    timeoutMs,
  });

beforeAll(async () => {
  ({ requester, elsewhere, server } = await startOnGateway({ elsewhere: true }));
});

afterAll(() => stopOnGateway({ server, requester, elsewhere }));

// ---------------------------------------------------------------------------------------------
// The §6 table, row by row (question / secret request / approval column; the secret request cells
// that need a live run are in secrets.test.ts, the approval-only rows in approvals.test.ts).
// ---------------------------------------------------------------------------------------------

describe("§6 arrives, a tab views the chat", () => {
  it("question: shown on the newest viewing tab only", async () => {
    const chatId = newChat();
    const older = await tab(chatId);
    const newer = await tab(chatId);
    const otherChat = await tab(newChat());
    const dashboard = await tab(null);
    const { id } = await askQuestion(chatKey(chatId));
    const shown = await newer.waitForShow((a) => a.id === id);
    expect(shown).toMatchObject({ id, kind: "question", chatId, status: "pending" });
    // A later question on the same chat proves the first one's routing is complete.
    const second = await askQuestion(chatKey(chatId));
    await newer.waitForShow((a) => a.id === second.id);
    for (const other of [older, otherChat, dashboard]) expect(other.shown).toEqual([]);
    expect(showsOf(newer, id)).toBe(1);
    expect(await server.broker.shownTo(id)).toBe(newer.socket.id);
  });

  it("approval: shown on the newest viewing tab only", async () => {
    const chatId = newChat();
    const older = await tab(chatId);
    const newer = await tab(chatId);
    const pending = requestPlugin(chatKey(chatId));
    const { id } = await pending.requested;
    await newer.waitForShow((a) => a.id === id);
    const { id: second } = await askQuestion(chatKey(chatId));
    await newer.waitForShow((a) => a.id === second);
    expect(older.shown).toEqual([]);
    expect(showsOf(newer, id)).toBe(1);
    await newer.send("ask:answer", { askId: id, answer: { type: "decision", decision: "deny" } });
    expect(await pending.decision).toMatchObject({ decision: "deny" });
  });
});

describe("§6 arrives, no tab views the chat", () => {
  it("question: stays pending and is shown as soon as a tab opens the chat", async () => {
    const chatId = newChat();
    const { id } = await askQuestion(chatKey(chatId));
    await expect
      .poll(() => server.broker.getPending(id)?.status, { timeout: 30_000 })
      .toBe("pending");
    const late = await tab(chatId);
    expect(await late.waitForShow((a) => a.id === id)).toMatchObject({ id, status: "pending" });
    const record = await requester.request<Payload>("question.get", { id });
    expect(JSON.stringify(record)).toContain('"pending"');
  });

  it("approval: stays pending and is shown as soon as a tab opens the chat", async () => {
    const chatId = newChat();
    const pending = requestPlugin(chatKey(chatId));
    const { id } = await pending.requested;
    await expect
      .poll(() => server.broker.getPending(id)?.status, { timeout: 30_000 })
      .toBe("pending");
    const late = await tab(chatId);
    await late.waitForShow((a) => a.id === id);
    await late.send("ask:answer", {
      askId: id,
      answer: { type: "decision", decision: "allow-once" },
    });
    expect(await pending.decision).toMatchObject({ decision: "allow-once" });
  });
});

describe("§2 one live widget per chat: the latest reply's", () => {
  const widgetOf = async (chatId: string, reply: { msg: string; mts: number } | null) => {
    const opened = await server.widget(TEST_OWNER, chatId, reply);
    widgets.push(opened);
    return opened;
  };
  const widgets: Tab[] = [];
  afterEach(() => {
    for (const opened of widgets.splice(0)) opened.close();
  });

  it("a newer reply's widget takes the card and supersedes the older one; the older one viewing again, or a first-filter widget, never takes it", async () => {
    const chatId = newChat();
    const older = await widgetOf(chatId, { msg: "a1", mts: 1_000 });
    expect(await older.send("chat:view", { chatId })).toEqual({ ok: true });
    const { id } = await askQuestion(chatKey(chatId));
    await older.waitForShow((a) => a.id === id);
    const newer = await widgetOf(chatId, { msg: "a2", mts: 2_000 });
    expect(await newer.send("chat:view", { chatId })).toEqual({ ok: true });
    await newer.waitForShow((a) => a.id === id);
    expect(newer.shown.find((a) => a.id === id)?.replyId).toBe("a2");
    await older.waitFor(() => older.superseded[0], "widget:superseded");
    expect(older.superseded).toEqual([{ chatId }]);
    // It knows: no handed-off for the card it had.
    expect(older.closed).toEqual([]);

    expect(await older.send("chat:view", { chatId })).toEqual({ ok: true });
    const firstFilter = await widgetOf(chatId, null);
    expect(await firstFilter.send("chat:view", { chatId })).toEqual({ ok: true });
    expect(firstFilter.superseded).toEqual([{ chatId }]);
    expect(older.superseded).toHaveLength(2);
    // A marker ask shows on the live widget only: had anything moved, it would have come first.
    const { id: marker } = await askQuestion(chatKey(chatId));
    await newer.waitForShow((a) => a.id === marker);
    expect(older.shown.map((a) => a.id)).toEqual([id]);
    expect(firstFilter.shown).toEqual([]);
    expect(newer.closed).toEqual([]);
  });
});

describe("§6 newer tab opens the chat (reload, phone)", () => {
  it("moves there once; the old tab gets ask:close handed-off once", async () => {
    const chatId = newChat();
    const older = await tab(chatId);
    const { id } = await askQuestion(chatKey(chatId));
    await older.waitForShow((a) => a.id === id);
    const phone = await tab(chatId);
    await phone.waitForShow((a) => a.id === id);
    expect(await older.waitForClose(id)).toEqual({ askId: id, reason: "handed-off" });
    // Viewing the same chat again changes nothing: no second show, no second close.
    expect(await phone.send("chat:view", { chatId })).toEqual({ ok: true });
    const { id: marker } = await askQuestion(chatKey(chatId));
    await phone.waitForShow((a) => a.id === marker);
    expect(showsOf(phone, id)).toBe(1);
    expect(closesOf(older, id)).toHaveLength(1);
    expect([older, phone].filter((t) => holds(t, id))).toEqual([phone]);
  });

  it("a reload (the old socket goes, a new one views the chat) moves it to the reloaded tab", async () => {
    const chatId = newChat();
    const before = await tab(chatId);
    const { id } = await askQuestion(chatKey(chatId));
    await before.waitForShow((a) => a.id === id);
    before.close();
    const reloaded = await tab(chatId);
    await reloaded.waitForShow((a) => a.id === id);
    await expect
      .poll(() => server.broker.shownTo(id), { timeout: 10_000 })
      .toBe(reloaded.socket.id);
    const waiting = waitAnswer(requester, id);
    expect(
      await reloaded.send("ask:answer", {
        askId: id,
        answer: { type: "questions", answers: { db: ["SQLite"] } },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await waiting).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["SQLite"] } },
    });
  });
});

describe("§6 the tab switches to another chat or closes", () => {
  it("switching chats does not cancel it, sends no ask:close, and it is shown again when a tab views the chat", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { id } = await askQuestion(chatKey(chatId));
    await viewer.waitForShow((a) => a.id === id);
    const elsewhereChat = newChat();
    expect(await viewer.send("chat:view", { chatId: elsewhereChat })).toEqual({ ok: true });
    const { id: marker } = await askQuestion(chatKey(elsewhereChat));
    await viewer.waitForShow((a) => a.id === marker);
    expect(closesOf(viewer, id)).toEqual([]);
    expect(server.broker.getPending(id)?.status).toBe("pending");
    expect(await server.broker.shownTo(id)).toBeNull();
    expect(JSON.stringify(await requester.request("question.get", { id }))).toContain('"pending"');
    // Back to the chat: shown again.
    expect(await viewer.send("chat:view", { chatId })).toEqual({ ok: true });
    await viewer.waitFor(
      () => (showsOf(viewer, id) === 2 ? true : undefined),
      "the card shown again",
    );
  });

  it("closing the last tab does not cancel it; it comes back when a tab views the chat again", async () => {
    const chatId = newChat();
    const only = await tab(chatId);
    const pending = requestPlugin(chatKey(chatId));
    const { id } = await pending.requested;
    await only.waitForShow((a) => a.id === id);
    only.close();
    await expect.poll(() => server.broker.shownTo(id), { timeout: 10_000 }).toBeNull();
    expect(server.broker.getPending(id)?.status).toBe("pending");
    const again = await tab(chatId);
    await again.waitForShow((a) => a.id === id);
    await again.send("ask:answer", { askId: id, answer: { type: "decision", decision: "deny" } });
    expect(await pending.decision).toMatchObject({ decision: "deny" });
  });
});

describe("§6 timeout", () => {
  it("question: ends at the Gateway's expiresAt (2 s there) and the card closes with expired", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { id, expiresAtMs } = await askQuestion(chatKey(chatId), 2_000);
    const shown = await viewer.waitForShow((a) => a.id === id);
    expect(shown.expiresAt).toBe(expiresAtMs);
    expect(await viewer.waitForClose(id)).toMatchObject({ askId: id, reason: "expired" });
    expect((await server.store.get(id))?.status).toBe("expired");
    expect(
      await viewer.send("ask:answer", { askId: id, answer: { type: "text", text: "SQLite" } }),
    ).toMatchObject({ ok: false, error: { code: "EXPIRED" } });
  });

  it("question: the server keeps no timer of its own beyond the Gateway's (a 900 s default question has its Gateway expiresAt)", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const created = await requester.request<{ id: string; expiresAtMs: number }>(
      "question.request",
      { questions: [DB_QUESTION], sessionKey: chatKey(chatId) },
    );
    const shown = await viewer.waitForShow((a) => a.id === created.id);
    expect(shown.expiresAt).toBe(created.expiresAtMs);
    await requester.request("question.resolve", { id: created.id, cancel: true });
  });
});

describe("§6 Cancel", () => {
  it("question: cancel:true, the agent hears cancelled, the card closes with cancelled", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { id } = await askQuestion(chatKey(chatId));
    await viewer.waitForShow((a) => a.id === id);
    const waiting = waitAnswer(requester, id);
    expect(await viewer.send("ask:answer", { askId: id, answer: { type: "cancel" } })).toEqual({
      ok: true,
      status: "cancelled",
    });
    expect(await waiting).toMatchObject({ status: "cancelled" });
    expect(await viewer.waitForClose(id)).toMatchObject({ reason: "cancelled" });
  });
});

describe("§6 answered elsewhere (Control UI, /approve, another instance)", () => {
  it("question answered by another client: closes with answered-elsewhere", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { id } = await askQuestion(chatKey(chatId));
    await viewer.waitForShow((a) => a.id === id);
    await elsewhere.request("question.resolve", { id, answers: { answers: { db: ["Postgres"] } } });
    expect(await viewer.waitForClose(id)).toMatchObject({
      askId: id,
      reason: "answered-elsewhere",
    });
  });

  it("question cancelled by another client: closes with answered-elsewhere", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { id } = await askQuestion(chatKey(chatId));
    await viewer.waitForShow((a) => a.id === id);
    await elsewhere.request("question.resolve", { id, cancel: true });
    expect(await viewer.waitForClose(id)).toMatchObject({
      askId: id,
      reason: "answered-elsewhere",
    });
    expect((await server.store.get(id))?.status).toBe("cancelled");
  });
});

describe("§6 session is a sub-agent", () => {
  it("question: not asked in chat tabs, only on the dashboard", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const dashboard = await tab(null);
    expect(await dashboard.send("asks:watch", {})).toEqual({ ok: true });
    // OpenClaw names sub-agent sessions `agent:<id>:subagent:<uuid>`.
    const { id } = await askQuestion(`agent:${TEST_AGENT}:subagent:${randomUUID()}`);
    await dashboard.waitFor(() => dashboard.changed.find((a) => a.id === id), "ask:changed");
    const { id: marker } = await askQuestion(chatKey(chatId));
    await viewer.waitForShow((a) => a.id === marker);
    expect(viewer.shown.map((a) => a.id)).not.toContain(id);
    expect((await dashboard.list()).find((a) => a.id === id)).toMatchObject({
      chatId: null,
      status: "pending",
    });
    await requester.request("question.resolve", { id, cancel: true });
  });
});

describe("§5 question answers", () => {
  it("a question with no options (free text, no isOther) takes a typed answer, as the Gateway does", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { id } = await requestQuestion(requester, chatKey(chatId), {
      questions: [
        {
          questionId: "name",
          header: "Name",
          question: "What should the project be called?",
          options: [],
        },
      ],
    });
    const shown = await viewer.waitForShow((a) => a.id === id);
    expect(shown.kind === "question" && shown.questions[0]).toMatchObject({
      id: "name",
      options: [],
    });
    const waiting = waitAnswer(requester, id);
    expect(
      await viewer.send("ask:answer", { askId: id, answer: { type: "text", text: "Apollo" } }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await waiting).toMatchObject({
      status: "answered",
      answers: { answers: { name: ["Apollo"] } },
    });
  });

  it("a question without isOther takes only its options: a typed answer is refused here (INVALID) before the Gateway would refuse it", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const { id } = await requestQuestion(requester, chatKey(chatId), {
      questions: [{ ...DB_QUESTION, isOther: undefined }],
    });
    const shown = await viewer.waitForShow((a) => a.id === id);
    expect(shown.kind === "question" && shown.questions[0]?.allowOther).toBe(false);
    expect(
      await viewer.send("ask:answer", { askId: id, answer: { type: "text", text: "DuckDB" } }),
    ).toMatchObject({ ok: false, error: { code: "INVALID" } });
    expect(server.broker.getPending(id)?.status).toBe("pending");
    const waiting = waitAnswer(requester, id);
    expect(
      await viewer.send("ask:answer", { askId: id, answer: { type: "text", text: "sqlite" } }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await waiting).toMatchObject({ answers: { answers: { db: ["SQLite"] } } });
  });
});

describe("§6 two tabs answering at once", () => {
  it("real Gateway: exactly one answer wins, the other gets ALREADY_RESOLVED, the agent gets the winner's answer", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const dashboard = await tab(null);
    const { id } = await askQuestion(chatKey(chatId));
    await viewer.waitForShow((a) => a.id === id);
    const waiting = waitAnswer(requester, id);
    const acks = await Promise.all([
      viewer.send("ask:answer", {
        askId: id,
        answer: { type: "questions", answers: { db: ["Postgres"] } },
      }),
      dashboard.send("ask:answer", {
        askId: id,
        answer: { type: "questions", answers: { db: ["SQLite"] } },
      }),
    ]);
    const winners = acks.filter((ack) => ack.ok);
    const losers = acks.filter((ack) => !ack.ok);
    expect(winners).toHaveLength(1);
    expect(losers).toEqual([
      { ok: false, error: { code: "ALREADY_RESOLVED", message: expect.any(String) } },
    ]);
    const winner = acks[0].ok ? "Postgres" : "SQLite";
    expect(await waiting).toMatchObject({
      status: "answered",
      answers: { answers: { db: [winner] } },
    });
  });
});

// ---------------------------------------------------------------------------------------------
// With the fake Gateway: count what reaches the Gateway; replays; restarts.
// ---------------------------------------------------------------------------------------------

describe("with the fake Gateway", () => {
  let fake: FakeGateway;
  let primary: TestServer;
  const extra: TestServer[] = [];

  const resolveCalls = (method: string, id: string) =>
    fake.requests.filter((r) => r.method === method && (r.params as { id?: string }).id === id);
  const fakeQuestion = (chatId: string, timeoutMs = 600_000) =>
    fake.createQuestion({
      sessionKey: chatKey(chatId),
      timeoutMs,
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

  beforeAll(async () => {
    ({ fake, server: primary } = await startOnFakeGateway({
      fake: { agents: [TEST_AGENT, "other"] },
    }));
  });

  afterAll(async () => {
    for (const s of extra) await s.stop();
    await stopOnFakeGateway({ fake, server: primary });
  });

  describe("§6 two tabs answering at once", () => {
    it("approval, same decision from both: exactly one plugin.approval.resolve reaches the Gateway (which would accept both)", async () => {
      const chatId = newChat();
      const a = await openOn(primary, chatId);
      const b = await openOn(primary, null);
      const { id } = fake.createPluginApproval({
        sessionKey: chatKey(chatId),
        title: "Deploy",
        description: "Deploys",
        timeoutMs: 600_000,
      });
      await a.waitForShow((x) => x.id === id);
      fake.setLatency(300, "plugin.approval.resolve");
      try {
        const answer = {
          askId: id,
          answer: { type: "decision" as const, decision: "allow-once" as const },
        };
        const acks = await Promise.all([
          a.send("ask:answer", answer),
          b.send("ask:answer", answer),
        ]);
        expect(acks.filter((ack) => ack.ok)).toHaveLength(1);
        expect(acks.filter((ack) => !ack.ok)).toEqual([
          { ok: false, error: { code: "ALREADY_RESOLVED", message: expect.any(String) } },
        ]);
      } finally {
        fake.setLatency(0, "plugin.approval.resolve");
      }
      expect(resolveCalls("plugin.approval.resolve", id)).toHaveLength(1);
    });
  });

  describe("§6 terminal states are tombstones", () => {
    it("a late question.requested replay of an answered ask does not revive it", async () => {
      const chatId = newChat();
      const viewer = await openOn(primary, chatId);
      const record = fakeQuestion(chatId);
      await viewer.waitForShow((x) => x.id === record.id);
      expect(
        await viewer.send("ask:answer", {
          askId: record.id,
          answer: { type: "text", text: "SQLite" },
        }),
      ).toMatchObject({ ok: true });
      await viewer.waitForClose(record.id);
      fake.emitRaw("question.requested", { ...record, status: "pending" });
      const marker = fakeQuestion(chatId);
      await viewer.waitForShow((x) => x.id === marker.id);
      expect(showsOf(viewer, record.id)).toBe(1);
      expect(primary.broker.getPending(record.id)).toBeUndefined();
      expect((await primary.store.get(record.id))?.status).toBe("answered");
      expect(
        await viewer.send("ask:answer", {
          askId: record.id,
          answer: { type: "text", text: "Postgres" },
        }),
      ).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
    });

    it("a late plugin.approval.requested replay of an expired approval does not revive it", async () => {
      const chatId = newChat();
      const viewer = await openOn(primary, chatId);
      const approval = fake.createPluginApproval({
        sessionKey: chatKey(chatId),
        title: "Deploy",
        description: "Deploys",
        timeoutMs: 600_000,
      });
      await viewer.waitForShow((x) => x.id === approval.id);
      fake.expire(approval.id);
      expect(await viewer.waitForClose(approval.id)).toMatchObject({ reason: "expired" });
      fake.emitRaw("plugin.approval.requested", approval);
      const marker = fakeQuestion(chatId);
      await viewer.waitForShow((x) => x.id === marker.id);
      expect(showsOf(viewer, approval.id)).toBe(1);
      expect((await primary.store.get(approval.id))?.status).toBe("expired");
    });

    it("a reconnect whose backfill still lists a terminal ask does not revive it", async () => {
      const chatId = newChat();
      const viewer = await openOn(primary, chatId);
      const record = fakeQuestion(chatId);
      await viewer.waitForShow((x) => x.id === record.id);
      expect(
        await viewer.send("ask:answer", { askId: record.id, answer: { type: "cancel" } }),
      ).toMatchObject({ ok: true, status: "cancelled" });
      const marker = fakeQuestion(chatId);
      await viewer.waitForShow((x) => x.id === marker.id);
      // A stale Gateway view: the old record listed as pending again, next to a live one.
      fake.setHandler("question.list", () => ({
        questions: [
          { ...record, status: "pending" },
          ...fake.questions.filter((q) => q.status === "pending"),
        ],
      }));
      try {
        const hellos = fake.helloCount;
        const lists = fake.requests.filter((r) => r.method === "exec.approval.list").length;
        fake.dropConnections();
        await expect.poll(() => fake.helloCount, { timeout: 30_000 }).toBeGreaterThan(hellos);
        await waitConnected(primary);
        // The backfill after the reconnect has run.
        await expect
          .poll(() => fake.requests.filter((r) => r.method === "exec.approval.list").length, {
            timeout: 10_000,
          })
          .toBeGreaterThan(lists);
        const after = fakeQuestion(chatId);
        await viewer.waitForShow((x) => x.id === after.id);
      } finally {
        fake.setHandler("question.list", null);
      }
      expect(showsOf(viewer, record.id)).toBe(1);
      expect(primary.broker.getPending(record.id)).toBeUndefined();
      expect((await primary.store.get(record.id))?.status).toBe("cancelled");
    });

    it("a restart does not revive a terminal ask, even if the Gateway still lists it", async () => {
      const chatId = newChat();
      const record = fakeQuestion(chatId);
      await expect
        .poll(() => primary.broker.getPending(record.id)?.status, { timeout: 10_000 })
        .toBe("pending");
      fake.resolveQuestion(record.id, { answers: { answers: { db: ["SQLite"] } } });
      await expect
        .poll(async () => (await primary.store.get(record.id))?.status, { timeout: 10_000 })
        .toBe("answered");
      fake.setHandler("question.list", () => ({ questions: [{ ...record, status: "pending" }] }));
      try {
        primary = await primary.restart();
        await waitConnected(primary);
        const viewer = await openOn(primary, chatId);
        const marker = fakeQuestion(chatId);
        await viewer.waitForShow((x) => x.id === marker.id);
        expect(viewer.shown.map((a) => a.id)).not.toContain(record.id);
        expect((await primary.store.get(record.id))?.status).toBe("answered");
      } finally {
        fake.setHandler("question.list", null);
      }
    });
  });

  describe("§10 server restart", () => {
    it("pending asks come back from the store and are reconciled with the Gateway's lists", async () => {
      const chatId = newChat();
      const stays = fakeQuestion(chatId);
      const answeredMeanwhile = fakeQuestion(chatId);
      const forgotten = fakeQuestion(chatId);
      const approvalStays = fake.createPluginApproval({
        sessionKey: chatKey(chatId),
        title: "Deploy",
        description: "Deploys",
        timeoutMs: 600_000,
      });
      const approvalGone = fake.createExecApproval({
        sessionKey: chatKey(chatId),
        command: "make release",
        timeoutMs: 600_000,
      });
      for (const id of [
        stays.id,
        answeredMeanwhile.id,
        forgotten.id,
        approvalStays.id,
        approvalGone.id,
      ]) {
        await expect
          .poll(() => primary.broker.getPending(id)?.status, { timeout: 10_000 })
          .toBe("pending");
      }
      await primary.stop();
      fake.resolveQuestion(answeredMeanwhile.id, { answers: { answers: { db: ["Postgres"] } } });
      fake.resolveApproval(approvalGone.id, "deny", "control-ui");
      // The Gateway lost `forgotten` (it keeps questions in memory only).
      fake.setHandler("question.list", () => ({
        questions: fake.questions.filter((q) => q.status === "pending" && q.id !== forgotten.id),
      }));
      fake.setHandler("question.get", (params) => {
        const id = (params as { id: string }).id;
        if (id === forgotten.id)
          throw new FakeGatewayError({
            code: "INVALID_REQUEST",
            message: `question '${id}' was not found`,
            details: { reason: "QUESTION_NOT_FOUND" },
          });
        return { question: fake.questions.find((q) => q.id === id) };
      });
      try {
        primary = await primary.restart();
        await waitConnected(primary);
        const viewer = await openOn(primary, chatId);
        await viewer.waitForShow((x) => x.id === stays.id);
        await viewer.waitForShow((x) => x.id === approvalStays.id);
        await expect
          .poll(async () => (await primary.store.get(answeredMeanwhile.id))?.status, {
            timeout: 10_000,
          })
          .toBe("answered");
        await expect
          .poll(async () => (await primary.store.get(forgotten.id))?.status, { timeout: 10_000 })
          .toBe("expired");
        await expect
          .poll(async () => (await primary.store.get(approvalGone.id))?.status, { timeout: 10_000 })
          .not.toBe("pending");
        expect((await primary.store.get(answeredMeanwhile.id))?.resolution?.summary).toBe(
          "Postgres",
        );
        const shownIds = viewer.shown.map((a) => a.id);
        for (const id of [answeredMeanwhile.id, forgotten.id, approvalGone.id])
          expect(shownIds).not.toContain(id);
        // The restored ask is live: its answer reaches the Gateway.
        expect(
          await viewer.send("ask:answer", {
            askId: stays.id,
            answer: { type: "text", text: "SQLite" },
          }),
        ).toEqual({ ok: true, status: "answered" });
        expect(fake.questions.find((q) => q.id === stays.id)).toMatchObject({
          status: "answered",
          answers: { answers: { db: ["SQLite"] } },
        });
        // Its timer came back with it, and nothing else's did.
        expect(primary.broker.activeTimers).toBe(primary.broker.pendingAsks.length);
      } finally {
        fake.setHandler("question.list", null);
        fake.setHandler("question.get", null);
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------
// §9 chat ownership
// ---------------------------------------------------------------------------------------------

describe("§9 chat ownership", () => {
  it("a non-owner's tab never receives another user's asks, cannot view their chat, list them, watch them or answer them", async () => {
    const aliceChat = newChat();
    const bobChat = newChat();
    const alice = await tab(aliceChat, "alice");
    const bob = await tab(bobChat, "bob");
    expect(await bob.send("chat:view", { chatId: aliceChat })).toMatchObject({
      ok: false,
      error: { code: "FORBIDDEN" },
    });
    const { id: aliceAsk } = await askQuestion(chatKey(aliceChat));
    const { id: bobAsk } = await askQuestion(chatKey(bobChat));
    await alice.waitForShow((a) => a.id === aliceAsk);
    await bob.waitForShow((a) => a.id === bobAsk);
    expect(bob.shown.map((a) => a.id)).not.toContain(aliceAsk);
    expect(alice.shown.map((a) => a.id)).not.toContain(bobAsk);

    const listed = await bob.list();
    expect(listed.map((a) => a.id)).toContain(bobAsk);
    expect(listed.every((a) => a.chatId === bobChat)).toBe(true);
    expect((await bob.list("all")).every((a) => a.chatId === bobChat)).toBe(true);
    expect(await bob.send("asks:watch", {})).toMatchObject({
      ok: false,
      error: { code: "FORBIDDEN" },
    });
    // Answered as if there were no such ask: a refusal would tell bob the id exists.
    expect(
      await bob.send("ask:answer", { askId: aliceAsk, answer: { type: "cancel" } }),
    ).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
    expect(server.broker.getPending(aliceAsk)?.status).toBe("pending");
    expect(bob.changed).toEqual([]);
  });

  it("a chat whose owner is not known yet is shown to owners only", async () => {
    const chatId = newChat();
    const bob = await tab(newChat(), "bob");
    const { id } = await askQuestion(chatKey(chatId));
    await expect
      .poll(() => server.broker.getPending(id)?.status, { timeout: 10_000 })
      .toBe("pending");
    expect((await bob.list()).map((a) => a.id)).not.toContain(id);
    const owner = await tab(null);
    expect((await owner.list()).map((a) => a.id)).toContain(id);
  });

  it("owners see everything on asks:list and asks:watch", async () => {
    const aliceChat = newChat();
    const alice = await tab(aliceChat, "alice");
    const owner = await tab(null);
    expect(await owner.send("asks:watch", {})).toEqual({ ok: true });
    const { id: aliceAsk } = await askQuestion(chatKey(aliceChat));
    const { id: nobodysAsk } = await askQuestion(chatKey(newChat()));
    await alice.waitForShow((a) => a.id === aliceAsk);
    await owner.waitFor(
      () => owner.changed.find((a) => a.id === nobodysAsk),
      "ask:changed for an unviewed chat",
    );
    expect(owner.changed.find((a) => a.id === aliceAsk)).toBeDefined();
    const listed = (await owner.list()).map((a) => a.id);
    expect(listed).toEqual(expect.arrayContaining([aliceAsk, nobodysAsk]));
    // Answered: the feed says so, and the history lists it.
    await alice.send("ask:answer", { askId: aliceAsk, answer: { type: "text", text: "SQLite" } });
    await owner.waitFor(
      () => owner.changed.find((a) => a.id === aliceAsk && a.status === "answered"),
      "ask:changed answered",
    );
    const answered = (await owner.list("answered")).find((a) => a.id === aliceAsk);
    expect(answered).toMatchObject({
      status: "answered",
      resolution: { by: "alice", summary: "SQLite" },
    });
  });

  it("an embed token's chat claim limits the socket to that chat: view, list, watch and answer", async () => {
    const claimed = newChat();
    const other = newChat();
    // The owner's own widget in one chat (owners may otherwise see everything).
    const widget = await tab(null, "owner", claimed);
    expect(await widget.send("chat:view", { chatId: other })).toMatchObject({
      ok: false,
      error: { code: "FORBIDDEN" },
    });
    expect(await widget.send("chat:view", { chatId: claimed })).toEqual({ ok: true });
    await widget.send("asks:watch", {});
    const { id: inClaim } = await askQuestion(chatKey(claimed));
    const { id: outside } = await askQuestion(chatKey(other));
    await widget.waitForShow((a) => a.id === inClaim);
    await expect
      .poll(() => server.broker.getPending(outside)?.status, { timeout: 10_000 })
      .toBe("pending");
    const listed = await widget.send("asks:list", {});
    expect
      .soft(listed.ok ? listed.asks.map((a: Ask) => a.id) : [], "asks:list leaks other chats")
      .not.toContain(outside);
    expect
      .soft(
        widget.changed.map((a) => a.id),
        "asks:watch leaks other chats",
      )
      .not.toContain(outside);
    const answer = await widget.send("ask:answer", { askId: outside, answer: { type: "cancel" } });
    expect
      .soft(answer, "an embed socket answered another chat's ask")
      .toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
    expect(server.broker.getPending(outside)?.status).toBe("pending");
  });

  it("a chat's recorded owner never silently changes", async () => {
    const chatId = newChat();
    await tab(chatId, "alice");
    const bob = await openOn(server, null, "bob", chatId);
    expect(await bob.send("chat:view", { chatId })).toMatchObject({
      ok: false,
      error: { code: "FORBIDDEN" },
    });
    const { id } = await askQuestion(chatKey(chatId));
    await expect
      .poll(() => server.broker.getPending(id)?.status, { timeout: 10_000 })
      .toBe("pending");
    expect(bob.shown).toEqual([]);
  });
});
