import { type Ask, inReply } from "../../lib/ask.ts";
import type { Clock } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import { endedAsText, type Ending, EXPIRED } from "../../lib/outcomes.ts";
import { newestWhoMaySee } from "../../lib/policy.ts";
import type { AskStore } from "../store/store.ts";
import type { ChatAccess } from "./chat-access.ts";
import type { BrokerFeed, Settle } from "./feed.ts";
import type { AskChannel, Outcome, Presence, Tab } from "./ports.ts";
import type { TrackedAsks } from "./tracked-asks.ts";
import { inTurn, type Queue } from "./turns.ts";

/**
 * Where the tracked asks' cards go, and how asks end: each pending ask of a chat is placed on the
 * chat's newest viewer that may see it (one atomic step of presence per ask, so instances placing the
 * same chat at once agree), a new ask is written once its card is out, and an ending is stored, its
 * card closed and reported. A chat's steps run one at a time. Steps over the table of tracked asks:
 * what they change there they change through its methods; what they report goes out on the feed.
 */

export type CardsOptions = {
  asks: TrackedAsks;
  access: ChatAccess;
  store: AskStore;
  presence: Presence;
  source: AskChannel;
  clock: Clock;
  instanceId: string;
  /** The ask's record changed (dashboards), and it ended here (once, whichever instance wrote its end). */
  feed: BrokerFeed;
  settle: Settle;
  log: (message: string) => void;
};

export class Cards {
  private readonly options: CardsOptions;
  /** The routing steps of each chat, one at a time: presence answers asynchronously. */
  private readonly chatSteps: Queue = new Map();

  constructor(options: CardsOptions) {
    this.options = options;
    options.asks.on("expired", (ask) => this.expire(ask));
  }

  /** Runs `step` after every earlier step of the chat; a failed step does not stop the ones after it. */
  inChat<T>(chatId: string, step: () => Promise<T>): Promise<T> {
    return inTurn([[this.chatSteps, chatId]], step);
  }

  /**
   * Puts every pending ask of the chat on its newest viewer that may see it, handing off from an older
   * tab. `knownOwner`: the chat's owner as the caller just read it (a recorded owner never changes).
   */
  route(chatId: string, knownOwner: string | null = null): Promise<void> {
    return this.inChat(chatId, async () => {
      const { asks, access, presence } = this.options;
      const pending = asks
        .ofChat(chatId)
        .filter((entry) => entry.phase === "pending")
        .map((entry) => entry.ask);
      if (pending.length === 0) return;
      const chatOwner = knownOwner ?? (await access.owner(chatId));
      await Promise.all(
        pending.map(async (ask) => {
          const placed = await presence.place({ ...ask, chatId }, chatOwner);
          // Whoever moved it there: every instance that holds the ask writes it, so the row its claim
          // needs outlives the instance that showed the card.
          if (placed.tab !== null) this.shownIn(ask, placed.tab);
        }),
      );
    });
  }

  /** The newest viewer of the ask's chat that may see it, or null. */
  async viewerFor(ask: Ask): Promise<Tab | null> {
    if (!ask.chatId) return null;
    const [viewers, chatOwner] = await Promise.all([
      this.options.presence.viewers(ask.chatId),
      this.options.access.owner(ask.chatId),
    ]);
    return newestWhoMaySee(viewers, ask, chatOwner);
  }

  /**
   * Stores a new ask, as soon as the move that showed its card is done: not on the card's way (the
   * Gateway still holds the ask should the process die in between), and ahead of any answer, which
   * needs the card to reach a person and come back (SQLite writes at once; Redis gets the row from
   * here in one hop, the answer's claim in three).
   */
  write(askId: string): void {
    const { asks, store } = this.options;
    const written = asks.write(askId, (ask) => store.put(ask));
    if (written) this.options.settle(written, `storing ask ${askId}`);
  }

