import type { Ask, AskStatus } from "../../lib/ask.ts";
import { mapAnswer, type GatewayCall } from "../../lib/answers.ts";
import type { Clock, TimerHandle } from "../../lib/clock.ts";
import { admit, canSee } from "../../lib/policy.ts";
import { fail, type Ack, type AnswerAck, type AskClose, type CloseReason, type SecretOutcome } from "../../lib/protocol.ts";
import type { AskStore } from "../store/store.ts";

/**
 * The AskBroker: the one state machine every ask goes through (DESIGN §3, §6).
 * policy → store → router → timers. It knows tabs only by id and talks to them through a TabSink,
 * and to the Gateway through an AskResolver, so it is tested without sockets or a Gateway.
 */

export type Tab = {
  id: string;
  userId: string;
  isOwner: boolean;
  /** An embed token's `chat` claim: the only chat this tab may view. */
  chatClaim: string | null;
};

export interface TabSink {
  show(tabId: string, ask: Ask): void;
  close(tabId: string, close: AskClose): void;
  /** Dashboard feed: every change of every ask. */
  changed(ask: Ask): void;
}

export class GatewayCallError extends Error {
  /** The Gateway's `details.reason` (QUESTION_ALREADY_TERMINAL, ...), when it gave one. */
  readonly reason: string | undefined;
  constructor(message: string, reason?: string) {
    super(message);
    this.reason = reason;
  }
}

export interface AskResolver {
  /** Delivers the call; throws GatewayCallError when the Gateway refuses it. */
  execute(call: GatewayCall): Promise<unknown>;
}

/** How an ask ended outside this service: at the Gateway, by time, or by the run going on without it. */
export type ExternalEnd = { status: Exclude<AskStatus, "pending">; summary: string; reason: CloseReason };

export type BrokerHooks = {
  /** A text prompt ended without an answer (timed out, no tab, cancelled, or the user wrote instead). */
  endedUnanswered?(ask: Ask, reason: CloseReason): void;
  log?(message: string): void;
};

/** Retention keeps chats viewed within HISTORY_DAYS (at least a day): one write an hour per chat is plenty. */
const VIEW_NOTE_INTERVAL_MS = 3_600_000;

const ALREADY_ENDED_REASONS = new Set(["QUESTION_ALREADY_TERMINAL", "QUESTION_NOT_FOUND", "APPROVAL_ALREADY_RESOLVED", "APPROVAL_NOT_FOUND"]);

export class AskBroker {
  private readonly pending = new Map<string, Ask>();
  private readonly pendingByChat = new Map<string, Set<string>>();
  /** Viewing tabs per chat, oldest first: the last one is the chat's viewer. */
  private readonly viewers = new Map<string, Tab[]>();
  private readonly tabChat = new Map<string, string>();
  private readonly timers = new Map<string, TimerHandle>();
  /** Answers this instance is delivering, and what the Gateway said meanwhile about the same ask. */
  private readonly inFlight = new Map<string, ExternalEnd | null>();
  /** Restored from the store but not yet confirmed by the source: not shown until then. */
  private readonly unconfirmed = new Set<string>();
  /** A chat's owner never changes once recorded, so a known one is remembered (unknown ones are not). */
  private readonly knownOwners = new Map<string, string>();
  /** When this instance last wrote a chat's view time to the store. */
  private readonly viewNoted = new Map<string, number>();
  private readonly instanceId: string;
  private readonly store: AskStore;
  private readonly sink: TabSink;
  private readonly resolver: AskResolver;
  private readonly clock: Clock;
  private readonly owners: ReadonlySet<string>;
  private readonly hooks: BrokerHooks;

  constructor(options: {
    store: AskStore;
    sink: TabSink;
    resolver: AskResolver;
    clock: Clock;
    owners: ReadonlySet<string>;
    instanceId: string;
    hooks?: BrokerHooks;
  }) {
    this.store = options.store;
    this.sink = options.sink;
    this.resolver = options.resolver;
    this.clock = options.clock;
    this.owners = options.owners;
    this.instanceId = options.instanceId;
    this.hooks = options.hooks ?? {};
  }

