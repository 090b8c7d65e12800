import type { Ask } from "../../lib/ask.ts";
import type { Clock } from "../../lib/clock.ts";
import { endedAsText, EXPIRED } from "../../lib/outcomes.ts";
import type { AskStore } from "../store/store.ts";
import type { Cards } from "./cards.ts";
import type { ChatAccess } from "./chat-access.ts";
import type { BrokerFeed } from "./feed.ts";
import type { Arrival, SourceListing } from "./ports.ts";
import type { TrackedAsks } from "./tracked-asks.ts";

/**
 * How an ask from its source is taken in (docs/ARCHITECTURE.md#how-an-ask-flows): a step over the
 * table of tracked asks, as cards.ts and answering.ts are. Known ids (pending or tombstoned) are
 * ignored, so a replay never revives; an end that comes while the ask is taken in is applied once it
 * is tracked. After a (re)connect, the source's list says what ended meanwhile.
 */

export type ArrivalsOptions = {
  asks: TrackedAsks;
  access: ChatAccess;
  cards: Cards;
  store: AskStore;
  feed: BrokerFeed;
  clock: Clock;
};

/**
 * How long a text prompt of a reply the filter announced waits for that reply's widget to view the
 * chat before it ends as text: the widget of a brand-new chat's first reply comes late (Open WebUI
 * 0.11 gives the tab its chat id after the reply started), and a prompt the agent writes at once
 * would otherwise never get its card.
 */
export const WIDGET_WAIT_MS = 15_000;

export class Arrivals {
  private readonly options: ArrivalsOptions;

  constructor(options: ArrivalsOptions) {
    this.options = options;
  }

  async receive(ask: Ask, arrival: Arrival): Promise<void> {
    const { asks, cards } = this.options;
    const known = asks.arrive(ask);
    if (known === "unconfirmed") return this.confirm([ask.id]);
    if (known !== "new") return;
    try {
      // A text prompt belongs to the instance whose chat watcher saw it: the store says whose it is.
      await (arrival === "announced" && ask.source !== "text-prompt"
        ? this.takeAnnounced(ask)
        : this.takeListed(ask));
    } finally {
      const endedMeanwhile = asks.received(ask.id);
      if (endedMeanwhile) await cards.end(ask.id, endedMeanwhile);
    }
  }

  /**
   * After a (re)connect: every pending ask of a listed source that the source no longer lists has
   * ended while nobody was listening (how, if the source can tell; otherwise it expired). Then what
   * was restored may be shown: the source has had its say (text prompts keep their own timeout).
   */
  async reconcile(listing: SourceListing): Promise<void> {
    const { asks, cards } = this.options;
    const gone = asks.all().filter((ask) => listing.live.get(ask.source)?.has(ask.id) === false);
    await Promise.all(
      gone.map(async (ask) => {
        const outcome = await listing.outcomeOf(ask).catch(() => null);
        await cards.end(ask.id, outcome ?? EXPIRED);
      }),
    );
    await this.confirm(asks.unconfirmed());
  }

  /** An ask that may be known already (a listing, a text prompt): the store says first. */
  private async takeListed(arrived: Ask): Promise<void> {
    const { asks, access, cards, store } = this.options;
    // The reads at once: with Redis each is a round trip on the way of the card.
    const [stored, { ask, verdict, chatOwner }] = await Promise.all([
      store.get(arrived.id),
      access.admission(arrived),
    ]);
    if (stored) {
      // Another instance sharing the store took it in first: follow it here too. A terminal row is a
      // tombstone. Text prompts belong to the instance whose chat watcher saw them.
      if (stored.status === "pending" && ask.source !== "text-prompt") await this.adopt(stored);
      return;
    }
    if (verdict.action === "refuse") return cards.refuse(ask, verdict.summary);
    const waitsForWidget = ask.source === "text-prompt" && !(await cards.viewerFor(ask));
    if (waitsForWidget && ask.origin?.kind !== "reply") {
      // A text prompt has nowhere to wait: with no tab, and no widget on its way, it stays in the reply as text.
      await store.put(ask);
      return cards.finish(ask, endedAsText(ask));
    }
    asks.track(
      ask,
      waitsForWidget
        ? { unwritten: true, widgetDeadline: this.options.clock.now() + WIDGET_WAIT_MS }
        : { unwritten: true },
    );
    if (ask.chatId) await cards.route(ask.chatId, chatOwner);
    this.taken(ask);
  }

  /**
   * An ask its source announced just now: its card goes out first, and the store is asked after it
   * whether another instance took it in (one round trip to a shared presence on the card's way, not
   * two). When the card was shown, its write has answered that already: a write the store took means
   * no tombstone was there. A late replay of an ask that ended is not shown (presence remembers ended
   * asks) and is dropped once the store names it; an ask refused by policy goes the listed way (the
   * store first: its refusal is a tombstone).
   */
  private async takeAnnounced(arrived: Ask): Promise<void> {
    const { asks, access, cards, store } = this.options;
    const { ask, verdict, chatOwner } = await access.admission(arrived);
    if (verdict.action === "refuse") return this.takeListed(ask);
    asks.track(ask, { unwritten: true });
    if (ask.chatId) await cards.route(ask.chatId, chatOwner);
    // A failed write is logged where it was made; the store is asked instead.
    if (await asks.firstWrite(ask.id)?.catch(() => false)) return this.taken(ask);
    const stored = await store.get(ask.id);
    if (!asks.listed(ask.id)) return;
    if (stored && stored.status !== "pending")
      return cards.finish(ask, {
        status: stored.status,
        summary: stored.resolution?.summary ?? "",
        reason: "answered-elsewhere",
      });
    // Already stored (by another instance, or by a write of ours whose answer was lost): nothing more to write.
    if (stored) asks.written(ask.id);
    this.taken(ask);
  }

  /** The ask is routed: written if nobody has written it, and announced, unless it ended meanwhile. */
  private taken(ask: Ask): void {
    const current = this.options.asks.listed(ask.id);
    if (!current) return;
    this.options.cards.write(ask.id);
    this.options.feed.changed(current);
  }

  private async adopt(ask: Ask): Promise<void> {
    this.options.asks.track(ask, { unwritten: false });
    this.options.feed.changed(ask);
    if (ask.chatId) await this.options.cards.route(ask.chatId);
  }

  private async confirm(ids: readonly string[]): Promise<void> {
    const { asks, cards } = this.options;
    const chats = new Set<string>();
    for (const id of ids) {
      asks.confirm(id);
      const chatId = asks.listed(id)?.chatId;
      if (chatId) chats.add(chatId);
    }
    await Promise.all([...chats].map((chatId) => cards.route(chatId)));
  }
}
