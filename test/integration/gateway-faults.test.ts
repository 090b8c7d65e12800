// Gateway faults and timers, with the in-repo fake Gateway (docs/ARCHITECTURE.md#the-openclaw-gateway, #how-an-ask-flows, #routing, #house-style; issue 4):
// disconnect mid-ask, reconnect + backfill with question.list / plugin.approval.list /
// exec.approval.list, asks resolved while disconnected, seq gaps, malformed records, the run stopping,
// and server-owned timers (from the Gateway's expiresAtMs, injected clock, none survives an ask's end
// or server shutdown).
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import type { FakeGateway } from "../support/fake-gateway.ts";
import { ManualClock } from "../support/manual-clock.ts";
import {
  newChat,
  sessionKeyOf as chatKey,
  startOnFakeGateway,
  stopOnFakeGateway,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import { type Tab, type TestServer, waitConnected } from "../support/tabs.ts";

const { openOn } = useTabs();

const DB = {
  questionId: "db",
  header: "Database",
  question: "Which database?",
  options: [{ label: "Postgres" }, { label: "SQLite" }],
  isOther: true,
};

/** A tab on `server` viewing a new chat, and the ask `create` makes on that chat, shown there. */
async function shownOnNewChat<T extends { id: string }>(
  server: TestServer,
  create: (chatId: string) => T,
): Promise<{ chatId: string; viewer: Tab; ask: T; shown: Ask }> {
  const chatId = newChat();
  const viewer = await openOn(server, chatId);
  const ask = create(chatId);
  const shown = await viewer.waitForShow((a) => a.id === ask.id);
  return { chatId, viewer, ask, shown };
}

const countRequests = (fake: FakeGateway, method: string) =>
  fake.requests.filter((r) => r.method === method).length;

// Each test gets its own fake Gateway and server (`beforeEach`): none depends on what another left
// (asks, a handler, a stopped or restarted server), so they pass alone and in any order.
describe("Gateway faults (fake Gateway)", () => {
  let fake: FakeGateway;
  let server: TestServer;

  const question = (chatId: string, extra: Record<string, unknown> = {}) =>
    fake.createQuestion({
      sessionKey: chatKey(chatId),
      timeoutMs: 600_000,
      questions: [DB],
      ...extra,
    });
  const plugin = (chatId: string, extra: Record<string, unknown> = {}) =>
    fake.createPluginApproval({
      sessionKey: chatKey(chatId),
      title: "Deploy",
      description: "Deploys the build",
      toolName: "deploy",
      pluginId: "deploy-kit",
      timeoutMs: 600_000,
      ...extra,
    });
  const exec = (chatId: string, extra: Record<string, unknown> = {}) =>
    fake.createExecApproval({
      sessionKey: chatKey(chatId),
      command: "make release",
      timeoutMs: 600_000,
      ...extra,
    });

  /** Cuts the link and keeps it down (connects refused as "gateway starting") until `reconnect`. */
  async function disconnect(viewer?: Tab) {
    fake.rejectConnects("startup");
    fake.dropConnections();
    await expect.poll(() => server.gateway.status.connected, { timeout: 10_000 }).toBe(false);
    if (viewer)
      await viewer.waitFor(
        () => viewer.statuses.find((s) => !s.connected),
        "gateway:status connected:false",
      );
  }

  /** Lets the link back in and waits until the backfill after the reconnect has been answered. */
  async function reconnect() {
    const lists = countRequests(fake, "exec.approval.list");
    fake.rejectConnects(null);
    await waitConnected(server);
    await expect
      .poll(() => countRequests(fake, "exec.approval.list"), { timeout: 30_000 })
      .toBeGreaterThan(lists);
  }

  beforeEach(async () => {
    ({ fake, server } = await startOnFakeGateway({ fake: { agents: [TEST_AGENT, "other"] } }));
  });

  afterEach(() => stopOnFakeGateway({ fake, server }));

  describe("disconnect mid-ask", () => {
    it("the card stays on its tab, tabs hear the status, an answer while down gets GATEWAY_ERROR and changes nothing; after the reconnect the same card is answered", async () => {
      const { viewer, ask: record } = await shownOnNewChat(server, question);
      await disconnect(viewer);
      expect(viewer.closed).toEqual([]);
      const down = await viewer.send("ask:answer", {
        askId: record.id,
        answer: { type: "text", text: "SQLite" },
      });
      expect(down).toMatchObject({ ok: false, error: { code: "GATEWAY_ERROR" } });
      expect(server.broker.getPending(record.id)).toMatchObject({ status: "pending" });
      expect(await server.broker.shownTo(record.id)).toBe(viewer.socket.id);
      await reconnect();
      await viewer.waitFor(
        () => (viewer.statuses.at(-1)?.connected ? true : undefined),
        "gateway:status connected:true",
      );
      // Backfill lists it again: the same card, not a second one.
      expect(viewer.shown.filter((a) => a.id === record.id)).toHaveLength(1);
      expect(viewer.closed).toEqual([]);
      expect(
        await viewer.send("ask:answer", {
          askId: record.id,
          answer: { type: "text", text: "SQLite" },
        }),
      ).toEqual({ ok: true, status: "answered" });
      expect(fake.questions.find((q) => q.id === record.id)).toMatchObject({
        status: "answered",
        answers: { answers: { db: ["SQLite"] } },
      });
    });
  });

  describe("reconnect + backfill", () => {
    it("backfills with question.list, plugin.approval.list and exec.approval.list: asks created while disconnected are shown", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      await disconnect(viewer);
      const before = {
        q: countRequests(fake, "question.list"),
        p: countRequests(fake, "plugin.approval.list"),
        e: countRequests(fake, "exec.approval.list"),
      };
      const q = question(chatId);
      const p = plugin(chatId);
      const e = exec(chatId);
      await reconnect();
      expect(countRequests(fake, "question.list")).toBeGreaterThan(before.q);
      expect(countRequests(fake, "plugin.approval.list")).toBeGreaterThan(before.p);
      for (const id of [q.id, p.id, e.id]) await viewer.waitForShow((a) => a.id === id);
      const byId = new Map(viewer.shown.map((a) => [a.id, a] as const));
      expect(byId.get(q.id)).toMatchObject({ kind: "question", expiresAt: q.expiresAtMs });
      expect(byId.get(p.id)).toMatchObject({
        kind: "approval",
        source: "gateway.plugin-approval",
        expiresAt: p.expiresAtMs,
      });
      expect(byId.get(e.id)).toMatchObject({
        kind: "approval",
        source: "gateway.exec-approval",
        approval: { command: "make release" },
      });
    });

    it("an ask resolved while disconnected closes after the reconnect, with the matching reason", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      const answered = question(chatId);
      const cancelled = question(chatId);
      const expired = question(chatId);
      const approved = plugin(chatId);
      const execExpired = exec(chatId);
      const stays = question(chatId);
      for (const id of [
        answered.id,
        cancelled.id,
        expired.id,
        approved.id,
        execExpired.id,
        stays.id,
      ])
        await viewer.waitForShow((a) => a.id === id);
      await disconnect(viewer);
      fake.resolveQuestion(answered.id, { answers: { answers: { db: ["Postgres"] } } });
      fake.resolveQuestion(cancelled.id, { cancel: true });
      fake.expire(expired.id);
      fake.resolveApproval(approved.id, "allow-once", "control-ui");
      fake.expire(execExpired.id);
      await reconnect();
      expect(await viewer.waitForClose(answered.id)).toEqual({
        askId: answered.id,
        reason: "answered-elsewhere",
        summary: "Postgres",
      });
      expect(await viewer.waitForClose(cancelled.id)).toMatchObject({
        reason: "answered-elsewhere",
      });
      expect(await viewer.waitForClose(expired.id)).toMatchObject({ reason: "expired" });
      expect(["answered-elsewhere", "expired"]).toContain(
        (await viewer.waitForClose(approved.id)).reason,
      );
      expect(["answered-elsewhere", "expired"]).toContain(
        (await viewer.waitForClose(execExpired.id)).reason,
      );
      expect((await server.store.get(answered.id))?.status).toBe("answered");
      expect((await server.store.get(cancelled.id))?.status).toBe("cancelled");
      expect((await server.store.get(expired.id))?.status).toBe("expired");
      expect(server.broker.getPending(stays.id)).toMatchObject({ status: "pending" });
      expect(await server.broker.shownTo(stays.id)).toBe(viewer.socket.id);
      expect(viewer.closed.map((c) => c.askId)).not.toContain(stays.id);
    });
    it("an ask that arrives by event while the backfill's lists are out stays pending and answerable: those lists predate it", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      await disconnect(viewer);
      // The Gateway takes its plugin list when asked but answers only once released, as under load.
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      fake.setHandler("plugin.approval.list", async () => {
        const listed = fake.approvals
          .filter((a) => a.approvalKind === "plugin" && a.status === "pending")
          .map(({ status: _s, decision: _d, resolvedBy: _r, resolvedAtMs: _t, ...entry }) => entry);
        await released;
        return listed;
      });
      try {
        const lists = {
          plugin: countRequests(fake, "plugin.approval.list"),
          exec: countRequests(fake, "exec.approval.list"),
        };
        fake.rejectConnects(null);
        await waitConnected(server);
        // exec.approval.list is answered at once, plugin.approval.list is held: both predate these two.
        await expect
          .poll(
            () =>
              countRequests(fake, "plugin.approval.list") > lists.plugin &&
              countRequests(fake, "exec.approval.list") > lists.exec,
            { timeout: 30_000 },
          )
          .toBe(true);
        const p = plugin(chatId);
        const e = exec(chatId);
        for (const id of [p.id, e.id]) await viewer.waitForShow((a) => a.id === id);
        release();
        // Its event comes after the list answers, so the backfill has been reconciled once it shows.
        const marker = plugin(chatId);
        await viewer.waitForShow((a) => a.id === marker.id);
        for (const id of [p.id, e.id]) {
          expect(server.broker.getPending(id)).toMatchObject({ status: "pending" });
          expect(viewer.closed.map((c) => c.askId)).not.toContain(id);
          expect(
            await viewer.send("ask:answer", {
              askId: id,
              answer: { type: "decision", decision: "allow-once" },
            }),
          ).toMatchObject({ ok: true });
        }
        expect(fake.approvals.find((a) => a.id === p.id)).toMatchObject({
          status: "resolved",
          decision: "allow-once",
        });
        expect(fake.approvals.find((a) => a.id === e.id)).toMatchObject({
          status: "resolved",
          decision: "allow-once",
        });
      } finally {
        release();
        fake.setHandler("plugin.approval.list", null);
      }
    });
  });

  describe("event seq gap", () => {
    /** Drops the event of one question on `chatId` and lets the next one through: `viewer` must get both (the lost one by a resync). */
    async function loseOneEvent(viewer: Tab, chatId: string) {
      fake.pauseEvents("drop");
      const lost = question(chatId);
      fake.resumeEvents();
      const next = question(chatId);
      await viewer.waitForShow((a) => a.id === next.id);
      await viewer.waitFor(
        () => viewer.shown.find((a) => a.id === lost.id),
        "the lost ask, after the resync",
        10_000,
      );
    }

    it("a slow consumer's lost event (a seq gap) triggers a resync that shows the lost ask", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      // An event on this connection first, so the client knows where the sequence stands.
      const warmUp = question(chatId);
      await viewer.waitForShow((a) => a.id === warmUp.id);
      const lists = countRequests(fake, "question.list");
      const logged = server.logs.length;
      // The event after the lost one reveals the gap.
      await loseOneEvent(viewer, chatId);
      expect(countRequests(fake, "question.list")).toBeGreaterThan(lists);
      expect(server.logs.slice(logged).some((line) => /gap/i.test(line))).toBe(true);
    });

    it("a gap before the first event after a (re)connect is a gap too: seq starts at 1 on every connection", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      await disconnect(viewer);
      await reconnect();
      // The first event of the new connection is lost, the second arrives with seq 2.
      await loseOneEvent(viewer, chatId);
    });

    it("skipSeq: a gap with nothing lost resyncs and loses nothing", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      const lists = countRequests(fake, "plugin.approval.list");
      const logged = server.logs.length;
      fake.skipSeq(5);
      const after = plugin(chatId);
      await viewer.waitForShow((a) => a.id === after.id);
      await expect
        .poll(() => countRequests(fake, "plugin.approval.list"), { timeout: 10_000 })
        .toBeGreaterThan(lists);
      expect(server.logs.slice(logged).some((line) => /gap/i.test(line))).toBe(true);
      expect(viewer.shown.filter((a) => a.id === after.id)).toHaveLength(1);
    });
  });

  describe("malformed records", () => {
    it("a malformed event is logged and skipped; the next good one is shown", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      const logged = server.logs.length;
      fake.emitRaw("question.requested", {
        id: "bad-question",
        sessionKey: chatKey(chatId),
        questions: "not a list",
        status: "pending",
      });
      fake.emitRaw("plugin.approval.requested", {
        id: "plugin:bad",
        createdAtMs: Date.now(),
        expiresAtMs: Date.now() + 60_000,
        request: { sessionKey: chatKey(chatId) },
      });
      fake.emitRaw("exec.approval.requested", {
        id: "bad-exec",
        createdAtMs: Date.now(),
        expiresAtMs: Date.now() + 60_000,
        request: { sessionKey: chatKey(chatId) },
      });
      fake.emitRaw("question.resolved", { status: "answered" });
      fake.sendRaw("this is not JSON {");
      const good = question(chatId);
      await viewer.waitForShow((a) => a.id === good.id);
      const lines = server.logs.slice(logged);
      for (const event of [
        "question.requested",
        "plugin.approval.requested",
        "exec.approval.requested",
        "question.resolved",
      ]) {
        expect(
          lines.some((line) => line.includes("malformed") && line.includes(event)),
          `a log line for the malformed ${event}`,
        ).toBe(true);
      }
      expect(viewer.shown.map((a) => a.id)).toEqual([good.id]);
      for (const id of ["bad-question", "plugin:bad", "bad-exec"])
        expect(await server.store.get(id)).toBeNull();
      expect(server.gateway.status.connected).toBe(true);
    });

    it("a malformed approval in a backfill list is logged and skipped; the rest of the list is shown", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      await disconnect(viewer);
      const good = plugin(chatId);
      fake.setHandler("plugin.approval.list", () => [
        { id: "plugin:broken", approvalKind: "plugin" },
        ...fake.approvals
          .filter((a) => a.approvalKind === "plugin" && a.status === "pending")
          .map(({ status: _s, decision: _d, resolvedBy: _r, resolvedAtMs: _t, ...entry }) => entry),
      ]);
      const logged = server.logs.length;
      try {
        await reconnect();
        await viewer.waitForShow((a) => a.id === good.id);
      } finally {
        fake.setHandler("plugin.approval.list", null);
      }
      expect(server.logs.slice(logged).some((line) => line.includes("malformed"))).toBe(true);
      expect(await server.store.get("plugin:broken")).toBeNull();
    });

    it("a malformed question in a backfill list is logged and skipped; the rest of the backfill still happens", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      await disconnect(viewer);
      const good = question(chatId);
      const goodApproval = exec(chatId);
      fake.setHandler("question.list", () => ({
        questions: [
          { id: "broken-question", status: "pending", questions: [{ nope: true }] },
          ...fake.questions.filter((q) => q.status === "pending"),
        ],
      }));
      const logged = server.logs.length;
      try {
        await reconnect();
        await viewer.waitFor(
          () => viewer.shown.find((a) => a.id === good.id),
          "the good question from the backfill",
          10_000,
        );
        await viewer.waitFor(
          () => viewer.shown.find((a) => a.id === goodApproval.id),
          "the exec approval from the same backfill",
          10_000,
        );
      } finally {
        fake.setHandler("question.list", null);
      }
      expect(server.logs.slice(logged).some((line) => line.includes("malformed"))).toBe(true);
      expect(await server.store.get("broken-question")).toBeNull();
    });
  });

  describe("the run stopped", () => {
    it.each(["aborted", "error"] as const)(
      "a plugin approval of a run that ended %s closes, and nobody can allow it any more",
      async (state) => {
        const chatId = newChat();
        const viewer = await openOn(server, chatId);
        const runId = randomUUID();
        const approval = plugin(chatId, { runId });
        const unrelated = plugin(chatId, { runId: randomUUID() });
        await viewer.waitForShow((a) => a.id === approval.id);
        await viewer.waitForShow((a) => a.id === unrelated.id);
        fake.emitChat(chatKey(chatId), runId, { state: "status" });
        fake.emitChat(chatKey(chatId), runId, {
          state,
          ...(state === "error" ? { errorMessage: "boom" } : { stopReason: "user" }),
        });
        const close = await viewer.waitForClose(approval.id);
        expect(["answered-elsewhere", "cancelled", "expired"]).toContain(close.reason);
        expect((await server.store.get(approval.id))?.status).not.toBe("pending");
        const late = await viewer.send("ask:answer", {
          askId: approval.id,
          answer: { type: "decision", decision: "allow-once" },
        });
        expect(late.ok).toBe(false);
        expect(server.broker.getPending(unrelated.id)?.status).toBe("pending");
      },
    );

    it("an exec approval of a stopped run closes", async () => {
      const runId = randomUUID();
      const {
        chatId,
        viewer,
        ask: approval,
      } = await shownOnNewChat(server, (chat) => exec(chat, { runId }));
      fake.emitChat(chatKey(chatId), runId, { state: "aborted" });
      await viewer.waitForClose(approval.id);
      expect((await server.store.get(approval.id))?.status).not.toBe("pending");
    });
  });

  describe("Gateway errors", () => {
    it("a refused answer gets GATEWAY_ERROR, leaves the ask pending and answerable", async () => {
      const { viewer, ask: record } = await shownOnNewChat(server, question);
      fake.failNext("question.resolve", { code: "UNAVAILABLE", message: "try later" });
      expect(
        await viewer.send("ask:answer", {
          askId: record.id,
          answer: { type: "text", text: "Postgres" },
        }),
      ).toMatchObject({ ok: false, error: { code: "GATEWAY_ERROR" } });
      expect(server.broker.getPending(record.id)?.status).toBe("pending");
      expect(
        await viewer.send("ask:answer", {
          askId: record.id,
          answer: { type: "text", text: "Postgres" },
        }),
      ).toEqual({ ok: true, status: "answered" });
    });

    it("a secret the Gateway refuses: the error never quotes the value (ack, log, any frame)", async () => {
      const chatId = newChat();
      const viewer = await openOn(server, chatId);
      const frames: unknown[] = [];
      viewer.socket.onAny((event, ...args) => frames.push([event, ...args]));
      const value = `sk-live-${randomUUID()}`;
      const record = fake.createQuestion({
        sessionKey: chatKey(chatId),
        timeoutMs: 600_000,
        questions: [
          {
            questionId: "secret_value",
            header: "API key",
            question: "Provide the secret for DEMO_TOKEN.",
            options: [],
            isSecret: true,
            secretStore: {
              name: "DEMO_TOKEN",
              kind: "secret",
              allowedHosts: ["api.example.com"],
              reason: "deploys",
            },
          },
        ],
      });
      await viewer.waitForShow((a) => a.id === record.id && a.kind === "secret");
      fake.failNext("question.resolve", {
        code: "INVALID_REQUEST",
        message: `value ${value} rejected`,
        details: { reason: "QUESTION_INVALID_ANSWER" },
      });
      const ack = await viewer.send("ask:answer", {
        askId: record.id,
        answer: { type: "secret", value },
      });
      expect(ack).toMatchObject({ ok: false, error: { code: "GATEWAY_ERROR" } });
      expect(JSON.stringify(ack)).not.toContain(value);
      expect(server.logs.join("\n")).not.toContain(value);
      expect(JSON.stringify(frames)).not.toContain(value);
      expect(
        await viewer.send("ask:answer", { askId: record.id, answer: { type: "secret", value } }),
      ).toEqual({ ok: true, status: "answered", outcome: "stored" });
      // The value went to the Gateway only as question.resolve for this question, and nowhere else.
      const carrying = fake.requests.filter((r) =>
        JSON.stringify(r.params ?? null).includes(value),
      );
      expect(carrying.map((r) => r.method)).toEqual(["question.resolve", "question.resolve"]);
      expect(carrying.every((r) => (r.params as { id: string }).id === record.id)).toBe(true);
      expect(JSON.stringify(frames)).not.toContain(value);
      expect(server.logs.join("\n")).not.toContain(value);
    });
  });
});

