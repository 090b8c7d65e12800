import { commonPrefixLength, hasNewline, lineStartAt } from "./lines.ts";
import { FINDER_START, findTriggerPhrases } from "./phrase-finder.ts";
import { TRIGGER_PHRASES } from "./phrases.ts";
import { separateRepeats } from "./repeats.ts";
import { TextBuffer } from "./text-buffer.ts";

const NEWLINE = 0x0a;
const TAB = 0x09;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const BACKTICK = 0x60;
const TILDE = 0x7e;

/** A trigger may be indented by up to 3 spaces; 4 make the line indented code. */
const MAX_TRIGGER_INDENT = 3;
/** CommonMark: a code fence is at least three backticks or tildes. */
const MIN_FENCE_LENGTH = 3;
/**
 * `pushSnapshot` decides "continues what was seen" versus "replaces it" by comparing the snapshot
 * with the text seen so far on (at most) the last this-many characters of their overlap. Comparing
 * everything would make cumulative feeding quadratic. Replies up to this length are compared
 * exactly; on longer ones, a rewrite that leaves the length and these last characters untouched
 * is taken as a continuation (a Gateway `replace` normally shifts or cuts the text, which is seen).
 */
export const SNAPSHOT_CHECK_WINDOW = 64;

/** What the current line (while no trigger has been found) can still turn out to be. */
const LINE_START = 0; // at most 3 spaces so far
const TRIGGER_PREFIX = 1; // indentation, then a proper prefix of a trigger phrase
const FENCE_RUN = 2; // indentation, then a run of one fence character
const FENCE_OPENING = 3; // a valid opening fence; the rest of the line is its info string
const FENCE_CLOSING = 4; // a valid closing fence; only whitespace may follow
const PLAIN = 5; // nothing on this line can matter any more
type LineState =
  | typeof LINE_START
  | typeof TRIGGER_PREFIX
  | typeof FENCE_RUN
  | typeof FENCE_OPENING
  | typeof FENCE_CLOSING
  | typeof PLAIN;

type Fence = { readonly char: number; readonly length: number };
/** From the line starting at `at` on, the fence that is open (null: none). */
type FenceChange = { readonly at: number; readonly fence: Fence | null };

const phraseByFirstChar = new Map<number, string>(
  TRIGGER_PHRASES.map((phrase) => [phrase.charCodeAt(0), phrase]),
);

function isTrailingWhitespace(code: number): boolean {
  return code === SPACE || code === TAB || code === CARRIAGE_RETURN;
}

/**
 * Finds the text prompt in one assistant reply while it streams, and tells what of the reply is
 * safe to show (docs/ARCHITECTURE.md#text-prompts).
 *
 * Visible text: everything before the trigger line, released as soon as it cannot be part of a
 * trigger (held back is only the start of a line that could still spell `   OpenClaw needs
 * input:` or `Codex needs input:` outside code), then nothing until `end()`. At `end()` the text
 * from the trigger line on is split at every later trigger phrase (anywhere, even mid-line); the
 * first part is the prompt, a later part asking the same question again (whitespace collapsed) is
 * dropped, and a later part asking something different is released as text, its trigger phrase
 * included (see `separateRepeats`). Whether a later part repeats the prompt is only known once it
 * is complete, so all of them wait for `end()`.
 *
 * The prompt is the reply from the trigger line's start (its indentation included) up to the next
 * trigger phrase or the end. So for a reply with one prompt, `shown + prompt` is the whole reply.
 *
 * Only the concatenated text matters, never its chunking: the same state machine looks at each
 * position at most once (the rest of a plain line is skipped), and what is released depends only
 * on the text up to that position. Scanning is linear in the reply's length: a call costs O(1)
 * plus its new text (plus a bounded look at the seen text's end for `pushSnapshot`). Only a
 * replacing snapshot costs up to the reply's length, once.
 *
 * `pushSnapshot` with a snapshot that does not extend what was seen (a Gateway `replace`): shown
 * text is never taken back. Scanning restarts at the start of the line where the two texts diverge
 * (or at the trigger line, when they diverge inside the prompt), from the state recorded there, so
 * the prompt found is the one the new text holds. New text is shown from the divergence on: a
 * consumer that appends what it is given sees the old text up to where it had been shown, then
 * the new text from the point where it differs. A snapshot equal to or a prefix of what was seen
 * (a replay) changes nothing.
 *
 * Line endings are `\n` (a `\r` before it is part of the line); a lone `\r` does not end a line.
 */
export class PromptScanner {
  private readonly text = new TextBuffer();
  /** Length of the prefix of `text` that has been returned to the caller as safe to show. */
  private released = 0;
  private ended = false;
  private scanned = 0;

