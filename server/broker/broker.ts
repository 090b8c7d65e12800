import { inReply, type Ask, type AskStatus } from "../../lib/ask.ts";
import { mapAnswer } from "../../lib/answers.ts";
import type { Clock, TimerHandle } from "../../lib/clock.ts";
import { ANSWERED_ELSEWHERE, EXPIRED, endedAsText, type Ending } from "../../lib/outcomes.ts";
import { admit, canSee, newestWhoMaySee } from "../../lib/policy.ts";
import { fail, type Ack, type AnswerAck, type AskClose, type CloseReason, type SecretOutcome } from "../../lib/protocol.ts";
import { Emitter } from "../events.ts";
import { StoreUnavailable, type AskStore } from "../store/store.ts";
import { AskAlreadyEnded, type Arrival, type AskChannel, type Outcome, type Presence, type ReplyClaim, type SourceListing, type Tab } from "./ports.ts";

/**
 * The AskBroker: the one state machine every ask goes through (DESIGN §3, §6).
 * policy → store → presence → timers. Asks come in from an AskChannel as domain events and replies go
 * out through it; what tabs should see goes out as events the transports subscribe to. So it is
 * tested without sockets or a Gateway.
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
};

export type BrokerOptions = {
  store: AskStore;
  presence: Presence;
  source: AskChannel;
  clock: Clock;
  owners: ReadonlySet<string>;
  instanceId: string;
  log(message: string): void;
};

/** How a widget's chat:view was judged: live (and whom it superseded), or not (and the chat it left, if any). */
type WidgetVerdict = { superseded: Tab[] } & ({ live: false; left: string | null } | { live: true; reply: ReplyClaim } | { live: "stale" });

/** Retention keeps chats viewed within HISTORY_DAYS (at least a day): one write an hour per chat is plenty. */
const VIEW_NOTE_INTERVAL_MS = 3_600_000;

export class AskBroker extends Emitter<BrokerEvents> {
  private readonly pending = new Map<string, Ask>();
  private readonly pendingByChat = new Map<string, Set<string>>();
  private readonly timers = new Map<string, TimerHandle>();
  /** Answers this instance is delivering, and how the source said meanwhile the same ask ended. */
  private readonly inFlight = new Map<string, Ending | null>();
  /** Asks being taken in (the store or presence answers asynchronously), and how their source said meanwhile they ended. */
  private readonly arriving = new Map<string, Outcome | null>();
  /** Taken in but not yet in the store: written right after its first ask:show, or after routing. */
  private readonly unwritten = new Set<string>();
  /** The first write of an ask being taken in: whether the store took it (false: a tombstone was there). */
  private readonly firstWrites = new Map<string, Promise<boolean>>();
  /** Restored from the store but not yet confirmed by the source: not shown until then. */
  private readonly unconfirmed = new Set<string>();
  /** A chat's owner never changes once recorded, so a known one is remembered (unknown ones are not). */
  private readonly knownOwners = new Map<string, string>();
  /** When this instance last wrote a chat's view time to the store. */
  private readonly viewNoted = new Map<string, number>();
  /**
   * The latest view of each widget tab still waiting for its step of the chat: a leave (a disconnect)
   * or a newer view that comes meanwhile makes that step moot, so a gone tab never ends up viewing.
   */
  private readonly widgetViews = new Map<string, number>();
  private widgetViewCount = 0;
  /** The routing steps of each chat, one at a time: presence answers asynchronously. */
  private readonly chatSteps: Queue = new Map();
  /** Each chat's views enter presence one at a time, in the order they arrived. */
  private readonly chatAdmissions: Queue = new Map();
  /** Each tab's views and leaves, one at a time. */
  private readonly tabSteps: Queue = new Map();
  private readonly unsubscribe: (() => void)[];
  private readonly store: AskStore;
  private readonly presence: Presence;
  private readonly source: AskChannel;
  private readonly clock: Clock;
  private readonly owners: ReadonlySet<string>;
  private readonly instanceId: string;
  private readonly log: (message: string) => void;