describe("timers (ManualClock through startTestServer)", () => {
  let clock: ManualClock;
  let fake: FakeGateway;
  let server: TestServer;

  /** The fake stamps createdAtMs/expiresAtMs on the same (frozen) clock; its own timers never fire (600 s real). */
  const question = (chatId: string, timeoutMs = 600_000, sessionKey = chatKey(chatId)) =>
    fake.createQuestion({ sessionKey, timeoutMs, questions: [DB] });
  const plugin = (chatId: string, extra: Record<string, unknown> = {}) =>
    fake.createPluginApproval({
      sessionKey: chatKey(chatId),
      title: "Deploy",
      description: "Deploys",
      timeoutMs: 600_000,
      ...extra,
    });

  /** Timers may only exist for asks still pending, one each, besides the server's hourly retention run, the database's checkpoint and the check of the sockets' links. */
  function expectTimersMatchPending() {
    expect(server.broker.activeTimers).toBe(
      server.broker.pendingAsks.filter((a) => a.expiresAt !== null).length,
    );
    expect(clock.pendingTimers).toBe(server.broker.activeTimers + 3);
  }

  beforeEach(async () => {
    clock = new ManualClock(Date.now());
    ({ fake, server } = await startOnFakeGateway({
      fake: { agents: [TEST_AGENT, "other"], now: () => clock.now() },
      clock,
    }));
  });

  afterEach(() => stopOnFakeGateway({ fake, server }));

  it("expiry is server-owned and runs to the Gateway's expiresAtMs: not a millisecond early", async () => {
    const {
      viewer,
      ask: record,
      shown,
    } = await shownOnNewChat(server, (chat) => question(chat, 900_000));
    expect(shown.expiresAt).toBe(record.expiresAtMs);
    clock.advance(record.expiresAtMs - clock.now() - 1);
    expect(server.broker.getPending(record.id)?.status).toBe("pending");
    clock.advance(1);
    expect(await viewer.waitForClose(record.id)).toMatchObject({
      askId: record.id,
      reason: "expired",
    });
    expect((await server.store.get(record.id))?.status).toBe("expired");
    expectTimersMatchPending();
  });

  it("an approval expires at its expiresAtMs (120 s) with reason expired, and answering it then gets EXPIRED", async () => {
    const { viewer, ask: approval } = await shownOnNewChat(server, (chat) =>
      plugin(chat, { timeoutMs: 120_000 }),
    );
    clock.advance(120_000);
    expect(await viewer.waitForClose(approval.id)).toMatchObject({ reason: "expired" });
    expect(
      await viewer.send("ask:answer", {
        askId: approval.id,
        answer: { type: "decision", decision: "allow-once" },
      }),
    ).toMatchObject({ ok: false, error: { code: "EXPIRED" } });
    expectTimersMatchPending();
  });

  it("the Gateway's own expiry event (deny, resolvedBy null, ts at expiresAtMs) closes an approval as expired, not answered elsewhere", async () => {
    const { viewer, ask: approval } = await shownOnNewChat(server, (chat) =>
      plugin(chat, { timeoutMs: 120_000 }),
    );
    fake.expire(approval.id);
    expect(await viewer.waitForClose(approval.id)).toMatchObject({ reason: "expired" });
    expect((await server.store.get(approval.id))?.status).toBe("expired");
    expectTimersMatchPending();
  });

  it("every way an ask ends clears its timer", async () => {
    const chatId = newChat();
    const viewer = await openOn(server, chatId);
    const ends: { name: string; id: string; end(): Promise<unknown> | void }[] = [];
    const answered = question(chatId);
    ends.push({
      name: "answered by the tab",
      id: answered.id,
      end: () =>
        viewer.send("ask:answer", { askId: answered.id, answer: { type: "text", text: "SQLite" } }),
    });
    const cancelled = question(chatId);
    ends.push({
      name: "cancelled by the tab",
      id: cancelled.id,
      end: () => viewer.send("ask:answer", { askId: cancelled.id, answer: { type: "cancel" } }),
    });
    const elsewhere = question(chatId);
    ends.push({
      name: "answered elsewhere",
      id: elsewhere.id,
      end: () =>
        void fake.resolveQuestion(elsewhere.id, { answers: { answers: { db: ["Postgres"] } } }),
    });
    const cancelledElsewhere = question(chatId);
    ends.push({
      name: "cancelled elsewhere",
      id: cancelledElsewhere.id,
      end: () => void fake.resolveQuestion(cancelledElsewhere.id, { cancel: true }),
    });
    const gatewayExpired = question(chatId);
    ends.push({
      name: "expired at the Gateway",
      id: gatewayExpired.id,
      end: () => fake.expire(gatewayExpired.id),
    });
    const decided = plugin(chatId);
    ends.push({
      name: "approval decided by the tab",
      id: decided.id,
      end: () =>
        viewer.send("ask:answer", {
          askId: decided.id,
          answer: { type: "decision", decision: "allow-once" },
        }),
    });
    const approvedElsewhere = plugin(chatId);
    ends.push({
      name: "approval decided elsewhere",
      id: approvedElsewhere.id,
      end: () => fake.resolveApproval(approvedElsewhere.id, "deny", "control-ui"),
    });
    const runId = randomUUID();
    const stopped = plugin(chatId, { runId });
    ends.push({
      name: "the run stopped",
      id: stopped.id,
      end: () => void fake.emitChat(chatKey(chatId), runId, { state: "aborted" }),
    });
    for (const { id } of ends) await viewer.waitForShow((a) => a.id === id);
    expect(server.broker.activeTimers).toBeGreaterThanOrEqual(ends.length);
    expectTimersMatchPending();

    for (const { name, id, end } of ends) {
      const before = server.broker.activeTimers;
      await end();
      await expect
        .poll(() => server.broker.getPending(id), { timeout: 10_000, message: name })
        .toBeUndefined();
      expect(server.broker.activeTimers, name).toBe(before - 1);
      expectTimersMatchPending();
    }
  });

  it("an ask denied by policy at once starts no timer", async () => {
    const chatId = newChat();
    const before = server.broker.activeTimers;
    const approval = fake.createPluginApproval({
      sessionKey: `${chatKey(chatId)}:thread:42`,
      title: "Deploy",
      description: "Deploys",
      timeoutMs: 600_000,
    });
    await expect
      .poll(async () => (await server.store.get(approval.id))?.status, { timeout: 10_000 })
      .toBe("denied");
    expect(server.broker.activeTimers).toBe(before);
    expectTimersMatchPending();
  });

  it("no timer survives server shutdown (restored asks get theirs back, and lose them again on stop)", async () => {
    const chatId = newChat();
    question(chatId);
    question(chatId);
    plugin(chatId);
    await expect
      .poll(() => server.broker.pendingAsks.filter((a) => a.chatId === chatId).length, {
        timeout: 10_000,
      })
      .toBe(3);
    expect(clock.pendingTimers).toBeGreaterThan(0);
    await server.stop();
    expect(server.broker.activeTimers).toBe(0);
    expect(clock.pendingTimers).toBe(0);

    server = await server.restart();
    await waitConnected(server);
    await expect
      .poll(() => server.broker.pendingAsks.filter((a) => a.chatId === chatId).length, {
        timeout: 10_000,
      })
      .toBe(3);
    expectTimersMatchPending();
    await server.stop();
    expect(server.broker.activeTimers).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it("no timer survives server shutdown even when asks arrive while the server is stopping", async () => {
    // Asks already pending when the stop begins, as well as the ones arriving.
    const waiting = newChat();
    question(waiting);
    plugin(waiting);
    await expect
      .poll(() => server.broker.pendingAsks.length, { timeout: 10_000 })
      .toBeGreaterThan(0);
    const chatId = newChat();
    // Events already on the wire when stop() begins.
    for (let i = 0; i < 20; i++) question(chatId);
    const stopping = server.stop();
    for (let i = 0; i < 20; i++) plugin(chatId);
    await stopping;
    // Barrier: once the fake has no connection left, no event can reach the stopped server any more.
    await expect.poll(() => fake.connectionCount, { timeout: 10_000 }).toBe(0);
    expect(server.broker.activeTimers).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });
});
