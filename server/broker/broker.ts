import type { Ask, AskStatus } from "../../lib/ask.ts";
import type { Clock } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import { endedAsText, EXPIRED } from "../../lib/outcomes.ts";
import {
  type Ack,
  type AnswerAck,
  type AskClose,
  type CloseReason,
  fail,
  type TabAnswer,
} from "../../lib/protocol.ts";
import { Emitter } from "../events.ts";
import type { AskStore } from "../store/store.ts";
import { answerAsk, type AnsweringContext } from "./answering.ts";
import { Cards } from "./cards.ts";
import { ChatAccess } from "./chat-access.ts";
import { LiveWidgets, type WidgetVerdict } from "./live-widget.ts";
import type {
  Arrival,
  AskChannel,
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
 * it is tested without sockets or a Gateway. Its parts: the tracked asks with their phases (`asks`),
 * who may see a chat (`access`), the live widget (`widgets`), cards and endings (`cards`), answering.ts.
 */

export type BrokerEvents = {
  /** This tab is now the one that shows the ask. */
  "ask:show": [tabId: string, ask: Ask];
  "ask:close": [tabId: string, close: AskClose];
  /** Dashboard feed: every change of every ask. */
  "ask:changed": [ask: Ask];
  /** The ask reached a terminal state; `reason` is the one its card closed with. */
  "ask:ended": [ask: Ask, reason: CloseReason];
  /** This widget is not its chat's live one (a newer reply's widget took over): it gets no cards. */
  "widget:superseded": [tabId: string, chatId: string];
  /** Open WebUI's title of a chat became known, or changed. */
  "chat:titled": [chatId: string, title: string];
};

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

export class AskBroker extends Emitter<BrokerEvents> {
  private readonly asks: TrackedAsks;
  private readonly access: ChatAccess;
  private readonly widgets: LiveWidgets;
  private readonly cards: Cards;
  private readonly answering: AnsweringContext;
  /** Each chat's views enter presence one at a time, in the order they arrived. */
  private readonly chatAdmissions: Queue = new Map();
  /** Each tab's views and leaves, one at a time. */
  private readonly tabSteps: Queue = new Map();
  private readonly unsubscribe: (() => void)[];
  private readonly options: BrokerOptions;

  constructor(options: BrokerOptions) {
    super();
    this.options = options;
    const { store, presence, source, clock, owners } = options;
    this.asks = new TrackedAsks(clock, (ask) =>
      this.settle(
        this.end(ask.id, ask.source === "text-prompt" ? endedAsText(ask) : EXPIRED),
        `expiring ask ${ask.id}`,
      ),
    );
    const settle = (work: Promise<unknown>, what: string) => this.settle(work, what);
    this.access = new ChatAccess({
      store,
      clock,
      owners,
      allowUnvouched: options.allowUnvouched,
      settle,
    });
    this.widgets = new LiveWidgets({ presence, store, clock });
    this.cards = new Cards({
      ...options,
      asks: this.asks,
      access: this.access,
      settle,
      changed: (ask) => this.emit("ask:changed", ask),
      ended: (ask, reason) => this.emit("ask:ended", ask, reason),
    });
    this.answering = {
      ...options,
      asks: this.asks,
      visibleTo: (tab, ask) => this.access.visibleTo(tab, ask),
      end: (id, outcome) => this.end(id, outcome),
      finish: (ask, ending, by) => this.cards.finish(ask, ending, by),
    };
    this.unsubscribe = [
      source.on("ask:arrived", (ask, arrival) =>
        this.settle(this.receive(ask, arrival), `taking in ask ${ask.id}`),
      ),
      source.on("ask:ended", (id, outcome) =>
        this.settle(this.end(id, outcome), `ending ask ${id}`),
      ),
      source.on("asks:listed", (listing) =>
        this.settle(this.reconcile(listing), "reconciling with the source's list"),
      ),
      // Presence tells the tabs of this instance of their cards (with several instances, whoever moved them).
      presence.on("card:show", (tabId, ask) => this.emit("ask:show", tabId, ask)),
      presence.on("card:close", (tabId, close) => this.emit("ask:close", tabId, close)),
    ];
  }

  /**
   * Brings back the pending asks of an earlier run. They are shown only once their source confirms
   * them (lists them again), so a tab never sees an ask that ended while the server was down.
   */
  async restore(): Promise<void> {
    for (const ask of await this.options.store.pending())
      this.asks.track(ask, "unconfirmed", { unwritten: false });
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

  /**
   * A new ask from a source. Known ids (pending or tombstoned) are ignored: a replay never revives.
   * Its end may come while it is taken in: it is applied once the ask is tracked.
   */
  async receive(ask: Ask, arrival: Arrival = "listed"): Promise<void> {
    if (this.asks.get(ask.id)?.phase === "unconfirmed") return this.confirm([ask.id]);
    if (!this.asks.arrive(ask)) return;
    try {
      // A text prompt belongs to the instance whose chat watcher saw it: the store says whose it is.
      await (arrival === "announced" && ask.source !== "text-prompt"
        ? this.takeAnnounced(ask)
        : this.takeListed(ask));
    } finally {
      const endedMeanwhile = this.asks.received(ask.id);
      if (endedMeanwhile) await this.end(ask.id, endedMeanwhile);
    }
  }

  /** An ask that may be known already (a listing, a text prompt): the store says first. */
  private async takeListed(arrived: Ask): Promise<void> {
    // The reads at once: with Redis each is a round trip on the way of the card.
    const [stored, { ask, verdict }] = await Promise.all([
      this.options.store.get(arrived.id),
      this.access.admission(arrived),
    ]);
    if (stored) {
      // Another instance sharing the store took it in first: follow it here too. A terminal row is a
      // tombstone. Text prompts belong to the instance whose chat watcher saw them.
      if (stored.status === "pending" && ask.source !== "text-prompt") await this.adopt(stored);
      return;
    }
    if (verdict.action === "refuse") return this.cards.refuse(ask, verdict.summary);
    if (ask.source === "text-prompt" && !(await this.cards.viewerFor(ask))) {
      // A text prompt has nowhere to wait: with no tab it stays in the reply as text.
      await this.options.store.put(ask);
      return this.cards.finish(ask, endedAsText(ask));
    }
    this.asks.track(ask, "pending", { unwritten: true });
    if (ask.chatId) await this.cards.route(ask.chatId);
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
    const { ask, verdict } = await this.access.admission(arrived);
    if (verdict.action === "refuse") return this.takeListed(ask);
    this.asks.track(ask, "pending", { unwritten: true });
    if (ask.chatId) await this.cards.route(ask.chatId);
    // A failed write is logged where it was made; the store is asked instead.
    if (await this.asks.get(ask.id)?.firstWrite?.catch(() => false)) return this.taken(ask);
    const stored = await this.options.store.get(ask.id);
    if (!this.asks.listed(ask.id)) return;
    if (stored && stored.status !== "pending")
      return this.cards.finish(ask, {
        status: stored.status,
        summary: stored.resolution?.summary ?? "",
        reason: "answered-elsewhere",
      });
    // Already stored (by another instance, or by a write of ours whose answer was lost): nothing more to write.
    const entry = this.asks.get(ask.id);
    if (stored && entry) entry.unwritten = false;
    this.taken(ask);
  }

  /** The ask is routed: written if nobody has written it, and announced, unless it ended meanwhile. */
  private taken(ask: Ask): void {
    const current = this.asks.listed(ask.id);
    if (!current) return;
    this.cards.write(ask.id);
    this.emit("ask:changed", current);
  }

  /** The ask ended at its source (answered elsewhere, expired, run moved on). */
  async end(id: string, outcome: Outcome): Promise<void> {
    const entry = this.asks.get(id);
    if (!entry || entry.phase === "ended") return;
    if (entry.phase === "arriving") {
      entry.endedWhileArriving = outcome;
      return;
    }
    const ending = typeof outcome === "function" ? outcome(entry.ask) : outcome;
    if (entry.answering) {
      entry.endedWhileAnswering = ending;
      return;
    }
    await this.cards.finish(entry.ask, ending);
  }

  /**
   * After a (re)connect: every pending ask of a listed source that the source no longer lists has
   * ended while nobody was listening (how, if the source can tell; otherwise it expired). Then what
   * was restored may be shown: the source has had its say (text prompts keep their own timeout).
   */
  async reconcile(listing: SourceListing): Promise<void> {
    const gone = this.asks
      .all()
      .filter((ask) => listing.live.get(ask.source)?.has(ask.id) === false);
    await Promise.all(
      gone.map(async (ask) => {
        const outcome = await listing.outcomeOf(ask).catch(() => null);
        await this.end(ask.id, outcome ?? EXPIRED);
      }),
    );
    await this.confirm(this.asks.unconfirmed());
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
    for (const viewer of verdict.superseded) this.emit("widget:superseded", viewer.id, chatId);
    if (verdict.live !== true) {
      // Stale: a later view of this tab, or its leave, has the last word.
      if (verdict.live === false) this.emit("widget:superseded", tab.id, chatId);
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
          !answering,
      );
    await Promise.all(
      stale.map(({ ask }) => this.end(ask.id, endedAsText(ask, "answered-elsewhere"))),
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
    this.emit("chat:titled", chatId, title);
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

  /** The one boundary for work started by an event or a timer: a failure is logged, once. */
  private settle(work: Promise<unknown>, what: string): void {
    work.catch((error: unknown) => this.options.log(`${what} failed: ${errorMessage(error)}`));
  }

  private async adopt(ask: Ask): Promise<void> {
    this.asks.track(ask, "pending", { unwritten: false });
    this.emit("ask:changed", ask);
    if (ask.chatId) await this.cards.route(ask.chatId);
  }

  private async confirm(ids: readonly string[]): Promise<void> {
    const chats = new Set<string>();
    for (const id of ids) {
      this.asks.confirm(id);
      const chatId = this.asks.listed(id)?.chatId;
      if (chatId) chats.add(chatId);
    }
    await Promise.all([...chats].map((chatId) => this.cards.route(chatId)));
  }
}
