import type { AskReply } from "../../lib/answers.ts";
import type { Ask, AskSource } from "../../lib/ask.ts";
import type { Ending } from "../../lib/outcomes.ts";
import type { AskClose } from "../../lib/protocol.ts";
import type { ActClaims } from "../auth/tokens.ts";
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
   * embed tokens of the first filter, which carry none: such a widget is never live (docs/PROTOCOL.md#one-live-widget-per-chat).
   */
  reply: ReplyClaim | null;
  /**
   * The act token an answer came with (auth/tokens.ts `verifyActToken`), on that answer's tab only: a
   * widget uses the owner's power only with one (chat-access.ts `mayAct`). Checked only when the answer
   * needs it (a question needs none): its claims, or undefined for a bad or expired token.
   */
  act?: () => Promise<ActClaims | undefined>;
};

/** A reply's start, as the Open WebUI filter signs it (server/http/filter-route.ts). */
export type ReplyStart = {
  chatId: string;
  /** Who started the reply: its run is theirs (its asks are judged by them and name them). */
  userId: string;
  userName?: string;
  /** The chat's user as Open WebUI records it (filter 0.5.0 on); without it, the reply's user. */
  chatOwnerId?: string;
  reply: ReplyClaim;
  title?: string;
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

/**
 * How an ask came: `announced` by its source just now (new there, so no instance has ended it), or
 * `listed` (a backfill's list, a restart: it may be one this service has already ended).
 */
export type Arrival = "announced" | "listed";

export type AskChannelEvents = {
  "ask:arrived": [ask: Ask, arrival: Arrival];
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

/** What presence tells a tab of this instance when the card it shows changes (after the move that decided it). */
export type CardEvents = {
  "card:show": [tabId: string, ask: Ask];
  "card:close": [tabId: string, close: AskClose];
};

/** Where an ask's card is after `place`: the tab that shows it (null: none), and whether this call moved it there. */
export type Placement = { tab: Tab | null; moved: boolean };

/**
 * Who views which chat, newest viewer last, and which tab shows each ask's card. A tab views at most
 * one chat. With several instances it is shared (Redis) and each operation is atomic, so two
 * instances placing one ask at once show it once.
 *
 * Presence also carries the cards: the step that moves a card tells the tabs it concerns (the instance
 * holding each tab emits `card:show` / `card:close`), so every tab hears of its cards in the order
 * the moves happened, whichever instances made them.
 */
export interface Presence extends Subscribable<CardEvents> {
  /** The tab becomes the chat's newest viewer; returns the chat it viewed before, or null. */
  view(tab: Tab, chatId: string): Promise<string | null>;
  /**
   * The tab views no chat any more; returns the chat it viewed, or null. A tab that leaves drops its
   * cards (it knows: docs/PROTOCOL.md#server--client), so they are nobody's until placed again; a superseded widget keeps
   * them (`keepCards`) until they move or end.
   */
  leave(tabId: string, options?: { keepCards?: boolean }): Promise<string | null>;
  /** The tabs viewing the chat, oldest first. */
  viewers(chatId: string): Promise<readonly Tab[]>;
  shownTo(askId: string): Promise<string | null>;
  /**
   * In one step, puts the card of an ask of a chat on the chat's newest viewer that may see it
   * (`newestWhoMaySee` of lib/policy.ts, with the chat's recorded owner), or on none: the tab that showed it
   * is told it was handed off if it still views the chat (one that left knows), and the new one gets
   * the card, in its reply when it is a reply's widget.
   */
  place(ask: Ask & { chatId: string }, chatOwner: string | null): Promise<Placement>;
  /** The ask ended: forgets it, tells the tab that showed it `close`, and returns that tab, or null. */
  forget(askId: string, close: AskClose): Promise<string | null>;
}