  // While looking for the trigger: the current line, and the code fence around it.
  private lineStart = 0;
  private lineState: LineState = LINE_START;
  private indent = 0;
  private phrase = "";
  private matched = 0;
  private runChar = 0;
  private runLength = 0;
  private fence: Fence | null = null;
  private fenceChanges: FenceChange[] = [];

  // Once the trigger is found: where its line starts, and every later trigger phrase.
  private promptStart = -1;
  private finderState = FINDER_START;
  private phraseStarts: number[] = [];

  /** Feeds the next part of the reply; returns the text that is now safe to show. */
  push(delta: string): string {
    this.assertOpen();
    this.text.append(delta);
    if (this.lineState === PLAIN && this.promptStart < 0 && !hasNewline(delta)) {
      // The common case, kept to a few operations for one-character deltas: the rest of a plain
      // line before any trigger cannot start one, and a plain line holds nothing back.
      this.released += delta.length;
      return delta;
    }
    return this.scanDelta(delta);
  }

  /** Feeds the whole reply so far; returns the text that is now safe to show. */
  pushSnapshot(snapshot: string): string {
    this.assertOpen();
    const seen = this.text.length;
    if (!this.agreesWithSeen(snapshot)) return this.replace(snapshot);
    if (snapshot.length <= seen) return ""; // a replay: nothing new
    this.text.reset(snapshot);
    this.scan(snapshot, seen, 0);
    return this.releaseFrom(snapshot, 0);
  }

  /** The reply ended: the rest of the text to show, and the prompt it held (or null). */
  end(): { text: string; prompt: string | null } {
    this.assertOpen();
    this.ended = true;
    if (this.promptStart < 0) return { text: this.releaseUpTo(this.text.length), prompt: null };
    const before = this.releaseUpTo(this.promptStart);
    const { prompt, shownAfter } = separateRepeats(
      this.text.toString(),
      this.promptStart,
      this.phraseStarts,
    );
    return { text: before + shownAfter, prompt };
  }

  /**
   * Characters handed to the line state machine so far (the rest of a plain line may be skipped
   * without it). Internal: lets tests check that no chunking makes the scanner read text twice:
   * it stays within the reply's length unless a snapshot replaced text.
   */
  get charactersScanned(): number {
    return this.scanned;
  }

  private scanDelta(delta: string): string {
    const offset = this.text.length - delta.length;
    this.scan(delta, 0, offset);
    return this.releaseFrom(delta, offset);
  }

  private assertOpen(): void {
    if (this.ended) throw new Error("PromptScanner: this reply has already ended");
  }

  /** Where the text that is safe to show ends now. */
  private safeEnd(): number {
    if (this.promptStart >= 0) return this.promptStart;
    const lineMayBeTrigger =
      this.fence === null && (this.lineState === LINE_START || this.lineState === TRIGGER_PREFIX);
    return lineMayBeTrigger ? this.lineStart : this.text.length;
  }

  private releaseUpTo(end: number): string {
    if (end <= this.released) return "";
    const text = this.text.slice(this.released, end);
    this.released = end;
    return text;
  }

  /** Releases what is safe now, reading from `chunk` (at `offset`) when it holds all of it. */
  private releaseFrom(chunk: string, offset: number): string {
    const end = this.safeEnd();
    if (end <= this.released || this.released < offset) return this.releaseUpTo(end);
    const text = chunk.slice(this.released - offset, end - offset);
    this.released = end;
    return text;
  }

  /** Scans `chunk[from:]`; position of `chunk[i]` in the reply is `offset + i`. */
  private scan(chunk: string, from: number, offset: number): void {
    this.scanned += chunk.length - from;
    let i = from;
    if (this.promptStart < 0) i = this.scanForTrigger(chunk, from, offset);
    if (i < chunk.length) {
      this.finderState = findTriggerPhrases(chunk, i, offset, this.finderState, this.phraseStarts);
    }
  }

  /** Scans until a trigger completes; returns the index after it (or the chunk's length). */
  private scanForTrigger(chunk: string, from: number, offset: number): number {
    let i = from;
    while (i < chunk.length) {
      if (this.lineState === PLAIN) {
        // Nothing on this line matters: jump to its end.
        const newline = chunk.indexOf("\n", i);
        if (newline < 0) return chunk.length;
        i = newline;
      }
      const code = chunk.charCodeAt(i);
      if (code === NEWLINE) this.endLine(offset + i);
      else if (this.step(code)) {
        this.promptStart = this.lineStart;
        this.finderState = FINDER_START;
        return i + 1;
      }
      i++;
    }
    return i;
  }