  /**
   * Brings back the pending asks of an earlier run. They are shown only once their source confirms
   * them (a backfill lists them again), so a tab never sees an ask that ended while the server was down.
   */
  restore(): void {
    for (const ask of this.store.pending()) {
      this.track({ ...ask, shownTo: null });
      this.unconfirmed.add(ask.id);
    }
  }

  /** The source has reconciled: what it still has of these sources may be shown again. */
  confirm(sources: readonly Ask["source"][]): void {
    for (const id of this.unconfirmed) {
      const ask = this.pending.get(id);
      if (ask && !sources.includes(ask.source)) continue;
      this.unconfirmed.delete(id);
      if (ask?.chatId) this.route(ask.chatId);
    }
  }

  get pendingAsks(): Ask[] {
    return [...this.pending.values()];
  }

  getPending(id: string): Ask | undefined {
    return this.pending.get(id);
  }

  /** A new ask from a source. Known ids (pending or tombstoned) are ignored: a replay never revives. */
  async receive(ask: Ask): Promise<void> {
    if (this.unconfirmed.has(ask.id)) return this.confirmOne(ask.id);
    if (this.pending.has(ask.id)) return;
    const stored = this.store.get(ask.id);
    if (stored) {
      // Another instance sharing the store took it in first: follow it here too. A terminal row is a
      // tombstone. Text prompts belong to the instance whose chat watcher saw them.
      if (stored.status === "pending" && ask.source !== "text-prompt") this.adopt(stored);
      return;
    }
    const verdict = admit(ask, { chatOwner: ask.chatId ? this.chatOwner(ask.chatId) : null, owners: this.owners });
    if (verdict.action === "refuse") return this.refuse(ask, verdict.summary);
    if (ask.source === "text-prompt" && !this.viewerFor(ask)) {
      // A text prompt has nowhere to wait: with no tab it stays in the reply as text.
      this.store.put(ask);
      this.finish(ask, { status: "ended-as-text", summary: endedAsTextSummary(ask), reason: "ended-as-text" });
      return;
    }
    this.track(ask);
    this.sink.changed(ask);
    if (ask.chatId) this.route(ask.chatId);
    // Written after the card is on its way: nothing can answer it before this synchronous write, and
    // the Gateway still holds the ask should the process die in between.
    this.store.put(ask);
  }

  /** The ask ended at its source (answered elsewhere, expired, run moved on). */
  end(id: string, end: ExternalEnd): void {
    if (this.inFlight.has(id)) {
      this.inFlight.set(id, end);
      return;
    }
    const ask = this.pending.get(id);
    if (ask) this.finish(ask, end);
  }

  /**
   * After a (re)connect: every pending ask of these sources that the source no longer lists has ended
   * while nobody was listening. `outcomeOf` may know how (question.get); otherwise it expired.
   */
  async reconcile(sources: readonly Ask["source"][], liveIds: ReadonlySet<string>, outcomeOf?: (ask: Ask) => Promise<ExternalEnd | null>): Promise<void> {
    const gone = [...this.pending.values()].filter((ask) => sources.includes(ask.source) && !liveIds.has(ask.id));
    for (const ask of gone) {
      const end = (await outcomeOf?.(ask).catch(() => null)) ?? { status: "expired" as const, summary: "Expired", reason: "expired" as const };
      this.end(ask.id, end);
    }
  }

