// The routing rules (docs/ARCHITECTURE.md#routing) row by row on the broker alone (test/support/broker-harness.ts): who may view a chat, see
// its asks and answer them (docs/SECURITY.md#chat-ownership).
import { describe, expect } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { question } from "../../test/support/ask-fixtures.ts";
import { brokerTest as it, tab } from "../../test/support/broker-harness.ts";

describe("AskBroker (the routing rules on the broker, injected clock)", () => {
  describe("§9 chat ownership", () => {
    it("a non-owner cannot view another user's chat, see its asks or answer them", async ({
      broker,
      tabs,
    }) => {
      expect(await broker.view(tab("alice-tab", "alice", "c1"), "c1")).toEqual({ ok: true });
      expect(await broker.view(tab("bob-tab", "bob", "c1"), "c1")).toMatchObject({
        ok: false,
        error: { code: "FORBIDDEN" },
      });
      expect(await broker.view(tab("bob-tab", "bob"), "c1")).toMatchObject({
        ok: false,
        error: { code: "FORBIDDEN" },
      });
      await broker.receive(question("q1", "c1"));
      expect(tabs.timeline).toEqual([{ tabId: "alice-tab", event: "show", askId: "q1" }]);
      expect(await broker.list(tab("bob-tab", "bob"), undefined)).toEqual([]);
      expect(await broker.answer(tab("bob-tab", "bob"), "q1", { type: "cancel" })).toMatchObject({
        ok: false,
        error: { code: "NOT_FOUND" },
      });
    });

    it("chat squatting: an unclaimed non-owner token records no owner, so the chat's real user is not locked out", async ({
      store,
      broker,
    }) => {
      expect(await broker.view(tab("squat", "mallory"), "c1")).toMatchObject({
        ok: false,
        error: { code: "FORBIDDEN" },
      });
      expect(await store.chatOwner("c1")).toBeNull();
      expect(await broker.view(tab("alice-tab", "alice", "c1"), "c1")).toEqual({ ok: true });
      expect(await store.chatOwner("c1")).toBe("alice");
      // Once alice owns it, her unclaimed token (an Open WebUI session) may view it too.
      expect(await broker.view(tab("alice-dash", "alice"), "c1")).toEqual({ ok: true });
    });

    it("embed tokens read other users' history: an embed token lists only its own chat, and only when its user owns it", async ({
      broker,
    }) => {
      await broker.view(tab("alice-tab", "alice", "c1"), "c1");
      await broker.receive(question("q1", "c1"));
      await broker.answer(tab("alice-tab", "alice", "c1"), "q1", { type: "text", text: "SQLite" });
      await broker.view(tab("carol-tab", "carol", "c2"), "c2");
      await broker.receive(question("q2", "c2"));
      const ids = (listing: Ask[]) => listing.map((ask) => ask.id).sort();
      for (const status of ["all", "answered"] as const) {
        expect(
          ids(await broker.list(tab("mallory-tab", "mallory", "c1"), status)),
          `mallory's embed token for alice's chat, ${status}`,
        ).toEqual([]);
        expect(
          ids(await broker.list(tab("mallory-dash", "mallory"), status)),
          `mallory's unclaimed token, ${status}`,
        ).toEqual([]);
      }
      expect(ids(await broker.list(tab("alice-tab", "alice", "c1"), "all"))).toEqual(["q1"]);
      expect(ids(await broker.list(tab("alice-dash", "alice"), "all"))).toEqual(["q1"]);
      expect(ids(await broker.list(tab("owner-dash", "owner"), "all"))).toEqual(["q1", "q2"]);
      // An owner's embed token is limited to its chat too.
      expect(ids(await broker.list(tab("owner-widget", "owner", "c2"), "all"))).toEqual(["q2"]);
    });

    it("FORBIDDEN vs NOT_FOUND tells whether an ask id exists: another user's ask answers NOT_FOUND like a missing one", async ({
      broker,
    }) => {
      await broker.view(tab("alice-tab", "alice", "c1"), "c1");
      await broker.receive(question("q1", "c1"));
      const probe = tab("mallory-tab", "mallory", "c9");
      const existing = await broker.answer(probe, "q1", { type: "cancel" });
      const missing = await broker.answer(probe, "no-such-ask", { type: "cancel" });
      expect(existing).toEqual(missing);
      expect(existing).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
      expect(broker.getPending("q1")?.status).toBe("pending");
    });

    it("unbounded chat registration: views of unknown chats by an unclaimed token write no rows, and listing never needs one SQL variable per chat", async ({
      store,
      broker,
    }) => {
      const mallory = tab("mallory-tab", "mallory");
      for (let i = 0; i < 1_000; i++)
        expect(await broker.view(mallory, `spam-${i}`)).toMatchObject({
          ok: false,
          error: { code: "FORBIDDEN" },
        });
      expect(await store.chatOwner("spam-0")).toBeNull();
      expect(await store.chatOwner("spam-999")).toBeNull();
      // A user who does own a great many chats (each opened from its widget) can still list them.
      for (let i = 0; i < 40_000; i++) await store.recordChatOwner(`alice-${i}`, "alice");
      await broker.view(tab("alice-tab", "alice", "alice-7"), "alice-7");
      await broker.receive(question("q1", "alice-7"));
      expect((await broker.list(tab("alice-dash", "alice"), "all")).map((ask) => ask.id)).toEqual([
        "q1",
      ]);
    });

    it("`all` lists every pending ask however old, beside the store's newest of the rest (the dashboard lists once)", async ({
      store,
      broker,
      clock,
    }) => {
      await broker.receive(question("oldest", "c1"));
      for (let i = 0; i < 250; i++) {
        clock.advance(1_000);
        await store.put(
          question(`done-${i}`, "c1", {
            status: "answered",
            resolution: { by: "owner", at: clock.now(), summary: "SQLite", tabId: null },
          }),
        );
      }
      const listed = await broker.list(tab("dash"), "all");
      expect(listed.filter((ask) => ask.id === "oldest")).toMatchObject([{ status: "pending" }]);
      expect(listed.filter((ask) => ask.status === "answered")).toHaveLength(200);
      expect(listed.at(1)?.id).toBe("done-249");
    });

    it("a chat whose owner is not known yet is shown to owners only", async ({ broker }) => {
      await broker.receive(question("q1", "c1"));
      expect(await broker.list(tab("bob-tab", "bob"), undefined)).toEqual([]);
      expect((await broker.list(tab("dash"), undefined)).map((ask) => ask.id)).toEqual(["q1"]);
    });

    it("an embed token's chat claim limits the tab to that chat", async ({ broker }) => {
      await broker.receive(question("outside", "c2"));
      const widget = tab("w", "owner", "c1");
      expect(await broker.view(widget, "c2")).toMatchObject({
        ok: false,
        error: { code: "FORBIDDEN" },
      });
      expect(await broker.view(widget, "c1")).toEqual({ ok: true });
      expect(await broker.list(widget, undefined)).toEqual([]);
      // As if there were no such ask: a refusal would tell the tab the id exists.
      expect(await broker.answer(widget, "outside", { type: "cancel" })).toMatchObject({
        ok: false,
        error: { code: "NOT_FOUND" },
      });
    });
  });
});