  /** Advances the line state by one character (not a newline); true when a trigger completes. */
  private step(code: number): boolean {
    switch (this.lineState) {
      case LINE_START:
        this.stepLineStart(code);
        return false;
      case TRIGGER_PREFIX:
        if (code !== this.phrase.charCodeAt(this.matched)) {
          this.lineState = PLAIN;
          return false;
        }
        this.matched++;
        return this.matched === this.phrase.length;
      case FENCE_RUN:
        this.stepFenceRun(code);
        return false;
      case FENCE_OPENING:
        // CommonMark: a backtick fence's info string may not contain a backtick.
        if (this.runChar === BACKTICK && code === BACKTICK) this.lineState = PLAIN;
        return false;
      case FENCE_CLOSING:
        if (!isTrailingWhitespace(code)) this.lineState = PLAIN;
        return false;
      case PLAIN:
        return false;
    }
  }

  private stepLineStart(code: number): void {
    if (code === SPACE) {
      if (this.indent < MAX_TRIGGER_INDENT) this.indent++;
      else this.lineState = PLAIN; // a 4th space: indented code
      return;
    }
    if (this.fence !== null) {
      // Inside a fence only its closing line matters.
      if (code === this.fence.char) this.startFenceRun(code);
      else this.lineState = PLAIN;
      return;
    }
    const phrase = phraseByFirstChar.get(code);
    if (phrase !== undefined) {
      this.phrase = phrase;
      this.matched = 1;
      this.lineState = TRIGGER_PREFIX;
    } else if (code === BACKTICK || code === TILDE) {
      this.startFenceRun(code);
    } else {
      this.lineState = PLAIN; // text, a tab (indented code), anything else
    }
  }

  private startFenceRun(code: number): void {
    this.runChar = code;
    this.runLength = 1;
    this.lineState = FENCE_RUN;
  }

  private stepFenceRun(code: number): void {
    if (code === this.runChar) {
      this.runLength++;
    } else if (this.fence === null) {
      this.lineState = this.runLength >= MIN_FENCE_LENGTH ? FENCE_OPENING : PLAIN;
    } else {
      const closes = this.runLength >= this.fence.length && isTrailingWhitespace(code);
      this.lineState = closes ? FENCE_CLOSING : PLAIN;
    }
  }

  private endLine(newlineAt: number): void {
    const fence = this.fenceAfterLine();
    if (fence !== this.fence) {
      this.fence = fence;
      this.fenceChanges.push({ at: newlineAt + 1, fence });
    }
    this.lineStart = newlineAt + 1;
    this.lineState = LINE_START;
    this.indent = 0;
  }

  /** The fence open after the current line: it may open one, or close the open one. */
  private fenceAfterLine(): Fence | null {
    let isFenceLine = this.lineState === FENCE_OPENING || this.lineState === FENCE_CLOSING;
    if (this.lineState === FENCE_RUN) {
      isFenceLine = this.runLength >= (this.fence?.length ?? MIN_FENCE_LENGTH);
    }
    if (!isFenceLine) return this.fence;
    return this.fence === null ? { char: this.runChar, length: this.runLength } : null;
  }

  /** Is `snapshot` the text seen so far, a continuation of it, or a prefix of it (a replay)? */
  private agreesWithSeen(snapshot: string): boolean {
    const overlap = Math.min(snapshot.length, this.text.length);
    const from = Math.max(0, overlap - SNAPSHOT_CHECK_WINDOW);
    // Equality of two slices: `startsWith` at an offset is several times slower on V8.
    return snapshot.slice(from, overlap) === this.text.slice(from, overlap);
  }

  private replace(snapshot: string): string {
    const divergence = commonPrefixLength(this.text.toString(), snapshot);
    // The scanner's state is known at a line start before the trigger (the open fence is
    // recorded), and at the trigger line (no fence: triggers are never inside one).
    const restart =
      this.promptStart >= 0 && divergence >= this.promptStart
        ? this.promptStart
        : lineStartAt(snapshot, divergence);
    this.rewindTo(restart);
    this.released = Math.min(this.released, divergence);
    this.text.reset(snapshot);
    this.scan(snapshot, restart, 0);
    return this.releaseFrom(snapshot, 0);
  }

  /** Puts the scanner in the state it had at line start `at` (before any trigger). */
  private rewindTo(at: number): void {
    while ((this.fenceChanges.at(-1)?.at ?? -1) > at) this.fenceChanges.pop();
    this.fence = this.fenceChanges.at(-1)?.fence ?? null;
    this.lineStart = at;
    this.lineState = LINE_START;
    this.indent = 0;
    this.promptStart = -1;
    this.finderState = FINDER_START;
    this.phraseStarts = [];
  }
}
