// The routing rules (docs/ARCHITECTURE.md#routing) row by row on the broker alone (test/support/broker-harness.ts): who is asked when an ask
// arrives: the newest tab viewing its chat, none, a guest's chat, a thread, a sub-agent.
import { describe, expect } from "vitest";
import { approval, question, secret, textPrompt } from "../../test/support/ask-fixtures.ts";
import { brokerTest as it, settled, tab } from "../../test/support/broker-harness.ts";
import { WIDGET_WAIT_MS } from "./arrivals.ts";
import type { AskBroker } from "./broker.ts";

describe("AskBroker (the routing rules on the broker, injected clock)", () => {
  describe("§6 arrives, a tab views the chat", () => {
    it.for([
      ["question", () => question("a1", "c1")],
      ["secret request", () => secret("a1", "c1")],
      ["approval", () => approval("a1", "c1")],
      ["text prompt", () => textPrompt("a1", "c1")],
    ] as const)("%s: shown on the newest viewing tab only", async ([, make], { broker, tabs }) => {
      await broker.view(tab("old"), "c1");
      await broker.view(tab("new"), "c1");
      await broker.view(tab("other"), "c2");
      await broker.receive(make());
      expect(tabs.timeline).toEqual([{ tabId: "new", event: "show", askId: "a1" }]);
      expect(await broker.shownTo("a1")).toBe("new");
    });

    it("the newest viewer is the latest chat:view, not the latest connection", async ({
      broker,
      tabs,
    }) => {
      await broker.view(tab("second"), "c1");
      await broker.view(tab("first"), "c2");
      await broker.view(tab("first"), "c1");
      await broker.receive(question("q1", "c1"));
      expect(tabs.shownOn("first")).toEqual(["q1"]);
      expect(tabs.shownOn("second")).toEqual([]);
    });

    it("arrives through the channel as a domain event", async ({ channel, broker, tabs }) => {
      await broker.view(tab("t1"), "c1");
      channel.arrive(question("q1", "c1"));
      await settled();
      expect(tabs.shownOn("t1")).toEqual(["q1"]);
      expect(tabs.changes.map((ask) => [ask.id, ask.status])).toEqual([["q1", "pending"]]);
    });

    it("a tab or dashboard answering the moment the ask reaches it finds it stored (the claim needs the row)", async ({
      broker,
    }) => {
      const t1 = tab("t1");
      await broker.view(t1, "c1");
      const acks: Promise<unknown>[] = [];
      const answerSoon = (askId: string) =>
        queueMicrotask(() => acks.push(broker.answer(t1, askId, { type: "text", text: "SQLite" })));
      broker.cardEvents.on("card:show", (_tabId, ask) => answerSoon(ask.id));
      broker.on("ask:changed", (ask) => {
        if (ask.status === "pending" && ask.chatId === null) answerSoon(ask.id);
      });
      await broker.receive(question("q1", "c1"));
      await broker.receive(question("q2", null));
      await settled();
      expect(await Promise.all(acks)).toEqual([
        { ok: true, status: "answered" },
        { ok: true, status: "answered" },
      ]);
    });

    it("the broadcast ask carries no routing state", async ({ store, broker, tabs }) => {
      await broker.view(tab("t1"), "c1");
      await broker.receive(question("q1", "c1"));
      expect(tabs.changes[0]).not.toHaveProperty("shownTo");
      expect(await store.get("q1")).not.toHaveProperty("shownTo");
    });
  });

  describe("§6 arrives, no tab views the chat", () => {
    it("question, secret request, approval: stay pending and are shown as soon as a tab opens the chat", async ({
      broker,
      tabs,
    }) => {
      for (const ask of [question("q1", "c1"), secret("s1", "c1"), approval("p1", "c1")])
        await broker.receive(ask);
      expect(tabs.timeline).toEqual([]);
      expect(broker.pendingAsks.map((ask) => ask.id)).toEqual(["q1", "s1", "p1"]);
      await broker.view(tab("late"), "c1");
      expect(tabs.shownOn("late")).toEqual(["q1", "s1", "p1"]);
    });

    it("with no tab it waits until its expiry, then no tab ever sees it", async ({
      clock,
      store,
      broker,
      tabs,
    }) => {
      await broker.receive(question("q1", "c1"));
      clock.advance(900_000);
      await settled();
      expect((await store.get("q1"))?.status).toBe("expired");
      await broker.view(tab("late"), "c1");
      expect(tabs.timeline).toEqual([]);
    });

    it("text prompt: ends as text at once, with its fallback text; a secret prompt says none was received", async ({
      clock,
      store,
      broker,
    }) => {
      const ended: [string, string][] = [];
      broker.on("ask:ended", (ask, reason) => ended.push([ask.id, reason]));
      await broker.receive(textPrompt("tp1", "c1"));
      await broker.receive(textPrompt("tp2", "c1", "secret"));
      expect(await store.get("tp1")).toMatchObject({
        status: "ended-as-text",
        resolution: { summary: "Which database?" },
      });
      expect(await store.get("tp2")).toMatchObject({
        status: "ended-as-text",
        resolution: { summary: "Secret not received" },
      });
      expect(ended).toEqual([
        ["tp1", "ended-as-text"],
        ["tp2", "ended-as-text"],
      ]);
      expect(broker.pendingAsks).toEqual([]);
      expect(clock.pendingTimers).toBe(0);
    });

    // Its reply's widget is on its way: a brand-new chat's first reply gets its widget late (Open WebUI 0.11).
    const announced = (id: string) => ({
      ...textPrompt(id, "c1"),
      origin: { kind: "reply" as const, userId: "owner" },
    });

    it("text prompt of a reply the filter announced: waits for its widget, and once shown keeps its own timeout", async ({
      clock,
      store,
      broker,
      tabs,
    }) => {
      await broker.receive(announced("tp1"));
      clock.advance(WIDGET_WAIT_MS - 1_000);
      await settled();
      expect(broker.pendingAsks.map((ask) => ask.id)).toEqual(["tp1"]);
      await broker.view(tab("widget"), "c1");
      expect(tabs.shownOn("widget")).toEqual(["tp1"]);
      clock.advance(2_000);
      await settled();
      expect((await store.get("tp1"))?.status).toBe("pending");
      clock.advance(240_000);
      await settled();
      expect((await store.get("tp1"))?.status).toBe("ended-as-text");
      expect(clock.pendingTimers).toBe(0);
    });

    it("text prompt of a reply the filter announced: no widget in time, it ends as text with its fallback text", async ({
      clock,
      store,
      broker,
    }) => {
      await broker.receive(announced("tp1"));
      clock.advance(WIDGET_WAIT_MS);
      await settled();
      expect(await store.get("tp1")).toMatchObject({
        status: "ended-as-text",
        resolution: { summary: "Which database?" },
      });
      expect(broker.pendingAsks).toEqual([]);
      expect(clock.pendingTimers).toBe(0);
    });

    it("text prompt: a tab viewing another chat does not count", async ({ store, broker }) => {
      await broker.view(tab("elsewhere"), "c2");
      await broker.receive(textPrompt("tp1", "c1"));
      expect((await store.get("tp1"))?.status).toBe("ended-as-text");
    });
  });

  describe("§6 chat's user is not in OWNER_USERS", () => {
    // The guest opens the chat from its widget: only an embed token for the chat records its user.
    const guestChat = async (broker: AskBroker) => {
      await broker.view(tab("guest", "alice", "c1"), "c1");
    };

    it("question: asked normally on the guest's tab", async ({ channel, broker, tabs }) => {
      await guestChat(broker);
      await broker.receive(question("q1", "c1"));
      expect(tabs.holds("guest", "q1")).toBe(true);
      expect(channel.refused).toEqual([]);
    });

    it("secret request: cancelled at once; approval: denied at once; neither shown", async ({
      store,
      channel,
      broker,
      tabs,
    }) => {
      await guestChat(broker);
      await broker.receive(secret("s1", "c1"));
      await broker.receive(approval("p1", "c1"));
      expect(await store.get("s1")).toMatchObject({
        status: "denied",
        resolution: { summary: "Cancelled: secrets can only be entered by the owner" },
      });
      expect(await store.get("p1")).toMatchObject({
        status: "denied",
        resolution: { summary: "Denied: this needs the owner's approval" },
      });
      expect(channel.refused).toEqual(["s1", "p1"]);
      expect(tabs.timeline).toEqual([]);
    });

    it("asks that waited for an unknown owner meet the guest rules once a guest is recorded as the owner", async ({
      store,
      channel,
      broker,
      tabs,
    }) => {
      await broker.receive(approval("p1", "c1"));
      await broker.receive(question("q1", "c1"));
      await guestChat(broker);
      await settled();
      expect((await store.get("p1"))?.status).toBe("denied");
      expect(channel.refused).toEqual(["p1"]);
      expect(tabs.shownOn("guest")).toEqual(["q1"]);
    });

    it("text prompts are asked normally", async ({ broker, tabs }) => {
      await guestChat(broker);
      await broker.receive(textPrompt("tp1", "c1", "secret"));
      expect(tabs.holds("guest", "tp1")).toBe(true);
    });
  });

  describe("§6 session is a channel thread", () => {
    it("approval: denied at once, no card", async ({ store, channel, broker, tabs }) => {
      await broker.view(tab("t1"), "c1");
      await broker.receive(
        approval("p1", "c1", { sessionKey: "agent:dev:openwebui:c1:thread:42" }),
      );
      expect((await store.get("p1"))?.status).toBe("denied");
      expect(channel.refused).toEqual(["p1"]);
      expect(tabs.timeline).toEqual([]);
    });
  });

  describe("§6 session is a sub-agent", () => {
    it("not asked in chat tabs: only the dashboard feed and list have it", async ({
      broker,
      tabs,
    }) => {
      await broker.view(tab("t1"), "c1");
      await broker.receive(question("q1", null, { sessionKey: "agent:dev:subagent:1234" }));
      expect(tabs.timeline).toEqual([]);
      expect(tabs.changes.map((ask) => ask.id)).toEqual(["q1"]);
      expect((await broker.list(tab("dash"), undefined)).map((ask) => ask.id)).toEqual(["q1"]);
    });
  });
});