  constructor(options: BrokerOptions) {
    super();
    this.store = options.store;
    this.presence = options.presence;
    this.source = options.source;
    this.clock = options.clock;
    this.owners = options.owners;
    this.instanceId = options.instanceId;
    this.log = options.log;
    this.unsubscribe = [
      options.source.on("ask:arrived", (ask, arrival) => this.settle(this.receive(ask, arrival), `taking in ask ${ask.id}`)),
      options.source.on("ask:ended", (id, outcome) => this.settle(this.end(id, outcome), `ending ask ${id}`)),
      options.source.on("asks:listed", (listing) => this.settle(this.reconcile(listing), "reconciling with the source's list")),
      // Presence tells the tabs of this instance of their cards (with several instances, whoever moved them).
      options.presence.on("card:show", (tabId, ask) => this.emit("ask:show", tabId, ask)),
      options.presence.on("card:close", (tabId, close) => this.emit("ask:close", tabId, close)),
    ];
  }

  /**
   * Brings back the pending asks of an earlier run. They are shown only once their source confirms
   * them (lists them again), so a tab never sees an ask that ended while the server was down.
   */
  async restore(): Promise<void> {
    for (const ask of await this.store.pending()) {
      this.track(ask);
      this.unconfirmed.add(ask.id);
    }
  }

  get pendingAsks(): Ask[] {
    return [...this.pending.values()];
  }

  getPending(id: string): Ask | undefined {
    return this.pending.get(id);
  }

  /** Who shows the ask now (a tab id), or null. */
  shownTo(id: string): Promise<string | null> {
    return this.presence.shownTo(id);
  }

  /**
   * A new ask from a source. Known ids (pending or tombstoned) are ignored: a replay never revives.
   * Its end may come while it is taken in: it is applied once the ask is tracked.
   */
  async receive(ask: Ask, arrival: Arrival = "listed"): Promise<void> {
    if (this.unconfirmed.has(ask.id)) return this.confirm([ask.id]);
    if (this.pending.has(ask.id) || this.arriving.has(ask.id)) return;
    this.arriving.set(ask.id, null);
    try {
      // A text prompt belongs to the instance whose chat watcher saw it: the store says whose it is.
      await (arrival === "announced" && ask.source !== "text-prompt" ? this.takeAnnounced(ask) : this.takeListed(ask));
    } finally {
      const endedMeanwhile = this.arriving.get(ask.id) ?? null;
      this.arriving.delete(ask.id);
      this.firstWrites.delete(ask.id);
      if (endedMeanwhile) await this.end(ask.id, endedMeanwhile);
    }
  }

