// The routing rules (docs/ARCHITECTURE.md#routing) row by row on the broker alone (test/support/broker-harness.ts): the card moves with the
// chat's newest viewer: a newer tab, a switch or a close, and any order of these.
import fc from "fast-check";
import { describe, expect } from "vitest";
import { CANCELLED_ELSEWHERE } from "../../lib/outcomes.ts";
import { approval, question, textPrompt } from "../../test/support/ask-fixtures.ts";
import {
  brokerTest as it,
  ScriptedChannel,
  settled,
  tab,
  Tabs,
} from "../../test/support/broker-harness.ts";
import { SqliteAskStore } from "../store/sqlite.ts";
import { AskBroker } from "./broker.ts";
import type { Tab } from "./ports.ts";
import { MemoryPresence } from "./presence.ts";

/** Presence that says, in the step it takes it, that a tab left a chat (switching or leaving). */
class LeavesSeen extends MemoryPresence {
  onLeft: (tabId: string, chatId: string) => void = () => {};
  private readonly chats = new Map<string, string>();
  override view(tab: Tab, chatId: string): Promise<string | null> {
    this.moved(tab.id, chatId);
    return super.view(tab, chatId);
  }
  override leave(tabId: string): Promise<string | null> {
    this.moved(tabId, null);
    return super.leave(tabId);
  }
  private moved(tabId: string, chatId: string | null): void {
    const was = this.chats.get(tabId);
    if (chatId === null) this.chats.delete(tabId);
    else this.chats.set(tabId, chatId);
    if (was !== undefined && was !== chatId) this.onLeft(tabId, was);
  }
}

