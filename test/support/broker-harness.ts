// The broker alone, for the tests of the routing rules (docs/ARCHITECTURE.md#routing) row by row
// (server/broker/broker-*.test.ts): an injected clock (expiry in no time), in-memory presence, an
// in-memory SQLite store, and a scripted AskChannel in place of the Gateway (what faces the real
// Gateway is tested in test/integration). Each row is a describe named after it, as in docs/RULES.md.
import { test } from "vitest";
import type { AskReply } from "../../lib/answers.ts";
import type { Ask } from "../../lib/ask.ts";
import type { AskClose } from "../../lib/protocol.ts";
import type { ActClaims } from "../../server/auth/tokens.ts";
import { AskBroker } from "../../server/broker/broker.ts";
import type {
  Arrival,
  AskChannel,
  AskChannelEvents,
  Outcome,
  SourceListing,
  Tab,
} from "../../server/broker/ports.ts";
import { MemoryPresence } from "../../server/broker/presence.ts";
import { Emitter } from "../../server/events.ts";
import { SqliteAskStore } from "../../server/store/sqlite.ts";
import { T0 } from "./ask-fixtures.ts";
import { ManualClock } from "./manual-clock.ts";

/** The broker's AskChannel, scripted: records what it is told and fails on demand. */
export class ScriptedChannel extends Emitter<AskChannelEvents> implements AskChannel {
  readonly delivered: { askId: string; reply: AskReply }[] = [];
  readonly refused: string[] = [];
  /** The next delivery runs this instead of succeeding at once. */
  next: (() => Promise<void>) | null = null;

  async deliver(ask: Ask, reply: AskReply): Promise<void> {
    this.delivered.push({ askId: ask.id, reply });
    const step = this.next;
    this.next = null;
    if (step) await step();
  }

  async refuse(ask: Ask): Promise<void> {
    this.refused.push(ask.id);
  }

  arrive(ask: Ask, arrival: Arrival = "announced"): void {
    this.emit("ask:arrived", ask, arrival);
  }

  end(askId: string, outcome: Outcome): void {
    this.emit("ask:ended", askId, outcome);
  }

  list(listing: SourceListing): void {
    this.emit("asks:listed", listing);
  }
}

type Entry = {
  tabId: string;
  event: "show" | "close" | "superseded" | "left";
  askId: string;
  reason?: string;
  summary?: string;
};

/** What the transports would pass on to each tab, in order. */
export class Tabs {
  readonly timeline: Entry[] = [];
  readonly changes: Ask[] = [];
  constructor(broker: AskBroker) {
    broker.cardEvents.on("card:show", (tabId, ask) =>
      this.timeline.push({ tabId, event: "show", askId: ask.id }),
    );
    broker.cardEvents.on("card:close", (tabId, close: AskClose) =>
      this.timeline.push({ tabId, event: "close", ...close }),
    );
    broker.on("ask:changed", (ask) => this.changes.push(ask));
    broker.on("widget:superseded", (tabId, chatId) =>
      this.timeline.push({ tabId, event: "superseded", askId: chatId }),
    );
  }
  superseded(tabId: string): number {
    return this.timeline.filter((e) => e.tabId === tabId && e.event === "superseded").length;
  }
  /** The tabs that hold the card now: a superseded widget drops every card it had. */
  holders(askId: string): string[] {
    const last = (tabId: string) =>
      this.timeline
        .filter((e) => e.tabId === tabId && (e.askId === askId || e.event === "superseded"))
        .at(-1)?.event;
    return [...new Set(this.timeline.map((e) => e.tabId))].filter(
      (tabId) => last(tabId) === "show",
    );
  }
  shows(tabId: string, askId: string): number {
    return this.timeline.filter((e) => e.tabId === tabId && e.askId === askId && e.event === "show")
      .length;
  }
  closes(tabId: string, askId: string): Entry[] {
    return this.timeline.filter(
      (e) => e.tabId === tabId && e.askId === askId && e.event === "close",
    );
  }
  /**
   * The tab switched away from the chat or left it: it drops that chat's cards itself, as it gets no
   * ask:close for them (docs/PROTOCOL.md#server--client). `askId` is the chat it left, as for superseded.
   */
  left(tabId: string, chatId: string): void {
    this.timeline.push({ tabId, event: "left", askId: chatId });
  }
  /** Does the tab hold the card now (its last show/close for the ask was a show, and it has not left a chat, or the ask's `chatId`, since)? */
  holds(tabId: string, askId: string, chatId?: string): boolean {
    return (
      this.timeline
        .filter(
          (e) =>
            e.tabId === tabId &&
            (e.askId === askId ||
              (e.event === "left" && (chatId === undefined || e.askId === chatId))),
        )
        .at(-1)?.event === "show"
    );
  }
  shownOn(tabId: string): string[] {
    return this.timeline.filter((e) => e.tabId === tabId && e.event === "show").map((e) => e.askId);
  }
}

/** An embed token's tab is the widget of one reply; unless a test says which, all of a chat's are the same reply's. */
export const tab = (
  id: string,
  userId = "owner",
  chatClaim: string | null = null,
  reply: Tab["reply"] = chatClaim ? { msg: "a1", mts: T0 } : null,
): Tab => ({
  id,
  userId,
  isOwner: userId === "owner",
  chatClaim,
  reply,
});
/** The widget of reply `msg`, minted at T0 + `mts`. */
export const widget = (
  id: string,
  chatId: string,
  msg: string,
  mts: number,
  userId = "owner",
): Tab => tab(id, userId, chatId, { msg, mts: T0 + mts });

/** The claims of the act token `widgetTab`'s reply has (the filter hands it to the page that sent the message). */
export const actClaimsOf = (widgetTab: Tab): ActClaims => ({
  userId: widgetTab.userId,
  chat: widgetTab.chatClaim!,
  msg: widgetTab.reply!.msg,
});

/** `widgetTab` answering with a valid act token of these claims. */
export const withAct = (widgetTab: Tab, claims: ActClaims): Tab => ({
  ...widgetTab,
  act: () => Promise.resolve(claims),
});

/** A widget's tab as it answers with its reply's act token (docs/SECURITY.md#a-stored-token-never-acts). */
export const acting = (widgetTab: Tab): Tab => withAct(widgetTab, actClaimsOf(widgetTab));

/**
 * Lets every step the broker started finish. Presence and store are in memory here, so all that work
 * is promise continuations: they have all run once the macrotask queue comes round.
 */
export const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A test with a fresh broker of owner "owner" (instance "one") and what it runs on; `tabs` records
 * what it tells the tabs from the start. Each test names the parts it uses.
 */
export const brokerTest = test
  .extend("clock", () => new ManualClock(T0))
  .extend("store", () => new SqliteAskStore(":memory:"))
  .extend("presence", () => new MemoryPresence())
  .extend("channel", () => new ScriptedChannel())
  .extend(
    "broker",
    ({ store, presence, channel, clock }) =>
      new AskBroker({
        store,
        presence,
        source: channel,
        clock,
        owners: new Set(["owner"]),
        instanceId: "one",
        log: () => {},
      }),
  )
  .extend("tabs", ({ broker }) => new Tabs(broker));
