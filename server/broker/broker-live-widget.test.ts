// The routing rules (docs/ARCHITECTURE.md#routing) row by row on the broker alone (test/support/broker-harness.ts): one live widget per chat,
// the latest reply's (docs/ARCHITECTURE.md#live-and-idle-widgets), and the replies of the Gateway's /v1 endpoint.
import fc from "fast-check";
import { describe, expect } from "vitest";
import { approval, question, secret, T0, textPrompt } from "../../test/support/ask-fixtures.ts";
import {
  acting,
  brokerTest as it,
  ScriptedChannel,
  settled,
  tab,
  Tabs,
  widget,
} from "../../test/support/broker-harness.ts";
import { SqliteAskStore } from "../store/sqlite.ts";
import { AskBroker } from "./broker.ts";
import type { Tab } from "./ports.ts";
import { MemoryPresence } from "./presence.ts";

describe("AskBroker (the routing rules on the broker, injected clock)", () => {
  describe("§2 one live widget per chat: the latest reply's", () => {
    it("an older reply's widget viewing after the latest one (reload, scroll up) is superseded and never takes the card", async ({
      presence,
      broker,
      tabs,
    }) => {
      await broker.view(widget("w12", "c1", "a12", 12), "c1");
      await broker.receive(question("q1", "c1"));
      for (const n of [11, 10, 5, 1])
        expect(await broker.view(widget(`w${n}`, "c1", `a${n}`, n), "c1")).toEqual({ ok: true });
      expect(tabs.holders("q1")).toEqual(["w12"]);
      for (const n of [11, 10, 5, 1]) expect(tabs.superseded(`w${n}`)).toBe(1);
      expect(tabs.superseded("w12")).toBe(0);
      expect((await presence.viewers("c1")).map((viewer) => viewer.id)).toEqual(["w12"]);
      // A reload of the latest reply: its new socket takes the card.
      await broker.leave("w12");
      await broker.view(widget("w12-reloaded", "c1", "a12", 12), "c1");
      expect(tabs.holds("w12-reloaded", "q1")).toBe(true);
      expect(await broker.shownTo("q1")).toBe("w12-reloaded");
    });

    it("a newer reply's widget supersedes the live one: the card moves there, the old widget is told superseded (not handed-off)", async ({
      broker,
      tabs,
    }) => {
      await broker.view(widget("w11", "c1", "a11", 11), "c1");
      await broker.receive(question("q1", "c1"));
      await broker.view(widget("w12", "c1", "a12", 12), "c1");
      expect(tabs.timeline).toEqual([
        { tabId: "w11", event: "show", askId: "q1" },
        { tabId: "w11", event: "superseded", askId: "c1" },
        { tabId: "w12", event: "show", askId: "q1" },
      ]);
      // Superseded for good: viewing again (its tab came to the front) changes nothing.
      await broker.view(widget("w11", "c1", "a11", 11), "c1");
      expect(tabs.holders("q1")).toEqual(["w12"]);
      expect(tabs.superseded("w11")).toBe(2);
    });

    it("widgets of one chat viewing at once, in any order, leave the card on the latest reply's only", async ({
      presence,
      broker,
      tabs,
    }) => {
      const orders = [
        [10, 11, 12],
        [12, 11, 10],
        [11, 12, 10],
        [10, 12, 11],
      ];
      for (const [index, order] of orders.entries()) {
        const chatId = `race-${index}`;
        await broker.receive(question(`q-${index}`, chatId));
        await Promise.all(
          order.map((n) => broker.view(widget(`${chatId}-w${n}`, chatId, `a${n}`, n), chatId)),
        );
        expect(tabs.holders(`q-${index}`), `order ${order.join(",")}`).toEqual([`${chatId}-w12`]);
        expect((await presence.viewers(chatId)).map((viewer) => viewer.id)).toEqual([
          `${chatId}-w12`,
        ]);
        expect(tabs.superseded(`${chatId}-w12`)).toBe(0);
      }
    });

    it("a widget of the first filter's embed (no reply) is never live; the card waits for a live one", async ({
      broker,
      tabs,
    }) => {
      await broker.receive(question("q1", "c1"));
      expect(await broker.view(tab("old-embed", "owner", "c1", null), "c1")).toEqual({ ok: true });
      expect(tabs.superseded("old-embed")).toBe(1);
      expect(tabs.shownOn("old-embed")).toEqual([]);
      expect(broker.getPending("q1")?.status).toBe("pending");
      await broker.view(widget("w1", "c1", "a1", 1), "c1");
      expect(tabs.holders("q1")).toEqual(["w1"]);
    });

    it("a newer reply whose page was served (noted) makes an older widget idle even before the newer one connects", async ({
      broker,
      tabs,
    }) => {
      expect(await broker.isLiveReply("c1", { msg: "a11", mts: T0 + 11 })).toBe(true);
      expect(await broker.isLiveReply("c1", { msg: "a12", mts: T0 + 12 })).toBe(true);
      expect(await broker.isLiveReply("c1", { msg: "a11", mts: T0 + 11 })).toBe(false);
      await broker.receive(question("q1", "c1"));
      await broker.view(widget("w11", "c1", "a11", 11), "c1");
      expect(tabs.superseded("w11")).toBe(1);
      expect(tabs.holders("q1")).toEqual([]);
    });

    /** Two widgets of one reply: the one viewed last holds the card, and a view again brings it back; neither is superseded. */
    async function expectFrontWidgetHolds(
      { broker, tabs }: { broker: AskBroker; tabs: Tabs },
      first: Tab,
      second: Tab,
    ): Promise<void> {
      await broker.view(first, "c1");
      await broker.view(second, "c1");
      await broker.receive(question("q1", "c1"));
      expect(tabs.holders("q1")).toEqual([second.id]);
      await broker.view(first, "c1");
      expect(tabs.holders("q1")).toEqual([first.id]);
      expect(tabs.superseded(first.id) + tabs.superseded(second.id)).toBe(0);
    }

    it("the same reply in two browser tabs: the tab that came to the front last (chat:view again) holds it; never both", async ({
      broker,
      tabs,
    }) => {
      await expectFrontWidgetHolds(
        { broker, tabs },
        widget("tab-a", "c1", "a3", 3),
        widget("tab-b", "c1", "a3", 3),
      );
      expect(tabs.closes("tab-b", "q1")).toEqual([
        { tabId: "tab-b", event: "close", askId: "q1", reason: "handed-off" },
      ]);
    });

    it("a new reply while cards are open: question, approval and secret move to its widget, and each summary stays in the reply that answered", async ({
      clock,
      broker,
      tabs,
    }) => {
      await broker.view(widget("w1", "c1", "a1", 1), "c1");
      await broker.receive(question("q1", "c1"));
      await broker.receive(approval("ap1", "c1"));
      await broker.receive(secret("s1", "c1"));
      await broker.answer(acting(widget("w1", "c1", "a1", 1)), "q1", {
        type: "text",
        text: "SQLite",
      });
      const w2 = widget("w2", "c1", "a2", 2);
      await broker.view(w2, "c1");
      expect(tabs.holders("ap1")).toEqual(["w2"]);
      expect(tabs.holders("s1")).toEqual(["w2"]);
      await broker.answer(acting(w2), "ap1", { type: "decision", decision: "deny" });
      // Expired while shown in a2: its summary is a2's too.
      clock.advance(900_000);
      await settled();
      expect(
        (await broker.replySummaries({ userId: "owner", isOwner: true }, "c1", "a1")).map(
          (ask) => ask.id,
        ),
      ).toEqual(["q1"]);
      expect(
        (await broker.replySummaries({ userId: "owner", isOwner: true }, "c1", "a2")).map((ask) => [
          ask.id,
          ask.status,
        ]),
      ).toEqual([
        ["ap1", "answered"],
        ["s1", "expired"],
      ]);
    });

    it("a new reply while a text prompt is open: it ends as text in its reply (the user wrote instead), never moves", async ({
      store,
      broker,
      tabs,
    }) => {
      await broker.view(widget("w1", "c1", "a1", 1), "c1");
      await broker.receive(textPrompt("tp1", "c1"));
      expect(tabs.holders("tp1")).toEqual(["w1"]);
      await broker.view(widget("w2", "c1", "a2", 2), "c1");
      expect(tabs.shows("w2", "tp1")).toBe(0);
      expect(await store.get("tp1")).toMatchObject({
        status: "ended-as-text",
        replyId: "a1",
        resolution: { summary: "Which database?" },
      });
      expect(tabs.closes("w1", "tp1")).toEqual([
        {
          tabId: "w1",
          event: "close",
          askId: "tp1",
          reason: "answered-elsewhere",
          summary: "Which database?",
        },
      ]);
    });

    it("a reply's token minted again (Continue) is the same reply: its widgets in two tabs never supersede each other", async ({
      broker,
      tabs,
    }) => {
      await expectFrontWidgetHolds(
        { broker, tabs },
        widget("first-token", "c1", "a5", 5),
        widget("continued", "c1", "a5", 9),
      );
      expect(await broker.isLiveReply("c1", { msg: "a5", mts: T0 + 5 })).toBe(true);
      expect(await broker.isLiveReply("c1", { msg: "a4", mts: T0 + 6 })).toBe(false);
    });

    it("a reply's summaries are its chat user's only", async ({ broker }) => {
      const alice = widget("alice-w", "c1", "a1", 1, "alice");
      await broker.view(alice, "c1");
      await broker.receive(question("q1", "c1"));
      await broker.answer(acting(alice), "q1", { type: "text", text: "SQLite" });
      expect(
        await broker.replySummaries({ userId: "alice", isOwner: false }, "c1", "a1"),
      ).toHaveLength(1);
      expect(
        await broker.replySummaries({ userId: "mallory", isOwner: false }, "c1", "a1"),
      ).toEqual([]);
    });
  });

  describe("§2 replies on the Gateway's /v1 endpoint (the Open WebUI filter's sessions)", () => {
    it("the filter's reply start records the chat's owner before any widget: a guest's approval and secret request are refused at once", async ({
      store,
      channel,
      broker,
      tabs,
    }) => {
      await broker.replyStarted({ chatId: "c1", userId: "alice", reply: { msg: "m1", mts: T0 } });
      await broker.receive(approval("p1", "c1", { replyId: "m1" }));
      await broker.receive(secret("s1", "c1", { replyId: "m1" }));
      expect(channel.refused).toEqual(["p1", "s1"]);
      expect(await store.get("p1")).toMatchObject({ status: "denied", replyId: "m1" });
      expect(tabs.timeline).toEqual([]);
    });

    it("asks that waited for an unknown owner meet the guest rules at the reply start", async ({
      channel,
      broker,
    }) => {
      await broker.receive(approval("p1", "c1"));
      await broker.replyStarted({ chatId: "c1", userId: "alice", reply: { msg: "m1", mts: T0 } });
      expect(channel.refused).toEqual(["p1"]);
    });

    it("the first reply's user stays the chat's owner, and the newest reply is the live one", async ({
      store,
      broker,
    }) => {
      await broker.replyStarted({ chatId: "c1", userId: "alice", reply: { msg: "m1", mts: T0 } });
      await broker.replyStarted({
        chatId: "c1",
        userId: "mallory",
        reply: { msg: "m2", mts: T0 + 5 },
      });
      expect(await store.chatOwner("c1")).toBe("alice");
      expect(await broker.isLiveReply("c1", { msg: "m1", mts: T0 })).toBe(false);
      expect(await broker.isLiveReply("c1", { msg: "m2", mts: T0 + 5 })).toBe(true);
    });

    it("a text prompt answered as the chat's next message: only the chat's own widget may answer, its ack carries the message, the source is told nothing", async ({
      store,
      channel,
      broker,
    }) => {
      const prompt = textPrompt("tp1", "c1");
      const inChat = {
        ...prompt,
        replyId: "m1",
        textPrompt: {
          fallbackText: "Which database?",
          form: "text" as const,
          continues: "chat" as const,
        },
      };
      const owned = widget("w1", "c1", "m1", 0);
      await broker.view(owned, "c1");
      await broker.receive(inChat);
      expect(
        await broker.answer(tab("dash"), "tp1", { type: "text", text: "SQLite" }),
      ).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
      expect(
        await broker.answer(widget("w2", "c2", "m9", 0), "tp1", { type: "text", text: "SQLite" }),
      ).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
      expect(await broker.answer(acting(owned), "tp1", { type: "text", text: "SQLite" })).toEqual({
        ok: true,
        status: "answered",
        chatMessage: "SQLite",
      });
      expect(channel.delivered).toEqual([]);
      expect(await store.get("tp1")).toMatchObject({
        status: "answered",
        resolution: { summary: "SQLite" },
      });
    });
  });

  /**
   * Any interleaving of tabs viewing, switching and leaving chats, asks arriving and ending: once it
   * settles, every pending ask is held by exactly the newest tab viewing its chat (none if no tab does),
   * as told by the ask:show / ask:close each tab received.
   */
  it("§2 live widget invariant: whatever the order of views, leaves and arrivals, one card on the newest view of the latest reply", async ({
    clock,
  }) => {
    // Widgets of one chat: two tabs of reply a1, one of a2, two of a3 (mint times in that order).
    const widgets: Record<string, { msg: string; mts: number }> = {
      "a1-x": { msg: "a1", mts: 1 },
      "a1-y": { msg: "a1", mts: 1 },
      "a2-x": { msg: "a2", mts: 2 },
      "a3-x": { msg: "a3", mts: 3 },
      "a3-y": { msg: "a3", mts: 3 },
    };
    const ids = Object.keys(widgets);
    const step = fc.oneof(
      fc.record({ op: fc.constant("view" as const), tab: fc.constantFrom(...ids) }),
      fc.record({ op: fc.constant("leave" as const), tab: fc.constantFrom(...ids) }),
      fc.record({ op: fc.constant("arrive" as const) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 25 }),
        fc.boolean(),
        async (steps, concurrently) => {
          const run = new AskBroker({
            store: new SqliteAskStore(":memory:"),
            presence: new MemoryPresence(),
            source: new ScriptedChannel(),
            clock,
            owners: new Set(["owner"]),
            instanceId: "p",
            log: () => {},
          });
          const seen = new Tabs(run);
          // The model: the newest reply any widget viewed with, and the live views in order.
          let newest = 0;
          let live: string[] = [];
          let arrived = 0;
          /** Tabs whose last step was a view, live or not (a tab that left holds nothing, it knows). */
          const present = new Set<string>();
          const work: Promise<unknown>[] = [];
          for (const s of steps) {
            let next: Promise<unknown>;
            if (s.op === "view") {
              const reply = widgets[s.tab]!;
              live = live.filter((id) => id !== s.tab);
              if (reply.mts >= newest) {
                newest = reply.mts;
                live = [...live.filter((id) => widgets[id]!.mts === newest), s.tab];
              }
              present.add(s.tab);
              next = run.view(widget(s.tab, "c1", reply.msg, reply.mts), "c1");
            } else if (s.op === "leave") {
              live = live.filter((id) => id !== s.tab);
              present.delete(s.tab);
              next = run.leave(s.tab);
            } else {
              next = run.receive(question(`q${arrived++}`, "c1"));
            }
            if (concurrently) work.push(next);
            else await next;
          }
          await Promise.all(work);
          await settled();
          const expected = live.at(-1) ?? null;
          for (const ask of run.pendingAsks) {
            expect(await run.shownTo(ask.id)).toBe(expected);
            // No other tab still there shows it: superseded widgets dropped it, the same reply's got handed-off.
            expect(
              ids.filter((id) => present.has(id) && seen.holders(ask.id).includes(id)),
            ).toEqual(expected ? [expected] : []);
          }
          run.shutdown();
        },
      ),
      { numRuns: 200 },
    );
  });
});