  view(tab: Tab, chatId: string): Ack {
    if (tab.chatClaim !== null && tab.chatClaim !== chatId) return fail("FORBIDDEN", "this token is for another chat");
    const known = this.chatOwner(chatId);
    // A chat's owner is recorded only from a token that proves it: the widget's token for this very
    // chat (the Open WebUI filter mints it for the chat's user), or an owner's. Any other token could
    // claim chats nobody has opened yet and lock their users out.
    if (known === null && tab.chatClaim === null && !tab.isOwner) {
      return fail("FORBIDDEN", "this chat has no recorded user yet: open it from its Open WebUI widget first");
    }
    const owner = known ?? this.store.recordChatOwner(chatId, tab.userId);
    if (!tab.isOwner && owner !== tab.userId) return fail("FORBIDDEN", "this chat belongs to another user");
    this.noteView(chatId, owner);
    // Asks that waited for an unknown owner meet the guest rules now that the owner is known.
    if (known === null) this.readmit(chatId, owner);
    const previous = this.tabChat.get(tab.id);
    if (previous === chatId) {
      // Viewing the same chat again makes this tab the newest viewer.
      this.removeViewer(tab.id, chatId);
    } else if (previous !== undefined) {
      // A tab views one chat at a time: switching leaves the previous one.
      this.leave(tab.id);
    }
    const list = this.viewers.get(chatId) ?? [];
    list.push(tab);
    this.viewers.set(chatId, list);
    this.tabChat.set(tab.id, chatId);
    this.route(chatId);
    return { ok: true };
  }

  leave(tabId: string): void {
    const chatId = this.tabChat.get(tabId);
    if (chatId === undefined) return;
    this.tabChat.delete(tabId);
    this.removeViewer(tabId, chatId);
    for (const askId of this.pendingByChat.get(chatId) ?? []) {
      const ask = this.pending.get(askId);
      if (ask?.shownTo === tabId) this.setShownTo(ask, null);
    }
    this.route(chatId);
  }

  /** May this tab see (and answer) the ask? Its user must, and an embed token's chat claim must match. */
  visibleTo(tab: Tab, ask: Pick<Ask, "chatId">): boolean {
    if (tab.chatClaim !== null && ask.chatId !== tab.chatClaim) return false;
    return canSee(ask, tab.userId, tab.isOwner, ask.chatId ? this.chatOwner(ask.chatId) : null);
  }

  /** The asks this tab may see: pending ones from memory, any other status from the store. */
  list(tab: Tab, status: AskStatus | "all" | undefined): Ask[] {
    if (status === undefined || status === "pending") {
      return this.pendingAsks.filter((ask) => this.visibleTo(tab, ask));
    }
    const filter = { status: status === "all" ? undefined : status };
    let scope: { chatId?: string; ownedBy?: string };
    if (tab.chatClaim !== null) {
      // An embed token sees its chat's history only when its user owns that chat (owners own all).
      if (!tab.isOwner && this.chatOwner(tab.chatClaim) !== tab.userId) return [];
      scope = { chatId: tab.chatClaim };
    } else {
      scope = tab.isOwner ? {} : { ownedBy: tab.userId };
    }
    return this.store.list({ ...filter, ...scope }).map((ask) => this.pending.get(ask.id) ?? ask);
  }

