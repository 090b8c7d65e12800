import type { Ask, AskSource } from "../../lib/ask.ts";
import type { AskReply } from "../../lib/answers.ts";
import type { Ending } from "../../lib/outcomes.ts";
import type { Subscribable } from "../events.ts";

/**
 * What the broker needs from the world, in its own terms: where asks come from and where replies go
 * (the Gateway adapter implements AskChannel), and who views what (Presence). Each may live in another
 * process (Redis), so every operation that would need a round trip there is asynchronous.
 */

export type Tab = {
  id: string;
  userId: string;
  isOwner: boolean;
  /** An embed token's `chat` claim: the only chat this tab may view. */
  chatClaim: string | null;
  /**
   * An embed token's reply: the widget of that assistant message. Null for every other token, and for
   * embed tokens of the first filter, which carry none: such a widget is never live (DESIGN §8).
   */
  reply: ReplyClaim | null;
};

/** The assistant message an embed token was minted for (`msg`), and when (`mts`, epoch ms): a chat's replies are ordered by it. */
export type ReplyClaim = { msg: string; mts: number };

/** How an ask ended at its source; a function when that depends on the ask (a secret's answer never shows). */
export type Outcome = Ending | ((ask: Ask) => Ending);

/** After a (re)connect, the source lists what it still holds. */
export type SourceListing = {
  /**
   * Every id still pending, per listed source, and every id that arrived while the listing was taken
   * (it may predate them): a pending ask of one of these sources missing here has ended.
   */
  live: ReadonlyMap<AskSource, ReadonlySet<string>>;
  /** How a missing ask ended, when the source can still tell; null when it cannot (it expired). */
  outcomeOf(ask: Ask): Promise<Outcome | null>;
};

export type AskChannelEvents = {
  "ask:arrived": [ask: Ask];
  "ask:ended": [askId: string, outcome: Outcome];
  "asks:listed": [listing: SourceListing];
};

/** The source refused a reply because it had already ended the ask (answered, expired, gone). */
export class AskAlreadyEnded extends Error {}

export interface AskChannel extends Subscribable<AskChannelEvents> {
  /** Delivers a person's reply. Rejects with AskAlreadyEnded, or with another error when it was not taken. */
  deliver(ask: Ask, reply: AskReply): Promise<void>;
  /** Ends at the source an ask refused by policy (cancels a question, denies an approval). */
  refuse(ask: Ask): Promise<void>;
}

/**
 * Who views which chat, newest viewer last, and which tab shows each ask. A tab views at most one chat.
 * With several instances it is shared (Redis): each operation is atomic, and `show` only moves a card
 * from the tab the caller saw holding it, so two instances routing one chat at once show it once.
 */
export interface Presence {
  /** The tab becomes the chat's newest viewer; returns the chat it viewed before, or null. */
  view(tab: Tab, chatId: string): Promise<string | null>;
  /** The tab views no chat any more; returns the chat it viewed, or null. */
  leave(tabId: string): Promise<string | null>;
  /** The tabs viewing the chat, oldest first. */
  viewers(chatId: string): Promise<readonly Tab[]>;
  chatOf(tabId: string): Promise<string | null>;
  shownTo(askId: string): Promise<string | null>;
  /** Records the tab that shows the ask now (null: none) if `from` still does; false when another did first. */
  show(askId: string, tabId: string | null, from: string | null): Promise<boolean>;
  /** The ask ended: forgets it and returns the tab that showed it, or null. */
  forget(askId: string): Promise<string | null>;
}