  /** An ask that may be known already (a listing, a text prompt): the store says first. */
  private async takeListed(ask: Ask): Promise<void> {
    // Both reads at once: with Redis each is a round trip on the way of the card.
    const [stored, chatOwner] = await Promise.all([this.store.get(ask.id), ask.chatId ? this.chatOwner(ask.chatId) : null]);
    if (stored) {
      // Another instance sharing the store took it in first: follow it here too. A terminal row is a
      // tombstone. Text prompts belong to the instance whose chat watcher saw them.
      if (stored.status === "pending" && ask.source !== "text-prompt") await this.adopt(stored);
      return;
    }
    const verdict = admit(ask, { chatOwner, owners: this.owners });
    if (verdict.action === "refuse") return this.refuse(ask, verdict.summary);
    if (ask.source === "text-prompt" && !(await this.viewerFor(ask))) {
      // A text prompt has nowhere to wait: with no tab it stays in the reply as text.
      await this.store.put(ask);
      return this.finish(ask, endedAsText(ask));
    }
    this.take(ask);
    if (ask.chatId) await this.route(ask.chatId);
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
  private async takeAnnounced(ask: Ask): Promise<void> {
    const chatOwner = ask.chatId ? await this.chatOwner(ask.chatId) : null;
    if (admit(ask, { chatOwner, owners: this.owners }).action === "refuse") return this.takeListed(ask);
    this.take(ask);
    if (ask.chatId) await this.route(ask.chatId);
    // A failed write is logged where it was made; the store is asked instead.
    if (await this.firstWrites.get(ask.id)?.catch(() => false)) return this.taken(ask);
    const stored = await this.store.get(ask.id);
    if (!this.pending.has(ask.id)) return;
    if (stored && stored.status !== "pending") return this.finish(ask, { status: stored.status, summary: stored.resolution?.summary ?? "", reason: "answered-elsewhere" });
    // Already stored (by another instance, or by a write of ours whose answer was lost): nothing more to write.
    if (stored) this.unwritten.delete(ask.id);
    this.taken(ask);
  }

  /** Tracks a new ask, to be written once its card is out (or it is routed). */
  private take(ask: Ask): void {
    this.track(ask);
    this.unwritten.add(ask.id);
  }

  /** The ask is routed: written if nobody has written it, and announced, unless it ended meanwhile. */
  private taken(ask: Ask): void {
    const current = this.pending.get(ask.id);
    if (!current) return;
    this.write(ask.id);
    this.emit("ask:changed", current);
  }

  /** The ask ended at its source (answered elsewhere, expired, run moved on). */
  async end(id: string, outcome: Outcome): Promise<void> {
    const ask = this.pending.get(id);
    if (!ask) {
      if (this.arriving.has(id)) this.arriving.set(id, outcome);
      return;
    }
    const ending = typeof outcome === "function" ? outcome(ask) : outcome;
    if (this.inFlight.has(id)) {
      this.inFlight.set(id, ending);
      return;
    }
    await this.finish(ask, ending);
  }

  /**
   * After a (re)connect: every pending ask of a listed source that the source no longer lists has
   * ended while nobody was listening (how, if the source can tell; otherwise it expired). Then what
   * was restored may be shown: the source has had its say (text prompts keep their own timeout).
   */
  async reconcile(listing: SourceListing): Promise<void> {
    const gone = [...this.pending.values()].filter((ask) => listing.live.get(ask.source)?.has(ask.id) === false);
    await Promise.all(
      gone.map(async (ask) => {
        const outcome = await listing.outcomeOf(ask).catch(() => null);
        await this.end(ask.id, outcome ?? EXPIRED);
      }),
    );
    await this.confirm([...this.unconfirmed]);
  }

  async view(tab: Tab, chatId: string): Promise<Ack> {
    if (tab.chatClaim !== null && tab.chatClaim !== chatId) return fail("FORBIDDEN", "this token is for another chat");
    // A widget's view is its latest from the moment it arrives: a leave or a newer view meanwhile makes it moot.
    const widgetView = tab.chatClaim !== null ? this.noteWidgetView(tab.id) : null;
    // Presence hears of a tab's views and leaves in the order they arrived, and of the views of a
    // chat in that order too, though finding the chat's owner may wait for the store.
    const admitted = await inTurn(
      [
        [this.tabSteps, tab.id],
        [this.chatAdmissions, chatId],
      ],
      () => this.admitView(tab, chatId),
    );
    if (!admitted.ok) return admitted.refusal;
    if (widgetView !== null) return this.viewFromWidget(tab, chatId, widgetView, admitted.ownerIsNew ? admitted.owner : null);
    // Asks that waited for an unknown owner meet the guest rules now that the owner is known.
    if (admitted.ownerIsNew) await this.readmit(chatId, admitted.owner);
    if (admitted.left !== null && admitted.left !== chatId) await this.route(admitted.left);
    await this.route(chatId);
    return { ok: true };
  }

  /**
   * The live-widget rule (DESIGN §2, §6, §8) for a token with a chat claim: only the widget of the
   * chat's newest reply takes cards. An older reply's widget (or one of the first filter, with no
   * reply) is told it is superseded and views nothing; a newer one supersedes the widgets of older
   * replies that view the chat. Widgets of the same reply (two browser tabs) follow the v1 rule: the
   * newest `chat:view` wins, so a tab that comes back to the front sends it again.
   */
  private async viewFromWidget(tab: Tab, chatId: string, view: number, newOwner: string | null): Promise<Ack> {
    const reply = tab.reply;
    const verdict: WidgetVerdict =
      reply === null
        ? { live: false, left: await this.presence.leave(tab.id, SUPERSEDED), superseded: [] }
        : // One step of the chat: two widgets viewing at once are judged one after the other, each
          // against the newest reply noted so far, so the older one never ends up the newest viewer.
          await this.inChat(chatId, () => this.judgeWidget(tab, reply, chatId, view));
    for (const viewer of verdict.superseded) this.emit("widget:superseded", viewer.id, chatId);
    if (verdict.live !== true) {
      // Stale: a later view of this tab, or its leave, has the last word.
      if (verdict.live === false) this.emit("widget:superseded", tab.id, chatId);
      if (verdict.superseded.length > 0 || (verdict.live === false && verdict.left !== null)) await this.route(chatId);
      return { ok: true };
    }
    await this.endTextPromptsBefore(chatId, verdict.reply.msg);
    if (newOwner !== null) await this.readmit(chatId, newOwner);
    await this.route(chatId);
    return { ok: true };
  }

  /**
   * Notes the reply, then every widget of an older reply viewing the chat is superseded, whoever's view
   * noted the newer one; this widget is live when its reply is the chat's newest and none newer views.
   */
  private async judgeWidget(tab: Tab, reply: ReplyClaim, chatId: string, view: number): Promise<WidgetVerdict> {
    const current = () => this.widgetViews.get(tab.id) === view;
    // Noted even when the tab left meanwhile: the server has seen this reply's widget.
    const newest = await this.noteReply(chatId, reply);
    const viewers = await this.presence.viewers(chatId);
    const superseded = viewers.filter((viewer) => viewer.id !== tab.id && viewer.chatClaim !== null && (viewer.reply === null || !isSameOrNewer(viewer.reply, newest)));
    for (const viewer of superseded) await this.presence.leave(viewer.id, SUPERSEDED);
    if (!current()) return { live: "stale", superseded };
    if (!isSameOrNewer(reply, newest) || viewers.some((viewer) => viewer.reply !== null && !isSameOrNewer(reply, viewer.reply))) {
      return { live: false, left: await this.presence.leave(tab.id, SUPERSEDED), superseded };
    }
    await this.presence.view(tab, chatId);
    // Left while presence wrote (another process's presence answers asynchronously): undo it.
    if (!current()) {
      await this.presence.leave(tab.id);
      return { live: "stale", superseded };
    }
    return { live: true, reply, superseded };
  }

  /**
   * A newer reply means the user wrote again: a text prompt shown in an earlier reply ends as DESIGN §6
   * says for a message sent instead of an answer (it stays in its reply as text) rather than moving on.
   */
  private async endTextPromptsBefore(chatId: string, replyId: string): Promise<void> {
    const stale = [...(this.pendingByChat.get(chatId) ?? [])]
      .map((askId) => this.pending.get(askId))
      .filter((ask): ask is Ask => ask?.source === "text-prompt" && ask.replyId !== undefined && ask.replyId !== replyId && !this.inFlight.has(ask.id));
    await Promise.all(stale.map((ask) => this.end(ask.id, endedAsText(ask, "answered-elsewhere"))));
  }

  /**
   * Notes that a widget of this reply was seen (its page requested, its socket viewing) and returns
   * the chat's newest reply. The page handler asks before it serves a page: live or idle.
   */
  noteReply(chatId: string, reply: ReplyClaim): Promise<ReplyClaim> {
    return this.store.noteEmbed(chatId, reply, this.clock.now());
  }

  /** Is this reply's widget the chat's live one? Notes it as seen, as a viewing widget does. */
  async isLiveReply(chatId: string, reply: ReplyClaim): Promise<boolean> {
    return isSameOrNewer(reply, await this.noteReply(chatId, reply));
  }

  /** The finished asks whose card was last shown in this reply, that this token's user may see: the reply's summaries. */
  async replySummaries(viewer: Pick<Tab, "userId" | "isOwner">, chatId: string, replyId: string): Promise<Ask[]> {
    const asks = await this.store.finishedInReply(chatId, replyId);
    const tab: Tab = { id: "", userId: viewer.userId, isOwner: viewer.isOwner, chatClaim: chatId, reply: null };
    const visible = await Promise.all(asks.map((ask) => this.visibleTo(tab, ask)));
    return asks.filter((_, index) => visible[index]);
  }

  private async admitView(tab: Tab, chatId: string): Promise<{ ok: true; owner: string; ownerIsNew: boolean; left: string | null } | { ok: false; refusal: Ack }> {
    const known = await this.chatOwner(chatId);
    // A chat's owner is recorded only from a token that proves it: the widget's token for this very
    // chat (the Open WebUI filter mints it for the chat's user), or an owner's. Any other token could
    // claim chats nobody has opened yet and lock their users out.
    if (known === null && tab.chatClaim === null && !tab.isOwner) {
      return { ok: false, refusal: fail("FORBIDDEN", "this chat has no recorded user yet: open it from its Open WebUI widget first") };
    }
    const owner = known ?? (await this.store.recordChatOwner(chatId, tab.userId));
    if (!tab.isOwner && owner !== tab.userId) return { ok: false, refusal: fail("FORBIDDEN", "this chat belongs to another user") };
    this.noteView(chatId, owner);
    // A widget views (or not) by the live-widget rule, judged in its chat's step.
    if (tab.chatClaim !== null) return { ok: true, owner, ownerIsNew: known === null, left: null };
    // Viewing the same chat again makes this tab the newest viewer; a tab views one chat at a time.
    const left = await this.presence.view(tab, chatId);
    return { ok: true, owner, ownerIsNew: known === null, left };
  }

  private noteWidgetView(tabId: string): number {
    const view = ++this.widgetViewCount;
    this.widgetViews.set(tabId, view);
    return view;
  }

  /**
   * The Open WebUI filter says a reply of the chat starts, for this user, before its request reaches
   * the Gateway: the chat's owner is recorded (when none is yet, as its widget's first view would),
   * so the reply's first ask already meets the guest rules; and the reply is noted as the chat's newest.
   */
  async replyStarted(chatId: string, userId: string, reply: ReplyClaim): Promise<void> {
    const { owner, isNew } = await inTurn([[this.chatAdmissions, chatId]], async () => {
      const known = await this.chatOwner(chatId);
      return known === null ? { owner: await this.store.recordChatOwner(chatId, userId), isNew: true } : { owner: known, isNew: false };
    });
    this.noteView(chatId, owner);
    if (isNew) await this.readmit(chatId, owner);
    await this.noteReply(chatId, reply);
  }

  async leave(tabId: string): Promise<void> {
    this.widgetViews.delete(tabId);
    const chatId = await inTurn([[this.tabSteps, tabId]], () => this.presence.leave(tabId));
    if (chatId !== null) await this.route(chatId);
  }

  /** May this tab see (and answer) the ask? Its user must, and an embed token's chat claim must match. */
  async visibleTo(tab: Tab, ask: Pick<Ask, "chatId">): Promise<boolean> {
    if (tab.chatClaim !== null && ask.chatId !== tab.chatClaim) return false;
    return canSee(ask, tab.userId, tab.isOwner, ask.chatId ? await this.chatOwner(ask.chatId) : null);
  }

  /** The asks this tab may see: pending ones from memory, any other status from the store. */
  async list(tab: Tab, status: AskStatus | "all" | undefined): Promise<Ask[]> {
    if (status === undefined || status === "pending") {
      const asks = this.pendingAsks;
      const visible = await Promise.all(asks.map((ask) => this.visibleTo(tab, ask)));
      return asks.filter((_, index) => visible[index]);
    }
    const filter = { status: status === "all" ? undefined : status };
    let scope: { chatId?: string; ownedBy?: string };
    if (tab.chatClaim !== null) {
      // An embed token sees its chat's history only when its user owns that chat (owners own all).
      if (!tab.isOwner && (await this.chatOwner(tab.chatClaim)) !== tab.userId) return [];
      scope = { chatId: tab.chatClaim };
    } else {
      scope = tab.isOwner ? {} : { ownedBy: tab.userId };
    }
    return (await this.store.list({ ...filter, ...scope })).map((ask) => this.pending.get(ask.id) ?? ask);
  }

  /**
   * A tab's answer. Once it is decided (the claim is held and the source took it) the ack goes to
   * `acknowledge` at once, and only then is the ask finished: its card closed, its end stored, the
   * dashboards and the push notifier told. The returned promise settles with the same ack when that is
   * done, so a failure there reaches the caller's boundary. Until the ask has left `pending`, it stays
   * in flight: another answer is refused and an end from the source waits.
   */
  async answer(tab: Tab, askId: string, answer: Parameters<typeof mapAnswer>[1], acknowledge?: (ack: AnswerAck) => void): Promise<AnswerAck> {
    const ask = this.pending.get(askId);
    if (!ask) {
      const ended = await this.store.get(askId);
      if (!ended || !(await this.visibleTo(tab, ended))) return fail("NOT_FOUND", "no such ask");
      return ended.status === "expired" ? fail("EXPIRED", "this ask has expired") : fail("ALREADY_RESOLVED", `this ask is already ${ended.status}`);
    }
    // The same answer as for an id that does not exist: a refusal would confirm that it does.
    if (!(await this.visibleTo(tab, ask))) return fail("NOT_FOUND", "no such ask");
    const mapped = mapAnswer(ask, answer);
    if (!mapped.ok) return fail(mapped.code, mapped.message);
    // Only the chat's own widget can put the answer into the chat, as the person's next message.
    if (mapped.chatMessage !== undefined && tab.chatClaim !== ask.chatId) {
      return fail("FORBIDDEN", "answer this in its chat: the answer becomes your next message there");
    }
    if (this.inFlight.has(askId)) return fail("ALREADY_RESOLVED", "another answer to this ask was given first");
    this.inFlight.set(askId, null);
    const applyEndedMeanwhile = async (): Promise<void> => {
      const endedMeanwhile = this.inFlight.get(askId) ?? null;
      this.inFlight.delete(askId);
      if (endedMeanwhile) await this.end(askId, endedMeanwhile);
    };
    let claimed: boolean;
    try {
      claimed = await this.store.claim(askId, this.instanceId);
    } catch (error) {
      // The store failed (a full disk, Redis away): the answer fails, and the ask stays answerable.
      await applyEndedMeanwhile();
      if (error instanceof StoreUnavailable) return fail("UNAVAILABLE", `The answer was not taken: ${error.message}. The card stays; answer again once the status says the server is back.`);
      throw error;
    }
    if (!claimed) {
      await applyEndedMeanwhile();
      return fail("ALREADY_RESOLVED", "another answer to this ask was given first");
    }
    try {
      if (mapped.reply) await this.source.deliver(ask, mapped.reply);
    } catch (error) {
      await this.store.release(askId, this.instanceId);
      if (error instanceof AskAlreadyEnded) {
        if (!this.inFlight.get(askId)) this.inFlight.set(askId, ANSWERED_ELSEWHERE);
        await applyEndedMeanwhile();
        return fail("ALREADY_RESOLVED", "the Gateway already has an answer for this ask");
      }
      await applyEndedMeanwhile();
      // Never echo the source's message for a secret: it could quote the value.
      const detail = ask.kind === "secret" ? "the secret was not accepted" : error instanceof Error ? error.message : String(error);
      return fail("GATEWAY_ERROR", `The Gateway did not take the answer: ${detail}`);
    }
    const ack: AnswerAck = {
      ok: true,
      status: mapped.status,
      ...(ask.kind === "secret" ? { outcome: secretOutcome(ask, mapped.status) } : {}),
      ...(mapped.chatMessage === undefined ? {} : { chatMessage: mapped.chatMessage }),
    };
    try {
      acknowledge?.(ack);
    } finally {
      // The answer is decided whether or not the ack could be sent, so the ask is finished either way.
      // Nothing is awaited from here until finish has taken the ask out of `pending`.
      this.inFlight.delete(askId);
      const pendingNow = this.pending.get(askId);
      // The summary stays in the reply whose widget answered.
      const current = pendingNow && tab.reply !== null && tab.chatClaim === pendingNow.chatId ? { ...pendingNow, replyId: tab.reply.msg } : pendingNow;
      const reason = mapped.status === "cancelled" ? "cancelled" : "answered";
      if (current) await this.finish(current, { status: mapped.status, summary: mapped.summary, reason }, { by: tab.userId, tabId: tab.id });
    }
    return ack;
  }

  /** Stops every timer and stops listening to the source; pending asks stay in the store for the next start. */
  shutdown(): void {
    for (const handle of this.timers.values()) this.clock.clearTimer(handle);
    this.timers.clear();
    for (const unsubscribe of this.unsubscribe) unsubscribe();
  }

  get activeTimers(): number {
    return this.timers.size;
  }

  /** The one boundary for work started by an event or a timer: a failure is logged, once. */
  private settle(work: Promise<unknown>, what: string): void {
    work.catch((error: unknown) => this.log(`${what} failed: ${error instanceof Error ? error.message : String(error)}`));
  }

  /**
   * Stores a new ask, as soon as the move that showed its card is done: not on the card's way (the
   * Gateway still holds the ask should the process die in between), and ahead of any answer, which
   * needs the card to reach a person and come back (SQLite writes at once; Redis gets the row from
   * here in one hop, the answer's claim in three).
   */
  private write(askId: string): void {
    const ask = this.pending.get(askId);
    if (!ask || !this.unwritten.delete(askId)) return;
    const written = this.store.put(ask);
    if (this.arriving.has(askId)) this.firstWrites.set(askId, written);
    this.settle(written, `storing ask ${askId}`);
  }

  private async refuse(ask: Ask, summary: string): Promise<void> {
    await this.store.put(ask);
    const ours = await this.store.claim(ask.id, this.instanceId);
    await this.finish(ask, { status: "denied", summary, reason: "denied" });
    if (ours) await this.tellRefusal(ask);
  }

  private async readmit(chatId: string, owner: string): Promise<void> {
    for (const askId of [...(this.pendingByChat.get(chatId) ?? [])]) {
      const ask = this.pending.get(askId);
      if (!ask || this.inFlight.has(askId)) continue;
      const verdict = admit(ask, { chatOwner: owner, owners: this.owners });
      if (verdict.action !== "refuse") continue;
      // Every instance refuses it; the one that claims it (the row must exist) tells the source, once.
      if (this.unwritten.delete(askId)) await this.store.put(ask);
      const ours = await this.store.claim(ask.id, this.instanceId);
      await this.finish(ask, { status: "denied", summary: verdict.summary, reason: "denied" });
      // The view need not wait for the source: the ask is over here either way.
      if (ours) this.settle(this.tellRefusal(ask), `refusing ask ${ask.id}`);
    }
  }

  /** Tells the source an ask was refused by policy; the ask is already over here either way. */
  private async tellRefusal(ask: Ask): Promise<void> {
    try {
      await this.source.refuse(ask);
    } catch (error) {
      this.log(`could not refuse ask ${ask.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async adopt(ask: Ask): Promise<void> {
    this.track(ask);
    this.emit("ask:changed", ask);
    if (ask.chatId) await this.route(ask.chatId);
  }

  private async chatOwner(chatId: string): Promise<string | null> {
    const known = this.knownOwners.get(chatId);
    if (known !== undefined) return known;
    const owner = await this.store.chatOwner(chatId);
    if (owner !== null) this.knownOwners.set(chatId, owner);
    return owner;
  }

  /** For a chat whose owner is recorded: `chatViewed` writes that owner back if retention removed the row. */
  private noteView(chatId: string, owner: string): void {
    const now = this.clock.now();
    const last = this.viewNoted.get(chatId);
    if (last !== undefined && now - last < VIEW_NOTE_INTERVAL_MS) return;
    this.viewNoted.set(chatId, now);
    this.settle(this.store.chatViewed(chatId, owner, now), `noting a view of chat ${chatId}`);
  }

  private async confirm(ids: readonly string[]): Promise<void> {
    const chats = new Set<string>();
    for (const id of ids) {
      this.unconfirmed.delete(id);
      const chatId = this.pending.get(id)?.chatId;
      if (chatId) chats.add(chatId);
    }
    await Promise.all([...chats].map((chatId) => this.route(chatId)));
  }

  private track(ask: Ask): void {
    this.pending.set(ask.id, ask);
    if (ask.chatId) {
      const ids = this.pendingByChat.get(ask.chatId) ?? new Set<string>();
      ids.add(ask.id);
      this.pendingByChat.set(ask.chatId, ids);
    }
    if (ask.expiresAt !== null) {
      this.timers.set(
        ask.id,
        this.clock.setTimer(() => {
          this.timers.delete(ask.id);
          this.settle(this.end(ask.id, ask.source === "text-prompt" ? endedAsText(ask) : EXPIRED), `expiring ask ${ask.id}`);
        }, ask.expiresAt - this.clock.now()),
      );
    }
  }

  private async finish(ask: Ask, end: Ending, by: { by: string | null; tabId: string | null } = { by: null, tabId: null }): Promise<void> {
    const timer = this.timers.get(ask.id);
    if (timer) this.clock.clearTimer(timer);
    this.timers.delete(ask.id);
    this.pending.delete(ask.id);
    this.unconfirmed.delete(ask.id);
    this.unwritten.delete(ask.id);
    if (ask.chatId) {
      const ids = this.pendingByChat.get(ask.chatId);
      ids?.delete(ask.id);
      if (ids?.size === 0) this.pendingByChat.delete(ask.chatId);
    }
    const ended: Ask = { ...ask, status: end.status, resolution: { by: by.by, at: this.clock.now(), summary: end.summary, tabId: by.tabId } };
    // With several instances each hears the end; the one whose write ends the ask reports it (once).
    const endedHere = await this.store.put(ended);
    const close = () => this.presence.forget(ask.id, { askId: ask.id, reason: end.reason, summary: end.summary });
    // After any routing step of the chat already under way, so a card shown by it is closed too.
    await (ask.chatId ? this.inChat(ask.chatId, close) : close());
    this.emit("ask:changed", ended);
    if (endedHere) this.emit("ask:ended", ended, end.reason);
  }

  private async viewerFor(ask: Ask): Promise<Tab | null> {
    if (!ask.chatId) return null;
    const [viewers, chatOwner] = await Promise.all([this.presence.viewers(ask.chatId), this.chatOwner(ask.chatId)]);
    return newestWhoMaySee(viewers, ask, chatOwner);
  }

  /**
   * Puts every pending ask of the chat on its newest viewer that may see it, handing off from an older
   * tab: one atomic step of presence per ask, so instances routing the same chat at once agree.
   */
  private route(chatId: string): Promise<void> {
    return this.inChat(chatId, async () => {
      const asks = [...(this.pendingByChat.get(chatId) ?? [])].map((id) => this.pending.get(id)).filter((ask): ask is Ask => ask !== undefined && !this.unconfirmed.has(ask.id));
      if (asks.length === 0) return;
      const chatOwner = await this.chatOwner(chatId);
      await Promise.all(
        asks.map(async (ask) => {
          const placed = await this.presence.place({ ...ask, chatId }, chatOwner);
          // Whoever moved it there: every instance that holds the ask writes it, so the row its claim
          // needs outlives the instance that showed the card.
          if (placed.tab !== null) this.shownIn(ask, placed.tab);
        }),
      );
    });
  }

  /**
   * The ask's card is in this tab: when the tab is a reply's widget, the ask's summary belongs to that
   * reply from now on (a written ask is written again). A new ask is written now.
   */
  private shownIn(ask: Ask, tab: Tab): void {
    const card = inReply(ask, tab.reply?.msg ?? null);
    if (card !== ask && this.pending.get(ask.id) === ask) {
      this.pending.set(ask.id, card);
      if (!this.unwritten.has(ask.id)) this.settle(this.store.put(card), `storing ask ${ask.id}`);
    }
    this.write(ask.id);
  }

  /** Runs `step` after every earlier step of the chat; a failed step does not stop the ones after it. */
  private inChat<T>(chatId: string, step: () => Promise<T>): Promise<T> {
    return inTurn([[this.chatSteps, chatId]], step);
  }
}

/** A superseded widget stops viewing but keeps its cards until they move or end: it is told how they ended. */
const SUPERSEDED = { keepCards: true } as const;

type Queue = Map<string, Promise<unknown>>;

/**
 * Runs `step` after every earlier step queued in any of its slots (a queue and a key); a failed step
 * does not stop the ones after it. A step waits only on steps queued before it, so none waits forever.
 */
function inTurn<T>(slots: readonly (readonly [Queue, string])[], step: () => Promise<T>): Promise<T> {
  const run = Promise.all(slots.map(([queue, key]) => queue.get(key))).then(step);
  const done = (): void => {
    for (const [queue, key] of slots) if (queue.get(key) === tail) queue.delete(key);
  };
  const tail: Promise<void> = run.then(done, done);
  for (const [queue, key] of slots) queue.set(key, tail);
  return run;
}

/**
 * Replies are ordered by mint time; tokens of one reply are that reply whatever their mint time (Continue
 * mints a new token for the same message), so its widgets in two tabs never supersede each other.
 */
function isSameOrNewer(reply: ReplyClaim, than: ReplyClaim): boolean {
  return reply.msg === than.msg || reply.mts >= than.mts;
}

function secretOutcome(ask: Ask, status: AskStatus): SecretOutcome {
  if (status !== "answered") return "cancelled";
  return ask.source === "text-prompt" ? "sent" : "stored";
}