  async answer(tab: Tab, askId: string, answer: Parameters<typeof mapAnswer>[1]): Promise<AnswerAck> {
    const ask = this.pending.get(askId);
    if (!ask) {
      const ended = this.store.get(askId);
      if (!ended || !this.visibleTo(tab, ended)) return fail("NOT_FOUND", "no such ask");
      return ended.status === "expired" ? fail("EXPIRED", "this ask has expired") : fail("ALREADY_RESOLVED", `this ask is already ${ended.status}`);
    }
    // The same answer as for an id that does not exist: a refusal would confirm that it does.
    if (!this.visibleTo(tab, ask)) return fail("NOT_FOUND", "no such ask");
    const mapped = mapAnswer(ask, answer);
    if (!mapped.ok) return fail(mapped.code, mapped.message);
    if (this.inFlight.has(askId) || !this.store.claim(askId, this.instanceId)) {
      return fail("ALREADY_RESOLVED", "another answer to this ask was given first");
    }
    this.inFlight.set(askId, null);
    try {
      if (mapped.call) await this.resolver.execute(mapped.call);
    } catch (error) {
      const endedMeanwhile = this.inFlight.get(askId) ?? null;
      this.inFlight.delete(askId);
      this.store.release(askId, this.instanceId);
      const reason = error instanceof GatewayCallError ? error.reason : undefined;
      if (reason && ALREADY_ENDED_REASONS.has(reason)) {
        this.end(askId, endedMeanwhile ?? { status: "answered", summary: "Answered elsewhere", reason: "answered-elsewhere" });
        return fail("ALREADY_RESOLVED", "the Gateway already has an answer for this ask");
      }
      if (endedMeanwhile) this.end(askId, endedMeanwhile);
      // Never echo the Gateway's message for a secret: it could quote the value.
      const detail = ask.kind === "secret" ? "the secret was not accepted" : error instanceof Error ? error.message : String(error);
      return fail("GATEWAY_ERROR", `The Gateway did not take the answer: ${detail}`);
    }
    this.inFlight.delete(askId);
    const current = this.pending.get(askId);
    if (current) {
      this.finish(current, { status: mapped.status, summary: mapped.summary, reason: mapped.status === "cancelled" ? "cancelled" : "answered" }, { by: tab.userId, tabId: tab.id });
    }
    if (ask.kind === "secret") return { ok: true, status: mapped.status, outcome: secretOutcome(ask, mapped.status) };
    return { ok: true, status: mapped.status };
  }

  /** Stops every timer; pending asks stay in the store for the next start. */
  shutdown(): void {
    for (const handle of this.timers.values()) this.clock.clearTimer(handle);
    this.timers.clear();
  }

  get activeTimers(): number {
    return this.timers.size;
  }

  private async refuse(ask: Ask, summary: string): Promise<void> {
    this.store.put(ask);
    this.finish(ask, { status: "denied", summary, reason: "denied" });
    await this.sendRefusal(ask);
  }

  private readmit(chatId: string, owner: string): void {
    for (const askId of [...(this.pendingByChat.get(chatId) ?? [])]) {
      const ask = this.pending.get(askId);
      if (!ask || this.inFlight.has(askId)) continue;
      const verdict = admit(ask, { chatOwner: owner, owners: this.owners });
      if (verdict.action !== "refuse") continue;
      this.finish(ask, { status: "denied", summary: verdict.summary, reason: "denied" });
      void this.sendRefusal(ask);
    }
  }

