import type { Ask, AskStatus } from "../../lib/ask.ts";
import type { Clock } from "../../lib/clock.ts";
import { endedAsText } from "../../lib/outcomes.ts";
import { type Ack, type AnswerAck, fail, type TabAnswer } from "../../lib/protocol.ts";
import type { Subscribable } from "../events.ts";
import type { AskStore } from "../store/store.ts";
import { answerAsk, type AnsweringContext } from "./answering.ts";
import { Arrivals } from "./arrivals.ts";
import { Cards } from "./cards.ts";
import { ChatAccess } from "./chat-access.ts";
import { type BrokerEvents, BrokerFeed, settleWith } from "./feed.ts";
import { LiveWidgets, type WidgetVerdict } from "./live-widget.ts";
import type {
  Arrival,
  AskChannel,
  CardEvents,
  Outcome,
  Presence,
  ReplyClaim,
  ReplyStart,
  SourceListing,
  Tab,
} from "./ports.ts";
import { TrackedAsks } from "./tracked-asks.ts";
import { inTurn, type Queue } from "./turns.ts";

/**
 * The AskBroker: the one state machine every ask goes through (docs/ARCHITECTURE.md#how-an-ask-flows,
 * #routing): policy → store → presence → timers. Asks come in from an AskChannel as domain events and
 * replies go out through it; what tabs should see goes out as events the transports subscribe to, so
 * it is tested without sockets or a Gateway. Its parts: the table of tracked asks and their phases
 * (`asks`, tracked-asks.ts), and the steps over it, each calling the next itself, never back up here:
 * arrivals.ts, cards.ts (routing and endings), answering.ts; who may see a chat (chat-access.ts), the
 * live widget (live-widget.ts). Cards go from presence to the transports (`cardEvents`).
 */

export type { BrokerEvents } from "./feed.ts";

export type BrokerOptions = {
  store: AskStore;
  presence: Presence;
  source: AskChannel;
  clock: Clock;
  owners: ReadonlySet<string>;
  /** ALLOW_UNVOUCHED_RUNS: `/v1` runs no reply start vouches for may ask for approvals and secrets. */
  allowUnvouched?: boolean;
  instanceId: string;
  log: (message: string) => void;
};

export class AskBroker implements Subscribable<BrokerEvents> {
  /** What presence tells the tabs of this instance of their cards, for the transports to pass on. */
  readonly cardEvents: Subscribable<CardEvents>;
  private readonly feed = new BrokerFeed();
  private readonly asks: TrackedAsks;
  private readonly access: ChatAccess;
  private readonly widgets: LiveWidgets;
  private readonly cards: Cards;
  private readonly arrivals: Arrivals;
  private readonly answering: AnsweringContext;
  /** Each chat's views enter presence one at a time, in the order they arrived. */
  private readonly chatAdmissions: Queue = new Map();
  /** Each tab's views and leaves, one at a time. */
  private readonly tabSteps: Queue = new Map();
  private readonly unsubscribe: (() => void)[];
  private readonly options: BrokerOptions;

  constructor(options: BrokerOptions) {
    this.options = options;
    const { store, presence, source, clock, owners } = options;
    const { feed } = this;
    const settle = settleWith(options.log);
    this.cardEvents = presence;
    this.asks = new TrackedAsks(clock);
    const asks = this.asks;
    this.access = new ChatAccess({
      store,
      clock,
      owners,
      allowUnvouched: options.allowUnvouched,
      settle,
    });
    this.widgets = new LiveWidgets({ presence, store, clock });
    const access = this.access;
    this.cards = new Cards({ ...options, asks, access, feed, settle });
    const cards = this.cards;
    this.arrivals = new Arrivals({ asks, access, cards, store, feed, clock: options.clock });
    this.answering = { ...options, asks, access, cards };
    const { arrivals } = this;
    this.unsubscribe = [
      source.on("ask:arrived", (ask, arrival) =>
        settle(arrivals.receive(ask, arrival), `taking in ask ${ask.id}`),
      ),
      source.on("ask:ended", (id, outcome) => settle(cards.end(id, outcome), `ending ask ${id}`)),
      source.on("asks:listed", (listing) =>
        settle(arrivals.reconcile(listing), "reconciling with the source's list"),
      ),
    ];
  }

