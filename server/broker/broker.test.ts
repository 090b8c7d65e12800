import { beforeEach, describe, expect, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import type { GatewayCall } from "../../lib/answers.ts";
import { ManualClock } from "../../lib/clock.ts";
import type { AskClose } from "../../lib/protocol.ts";
import { SqliteAskStore } from "../store/sqlite.ts";
import { question } from "../store/test-support.ts";
import { AskBroker, GatewayCallError, type AskResolver, type Tab, type TabSink } from "./broker.ts";

class RecordingSink implements TabSink {
  readonly shown: { tabId: string; askId: string }[] = [];
  readonly closed: ({ tabId: string } & AskClose)[] = [];
  readonly changes: Ask[] = [];
  show(tabId: string, ask: Ask) {
    this.shown.push({ tabId, askId: ask.id });
  }
  close(tabId: string, close: AskClose) {
    this.closed.push({ tabId, ...close });
  }
  changed(ask: Ask) {
    this.changes.push(ask);
  }
}

class ScriptedResolver implements AskResolver {
  readonly calls: GatewayCall[] = [];
  next: (() => Promise<unknown>) | null = null;
  async execute(call: GatewayCall) {
    this.calls.push(call);
    const step = this.next;
    this.next = null;
    return step ? step() : { ok: true };
  }
}

const tab = (id: string, userId = "owner", chatClaim: string | null = null): Tab => ({ id, userId, isOwner: userId === "owner", chatClaim });

describe("AskBroker", () => {
  let clock: ManualClock;
  let store: SqliteAskStore;
  let sink: RecordingSink;
  let resolver: ScriptedResolver;
  let broker: AskBroker;

  beforeEach(() => {
    clock = new ManualClock();
    store = new SqliteAskStore(":memory:");
    sink = new RecordingSink();
    resolver = new ScriptedResolver();
    broker = new AskBroker({ store, sink, resolver, clock, owners: new Set(["owner"]), instanceId: "test" });
  });

  it("shows an ask on the newest tab viewing its chat only", async () => {
    broker.view(tab("old"), "c1");
    broker.view(tab("new"), "c1");
    broker.view(tab("other"), "c2");
    await broker.receive(question("q1", "c1"));
    expect(sink.shown).toEqual([{ tabId: "new", askId: "q1" }]);
  });

  it("keeps an ask pending with no tab and shows it when a tab views the chat", async () => {
    await broker.receive(question("q1", "c1"));
    expect(sink.shown).toEqual([]);
    broker.view(tab("t1"), "c1");
    expect(sink.shown).toEqual([{ tabId: "t1", askId: "q1" }]);
  });

  it("hands off to a newer tab once, closing the old one with handed-off", async () => {
    broker.view(tab("old"), "c1");
    await broker.receive(question("q1", "c1"));
    broker.view(tab("new"), "c1");
    expect(sink.closed).toEqual([{ tabId: "old", askId: "q1", reason: "handed-off" }]);
    expect(sink.shown.map((s) => s.tabId)).toEqual(["old", "new"]);
  });

  it("does not cancel when the tab switches chats; it returns to the next viewer without ask:close", async () => {
    broker.view(tab("t1"), "c1");
    await broker.receive(question("q1", "c1"));
    broker.view(tab("t1"), "c2");
    expect(sink.closed).toEqual([]);
    expect(broker.getPending("q1")?.shownTo).toBeNull();
    broker.view(tab("t2"), "c1");
    expect(sink.shown.at(-1)).toEqual({ tabId: "t2", askId: "q1" });
  });

  it("falls back to the older viewer when the newest tab closes", async () => {
    broker.view(tab("old"), "c1");
    broker.view(tab("new"), "c1");
    await broker.receive(question("q1", "c1"));
    broker.leave("new");
    expect(sink.shown.at(-1)).toEqual({ tabId: "old", askId: "q1" });
  });

  it("expires at expiresAt with an injected clock and leaves no timer behind", async () => {
    broker.view(tab("t1"), "c1");
    await broker.receive(question("q1", "c1"));
    expect(broker.activeTimers).toBe(1);
    clock.advance(899_999);
    expect(sink.closed).toEqual([]);
    clock.advance(1);
    expect(sink.closed).toEqual([{ tabId: "t1", askId: "q1", reason: "expired", summary: "Expired" }]);
    expect(broker.activeTimers).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it("clears every timer on shutdown", async () => {
    await broker.receive(question("q1", "c1"));
    await broker.receive(question("q2", "c2"));
    broker.shutdown();
    expect(clock.pendingTimers).toBe(0);
  });

  it("maps an answer to question.resolve and closes the card as answered", async () => {
    const t1 = tab("t1");
    broker.view(t1, "c1");
    await broker.receive(question("q1", "c1"));
    const ack = await broker.answer(t1, "q1", { type: "questions", answers: { db: ["2"] } });
    expect(ack).toEqual({ ok: true, status: "answered" });
    expect(resolver.calls).toEqual([{ method: "question.resolve", params: { id: "q1", answers: { answers: { db: ["SQLite"] } } } }]);
    expect(sink.closed).toEqual([{ tabId: "t1", askId: "q1", reason: "answered", summary: "SQLite" }]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("lets exactly one of two simultaneous answers through", async () => {
    const a = tab("a");
    const b = tab("b");
    broker.view(a, "c1");
    broker.view(b, "c1");
    await broker.receive(question("q1", "c1"));
    let release!: () => void;
    resolver.next = () => new Promise((resolve) => (release = () => resolve({ ok: true })));
    const first = broker.answer(a, "q1", { type: "text", text: "Postgres" });
    const second = await broker.answer(b, "q1", { type: "text", text: "SQLite" });
    release();
    expect(await first).toEqual({ ok: true, status: "answered" });
    expect(second).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
    expect(resolver.calls).toHaveLength(1);
  });

  it("treats a terminal ask as a tombstone: replays never revive it", async () => {
    await broker.receive(question("q1", "c1"));
    broker.end("q1", { status: "answered", summary: "x", reason: "answered-elsewhere" });
    await broker.receive(question("q1", "c1"));
    expect(broker.getPending("q1")).toBeUndefined();
    broker.view(tab("t1"), "c1");
    expect(sink.shown).toEqual([]);
  });

  it("applies an end that arrives during a failed answer", async () => {
    const t1 = tab("t1");
    broker.view(t1, "c1");
    await broker.receive(question("q1", "c1"));
    resolver.next = async () => {
      broker.end("q1", { status: "expired", summary: "Expired", reason: "expired" });
      throw new GatewayCallError("already terminal", "QUESTION_ALREADY_TERMINAL");
    };
    const ack = await broker.answer(t1, "q1", { type: "text", text: "SQLite" });
    expect(ack).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
    expect(sink.closed).toEqual([{ tabId: "t1", askId: "q1", reason: "expired", summary: "Expired" }]);
  });

  it("refuses an invalid answer with INVALID and changes nothing", async () => {
    const t1 = tab("t1");
    broker.view(t1, "c1");
    await broker.receive(question("q1", "c1", { questions: [{ id: "db", header: "DB", question: "?", options: [{ label: "A" }], multiSelect: false, allowOther: false }] }));
    const ack = await broker.answer(t1, "q1", { type: "text", text: "not an option" });
    expect(ack).toMatchObject({ ok: false, error: { code: "INVALID" } });
    expect(resolver.calls).toEqual([]);
    expect(broker.getPending("q1")?.status).toBe("pending");
  });

  it("keeps another user's chats away from a non-owner", async () => {
    expect(broker.view(tab("alice-tab", "alice", "c1"), "c1")).toEqual({ ok: true });
    expect(broker.view(tab("bob-tab", "bob", "c1"), "c1")).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    expect(broker.view(tab("bob-tab", "bob"), "c1")).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    await broker.receive(question("q1", "c1"));
    expect(sink.shown).toEqual([{ tabId: "alice-tab", askId: "q1" }]);
    expect(await broker.answer(tab("bob-tab", "bob"), "q1", { type: "cancel" })).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
  });

  it("chat squatting: an unclaimed non-owner token records no owner, so the chat's real user is not locked out", async () => {
    expect(broker.view(tab("squat", "mallory"), "c1")).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    expect(store.chatOwner("c1")).toBeNull();
    expect(broker.view(tab("alice-tab", "alice", "c1"), "c1")).toEqual({ ok: true });
    expect(store.chatOwner("c1")).toBe("alice");
    // Once alice owns it, her unclaimed token (an Open WebUI session) may view it too.
    expect(broker.view(tab("alice-dash", "alice"), "c1")).toEqual({ ok: true });
  });

  it("embed tokens read other users' history: an embed token lists only its own chat, and only when its user owns it", async () => {
    broker.view(tab("alice-tab", "alice", "c1"), "c1");
    await broker.receive(question("q1", "c1"));
    await broker.answer(tab("alice-tab", "alice", "c1"), "q1", { type: "text", text: "SQLite" });
    broker.view(tab("carol-tab", "carol", "c2"), "c2");
    await broker.receive(question("q2", "c2"));
    const ids = (listing: Ask[]) => listing.map((ask) => ask.id).sort();
    for (const status of ["all", "answered"] as const) {
      expect(ids(broker.list(tab("mallory-tab", "mallory", "c1"), status)), `mallory's embed token for alice's chat, ${status}`).toEqual([]);
      expect(ids(broker.list(tab("mallory-dash", "mallory"), status)), `mallory's unclaimed token, ${status}`).toEqual([]);
    }
    expect(ids(broker.list(tab("alice-tab", "alice", "c1"), "all"))).toEqual(["q1"]);
    expect(ids(broker.list(tab("alice-dash", "alice"), "all"))).toEqual(["q1"]);
    expect(ids(broker.list(tab("owner-dash", "owner"), "all"))).toEqual(["q1", "q2"]);
    // An owner's embed token is limited to its chat too.
    expect(ids(broker.list(tab("owner-widget", "owner", "c2"), "all"))).toEqual(["q2"]);
  });

  it("FORBIDDEN vs NOT_FOUND tells whether an ask id exists: another user's ask answers NOT_FOUND like a missing one", async () => {
    broker.view(tab("alice-tab", "alice", "c1"), "c1");
    await broker.receive(question("q1", "c1"));
    const probe = tab("mallory-tab", "mallory", "c9");
    const existing = await broker.answer(probe, "q1", { type: "cancel" });
    const missing = await broker.answer(probe, "no-such-ask", { type: "cancel" });
    expect(existing).toEqual(missing);
    expect(existing).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
    expect(broker.getPending("q1")?.status).toBe("pending");
  });

  it("unbounded chat registration: views of unknown chats by an unclaimed token write no rows, and listing never needs one SQL variable per chat", async () => {
    const mallory = tab("mallory-tab", "mallory");
    for (let i = 0; i < 1_000; i++) expect(broker.view(mallory, `spam-${i}`)).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    expect(store.chatOwner("spam-0")).toBeNull();
    expect(store.chatOwner("spam-999")).toBeNull();
    // A user who does own a great many chats (each opened from its widget) can still list them.
    for (let i = 0; i < 40_000; i++) store.recordChatOwner(`alice-${i}`, "alice");
    broker.view(tab("alice-tab", "alice", "alice-7"), "alice-7");
    await broker.receive(question("q1", "alice-7"));
    expect(broker.list(tab("alice-dash", "alice"), "all").map((ask) => ask.id)).toEqual(["q1"]);
  });

  it("limits an embed token to its chat claim", () => {
    expect(broker.view(tab("t1", "owner", "c1"), "c2")).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    expect(broker.view(tab("t1", "owner", "c1"), "c1")).toEqual({ ok: true });
  });

  it("restores pending asks after a restart but shows them only once the source confirms them", async () => {
    await broker.receive(question("q1", "c1"));
    broker.shutdown();
    const again = new AskBroker({ store, sink: new RecordingSink(), resolver, clock, owners: new Set(["owner"]), instanceId: "again" });
    again.restore();
    expect(again.getPending("q1")?.shownTo).toBeNull();
    const viewer = tab("t1");
    again.view(viewer, "c1");
    expect(again.getPending("q1")?.shownTo).toBeNull();
    await again.receive(question("q1", "c1"));
    expect(again.getPending("q1")?.shownTo).toBe("t1");
    again.shutdown();
  });
});
