// The routing rules (docs/ARCHITECTURE.md#routing) row by row on the broker alone (test/support/broker-harness.ts): an ask ends at its
// expiry, and no timer outlives it.
import { describe, expect } from "vitest";
import { CANCELLED_ELSEWHERE } from "../../lib/outcomes.ts";
import { approval, question, textPrompt } from "../../test/support/ask-fixtures.ts";
import { brokerTest as it, settled, tab } from "../../test/support/broker-harness.ts";

describe("AskBroker (the routing rules on the broker, injected clock)", () => {
  describe("§6 timeout", () => {
    it("ends at expiresAt: the card closes with expired, an answer then gets EXPIRED, no timer is left", async ({
      clock,
      broker,
      tabs,
    }) => {
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      await broker.receive(question("q1", "c1"));
      expect(broker.activeTimers).toBe(1);
      clock.advance(899_999);
      await settled();
      expect(tabs.closes("t1", "q1")).toEqual([]);
      clock.advance(1);
      await settled();
      expect(tabs.closes("t1", "q1")).toEqual([
        { tabId: "t1", event: "close", askId: "q1", reason: "expired", summary: "Expired" },
      ]);
      expect(await broker.answer(t1, "q1", { type: "text", text: "SQLite" })).toMatchObject({
        ok: false,
        error: { code: "EXPIRED" },
      });
      expect(broker.activeTimers).toBe(0);
      expect(clock.pendingTimers).toBe(0);
    });

    it("an approval ends at its own expiresAt (120 s)", async ({ clock, broker, tabs }) => {
      await broker.view(tab("t1"), "c1");
      await broker.receive(approval("p1", "c1"));
      clock.advance(120_000);
      await settled();
      expect(tabs.closes("t1", "p1")).toMatchObject([{ reason: "expired" }]);
    });

    it("a text prompt ends as text after its timeout, and the end is announced once", async ({
      clock,
      broker,
      tabs,
    }) => {
      const ended: string[] = [];
      broker.on("ask:ended", (ask, reason) => ended.push(`${ask.id}:${reason}`));
      await broker.view(tab("t1"), "c1");
      await broker.receive(textPrompt("tp1", "c1", "secret"));
      clock.advance(240_000);
      await settled();
      expect(tabs.closes("t1", "tp1")).toEqual([
        {
          tabId: "t1",
          event: "close",
          askId: "tp1",
          reason: "ended-as-text",
          summary: "Secret not received",
        },
      ]);
      expect(ended).toEqual(["tp1:ended-as-text"]);
    });

    it("every exit path clears the ask's timer", async ({ clock, broker }) => {
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      for (const id of ["answered", "ended", "denied"]) await broker.receive(question(id, "c1"));
      await broker.answer(t1, "answered", { type: "text", text: "SQLite" });
      await broker.end("ended", CANCELLED_ELSEWHERE);
      expect(broker.activeTimers).toBe(1);
      broker.shutdown();
      expect(clock.pendingTimers).toBe(0);
    });
  });
});
