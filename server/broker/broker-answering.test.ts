// The routing rules (docs/ARCHITECTURE.md#routing) row by row on the broker alone (test/support/broker-harness.ts): an answer reaches the
// source once: Cancel, answered elsewhere, two tabs or instances at once, the early ack.
import { describe, expect } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { answeredElsewhere, CANCELLED_ELSEWHERE, EXPIRED } from "../../lib/outcomes.ts";
import type { AnswerAck } from "../../lib/protocol.ts";
import { VIEW_ONLY_WIDGET } from "../../lib/wording.ts";
import { approval, question, secret, textPrompt } from "../../test/support/ask-fixtures.ts";
import {
  actClaimsOf,
  acting,
  brokerTest as it,
  ScriptedChannel,
  settled,
  tab,
  widget,
  withAct,
} from "../../test/support/broker-harness.ts";
import { SqliteAskStore } from "../store/sqlite.ts";
import { AskBroker } from "./broker.ts";
import { AskAlreadyEnded } from "./ports.ts";
import { MemoryPresence } from "./presence.ts";

describe("AskBroker (the routing rules on the broker, injected clock)", () => {
  describe("the owner's power: a stored token never uses it (docs/SECURITY.md#a-stored-token-never-acts)", () => {
    it("a widget decides an approval only with its own reply's act token; the ask stays pending until then", async ({
      channel,
      broker,
      tabs,
    }) => {
      const owned = widget("w1", "c1", "a1", 0);
      await broker.view(owned, "c1");
      await broker.receive(approval("p1", "c1"));
      const allow = { type: "decision", decision: "allow-once" } as const;
      const forbidden = { ok: false, error: { code: "FORBIDDEN", message: VIEW_ONLY_WIDGET } };
      const claims = actClaimsOf(owned);
      expect(await broker.answer(owned, "p1", allow)).toEqual(forbidden);
      for (const act of [
        { ...claims, msg: "a0" },
        { ...claims, chat: "c2" },
        { ...claims, userId: "alice" },
      ])
        expect(await broker.answer(withAct(owned, act), "p1", allow)).toEqual(forbidden);
      expect(channel.delivered).toEqual([]);
      expect(tabs.closes("w1", "p1")).toEqual([]);
      expect(await broker.answer(acting(owned), "p1", allow)).toEqual({
        ok: true,
        status: "answered",
      });
      expect(channel.delivered).toEqual([{ askId: "p1", reply: allow }]);
    });

    it("a secret request too; a question or a text prompt, what the person could type into the chat, needs no act token", async ({
      channel,
      broker,
    }) => {
      const owned = widget("w1", "c1", "a1", 0);
      await broker.view(owned, "c1");
      await broker.receive(secret("s1", "c1"));
      await broker.receive(question("q1", "c1"));
      expect(await broker.answer(owned, "s1", { type: "secret", value: "sk-never-taken" })).toEqual(
        { ok: false, error: { code: "FORBIDDEN", message: VIEW_ONLY_WIDGET } },
      );
      expect(channel.delivered).toEqual([]);
      expect(await broker.answer(owned, "q1", { type: "text", text: "SQLite" })).toMatchObject({
        ok: true,
        status: "answered",
      });
    });

    it("the act token is checked only for an answer that uses the owner's power, once", async ({
      broker,
    }) => {
      const owned = widget("w1", "c1", "a1", 0);
      await broker.view(owned, "c1");
      await broker.receive(question("q1", "c1"));
      await broker.receive(approval("p1", "c1"));
      let checks = 0;
      const counted = {
        ...owned,
        act: () => {
          checks += 1;
          return Promise.resolve(actClaimsOf(owned));
        },
      };
      await broker.answer(counted, "q1", { type: "text", text: "SQLite" });
      expect(checks).toBe(0);
      await broker.answer(counted, "p1", { type: "decision", decision: "deny" });
      expect(checks).toBe(1);
    });

    it("an ask it may not see stays NOT_FOUND for a widget without act power, as an id that does not exist", async ({
      broker,
    }) => {
      await broker.receive(question("q1", "c1"));
      const other = widget("w2", "c2", "a1", 0);
      expect(await broker.answer(other, "q1", { type: "cancel" })).toMatchObject({
        ok: false,
        error: { code: "NOT_FOUND" },
      });
    });

    it("a dashboard's token (owner link, device link) is kept in its browser, never in a chat: it needs none", async ({
      broker,
    }) => {
      await broker.receive(question("q1", "c1"));
      expect(await broker.answer(tab("dash"), "q1", { type: "cancel" })).toMatchObject({
        ok: true,
      });
    });
  });

  describe("§6 Cancel", () => {
    it("question: the source is told cancel, the card closes with cancelled", async ({
      channel,
      broker,
      tabs,
    }) => {
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      await broker.receive(question("q1", "c1"));
      expect(await broker.answer(t1, "q1", { type: "cancel" })).toEqual({
        ok: true,
        status: "cancelled",
      });
      expect(channel.delivered).toEqual([{ askId: "q1", reply: { type: "cancel" } }]);
      expect(tabs.closes("t1", "q1")).toMatchObject([{ reason: "cancelled" }]);
    });

    it("approval: Cancel is deny", async ({ channel, broker, tabs }) => {
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      await broker.receive(approval("p1", "c1"));
      expect(await broker.answer(t1, "p1", { type: "cancel" })).toEqual({
        ok: true,
        status: "answered",
      });
      expect(channel.delivered).toEqual([
        { askId: "p1", reply: { type: "decision", decision: "deny" } },
      ]);
      expect(tabs.closes("t1", "p1")).toMatchObject([{ reason: "answered", summary: "Deny" }]);
    });

    it("secret request: cancelled, nothing entered; the tab is told how it ended", async ({
      store,
      broker,
    }) => {
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      await broker.receive(secret("s1", "c1"));
      expect(await broker.answer(t1, "s1", { type: "cancel" })).toEqual({
        ok: true,
        status: "cancelled",
        outcome: "cancelled",
      });
      expect((await store.get("s1"))?.resolution?.summary).toBe("Cancelled (nothing entered)");
    });

    it("text prompt: nothing reaches the agent; it stays in the reply as text", async ({
      store,
      channel,
      broker,
    }) => {
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      await broker.receive(textPrompt("tp1", "c1"));
      expect(await broker.answer(t1, "tp1", { type: "cancel" })).toEqual({
        ok: true,
        status: "cancelled",
      });
      expect(channel.delivered).toEqual([]);
      expect((await store.get("tp1"))?.resolution?.summary).toBe("Which database?");
    });
  });

  describe("§6 answered elsewhere (Control UI, /approve, another instance)", () => {
    it.for(["announced", "listed"] as const)(
      "an end that comes while the ask is taken in (%s) is applied once it is tracked",
      async (arrival, { store, channel, broker, tabs }) => {
        await broker.view(tab("t1"), "c1");
        // The store and presence answer asynchronously: the source's end overtakes the taking in.
        channel.arrive(question("q1", "c1"), arrival);
        channel.end("q1", CANCELLED_ELSEWHERE);
        await settled();
        expect(broker.getPending("q1")).toBeUndefined();
        expect((await store.get("q1"))?.status).toBe("cancelled");
        expect(tabs.changes.at(-1)).toMatchObject({ id: "q1", status: "cancelled" });
      },
    );

    it("closes with answered-elsewhere and the source's summary", async ({
      store,
      channel,
      broker,
      tabs,
    }) => {
      await broker.view(tab("t1"), "c1");
      await broker.receive(question("q1", "c1"));
      channel.end("q1", (ask) => answeredElsewhere(ask, ["Postgres"]));
      await settled();
      expect(tabs.closes("t1", "q1")).toEqual([
        {
          tabId: "t1",
          event: "close",
          askId: "q1",
          reason: "answered-elsewhere",
          summary: "Postgres",
        },
      ]);
      expect(await store.get("q1")).toMatchObject({
        status: "answered",
        resolution: { by: null, summary: "Postgres" },
      });
    });

    it("a secret answered elsewhere never shows its value", async ({
      store,
      channel,
      broker,
      tabs,
    }) => {
      await broker.view(tab("t1"), "c1");
      await broker.receive(secret("s1", "c1"));
      channel.end("s1", (ask) => answeredElsewhere(ask, ["hunter2"]));
      await settled();
      expect(JSON.stringify(await store.get("s1"))).not.toContain("hunter2");
      expect(JSON.stringify(tabs.timeline)).not.toContain("hunter2");
    });

    it("an end for an unknown or finished ask changes nothing", async ({
      store,
      channel,
      broker,
    }) => {
      channel.end("nope", EXPIRED);
      await broker.receive(question("q1", "c1"));
      await broker.end("q1", CANCELLED_ELSEWHERE);
      await broker.end("q1", EXPIRED);
      await settled();
      expect(await store.get("nope")).toBeNull();
      expect((await store.get("q1"))?.status).toBe("cancelled");
    });

    it.for([
      ["nothing else heard", null, { reason: "answered-elsewhere", summary: "Answered elsewhere" }],
      ["its end heard meanwhile", EXPIRED, { reason: "expired", summary: "Expired" }],
    ] as const)(
      "the source already had an answer (%s): ALREADY_RESOLVED, and the card closes as the ask ended",
      async ([, meanwhile, closed], { channel, broker, tabs }) => {
        const t1 = tab("t1");
        await broker.view(t1, "c1");
        await broker.receive(question("q1", "c1"));
        channel.next = async () => {
          if (meanwhile) {
            channel.end("q1", meanwhile);
            await settled();
          }
          throw new AskAlreadyEnded("already terminal");
        };
        expect(await broker.answer(t1, "q1", { type: "text", text: "SQLite" })).toMatchObject({
          ok: false,
          error: { code: "ALREADY_RESOLVED" },
        });
        expect(tabs.closes("t1", "q1")).toEqual([
          { tabId: "t1", event: "close", askId: "q1", ...closed },
        ]);
      },
    );

    it("a refused delivery leaves the ask pending and answerable; a secret's error is never echoed", async ({
      channel,
      broker,
    }) => {
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      await broker.receive(secret("s1", "c1"));
      channel.next = async () => {
        throw new Error("bad value hunter2");
      };
      const ack = await broker.answer(t1, "s1", { type: "secret", value: "hunter2" });
      expect(ack).toMatchObject({ ok: false, error: { code: "GATEWAY_ERROR" } });
      expect(JSON.stringify(ack)).not.toContain("hunter2");
      expect(broker.getPending("s1")?.status).toBe("pending");
      expect(await broker.answer(t1, "s1", { type: "secret", value: "hunter3" })).toEqual({
        ok: true,
        status: "answered",
        outcome: "stored",
      });
    });
  });

  describe("§6 two tabs answering at once", () => {
    it("exactly one answer reaches the source; the other gets ALREADY_RESOLVED", async ({
      channel,
      broker,
    }) => {
      const a = tab("a");
      const b = tab("b");
      await broker.view(a, "c1");
      await broker.view(b, "c1");
      await broker.receive(question("q1", "c1"));
      const gate = Promise.withResolvers<void>();
      channel.next = () => gate.promise;
      const first = broker.answer(a, "q1", { type: "text", text: "Postgres" });
      const second = await broker.answer(b, "q1", { type: "text", text: "SQLite" });
      gate.resolve();
      expect(await first).toEqual({ ok: true, status: "answered" });
      expect(second).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
      expect(channel.delivered).toHaveLength(1);
    });
  });

  describe("§6 the answering tab's ack (before: sent only once the card was closed and the end stored)", () => {
    it("goes out once the source took the answer, before the card closes and the end is stored; an answer or an end meanwhile changes nothing", async ({
      store,
      channel,
      broker,
      tabs,
    }) => {
      // What the tab, the dashboards and the store had when the ack went out; answers given meanwhile.
      const atAck: {
        ack: AnswerAck;
        closes: number;
        changes: number;
        stored: Promise<Ask | null>;
      }[] = [];
      const meanwhile: Promise<AnswerAck>[] = [];
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      await broker.receive(question("q1", "c1"));
      const ack = await broker.answer(t1, "q1", { type: "text", text: "SQLite" }, (early) => {
        atAck.push({
          ack: early,
          closes: tabs.closes("t1", "q1").length,
          changes: tabs.changes.length,
          stored: store.get("q1"),
        });
        channel.end("q1", answeredElsewhere({ kind: "question" }, ["Postgres"]));
        meanwhile.push(broker.answer(t1, "q1", { type: "text", text: "Postgres" }));
      });
      expect(ack).toEqual({ ok: true, status: "answered" });
      expect(atAck).toHaveLength(1);
      expect(atAck[0]).toMatchObject({ ack, closes: 0, changes: 1 });
      expect((await atAck[0]!.stored)?.status).toBe("pending");
      expect(await Promise.all(meanwhile)).toMatchObject([
        { ok: false, error: { code: "ALREADY_RESOLVED" } },
      ]);
      await settled();
      expect(channel.delivered).toHaveLength(1);
      expect(tabs.closes("t1", "q1")).toEqual([
        { tabId: "t1", event: "close", askId: "q1", reason: "answered", summary: "SQLite" },
      ]);
      expect(await store.get("q1")).toMatchObject({
        status: "answered",
        resolution: { summary: "SQLite", by: "owner", tabId: "t1" },
      });
      expect(tabs.changes.map((ask) => ask.status)).toEqual(["pending", "answered"]);
    });

    it("a refusal is not acknowledged early: it is the returned ack, with nothing left to do", async ({
      channel,
      broker,
    }) => {
      const early: AnswerAck[] = [];
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      await broker.receive(question("q1", "c1"));
      channel.next = async () => {
        throw new Error("the Gateway is busy");
      };
      const ack = await broker.answer(t1, "q1", { type: "text", text: "SQLite" }, (sent) =>
        early.push(sent),
      );
      expect(ack).toMatchObject({ ok: false, error: { code: "GATEWAY_ERROR" } });
      expect(early).toEqual([]);
      expect(broker.getPending("q1")?.status).toBe("pending");
    });
  });

  describe("§6 two instances answering at once", () => {
    it("two brokers sharing one store: exactly one delivery, the other gets ALREADY_RESOLVED", async ({
      clock,
      store,
      channel,
      broker,
    }) => {
      const other = new AskBroker({
        store,
        presence: new MemoryPresence(),
        source: channel,
        clock,
        owners: new Set(["owner"]),
        instanceId: "two",
        log: () => {},
      });
      await broker.receive(question("q1", "c1"));
      await other.receive(question("q1", "c1"));
      expect(other.getPending("q1")?.status).toBe("pending");
      const gate = Promise.withResolvers<void>();
      channel.next = () => gate.promise;
      const first = broker.answer(tab("a"), "q1", { type: "text", text: "Postgres" });
      const second = await other.answer(tab("b"), "q1", { type: "text", text: "SQLite" });
      gate.resolve();
      expect(await first).toEqual({ ok: true, status: "answered" });
      expect(second).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
      expect(channel.delivered).toHaveLength(1);
      other.shutdown();
    });

    it("the instance that did not show the card writes the ask too: its row outlives the one that showed it", async ({
      clock,
      store,
      presence,
    }) => {
      // The instance that shows the card dies before its write lands: its store takes nothing.
      const dying: SqliteAskStore = Object.assign(Object.create(store), { put: async () => false });
      const showing = new AskBroker({
        store: dying,
        presence,
        source: new ScriptedChannel(),
        clock,
        owners: new Set(["owner"]),
        instanceId: "showing",
        log: () => {},
      });
      const survivor = new AskBroker({
        store,
        presence,
        source: new ScriptedChannel(),
        clock,
        owners: new Set(["owner"]),
        instanceId: "survivor",
        log: () => {},
      });
      const t1 = tab("t1");
      await showing.view(t1, "c1");
      await showing.receive(question("q1", "c1"), "announced");
      await survivor.receive(question("q1", "c1"), "announced");
      expect(await presence.shownTo("q1")).toBe("t1");
      expect((await store.get("q1"))?.status).toBe("pending");
      expect(await survivor.answer(t1, "q1", { type: "text", text: "SQLite" })).toEqual({
        ok: true,
        status: "answered",
      });
      showing.shutdown();
      survivor.shutdown();
    });
  });

  it("an answer whose claim the store fails to write fails, and the ask stays answerable", async ({
    store,
    channel,
    broker,
  }) => {
    const t1 = tab("t1");
    await broker.view(t1, "c1");
    await broker.receive(question("q1", "c1"));
    const claim = store.claim.bind(store);
    store.claim = async () => {
      throw new Error("disk I/O error");
    };
    await expect(broker.answer(t1, "q1", { type: "text", text: "SQLite" })).rejects.toThrow(
      "disk I/O error",
    );
    store.claim = claim;
    expect(channel.delivered).toEqual([]);
    expect(broker.getPending("q1")?.status).toBe("pending");
    expect(await broker.answer(t1, "q1", { type: "text", text: "SQLite" })).toEqual({
      ok: true,
      status: "answered",
    });
  });

  it("refuses an invalid answer with INVALID and changes nothing", async ({ channel, broker }) => {
    const t1 = tab("t1");
    await broker.view(t1, "c1");
    await broker.receive(
      question("q1", "c1", {
        questions: [
          {
            id: "db",
            header: "DB",
            question: "?",
            options: [{ label: "A" }],
            multiSelect: false,
            allowOther: false,
          },
        ],
      }),
    );
    expect(await broker.answer(t1, "q1", { type: "text", text: "not an option" })).toMatchObject({
      ok: false,
      error: { code: "INVALID" },
    });
    expect(channel.delivered).toEqual([]);
    expect(broker.getPending("q1")?.status).toBe("pending");
  });
});
