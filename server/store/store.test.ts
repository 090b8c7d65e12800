import { describe, expect, it } from "vitest";
import { question } from "../../test/support/ask-fixtures.ts";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { storeBackends } from "../../test/support/store-backends.ts";
import { REPLY_START_KEEP_MS } from "./store.ts";

/** The contract every AskStore keeps, run against SQLite and a real Redis alike. */

const answered = (id: string, chatId: string | null, at: number) =>
  question(id, chatId, {
    status: "answered",
    resolution: { by: "owner", at, summary: "SQLite", tabId: null },
  });
const ids = (asks: { id: string }[]) => asks.map((ask) => ask.id);

describe.each(storeBackends())("AskStore on $name", (backend) => {
  it("puts and gets an ask; an unknown id is null", async () => {
    const store = await backend.open();
    const ask = question("q1", "c1");
    await store.put(ask);
    expect(await store.get("q1")).toEqual(ask);
    expect(await store.get("nope")).toBeNull();
  });

  it("a terminal ask is a tombstone: a later pending or terminal write never revives or changes it", async () => {
    const store = await backend.open();
    await store.put(question("q1", "c1"));
    await store.put(answered("q1", "c1", 1_700_000_001_000));
    await store.put(question("q1", "c1"));
    await store.put(
      question("q1", "c1", {
        status: "expired",
        resolution: { by: null, at: 1_700_000_002_000, summary: "Expired", tabId: null },
      }),
    );
    expect(await store.get("q1")).toMatchObject({
      status: "answered",
      resolution: { summary: "SQLite" },
    });
    expect(ids(await store.pending())).toEqual([]);
    expect(await store.claim("q1", "a")).toBe(false);
  });

  it("pending() lists pending asks oldest first; ended ones leave it", async () => {
    const store = await backend.open();
    await store.put(question("late", "c1", { createdAt: 3 }));
    await store.put(question("early", "c2", { createdAt: 1 }));
    await store.put(question("middle", null, { createdAt: 2 }));
    await store.put(question("done", "c1", { createdAt: 0 }));
    await store.put(answered("done", "c1", 5));
    expect(ids(await store.pending())).toEqual(["early", "middle", "late"]);
  });

  it("list: newest change first, filtered by status, chat and owned chats, up to the limit", async () => {
    const store = await backend.open();
    await store.recordChatOwner("alice-1", "alice");
    await store.recordChatOwner("alice-2", "alice");
    await store.recordChatOwner("bob-1", "bob");
    await store.put(answered("a1", "alice-1", 10));
    await store.put(answered("a2", "alice-2", 30));
    await store.put(question("a3", "alice-1", { createdAt: 40 }));
    await store.put(answered("b1", "bob-1", 20));
    await store.put(answered("n1", null, 50));
    await store.put(answered("unowned", "nobody-yet", 60));
    expect(ids(await store.list({}))).toEqual(["unowned", "n1", "a3", "a2", "b1", "a1"]);
    expect(ids(await store.list({ status: "answered" }))).toEqual([
      "unowned",
      "n1",
      "a2",
      "b1",
      "a1",
    ]);
    expect(ids(await store.list({ status: "pending" }))).toEqual(["a3"]);
    expect(ids(await store.list({ chatId: "alice-1" }))).toEqual(["a3", "a1"]);
    expect(ids(await store.list({ chatId: "alice-1", status: "answered" }))).toEqual(["a1"]);
    expect(ids(await store.list({ ownedBy: "alice" }))).toEqual(["a3", "a2", "a1"]);
    expect(ids(await store.list({ ownedBy: "alice", status: "answered" }))).toEqual(["a2", "a1"]);
    expect(ids(await store.list({ ownedBy: "alice", chatId: "bob-1" }))).toEqual([]);
    expect(ids(await store.list({ ownedBy: "bob" }))).toEqual(["b1"]);
    expect(ids(await store.list({ ownedBy: "mallory" }))).toEqual([]);
    expect(ids(await store.list({ limit: 2 }))).toEqual(["unowned", "n1"]);
    expect(ids(await store.list({ ownedBy: "alice", limit: 1 }))).toEqual(["a3"]);
    // A chat recorded after its asks were stored brings them into its owner's listing.
    await store.recordChatOwner("nobody-yet", "carol");
    expect(ids(await store.list({ ownedBy: "carol" }))).toEqual(["unowned"]);
    // An ask that ends moves from one status to the other.
    await store.put(answered("a3", "alice-1", 70));
    expect(ids(await store.list({ status: "pending" }))).toEqual([]);
    expect(ids(await store.list({ ownedBy: "alice", status: "answered" }))).toEqual([
      "a3",
      "a2",
      "a1",
    ]);
  });

  it("the first recorded owner of a chat stays", async () => {
    const store = await backend.open();
    expect(await store.chatOwner("c1")).toBeNull();
    expect(await store.recordChatOwner("c1", "alice")).toBe("alice");
    expect(await store.recordChatOwner("c1", "bob")).toBe("alice");
    await store.chatViewed("c1", "bob", 5);
    expect(await store.chatOwner("c1")).toBe("alice");
  });

  it("claim: one winner among many at once; release or a terminal write ends the claim", async () => {
    const store = await backend.open();
    await store.put(question("q1", "c1"));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.claim("q1", `tab-${i}`)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = `tab-${results.indexOf(true)}`;
    await store.release("q1", "someone-else");
    expect(await store.claim("q1", "late")).toBe(false);
    await store.release("q1", winner);
    expect(await store.claim("q1", "late")).toBe(true);
    // A pending write (a backfill) keeps the claim; a terminal one ends the ask and with it any claim.
    await store.put(question("q1", "c1"));
    expect(await store.claim("q1", "later")).toBe(false);
    await store.put(answered("q1", "c1", 9));
    expect(await store.claim("q1", "later")).toBe(false);
    expect(await store.claim("missing", "x")).toBe(false);
  });

  it.runIf(backend.shared)(
    "claim across instances: two instances answering at once, exactly one wins",
    async () => {
      const one = await backend.open();
      const two = await backend.shared!();
      for (let round = 0; round < 20; round++) {
        await one.put(question(`q${round}`, "c1"));
        const [a, b] = await Promise.all([
          one.claim(`q${round}`, "instance-1"),
          two.claim(`q${round}`, "instance-2"),
        ]);
        expect([a, b].filter(Boolean), `round ${round}`).toHaveLength(1);
      }
      // What one instance writes the other reads: asks, owners, tombstones.
      await one.recordChatOwner("c9", "alice");
      expect(await two.recordChatOwner("c9", "bob")).toBe("alice");
      await two.put(answered("q0", "c1", 5));
      await one.put(question("q0", "c1"));
      expect((await one.get("q0"))?.status).toBe("answered");
    },
  );

  it("owner-link key id: none at first, then the one set last", async () => {
    const store = await backend.open();
    expect(await store.ownerLinkKid()).toBeNull();
    await store.setOwnerLinkKid("k1");
    await store.setOwnerLinkKid("k2");
    expect(await store.ownerLinkKid()).toBe("k2");
  });

  describe("the live widget's notes (docs/ARCHITECTURE.md#live-and-idle-widgets)", () => {
    it("keeps the newest embed (reply and mint time) per chat, whatever order the embeds are seen in", async () => {
      const store = await backend.open();
      expect(await store.noteEmbed("c1", { msg: "a2", mts: 2_000 }, 10)).toEqual({
        msg: "a2",
        mts: 2_000,
      });
      expect(await store.noteEmbed("c1", { msg: "a1", mts: 1_000 }, 11)).toEqual({
        msg: "a2",
        mts: 2_000,
      });
      expect(await store.noteEmbed("c2", { msg: "b1", mts: 500 }, 12)).toEqual({
        msg: "b1",
        mts: 500,
      });
      expect(await store.noteEmbed("c1", { msg: "a3", mts: 1_700_000_003_000 }, 13)).toEqual({
        msg: "a3",
        mts: 1_700_000_003_000,
      });
      // A tie keeps the reply noted first.
      expect(await store.noteEmbed("c1", { msg: "a3-twin", mts: 1_700_000_003_000 }, 14)).toEqual({
        msg: "a3",
        mts: 1_700_000_003_000,
      });
      expect(await store.noteEmbed("c2", { msg: "b0", mts: 0 }, 15)).toEqual({
        msg: "b1",
        mts: 500,
      });
    });

    it.runIf(backend.shared)(
      "across instances: embeds noted at once from two instances leave the newest of all, and each sees one at least as new as its own",
      async () => {
        const one = await backend.open();
        const two = await backend.shared!();
        const embeds = Array.from({ length: 40 }, (_, i) => ({
          msg: `r${i}`,
          mts: 1_000 + ((i * 17) % 40),
        }));
        const seen = await Promise.all(
          embeds.map((embed, i) => (i % 2 === 0 ? one : two).noteEmbed("c1", embed, 10 + i)),
        );
        seen.forEach((newest, i) => expect(newest.mts).toBeGreaterThanOrEqual(embeds[i]!.mts));
        const newest = embeds.reduce((a, b) => (b.mts > a.mts ? b : a));
        expect(await one.noteEmbed("c1", { msg: "old", mts: 0 }, 99)).toEqual(newest);
        expect(await two.noteEmbed("c1", { msg: "old", mts: 0 }, 99)).toEqual(newest);
      },
    );

    it("lists the finished asks last shown in one reply, oldest first, never a pending one or another reply's", async () => {
      const store = await backend.open();
      const ended = (id: string, replyId: string | undefined, at: number) =>
        question(id, "c1", {
          replyId,
          status: "answered",
          resolution: { by: "u", at, summary: `answer ${id}`, tabId: "t" },
        });
      await store.put(ended("late", "a2", 300));
      await store.put(ended("early", "a2", 100));
      await store.put(ended("other-reply", "a1", 200));
      await store.put(ended("no-reply", undefined, 250));
      await store.put(question("pending", "c1", { replyId: "a2" }));
      await store.put({ ...ended("other-chat", "a2", 260), chatId: "c2" });
      expect(ids(await store.finishedInReply("c1", "a2"))).toEqual(["early", "late"]);
      expect(await store.finishedInReply("c1", "a3")).toEqual([]);
      // A pending ask that ends in the reply joins its summaries.
      await store.put(ended("pending", "a2", 400));
      expect(ids(await store.finishedInReply("c1", "a2"))).toEqual(["early", "late", "pending"]);
    });

    it("forgets a chat's embed note not renewed within the retention window", async () => {
      const store = await backend.open();
      await store.noteEmbed("old", { msg: "a9", mts: 1_000 }, 10);
      await store.noteEmbed("recent", { msg: "b9", mts: 1_000 }, 1_000);
      await store.prune(500, 100);
      expect(await store.noteEmbed("old", { msg: "a1", mts: 5 }, 2_000)).toEqual({
        msg: "a1",
        mts: 5,
      });
      expect(await store.noteEmbed("recent", { msg: "b1", mts: 5 }, 2_000)).toEqual({
        msg: "b9",
        mts: 1_000,
      });
    });
  });

  it("prune: terminal asks last changed before the cutoff go, with chats not viewed since and without a pending ask; a batch at a time", async () => {
    const store = await backend.open();
    await store.chatViewed("old", "alice", 100);
    await store.chatViewed("waiting", "alice", 100);
    await store.chatViewed("fresh", "alice", 100);
    await store.chatViewed("fresh", "alice", 5_000);
    await store.put(answered("old-1", "old", 200));
    await store.put(answered("old-2", "old", 300));
    await store.put(answered("recent", "fresh", 6_000));
    await store.put(question("still-pending", "waiting", { createdAt: 150, expiresAt: null }));
    expect(await store.prune(1_000, 1)).toEqual({ asks: 1, chats: 1 });
    expect(await store.prune(1_000, 10)).toEqual({ asks: 1, chats: 0 });
    expect(await store.get("old-1")).toBeNull();
    expect(await store.get("old-2")).toBeNull();
    expect(await store.chatOwner("old")).toBeNull();
    expect(await store.chatOwner("waiting")).toBe("alice");
    expect(await store.chatOwner("fresh")).toBe("alice");
    expect((await store.get("recent"))?.status).toBe("answered");
    expect((await store.get("still-pending"))?.status).toBe("pending");
    expect(ids(await store.list({ ownedBy: "alice" }))).toEqual(["recent", "still-pending"]);
    // A view after pruning writes the owner back: its asks are alice's again.
    await store.chatViewed("old", "alice", 7_000);
    expect(await store.chatOwner("old")).toBe("alice");
  });

  it("a chat's owner is recorded at the store's clock's time, which retention then goes by", async () => {
    const store = await backend.open({ clock: new ManualClock(500) });
    await store.recordChatOwner("early", "alice");
    expect(await store.prune(1_000, 10)).toEqual({ asks: 0, chats: 1 });
    expect(await store.chatOwner("early")).toBeNull();
  });

  it("reply starts: who started each reply, a later start of the same reply replacing it, none noted before `notBefore`", async () => {
    const clock = new ManualClock(10 * REPLY_START_KEEP_MS);
    const store = await backend.open({ clock });
    const now = clock.now();
    const since = now - REPLY_START_KEEP_MS;
    await store.noteReplyStart("c1", "m1", { userId: "alice", name: "Alice" }, now);
    await store.noteReplyStart("c1", "m:2", { userId: "alice" }, now);
    await store.noteReplyStart("c1", "m:2", { userId: "bob" }, now);
    await store.noteReplyStart("c1", "old", { userId: "alice" }, since - 1);
    expect(await store.replyStarter("c1", "m1", since)).toEqual({ userId: "alice", name: "Alice" });
    expect(await store.replyStarter("c1", "m:2", since)).toEqual({ userId: "bob" });
    expect(await store.replyStarter("c1:m", "2", since)).toBeNull();
    expect(await store.replyStarter("c2", "m1", since)).toBeNull();
    expect(await store.replyStarter("c1", "old", since)).toBeNull();
    expect(await store.replyStarter("c1", "m1", now + 1)).toBeNull();
  });

  it("titles: a recorded chat keeps the last title given; a chat nobody owns gets none; retention removes it with its chat", async () => {
    const store = await backend.open();
    await store.chatViewed("c1", "alice", 100);
    await store.chatViewed("c2", "alice", 5_000);
    await store.titleChat("c1", "Quarterly report");
    await store.titleChat("c1", "Q3 report: <b>draft</b>");
    await store.titleChat("c2", "Deploy");
    await store.titleChat("unknown", "Squatted title");
    expect(await store.chatTitles(["c1", "c2", "unknown", "c1", "none"])).toEqual(
      new Map([
        ["c1", "Q3 report: <b>draft</b>"],
        ["c2", "Deploy"],
      ]),
    );
    expect(await store.chatTitles([])).toEqual(new Map());
    await store.prune(1_000, 10);
    expect(await store.chatTitles(["c1", "c2"])).toEqual(new Map([["c2", "Deploy"]]));
  });

  describe("one unreadable row", () => {
    it("a pending row that does not parse is set aside when pending asks are restored: logged once with its id, skipped, counted", async () => {
      const logs: string[] = [];
      const store = await backend.open({ log: (line) => logs.push(line) });
      await store.put(question("good", "c"));
      await backend.writeRaw("bad-json", "pending", "c", "{not json");
      await backend.writeRaw(
        "bad-shape",
        "pending",
        "c",
        JSON.stringify({ ...question("bad-shape", "c"), kind: "riddle", questions: "which?" }),
      );
      expect(ids(await store.pending())).toEqual(["good"]);
      expect(ids(await store.pending())).toEqual(["good"]);
      expect(store.setAsideRows()).toBe(2);
      expect(logs).toHaveLength(2);
      expect(
        logs.some((line) => line.includes("bad-json") && line.includes("not valid JSON")),
      ).toBe(true);
      // The reason names the field, never the stored text.
      expect(logs.some((line) => line.includes("bad-shape") && !line.includes("which?"))).toBe(
        true,
      );
    });

    it("a set-aside pending row that its source sends again (a backfill) is written over, readable and no longer counted", async () => {
      const store = await backend.open();
      await backend.writeRaw("healed", "pending", "c", "{not json");
      expect(await store.pending()).toEqual([]);
      expect(store.setAsideRows()).toBe(1);
      await store.put(question("healed", "c"));
      expect(ids(await store.pending())).toEqual(["healed"]);
      expect(store.setAsideRows()).toBe(0);
    });

    it("an answered row that does not parse no longer breaks listing: the rest of the history is listed", async () => {
      const store = await backend.open();
      await store.put(answered("answered", "c", 1_700_000_000_500));
      await backend.writeRaw(
        "bad-answered",
        "answered",
        "c",
        JSON.stringify({ id: "bad-answered", status: "answered" }),
      );
      expect(ids(await store.list({ status: "answered" }))).toEqual(["answered"]);
      expect(ids(await store.list({}))).toEqual(["answered"]);
      expect(await store.get("bad-answered")).toBeNull();
      expect(store.setAsideRows()).toBe(1);
    });
  });
});