describe("AskBroker (the routing rules on the broker, injected clock)", () => {
  describe("§6 newer tab opens the chat (reload, phone)", () => {
    it("moves there once; the old tab gets ask:close handed-off once; viewing again changes nothing", async ({
      broker,
      tabs,
    }) => {
      await broker.view(tab("older"), "c1");
      await broker.receive(question("q1", "c1"));
      await broker.view(tab("phone"), "c1");
      expect(tabs.timeline).toEqual([
        { tabId: "older", event: "show", askId: "q1" },
        { tabId: "older", event: "close", askId: "q1", reason: "handed-off" },
        { tabId: "phone", event: "show", askId: "q1" },
      ]);
      await broker.view(tab("phone"), "c1");
      expect(tabs.timeline).toHaveLength(3);
    });

    it("a reload (the old socket goes, a new one views the chat) moves it to the reloaded tab", async ({
      broker,
      tabs,
    }) => {
      await broker.view(tab("before"), "c1");
      await broker.receive(question("q1", "c1"));
      await broker.leave("before");
      await broker.view(tab("reloaded"), "c1");
      expect(tabs.closes("before", "q1")).toEqual([]);
      expect(tabs.holds("reloaded", "q1")).toBe(true);
      expect(await broker.shownTo("q1")).toBe("reloaded");
    });

    it("the older tab viewing again takes it back once; only one tab holds the card at a time", async ({
      broker,
      tabs,
    }) => {
      await broker.view(tab("a"), "c1");
      await broker.receive(question("q1", "c1"));
      await broker.view(tab("b"), "c1");
      await broker.view(tab("a"), "c1");
      expect(tabs.shows("a", "q1")).toBe(2);
      expect(tabs.closes("a", "q1")).toEqual([
        { tabId: "a", event: "close", askId: "q1", reason: "handed-off" },
      ]);
      expect(tabs.closes("b", "q1")).toEqual([
        { tabId: "b", event: "close", askId: "q1", reason: "handed-off" },
      ]);
      expect(["a", "b"].filter((id) => tabs.holds(id, "q1"))).toEqual(["a"]);
    });

    it("a text prompt moves the same way", async ({ broker, tabs }) => {
      await broker.view(tab("old"), "c1");
      await broker.receive(textPrompt("tp1", "c1"));
      await broker.view(tab("new"), "c1");
      expect(tabs.closes("old", "tp1")).toEqual([
        { tabId: "old", event: "close", askId: "tp1", reason: "handed-off" },
      ]);
      expect(tabs.holds("new", "tp1")).toBe(true);
    });
  });

  describe("§6 the tab switches to another chat or closes", () => {
    it("switching chats does not cancel it, sends no ask:close, and it is shown again when a tab views the chat", async ({
      broker,
      tabs,
    }) => {
      await broker.view(tab("t1"), "c1");
      await broker.receive(question("q1", "c1"));
      await broker.view(tab("t1"), "c2");
      expect(tabs.closes("t1", "q1")).toEqual([]);
      expect(broker.getPending("q1")?.status).toBe("pending");
      expect(await broker.shownTo("q1")).toBeNull();
      await broker.view(tab("t1"), "c1");
      expect(tabs.shows("t1", "q1")).toBe(2);
    });

    it("chat:leave does not cancel it; the next tab viewing the chat gets it", async ({
      broker,
      tabs,
    }) => {
      await broker.view(tab("t1"), "c1");
      await broker.receive(approval("p1", "c1"));
      await broker.leave("t1");
      expect(await broker.shownTo("p1")).toBeNull();
      expect(tabs.closes("t1", "p1")).toEqual([]);
      await broker.view(tab("t2"), "c1");
      expect(tabs.holds("t2", "p1")).toBe(true);
    });

    it("closing the newest tab: an older tab still viewing shows it", async ({ broker, tabs }) => {
      await broker.view(tab("older"), "c1");
      await broker.view(tab("newer"), "c1");
      await broker.receive(question("q1", "c1"));
      await broker.leave("newer");
      expect(tabs.holds("older", "q1")).toBe(true);
      expect(broker.getPending("q1")?.status).toBe("pending");
    });

    it("text prompt: stays pending until its own timeout", async ({ clock, store, broker }) => {
      await broker.view(tab("t1"), "c1");
      await broker.receive(textPrompt("tp1", "c1"));
      await broker.leave("t1");
      clock.advance(239_999);
      await settled();
      expect(broker.getPending("tp1")?.status).toBe("pending");
      clock.advance(1);
      await settled();
      expect((await store.get("tp1"))?.status).toBe("ended-as-text");
    });
  });

  it("§6 routing invariant: whatever the order of events, one card on the newest viewer", async ({
    clock,
  }) => {
    const chats = ["c1", "c2"];
    const tabIds = ["t1", "t2", "t3"];
    const step = fc.oneof(
      fc.record({
        op: fc.constant("view" as const),
        tab: fc.constantFrom(...tabIds),
        chat: fc.constantFrom(...chats),
      }),
      fc.record({ op: fc.constant("leave" as const), tab: fc.constantFrom(...tabIds) }),
      fc.record({ op: fc.constant("arrive" as const), chat: fc.constantFrom(...chats) }),
      fc.record({ op: fc.constant("end" as const), index: fc.nat(5) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 25 }),
        fc.boolean(),
        async (steps, concurrently) => {
          // A tab that switches chats or leaves drops the cards it had there, with no ask:close
          // (docs/PROTOCOL.md#server--client): coming back later, it holds only what it is shown again. Without this, an ask that ended
          // while the tab was away looked still held by it on its return. It drops what reached it until
          // the server took its step (a card shown to it just before crossed its leave on the way).
          const presence = new LeavesSeen();
          const run = new AskBroker({
            store: new SqliteAskStore(":memory:"),
            presence,
            source: new ScriptedChannel(),
            clock,
            owners: new Set(["owner"]),
            instanceId: "p",
            log: () => {},
          });
          const seen = new Tabs(run);
          presence.onLeft = (tabId, chatId) => seen.left(tabId, chatId);
          const viewing = new Map<string, string>();
          const order: string[] = [];
          const arrived: { id: string; chat: string }[] = [];
          const work: Promise<unknown>[] = [];
          for (const s of steps) {
            let next: Promise<unknown>;
            if ("tab" in s && order.includes(s.tab)) order.splice(order.indexOf(s.tab), 1);
            if (s.op === "view") {
              viewing.set(s.tab, s.chat);
              order.push(s.tab);
              next = run.view(tab(s.tab), s.chat);
            } else if (s.op === "leave") {
              viewing.delete(s.tab);
              next = run.leave(s.tab);
            } else if (s.op === "arrive") {
              const id = `q${arrived.length}`;
              arrived.push({ id, chat: s.chat });
              next = run.receive(question(id, s.chat));
            } else {
              next = run.end(arrived[s.index]?.id ?? "none", CANCELLED_ELSEWHERE);
            }
            if (concurrently) work.push(next);
            else await next;
          }
          await Promise.all(work);
          await settled();
          for (const ask of run.pendingAsks) {
            const newest = order.filter((id) => viewing.get(id) === ask.chatId).at(-1) ?? null;
            expect(await run.shownTo(ask.id)).toBe(newest);
            const holders = tabIds.filter(
              (id) => viewing.get(id) === ask.chatId && seen.holds(id, ask.id, ask.chatId),
            );
            expect(holders).toEqual(newest ? [newest] : []);
          }
          // An ended ask is held by no tab viewing its chat (one that left knows its card went).
          for (const { id, chat } of arrived.filter(({ id }) => !run.getPending(id))) {
            expect(
              tabIds.filter((t) => viewing.get(t) === chat && seen.holds(t, id, chat)),
            ).toEqual([]);
          }
          run.shutdown();
        },
      ),
      {
        numRuns: 200,
        // Found by a run (seed 1404239880): q0 ends while t1 is in c1; t1 back in c2 holds nothing of it.
        examples: [
          [
            [
              { op: "arrive", chat: "c2" },
              { op: "view", tab: "t1", chat: "c2" },
              { op: "view", tab: "t1", chat: "c1" },
              { op: "end", index: 0 },
              { op: "view", tab: "t1", chat: "c2" },
            ],
            false,
          ],
        ],
      },
    );
  });
});
