// The routing rules (docs/ARCHITECTURE.md#routing) row by row on the broker alone (test/support/broker-harness.ts): what outlives an ask's
// end and the broker: tombstones, a restart, shutdown.
import { describe, expect } from "vitest";
import { answeredElsewhere, CANCELLED_ELSEWHERE, type Ending } from "../../lib/outcomes.ts";
import { approval, question, T0, textPrompt } from "../../test/support/ask-fixtures.ts";
import {
  brokerTest as it,
  ScriptedChannel,
  settled,
  tab,
  Tabs,
} from "../../test/support/broker-harness.ts";
import { AskBroker } from "./broker.ts";
import { MemoryPresence } from "./presence.ts";

describe("AskBroker (the routing rules on the broker, injected clock)", () => {
  describe("§6 terminal states are tombstones", () => {
    it("a replay of an answered, expired or refused ask never revives it", async ({
      clock,
      broker,
      tabs,
    }) => {
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      await broker.receive(question("answered", "c1"));
      await broker.answer(t1, "answered", { type: "text", text: "SQLite" });
      await broker.receive(approval("expired", "c1", { expiresAt: T0 + 1000 }));
      clock.advance(1000);
      await settled();
      await broker.receive(
        approval("denied", "c1", { sessionKey: "agent:dev:openwebui:c1:thread:1" }),
      );
      const before = tabs.timeline.length;
      for (const ask of [
        question("answered", "c1"),
        approval("expired", "c1"),
        approval("denied", "c1"),
      ])
        await broker.receive(ask);
      expect(tabs.timeline.length).toBe(before);
      expect(broker.pendingAsks).toEqual([]);
      expect(await broker.answer(t1, "answered", { type: "text", text: "Postgres" })).toMatchObject(
        { ok: false, error: { code: "ALREADY_RESOLVED" } },
      );
    });

    it("an announced replay of an ended ask that presence has forgotten: the card its write found a tombstone for is closed, and the ask is not announced", async ({
      clock,
      store,
      channel,
      broker,
    }) => {
      await broker.receive(question("q1", "c1"));
      await broker.end("q1", CANCELLED_ELSEWHERE);
      broker.shutdown();
      const restarted = new AskBroker({
        store,
        presence: new MemoryPresence(),
        source: channel,
        clock,
        owners: new Set(["owner"]),
        instanceId: "again",
        log: () => {},
      });
      const seen = new Tabs(restarted);
      await restarted.view(tab("t1"), "c1");
      await restarted.receive(question("q1", "c1"), "announced");
      expect(seen.timeline).toEqual([
        { tabId: "t1", event: "show", askId: "q1" },
        {
          tabId: "t1",
          event: "close",
          askId: "q1",
          reason: "answered-elsewhere",
          summary: "Cancelled elsewhere",
        },
      ]);
      expect(seen.changes.map((ask) => ask.status)).toEqual(["cancelled"]);
      expect(restarted.getPending("q1")).toBeUndefined();
      expect((await store.get("q1"))?.status).toBe("cancelled");
      restarted.shutdown();
    });

    it("a listing that still names a terminal ask does not revive it", async ({
      store,
      channel,
      broker,
    }) => {
      await broker.receive(question("q1", "c1"));
      await broker.end("q1", CANCELLED_ELSEWHERE);
      channel.arrive(question("q1", "c1"), "listed");
      channel.list({
        live: new Map([["gateway.question", new Set(["q1"])]]),
        outcomeOf: async () => null,
      });
      await settled();
      expect(broker.getPending("q1")).toBeUndefined();
      expect((await store.get("q1"))?.status).toBe("cancelled");
    });
  });

  describe("§10 restart", () => {
    it("pending asks come back, are shown only once the source lists them, and the rest are reconciled", async ({
      clock,
      store,
      channel,
      broker,
    }) => {
      await broker.view(tab("before"), "c1");
      for (const ask of [
        question("stays", "c1"),
        question("answered", "c1"),
        question("forgotten", "c1"),
        approval("gone", "c1"),
        textPrompt("tp1", "c1"),
      ])
        await broker.receive(ask);
      broker.shutdown();
      const restarted = new AskBroker({
        store,
        presence: new MemoryPresence(),
        source: channel,
        clock,
        owners: new Set(["owner"]),
        instanceId: "again",
        log: () => {},
      });
      const seen = new Tabs(restarted);
      await restarted.restore();
      expect(restarted.pendingAsks).toHaveLength(5);
      await restarted.view(tab("t1"), "c1");
      expect(seen.timeline).toEqual([]);
      const outcomes: Record<string, Ending> = {
        answered: answeredElsewhere({ kind: "question" }, ["Postgres"]),
      };
      channel.list({
        live: new Map([
          ["gateway.question", new Set(["stays"])],
          ["gateway.plugin-approval", new Set<string>()],
        ]),
        outcomeOf: async (ask) => outcomes[ask.id] ?? null,
      });
      await settled();
      expect(await store.get("answered")).toMatchObject({
        status: "answered",
        resolution: { summary: "Postgres" },
      });
      expect((await store.get("forgotten"))?.status).toBe("expired");
      expect((await store.get("gone"))?.status).toBe("expired");
      expect(seen.shownOn("t1").sort()).toEqual(["stays", "tp1"]);
      // Their timers came back with them, and nothing else's did.
      expect(restarted.activeTimers).toBe(2);
      restarted.shutdown();
      expect(clock.pendingTimers).toBe(0);
    });

    it("a restored ask the source sends again is confirmed by it", async ({
      clock,
      store,
      channel,
      broker,
    }) => {
      await broker.receive(question("q1", "c1"));
      broker.shutdown();
      const restarted = new AskBroker({
        store,
        presence: new MemoryPresence(),
        source: channel,
        clock,
        owners: new Set(["owner"]),
        instanceId: "again",
        log: () => {},
      });
      const seen = new Tabs(restarted);
      await restarted.restore();
      await restarted.view(tab("t1"), "c1");
      expect(await restarted.shownTo("q1")).toBeNull();
      await restarted.receive(question("q1", "c1"));
      expect(seen.shownOn("t1")).toEqual(["q1"]);
      restarted.shutdown();
    });

    it("a restored ask stays unconfirmed while an answer to it is delivered: a tab that views its chat meanwhile is not shown it", async ({
      clock,
      store,
      channel,
      broker,
    }) => {
      await broker.receive(question("q1", "c1"));
      broker.shutdown();
      const restarted = new AskBroker({
        store,
        presence: new MemoryPresence(),
        source: channel,
        clock,
        owners: new Set(["owner"]),
        instanceId: "again",
        log: () => {},
      });
      const seen = new Tabs(restarted);
      await restarted.restore();
      const delivery = heldDelivery(channel);
      const answered = restarted.answer(tab("dashboard"), "q1", { type: "text", text: "Postgres" });
      await delivery.started;
      await restarted.view(tab("t1"), "c1");
      delivery.fail(new Error("the Gateway went away"));
      expect(await answered).toMatchObject({ ok: false, error: { code: "GATEWAY_ERROR" } });
      expect(seen.shownOn("t1")).toEqual([]);
      restarted.shutdown();
    });

    it("a restored ask its source lists while an answer to it is delivered is confirmed: once the answer fails, its card is shown", async ({
      clock,
      store,
      channel,
      broker,
    }) => {
      await broker.receive(question("q1", "c1"));
      broker.shutdown();
      const restarted = new AskBroker({
        store,
        presence: new MemoryPresence(),
        source: channel,
        clock,
        owners: new Set(["owner"]),
        instanceId: "again",
        log: () => {},
      });
      const seen = new Tabs(restarted);
      await restarted.restore();
      await restarted.view(tab("t1"), "c1");
      const delivery = heldDelivery(channel);
      const answered = restarted.answer(tab("dashboard"), "q1", { type: "text", text: "Postgres" });
      await delivery.started;
      await restarted.receive(question("q1", "c1"));
      delivery.fail(new Error("the Gateway went away"));
      expect(await answered).toMatchObject({ ok: false, error: { code: "GATEWAY_ERROR" } });
      expect(seen.holds("t1", "q1")).toBe(true);
      restarted.shutdown();
    });
  });

  it("shutdown stops listening to the source", async ({ channel, broker }) => {
    broker.shutdown();
    channel.arrive(question("q1", "c1"));
    await settled();
    expect(broker.pendingAsks).toEqual([]);
  });
});

/** The channel's next delivery waits: `started` once the broker hands it the answer, then it fails with `fail`. */
function heldDelivery(channel: ScriptedChannel): {
  started: Promise<void>;
  fail: (error: Error) => void;
} {
  let fail: (error: Error) => void = () => {};
  const started = new Promise<void>((begun) => {
    channel.next = () => {
      begun();
      return new Promise<void>((_, reject) => {
        fail = reject;
      });
    };
  });
  return { started, fail: (error) => fail(error) };
}