  on<K extends keyof BrokerEvents>(
    event: K,
    listener: (...args: BrokerEvents[K]) => void,
  ): () => void {
    return this.feed.on(event, listener);
  }

  /**
   * Brings back the pending asks of an earlier run. They are shown only once their source confirms
   * them (lists them again), so a tab never sees an ask that ended while the server was down.
   */
  async restore(): Promise<void> {
    for (const ask of await this.options.store.pending()) this.asks.restore(ask);
  }

  get pendingAsks(): Ask[] {
    return this.asks.all();
  }

  getPending(id: string): Ask | undefined {
    return this.asks.listed(id);
  }

  /** Who shows the ask now (a tab id), or null. */
  shownTo(id: string): Promise<string | null> {
    return this.options.presence.shownTo(id);
  }

  /** A new ask from a source (arrivals.ts). */
  receive(ask: Ask, arrival: Arrival = "listed"): Promise<void> {
    return this.arrivals.receive(ask, arrival);
  }

  /** The ask ended at its source (answered elsewhere, expired, run moved on). */
  end(id: string, outcome: Outcome): Promise<void> {
    return this.cards.end(id, outcome);
  }

  /** After a (re)connect: what the source no longer lists ended (arrivals.ts). */
  reconcile(listing: SourceListing): Promise<void> {
    return this.arrivals.reconcile(listing);
  }

  async view(tab: Tab, chatId: string): Promise<Ack> {
    if (tab.chatClaim !== null && tab.chatClaim !== chatId)
      return fail("FORBIDDEN", "this token is for another chat");
    const widgetView = tab.chatClaim !== null ? this.widgets.noteView(tab.id) : null;
    // Presence hears of a tab's views and leaves in the order they arrived, and of the views of a
    // chat in that order too, though finding the chat's owner may wait for the store.
    const admitted = await inTurn(
      [
        [this.tabSteps, tab.id],
        [this.chatAdmissions, chatId],
      ],
      async () => {
        const admission = await this.access.admitView(tab, chatId);
        // A widget views (or not) by the live-widget rule, judged in its chat's step; any other tab
        // becomes the chat's newest viewer (viewing it again included), leaving the chat it viewed.
        return admission.ok && widgetView === null
          ? { ...admission, left: await this.options.presence.view(tab, chatId) }
          : { ...admission, left: null };
      },
    );
    if (!admitted.ok) return admitted.refusal;
    if (widgetView !== null)
      return this.viewFromWidget(
        tab,
        chatId,
        widgetView,
        admitted.ownerIsNew ? admitted.owner : null,
      );
    // Asks that waited for an unknown owner meet the guest rules now that the owner is known.
    if (admitted.ownerIsNew) await this.cards.readmit(chatId, admitted.owner);
    if (admitted.left !== null && admitted.left !== chatId) await this.cards.route(admitted.left);
    await this.cards.route(chatId);
    return { ok: true };
  }

  /** A widget's view (live-widget.ts): a live one takes the chat's cards; superseded ones are told so. */
  private async viewFromWidget(
    tab: Tab,
    chatId: string,
    view: number,
    newOwner: string | null,
  ): Promise<Ack> {
    const reply = tab.reply;
    const verdict: WidgetVerdict =
      reply === null
        ? await this.widgets.neverLive(tab)
        : await this.cards.inChat(chatId, () => this.widgets.judge(tab, reply, chatId, view));
    for (const viewer of verdict.superseded) this.feed.superseded(viewer.id, chatId);
    if (verdict.live !== true) {
      // Stale: a later view of this tab, or its leave, has the last word.
      if (verdict.live === false) this.feed.superseded(tab.id, chatId);
      if (verdict.superseded.length > 0 || (verdict.live === false && verdict.left !== null))
        await this.cards.route(chatId);
      return { ok: true };
    }
    await this.endTextPromptsBefore(chatId, verdict.reply.msg);
    if (newOwner !== null) await this.cards.readmit(chatId, newOwner);
    await this.cards.route(chatId);
    return { ok: true };
  }