  /** The ask ended at its source (answered elsewhere, expired, run moved on): finished unless the end waits. */
  async end(id: string, outcome: Outcome): Promise<void> {
    const due = this.options.asks.sourceEnded(id, outcome);
    if (due) await this.finish(due.ask, due.ending);
  }

  /** Ends the ask here: stored (the one whose write ends it reports it), its card closed, dashboards told. */
  async finish(
    ask: Ask,
    end: Ending,
    by: { by: string | null; tabId: string | null } = { by: null, tabId: null },
  ): Promise<void> {
    const { asks, store, presence, clock } = this.options;
    asks.end(ask.id);
    const ended: Ask = {
      ...ask,
      status: end.status,
      resolution: { by: by.by, at: clock.now(), summary: end.summary, tabId: by.tabId },
    };
    // With several instances each hears the end; the one whose write ends the ask reports it (once).
    const endedHere = await store.put(ended);
    const close = () =>
      presence.forget(ask.id, { askId: ask.id, reason: end.reason, summary: end.summary });
    // After any routing step of the chat already under way, so a card shown by it is closed too.
    await (ask.chatId ? this.inChat(ask.chatId, close) : close());
    this.options.feed.changed(ended);
    if (endedHere) this.options.feed.ended(ended, end.reason);
  }

  /** Refused by policy on arrival: stored as denied; the instance that claims it tells the source. */
  async refuse(ask: Ask, summary: string): Promise<void> {
    const { store, instanceId } = this.options;
    await store.put(ask);
    const ours = await store.claim(ask.id, instanceId);
    await this.finish(ask, { status: "denied", summary, reason: "denied" });
    if (ours) await this.tellRefusal(ask);
  }

  /** The chat's owner became known: its asks that waited meet the guest rules now. */
  async readmit(chatId: string, owner: string): Promise<void> {
    const { asks, access, store, instanceId } = this.options;
    for (const { ask: listed } of asks.ofChat(chatId)) {
      // Read again at each step: the steps before it waited for the store.
      const entry = asks.get(listed.id);
      if ((entry?.phase !== "pending" && entry?.phase !== "unconfirmed") || entry.answering)
        continue;
      const { ask } = entry;
      const verdict = access.judge(ask, owner);
      if (verdict.action !== "refuse") continue;
      // Every instance refuses it; the one that claims it (the row must exist) tells the source, once.
      await asks.write(ask.id, (unwritten) => store.put(unwritten));
      const ours = await store.claim(ask.id, instanceId);
      await this.finish(ask, { status: "denied", summary: verdict.summary, reason: "denied" });
      // The view need not wait for the source: the ask is over here either way.
      if (ours) this.options.settle(this.tellRefusal(ask), `refusing ask ${ask.id}`);
    }
  }

  /**
   * The ask's card is in this tab: when the tab is a reply's widget, the ask's summary belongs to that
   * reply from now on (a written ask is written again). A new ask is written now.
   */
  private shownIn(ask: Ask, tab: Tab): void {
    const { asks, store } = this.options;
    const card = inReply(ask, tab.reply?.msg ?? null);
    if (card !== ask && asks.listed(ask.id) === ask) {
      asks.update(card);
      if (!asks.unwritten(ask.id)) this.options.settle(store.put(card), `storing ask ${ask.id}`);
    }
    asks.shown(ask.id);
    this.write(ask.id);
  }

  /** The ask's time is up (the table's timer): a text prompt ends as text, any other expires. */
  private expire(ask: Ask): void {
    const outcome = ask.source === "text-prompt" ? endedAsText(ask) : EXPIRED;
    this.options.settle(this.end(ask.id, outcome), `expiring ask ${ask.id}`);
  }

  /** Tells the source an ask was refused by policy; the ask is already over here either way. */
  private async tellRefusal(ask: Ask): Promise<void> {
    try {
      await this.options.source.refuse(ask);
    } catch (error) {
      this.options.log(`could not refuse ask ${ask.id}: ${errorMessage(error)}`);
    }
  }
}
