/**
 * Test support for the prompt scanner (not used by the library): ways to feed a reply, and a
 * reference scanner that applies the text-prompt rules (docs/ARCHITECTURE.md#text-prompts) to the whole text at once, written for obviousness
 * rather than speed, to check the streaming scanner against.
 */
import { collapseWhitespace, questionBody, TRIGGER_PHRASES } from "../../lib/prompts/phrases.ts";
import { PromptScanner } from "../../lib/prompts/scanner.ts";

export type ScanResult = { visible: string; prompt: string | null };

/** Feeds `deltas` with `push`, then ends the reply. */
export function feedDeltas(deltas: readonly string[], scanner = new PromptScanner()): ScanResult {
  let visible = "";
  for (const delta of deltas) visible += scanner.push(delta);
  const end = scanner.end();
  return { visible: visible + end.text, prompt: end.prompt };
}

/** Feeds each snapshot with `pushSnapshot`, then ends the reply. */
export function feedSnapshots(
  snapshots: readonly string[],
  scanner = new PromptScanner(),
): ScanResult {
  let visible = "";
  for (const snapshot of snapshots) visible += scanner.pushSnapshot(snapshot);
  const end = scanner.end();
  return { visible: visible + end.text, prompt: end.prompt };
}

/** `text` cut at the given positions (sorted, deduplicated, in range). */
export function cutAt(text: string, cuts: readonly number[]): string[] {
  const bounds = [
    ...new Set([0, ...cuts.map((cut) => Math.min(Math.max(cut, 0), text.length)), text.length]),
  ];
  bounds.sort((a, b) => a - b);
  return bounds.slice(1).map((end, i) => text.slice(bounds[i], end));
}

/** `text` in slices of `size` UTF-16 code units (surrogate pairs may be split, on purpose). */
export function slices(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts;
}

/** The cumulative snapshots a reply cut into these deltas produces. */
export function cumulative(deltas: readonly string[]): string[] {
  let so = "";
  return deltas.map((delta) => (so += delta));
}

type Fence = { char: string; length: number };

const TRIGGER_LINE = /^ {0,3}(?:OpenClaw needs input:|Codex needs input:)/u;
const OPENING_FENCE = /^ {0,3}(`{3,}|~{3,})([^\n]*)$/u; // `.` would miss a CRLF line's `\r`
const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t\r]*$/u;

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return starts;
}

function lineAt(text: string, start: number): string {
  const end = text.indexOf("\n", start);
  return text.slice(start, end < 0 ? text.length : end);
}

/** The fence open after a complete line, given the fence open before it. */
function fenceAfter(line: string, fence: Fence | null): Fence | null {
  if (fence !== null) {
    const run = CLOSING_FENCE.exec(line)?.[1];
    return run !== undefined && run[0] === fence.char && run.length >= fence.length ? null : fence;
  }
  const opening = OPENING_FENCE.exec(line);
  const run = opening?.[1];
  if (run === undefined) return null;
  if (run[0] === "`" && (opening?.[2] ?? "").includes("`")) return null;
  return { char: run[0] ?? "", length: run.length };
}

/** Where the first trigger line starts, or -1. */
export function referenceTriggerStart(text: string): number {
  let fence: Fence | null = null;
  for (const start of lineStarts(text)) {
    const line = lineAt(text, start);
    if (fence === null && TRIGGER_LINE.test(line)) return start;
    fence = fenceAfter(line, fence);
  }
  return -1;
}

/** Start positions of every trigger phrase from `from` on, left to right, not overlapping. */
export function phraseStarts(text: string, from: number): number[] {
  const found: number[] = [];
  let at = from;
  for (;;) {
    const next = TRIGGER_PHRASES.map((phrase) => ({ phrase, index: text.indexOf(phrase, at) }))
      .filter(({ index }) => index >= 0)
      .sort((a, b) => a.index - b.index)[0];
    if (next === undefined) return found;
    found.push(next.index);
    at = next.index + next.phrase.length;
  }
}

/** What the text-prompt rules (docs/ARCHITECTURE.md#text-prompts) say a whole reply shows and prompts, computed on the complete text. */
export function referenceScan(
  text: string,
): ScanResult & { triggerStart: number; shownAfter: string } {
  const triggerStart = referenceTriggerStart(text);
  if (triggerStart < 0) return { visible: text, prompt: null, triggerStart, shownAfter: "" };
  const phraseEnd = text.indexOf(":", triggerStart) + 1;
  const bounds = [triggerStart, ...phraseStarts(text, phraseEnd), text.length];
  const segments = bounds.slice(1).map((end, i) => text.slice(bounds[i], end));
  const [prompt = "", ...later] = segments;
  const asked = new Set([collapseWhitespace(questionBody(prompt))]);
  let shownAfter = "";
  for (const segment of later) {
    const question = collapseWhitespace(questionBody(segment));
    if (!asked.has(question)) shownAfter += segment;
    asked.add(question);
  }
  return { visible: text.slice(0, triggerStart) + shownAfter, prompt, triggerStart, shownAfter };
}

/**
 * What may be shown of a reply that has so far reached `text` (not ended): everything before the
 * trigger line if there is one, otherwise everything but a last line that could still become one
 * (outside a fence: up to 3 spaces and a beginning of a trigger phrase, possibly empty).
 */
export function referenceSafePrefix(text: string): string {
  const triggerStart = referenceTriggerStart(text);
  if (triggerStart >= 0) return text.slice(0, triggerStart);
  const lastLineStart = text.lastIndexOf("\n") + 1;
  let fence: Fence | null = null;
  for (const start of lineStarts(text)) {
    if (start >= lastLineStart) break;
    fence = fenceAfter(lineAt(text, start), fence);
  }
  const lastLine = text.slice(lastLineStart);
  const indentation = /^ {0,3}/u.exec(lastLine)?.[0] ?? "";
  const rest = lastLine.slice(indentation.length);
  const mayBecomeTrigger = TRIGGER_PHRASES.some((phrase) => phrase.startsWith(rest));
  return fence === null && mayBecomeTrigger ? text.slice(0, lastLineStart) : text;
}
