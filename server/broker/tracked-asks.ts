import type { Ask } from "../../lib/ask.ts";
import type { Clock, TimerHandle } from "../../lib/clock.ts";
import type { Ending } from "../../lib/outcomes.ts";
import { Emitter } from "../events.ts";
import type { Outcome } from "./ports.ts";

/**
 * The asks this instance tracks, one entry per ask: a union on `phase` whose variants carry only
 * their own data (as tldraw's sync-core RoomSession does), changed only here, each change a new
 * entry (callers get readonly snapshots). The table owns each tracked ask's expiry timer and clears
 * it whenever the ask leaves (ended, or shut down); when one fires, it says so (`expired`).
 *
 *   arrive ──▶ arriving ──track──▶ pending ──end──▶ (gone)
 *                │ │                  ▲  │
 *                │ │          confirm │  └──end while received───────┐
 *                │ │   restore ──▶ unconfirmed ──end──▶ (gone)      ▼
 *                │ └──end (refused, ended as text)─────────────────▶ ended ──received──▶ (gone)
 *                └──received (not tracked)──▶ (gone)
 *
 * An answer of this instance being delivered (`answering`) is data of both listed phases, not a
 * phase: a restored ask can be answered before its source confirms it, and stays unconfirmed
 * meanwhile (commit 4c37432).
 */

/** An answer of this instance is being delivered: another is refused, an end from the source waits. */
export type Answering = {
  /** How the source said it ended meanwhile: applied if the answer fails. */
  readonly endedMeanwhile: Ending | null;
};

/** Its `receive` still runs: a replay meanwhile is ignored. */
export type Receiving = {
  /** The first write's result (false: the store had a tombstone). */
  readonly firstWrite: Promise<boolean> | null;
  /** How its source said it ended before it was tracked: applied once its `receive` is done. */
  readonly endedMeanwhile: Outcome | null;
};

export type TrackedAsk =
  /** Being taken in: the store or presence has not answered yet. Not listed, not routed. */
  | { readonly phase: "arriving"; readonly ask: Ask; readonly endedMeanwhile: Outcome | null }
  /** Restored from the store at start, not confirmed by its source yet: listed, not shown. */
  | { readonly phase: "unconfirmed"; readonly ask: Ask; readonly answering: Answering | null }
  | {
      readonly phase: "pending";
      readonly ask: Ask;
      /** Not in the store yet: written right after its first card is out, or after routing. */
      readonly unwritten: boolean;
      readonly receiving: Receiving | null;
      readonly answering: Answering | null;
      /**
       * A text prompt of a reply the filter announced, not shown yet: its widget is on its way (a
       * brand-new chat's comes late), so it ends as text at this time unless a tab views it first.
       */
      readonly widgetDeadline: number | null;
    }
  /** Over here; kept only while its arrival is still being handled, so a replay meanwhile is ignored. */
  | { readonly phase: "ended"; readonly ask: Ask };

/** The phases an ask is listed (and routed, when pending) in. */
export type ListedAsk = Extract<TrackedAsk, { phase: "unconfirmed" | "pending" }>;

const isListed = (entry: TrackedAsk | undefined): entry is ListedAsk =>
  entry?.phase === "unconfirmed" || entry?.phase === "pending";

function unreachable(entry: never): never {
  throw new Error(`no such phase: ${JSON.stringify(entry)}`);
}

export class TrackedAsks extends Emitter<{ expired: [ask: Ask] }> {
  private readonly entries = new Map<string, TrackedAsk>();
  private readonly timers = new Map<string, TimerHandle>();
  private readonly byChat = new Map<string, Set<string>>();
  private readonly clock: Clock;

  constructor(clock: Clock) {
    super();
    this.clock = clock;
  }

  get(id: string): TrackedAsk | undefined {
    return this.entries.get(id);
  }

  /** The ask of a listed entry (unconfirmed or pending), as it is now. */
  listed(id: string): Ask | undefined {
    const entry = this.entries.get(id);
    return isListed(entry) ? entry.ask : undefined;
  }

  /** Every listed ask, oldest tracked first. */
  all(): Ask[] {
    return [...this.entries.values()].filter(isListed).map((entry) => entry.ask);
  }

