import type { Ask } from "../../lib/ask.ts";
import type { Clock, TimerHandle } from "../../lib/clock.ts";
import type { Ending } from "../../lib/outcomes.ts";
import type { Outcome } from "./ports.ts";

/**
 * The asks this instance tracks, one entry per ask with an explicit phase (as tldraw's sync-core keeps
 * one entry per session): where an ask is in its life is the entry's phase, not which of several
 * collections it sits in. The table owns each tracked ask's expiry timer and clears it whenever the
 * ask leaves (ended, or shut down).
 *
 *   arriving ──track──▶ pending ──▶ ended
 *      │                  ▲
 *      │    unconfirmed ──┘      (restored at start: unconfirmed until its source lists it)
 *      └──────────────────────────▶ ended
 *
 * Whether an answer of this instance is being delivered is a flag beside the phase (`answering`): a
 * restored ask can be answered before its source confirms it, and stays unconfirmed meanwhile.
 */
export type AskPhase =
  /** Being taken in: the store or presence has not answered yet. Not listed, not routed. */
  | "arriving"
  /** Restored from the store at start, not confirmed by its source yet: listed, not shown. */
  | "unconfirmed"
  | "pending"
  /** Over here; kept only while its arrival is still being handled, so a replay meanwhile is ignored. */
  | "ended";

export type TrackedAsk = {
  ask: Ask;
  phase: AskPhase;
  /** While its `receive` runs: a replay of it meanwhile is ignored. */
  receiving: boolean;
  /** While an answer of this instance is delivered: another is refused, an end from the source waits. */
  answering: boolean;
  /** Tracked but not in the store yet: written right after its first card is out, or after routing. */
  unwritten: boolean;
  /** While it is received: the first write's result (false: the store had a tombstone). */
  firstWrite: Promise<boolean> | null;
  /** How its source said it ended before it was tracked: applied once its `receive` is done. */
  endedWhileArriving: Outcome | null;
  /** How its source said it ended while this instance delivered an answer: applied if the answer fails. */
  endedWhileAnswering: Ending | null;
};

type Entry = TrackedAsk & { timer: TimerHandle | null };

const LISTED: ReadonlySet<AskPhase> = new Set(["unconfirmed", "pending"]);

export class TrackedAsks {
  private readonly entries = new Map<string, Entry>();
  private readonly byChat = new Map<string, Set<string>>();
  private readonly clock: Clock;
  private readonly onExpiry: (ask: Ask) => void;

  constructor(clock: Clock, onExpiry: (ask: Ask) => void) {
    this.clock = clock;
    this.onExpiry = onExpiry;
  }

  get(id: string): TrackedAsk | undefined {
    return this.entries.get(id);
  }

  /** The ask of a listed entry (unconfirmed or pending), as it is now. */
  listed(id: string): Ask | undefined {
    const entry = this.entries.get(id);
    return entry && LISTED.has(entry.phase) ? entry.ask : undefined;
  }

  /** Every listed ask, oldest tracked first. */
  all(): Ask[] {
    return [...this.entries.values()]
      .filter((entry) => LISTED.has(entry.phase))
      .map((entry) => entry.ask);
  }

  /** The listed entries of a chat. */
  ofChat(chatId: string): TrackedAsk[] {
    return [...(this.byChat.get(chatId) ?? [])]
      .map((id) => this.entries.get(id))
      .filter((entry): entry is Entry => entry !== undefined && LISTED.has(entry.phase));
  }

  /** Starts taking in an ask not known here; false when it is (tracked, or still being received). */
  arrive(ask: Ask): boolean {
    if (this.entries.has(ask.id)) return false;
    this.entries.set(ask.id, {
      ask,
      phase: "arriving",
      receiving: true,
      answering: false,
      unwritten: false,
      firstWrite: null,
      endedWhileArriving: null,
      endedWhileAnswering: null,
      timer: null,
    });
    return true;
  }

  /** The ask is tracked from now on (in `phase`), its expiry timed; `unwritten` when the store does not have it yet. */
  track(ask: Ask, phase: "pending" | "unconfirmed", options: { unwritten: boolean }): void {
    const existing = this.entries.get(ask.id);
    if (existing?.timer) this.clock.clearTimer(existing.timer);
    const entry: Entry = {
      ask,
      phase,
      receiving: existing?.receiving ?? false,
      answering: false,
      unwritten: options.unwritten,
      firstWrite: existing?.firstWrite ?? null,
      endedWhileArriving: existing?.endedWhileArriving ?? null,
      endedWhileAnswering: null,
      timer: null,
    };
    if (ask.expiresAt !== null)
      entry.timer = this.clock.setTimer(
        () => this.expire(ask.id),
        ask.expiresAt - this.clock.now(),
      );
    this.entries.set(ask.id, entry);
    if (ask.chatId) {
      const ids = this.byChat.get(ask.chatId) ?? new Set<string>();
      ids.add(ask.id);
      this.byChat.set(ask.chatId, ids);
    }
  }

  /** The tracked ask's record changed (the reply that shows it). */
  update(ask: Ask): void {
    const entry = this.entries.get(ask.id);
    if (entry) entry.ask = ask;
  }

  /** Its source listed the restored ask: it is pending from now on. False when it was not unconfirmed. */
  confirm(id: string): boolean {
    const entry = this.entries.get(id);
    if (entry?.phase !== "unconfirmed") return false;
    entry.phase = "pending";
    return true;
  }

  /** The ids of the restored asks their source has not listed yet. */
  unconfirmed(): string[] {
    return [...this.entries.values()]
      .filter((entry) => entry.phase === "unconfirmed")
      .map((entry) => entry.ask.id);
  }

  /** The ask is over here: untracked, its timer cleared; the entry stays only while it is still being received. */
  end(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.clear(entry);
    if (entry.receiving) entry.phase = "ended";
    else this.entries.delete(id);
  }

  /**
   * Its `receive` is done: an ask it did not track (refused, adopted elsewhere, ended) is forgotten.
   * Returns how its source said it ended before it was tracked, if it did.
   */
  received(id: string): Outcome | null {
    const entry = this.entries.get(id);
    if (!entry) return null;
    const ended = entry.endedWhileArriving;
    entry.receiving = false;
    entry.firstWrite = null;
    entry.endedWhileArriving = null;
    if (!LISTED.has(entry.phase)) this.entries.delete(id);
    return ended;
  }

  /** Stops every timer (shutdown): the asks stay in the store for the next start. */
  stopTimers(): void {
    for (const entry of this.entries.values()) {
      if (entry.timer) this.clock.clearTimer(entry.timer);
      entry.timer = null;
    }
  }

  get activeTimers(): number {
    return [...this.entries.values()].filter((entry) => entry.timer !== null).length;
  }

  private expire(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.timer = null;
    this.onExpiry(entry.ask);
  }

  private clear(entry: Entry): void {
    if (entry.timer) this.clock.clearTimer(entry.timer);
    entry.timer = null;
    const chatId = entry.ask.chatId;
    if (!chatId) return;
    const ids = this.byChat.get(chatId);
    ids?.delete(entry.ask.id);
    if (ids?.size === 0) this.byChat.delete(chatId);
  }
}