  /** Tells the Gateway an ask was refused by policy; the ask is already over here either way. */
  private async sendRefusal(ask: Ask): Promise<void> {
    const call = refusalCall(ask);
    if (!call) return;
    try {
      await this.resolver.execute(call);
    } catch (error) {
      this.hooks.log?.(`could not refuse ask ${ask.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private adopt(ask: Ask): void {
    this.track({ ...ask, shownTo: null });
    this.sink.changed(ask);
    if (ask.chatId) this.route(ask.chatId);
  }

  private chatOwner(chatId: string): string | null {
    let owner = this.knownOwners.get(chatId);
    if (owner === undefined) {
      owner = this.store.chatOwner(chatId) ?? undefined;
      if (owner !== undefined) this.knownOwners.set(chatId, owner);
    }
    return owner ?? null;
  }

  /** For a chat whose owner is recorded: `chatViewed` writes that owner back if retention removed the row. */
  private noteView(chatId: string, owner: string): void {
    const now = this.clock.now();
    const last = this.viewNoted.get(chatId);
    if (last !== undefined && now - last < VIEW_NOTE_INTERVAL_MS) return;
    this.viewNoted.set(chatId, now);
    this.store.chatViewed(chatId, owner, now);
  }

  private confirmOne(id: string): void {
    this.unconfirmed.delete(id);
    const chatId = this.pending.get(id)?.chatId;
    if (chatId) this.route(chatId);
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
          this.end(ask.id, ask.source === "text-prompt" ? { status: "ended-as-text", summary: endedAsTextSummary(ask), reason: "ended-as-text" } : { status: "expired", summary: "Expired", reason: "expired" });
        }, ask.expiresAt - this.clock.now()),
      );
    }
  }

  private finish(ask: Ask, end: ExternalEnd, by: { by: string | null; tabId: string | null } = { by: null, tabId: null }): void {
    const timer = this.timers.get(ask.id);
    if (timer) this.clock.clearTimer(timer);
    this.timers.delete(ask.id);
    this.pending.delete(ask.id);
    this.unconfirmed.delete(ask.id);
    if (ask.chatId) {
      const ids = this.pendingByChat.get(ask.chatId);
      ids?.delete(ask.id);
      if (ids?.size === 0) this.pendingByChat.delete(ask.chatId);
    }
    const ended: Ask = { ...ask, status: end.status, resolution: { by: by.by, at: this.clock.now(), summary: end.summary, tabId: by.tabId } };
    this.store.put(ended);
    if (ask.shownTo) this.sink.close(ask.shownTo, { askId: ask.id, reason: end.reason, summary: end.summary });
    this.sink.changed(ended);
    if (ask.source === "text-prompt" && (end.status === "ended-as-text" || end.status === "cancelled")) this.hooks.endedUnanswered?.(ended, end.reason);
  }

  private viewerFor(ask: Ask): Tab | null {
    if (!ask.chatId) return null;
    const list = this.viewers.get(ask.chatId);
    if (!list) return null;
    const chatOwner = this.chatOwner(ask.chatId);
    for (let i = list.length - 1; i >= 0; i--) {
      const tab = list[i]!;
      if (canSee(ask, tab.userId, tab.isOwner, chatOwner)) return tab;
    }
    return null;
  }

  /** Puts every pending ask of the chat on its current viewer, handing off from an older tab. */
  private route(chatId: string): void {
    for (const askId of this.pendingByChat.get(chatId) ?? []) {
      const ask = this.pending.get(askId);
      if (!ask || this.unconfirmed.has(askId)) continue;
      const target = this.viewerFor(ask)?.id ?? null;
      if (target === ask.shownTo) continue;
      const previous = ask.shownTo;
      if (previous && this.tabChat.get(previous) === chatId) this.sink.close(previous, { askId, reason: "handed-off" });
      this.setShownTo(ask, target);
      if (target) this.sink.show(target, this.pending.get(askId)!);
    }
  }

  private setShownTo(ask: Ask, tabId: string | null): void {
    const updated = { ...ask, shownTo: tabId };
    this.pending.set(ask.id, updated);
    this.sink.changed(updated);
  }

  private removeViewer(tabId: string, chatId: string): void {
    const list = this.viewers.get(chatId);
    if (!list) return;
    const index = list.findIndex((tab) => tab.id === tabId);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.viewers.delete(chatId);
  }
}

/** A text prompt that ends unanswered stays in the reply as text; a secret prompt says none came. */
export function endedAsTextSummary(ask: Ask): string {
  if (ask.kind === "secret") return "Secret not received";
  return ask.textPrompt?.fallbackText ?? "Ended as text";
}

function secretOutcome(ask: Ask, status: AskStatus): SecretOutcome {
  if (status !== "answered") return "cancelled";
  return ask.source === "text-prompt" ? "sent" : "stored";
}

/** The Gateway call that refuses an ask by policy: cancel a question, deny an approval. */
function refusalCall(ask: Ask): GatewayCall | null {
  switch (ask.source) {
    case "gateway.question":
    case "gateway.secret":
      return { method: "question.resolve", params: { id: ask.id, cancel: true } };
    case "gateway.plugin-approval":
      return { method: "plugin.approval.resolve", params: { id: ask.id, decision: "deny" } };
    case "gateway.exec-approval":
      return { method: "exec.approval.resolve", params: { id: ask.id, decision: "deny" } };
    case "text-prompt":
      return null;
  }
}