  /** The listed entries of a chat. */
  ofChat(chatId: string): ListedAsk[] {
    return [...(this.byChat.get(chatId) ?? [])].map((id) => this.entries.get(id)).filter(isListed);
  }

  /** The ids of the restored asks their source has not listed yet. */
  unconfirmed(): string[] {
    return [...this.entries.values()]
      .filter((entry) => entry.phase === "unconfirmed")
      .map((entry) => entry.ask.id);
  }

  /** Starts taking in an ask not known here (`new`); otherwise returns the phase it is in, unchanged. */
  arrive(ask: Ask): "new" | TrackedAsk["phase"] {
    const known = this.entries.get(ask.id);
    if (known) return known.phase;
    this.entries.set(ask.id, { phase: "arriving", ask, endedMeanwhile: null });
    return "new";
  }

  /**
   * The ask is pending from now on, its expiry timed; `unwritten` when the store does not have it yet;
   * `widgetDeadline` when it waits for its reply's widget until then (a text prompt).
   */
  track(ask: Ask, options: { unwritten: boolean; widgetDeadline?: number }): void {
    const existing = this.entries.get(ask.id);
    const receiving: Receiving | null =
      existing?.phase === "arriving"
        ? { firstWrite: null, endedMeanwhile: existing.endedMeanwhile }
        : existing?.phase === "pending"
          ? existing.receiving
          : null;
    this.enter({
      phase: "pending",
      ask,
      unwritten: options.unwritten,
      receiving,
      answering: null,
      widgetDeadline: options.widgetDeadline ?? null,
    });
  }

  /** A tab shows the ask: one that waited for its widget has its own expiry from now on. */
  shown(id: string): void {
    const entry = this.entries.get(id);
    if (entry?.phase === "pending" && entry.widgetDeadline !== null)
      this.enter({ ...entry, widgetDeadline: null });
  }

  /** Restored from the store at start: listed, shown once its source confirms it. */
  restore(ask: Ask): void {
    this.enter({ phase: "unconfirmed", ask, answering: null });
  }

  /** The tracked ask's record changed (the reply that shows it). */
  update(ask: Ask): void {
    const entry = this.entries.get(ask.id);
    if (isListed(entry)) this.entries.set(ask.id, { ...entry, ask });
  }

  /** Its source listed the restored ask: it is pending from now on. False when it was not unconfirmed. */
  confirm(id: string): boolean {
    const entry = this.entries.get(id);
    if (entry?.phase !== "unconfirmed") return false;
    this.entries.set(id, {
      ...entry,
      phase: "pending",
      unwritten: false,
      receiving: null,
      widgetDeadline: null,
    });
    return true;
  }

  /** Whether the store does not have the ask yet (a pending one not written). */
  unwritten(id: string): boolean {
    const entry = this.entries.get(id);
    return entry?.phase === "pending" && entry.unwritten;
  }

  /**
   * Writes an unwritten pending ask with `put`, once: the write, or null when there is none to make.
   * While the ask is received its first write's result is kept (`firstWrite`).
   */
  write(id: string, put: (ask: Ask) => Promise<boolean>): Promise<boolean> | null {
    const entry = this.entries.get(id);
    if (entry?.phase !== "pending" || !entry.unwritten) return null;
    const written = put(entry.ask);
    const receiving = entry.receiving && { ...entry.receiving, firstWrite: written };
    this.entries.set(id, { ...entry, unwritten: false, receiving });
    return written;
  }

  /** The store has the ask already (another instance wrote it, or a write whose answer was lost). */
  written(id: string): void {
    const entry = this.entries.get(id);
    if (entry?.phase === "pending") this.entries.set(id, { ...entry, unwritten: false });
  }

  /** While the ask is received: its first write's result, if it was written. */
  firstWrite(id: string): Promise<boolean> | null {
    const entry = this.entries.get(id);
    return entry?.phase === "pending" ? (entry.receiving?.firstWrite ?? null) : null;
  }