  /**
   * A newer reply means the user wrote again: a text prompt shown in an earlier reply ends as for a message
   * sent instead of an answer (docs/ARCHITECTURE.md#routing): it stays in its reply as text, not moving on.
   */
  private async endTextPromptsBefore(chatId: string, replyId: string): Promise<void> {
    const stale = this.asks
      .ofChat(chatId)
      .filter(
        ({ ask, answering }) =>
          ask.source === "text-prompt" &&
          ask.replyId !== undefined &&
          ask.replyId !== replyId &&
          answering === null,
      );
    await Promise.all(
      stale.map(({ ask }) => this.cards.end(ask.id, endedAsText(ask, "answered-elsewhere"))),
    );
  }

  isLiveReply(chatId: string, reply: ReplyClaim): Promise<boolean> {
    return this.widgets.isLive(chatId, reply);
  }

  /** The finished asks whose card was last shown in this reply, that this token's user may see: the reply's summaries. */
  async replySummaries(
    viewer: Pick<Tab, "userId" | "isOwner">,
    chatId: string,
    replyId: string,
  ): Promise<Ask[]> {
    return this.access.visibleOf(
      { ...viewer, chatClaim: chatId },
      await this.options.store.finishedInReply(chatId, replyId),
    );
  }

  /**
   * The Open WebUI filter says a reply of the chat starts, for this user, before its request reaches
   * the Gateway: the chat's owner is recorded (when none is yet, as its widget's first view would),
   * so the reply's first ask already meets the guest rules; and the reply is noted as the chat's newest.
   */
  async replyStarted(start: ReplyStart): Promise<void> {
    const { chatId, userId, userName, reply, title } = start;
    // Before the reply's request goes out, so its run's first ask finds whose it is.
    await this.options.store.noteReplyStart(
      chatId,
      reply.msg,
      userName === undefined ? { userId } : { userId, name: userName },
      this.options.clock.now(),
    );
    // The chat's owner is Open WebUI's, not whoever replied first (a guest in a shared chat).
    const { owner, isNew } = await inTurn([[this.chatAdmissions, chatId]], () =>
      this.access.claim(chatId, start.chatOwnerId ?? userId),
    );
    this.access.noteView(chatId, owner);
    if (isNew) await this.cards.readmit(chatId, owner);
    await this.widgets.noteReply(chatId, reply);
    if (title !== undefined) await this.chatTitled(chatId, title);
  }

  /** Open WebUI's title of a chat (its filter says): dashboards and notifications show it for the chat. */
  async chatTitled(chatId: string, title: string): Promise<void> {
    await this.options.store.titleChat(chatId, title);
    this.feed.titled(chatId, title);
  }

  /** The titles known for these chats. */
  chatTitles(chatIds: readonly string[]): Promise<Map<string, string>> {
    return this.options.store.chatTitles(chatIds);
  }

  async leave(tabId: string): Promise<void> {
    this.widgets.forget(tabId);
    const chatId = await inTurn([[this.tabSteps, tabId]], () => this.options.presence.leave(tabId));
    if (chatId !== null) await this.cards.route(chatId);
  }

  /** The asks this tab may see (chat-access.ts): pending ones, however old; others from the store; or both. */
  list(tab: Tab, status: AskStatus | "all" | undefined): Promise<Ask[]> {
    return this.access.list(tab, status ?? "pending", this.asks.all());
  }

  /** A tab's answer (answering.ts): its ack goes to `acknowledge` as soon as the source took it. */
  answer(
    tab: Tab,
    askId: string,
    answer: TabAnswer,
    acknowledge?: (ack: AnswerAck) => void,
  ): Promise<AnswerAck> {
    return answerAsk(this.answering, { tab, askId, answer, acknowledge });
  }

  /** Stops every timer and stops listening to the source; pending asks stay in the store for the next start. */
  shutdown(): void {
    this.asks.stopTimers();
    for (const unsubscribe of this.unsubscribe) unsubscribe();
  }

  get activeTimers(): number {
    return this.asks.activeTimers;
  }
}