  /**
   * Its source says the ask ended. Returns the ask and its ending when it is to be finished now; null
   * when it is not tracked, already over, or the end waits (for its arrival, or an answer of ours).
   */
  sourceEnded(id: string, outcome: Outcome): { ask: Ask; ending: Ending } | null {
    const entry = this.entries.get(id);
    if (!entry) return null;
    switch (entry.phase) {
      case "ended":
        return null;
      case "arriving":
        this.entries.set(id, { ...entry, endedMeanwhile: outcome });
        return null;
      case "unconfirmed":
      case "pending": {
        const ending = typeof outcome === "function" ? outcome(entry.ask) : outcome;
        if (entry.answering === null) return { ask: entry.ask, ending };
        this.entries.set(id, { ...entry, answering: { endedMeanwhile: ending } });
        return null;
      }
      default:
        return unreachable(entry);
    }
  }

  /** An answer of this instance starts being delivered; false when one already is (or it is not listed). */
  startAnswer(id: string): boolean {
    const entry = this.entries.get(id);
    if (!isListed(entry) || entry.answering !== null) return false;
    this.entries.set(id, { ...entry, answering: { endedMeanwhile: null } });
    return true;
  }

  /**
   * The answer is over (taken or failed): the ask as it is now, if still listed, and how the source
   * said it ended meanwhile, if it did.
   */
  answered(id: string): { ask: Ask | undefined; endedMeanwhile: Ending | null } {
    const entry = this.entries.get(id);
    if (!isListed(entry)) return { ask: undefined, endedMeanwhile: null };
    this.entries.set(id, { ...entry, answering: null });
    return { ask: entry.ask, endedMeanwhile: entry.answering?.endedMeanwhile ?? null };
  }

  /** The ask is over here: untracked, its timer cleared; the entry stays only while it is still being received. */
  end(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.clear(entry.ask);
    const stillReceived = ((): boolean => {
      switch (entry.phase) {
        case "arriving":
        case "ended":
          return true;
        case "unconfirmed":
          return false;
        case "pending":
          return entry.receiving !== null;
        default:
          return unreachable(entry);
      }
    })();
    if (stillReceived) this.entries.set(id, { phase: "ended", ask: entry.ask });
    else this.entries.delete(id);
  }

  /**
   * Its `receive` is done: an ask it did not track (refused, adopted elsewhere, ended) is forgotten.
   * Returns how its source said it ended before it was tracked, if it did.
   */
  received(id: string): Outcome | null {
    const entry = this.entries.get(id);
    if (!entry) return null;
    switch (entry.phase) {
      case "arriving":
        this.entries.delete(id);
        return entry.endedMeanwhile;
      case "ended":
        this.entries.delete(id);
        return null;
      case "unconfirmed":
        return null;
      case "pending":
        this.entries.set(id, { ...entry, receiving: null });
        return entry.receiving?.endedMeanwhile ?? null;
      default:
        return unreachable(entry);
    }
  }

  /** Stops every timer (shutdown): the asks stay in the store for the next start. */
  stopTimers(): void {
    for (const timer of this.timers.values()) this.clock.clearTimer(timer);
    this.timers.clear();
  }

  get activeTimers(): number {
    return this.timers.size;
  }

  /** A listed entry replaces any other of its ask, its expiry timed afresh. */
  private enter(entry: ListedAsk): void {
    const { ask } = entry;
    const timer = this.timers.get(ask.id);
    if (timer) this.clock.clearTimer(timer);
    this.timers.delete(ask.id);
    const waitsUntil = entry.phase === "pending" ? entry.widgetDeadline : null;
    const due =
      waitsUntil === null ? ask.expiresAt : Math.min(waitsUntil, ask.expiresAt ?? waitsUntil);
    if (due !== null)
      this.timers.set(
        ask.id,
        this.clock.setTimer(() => this.expire(ask.id), due - this.clock.now()),
      );
    this.entries.set(ask.id, entry);
    if (ask.chatId) {
      const ids = this.byChat.get(ask.chatId) ?? new Set<string>();
      ids.add(ask.id);
      this.byChat.set(ask.chatId, ids);
    }
  }

  private expire(id: string): void {
    const entry = this.entries.get(id);
    this.timers.delete(id);
    if (entry) this.emit("expired", entry.ask);
  }

  private clear(ask: Ask): void {
    const timer = this.timers.get(ask.id);
    if (timer) this.clock.clearTimer(timer);
    this.timers.delete(ask.id);
    if (!ask.chatId) return;
    const ids = this.byChat.get(ask.chatId);
    ids?.delete(ask.id);
    if (ids?.size === 0) this.byChat.delete(ask.chatId);
  }
}
