import { PromptScanner } from "../../lib/prompts/index.ts";
import { median, ratio, round } from "./stats.ts";

/**
 * The prompt scanner: one 1 MB assistant reply fed one character per `push` versus one `push` of
 * the whole reply, each followed by `end()`. Runs alternate (char, chunk, char, chunk, ...) after a
 * warm-up, in this process, with nothing else running; the figure is the ratio of the medians.
 */

export type ScannerResult = {
  bytes: number;
  runs: number;
  charByCharMs: number;
  oneChunkMs: number;
  charByCharMinMs: number;
  oneChunkMinMs: number;
  ratio: number;
  /** Information: the same loop feeding a push() that only returns its argument (the cost of the calls alone). */
  callFloorMs: number;
  floorRatio: number;
  /** Information: char-by-char cost per character at a quarter of the size and at the full size (flat = linear). */
  nsPerCharQuarter: number;
  nsPerCharFull: number;
};

const WORDS = (
  "the agent checked the repository and found that a migration is needed before the deploy can " +
  "continue so it compares both options reads the logs again and writes a short summary for you"
).split(" ");

/** A deterministic PRNG (mulberry32), so every run scans the same reply. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * About `bytes` characters of a realistic reply: prose lines, list items, now and then a fenced
 * code block (one quoting a trigger line, which must stay text) and an indented block, and a real
 * trigger with numbered options near the end.
 */
export function realisticReply(bytes: number): string {
  const next = random(42);
  const word = () => WORDS[Math.floor(next() * WORDS.length)]!;
  const sentence = (min: number, max: number) => Array.from({ length: min + Math.floor(next() * (max - min)) }, word).join(" ");
  const prompt = "\nOpenClaw needs input: Which database should the new service use?\n1. Postgres - needs a server\n2. SQLite\n3. Park it for now\n";
  const parts: string[] = [];
  let size = 0;
  let line = 0;
  while (size < bytes - prompt.length - 200) {
    let piece: string;
    line++;
    if (line % 97 === 0) {
      piece = "```ts\n" + Array.from({ length: 8 }, () => `const ${word()} = "${sentence(3, 8)}";`).join("\n") + "\nOpenClaw needs input: quoted in code, not a prompt\n```\n";
    } else if (line % 61 === 0) {
      piece = "    " + sentence(4, 10) + "\n    OpenClaw needs input: indented code, not a prompt\n";
    } else if (line % 7 === 0) {
      piece = `${1 + (line % 5)}. ${sentence(4, 12)}\n`;
    } else if (line % 13 === 0) {
      piece = "\n";
    } else {
      piece = `${sentence(8, 20)}. Mentions of OpenClaw needs input: mid-line are text.\n`;
    }
    parts.push(piece);
    size += piece.length;
  }
  let text = parts.join("");
  text += "x".repeat(Math.max(0, bytes - prompt.length - text.length - 1)) + "\n";
  return text + prompt;
}

type Outcome = { shown: number; text: string; prompt: string | null };

function feedChars(chars: readonly string[]): Outcome {
  const scanner = new PromptScanner();
  let shown = 0;
  for (let i = 0; i < chars.length; i++) shown += scanner.push(chars[i]!).length;
  const end = scanner.end();
  return { shown: shown + end.text.length, text: end.text, prompt: end.prompt };
}

function feedOne(text: string): Outcome {
  const scanner = new PromptScanner();
  const shown = scanner.push(text).length;
  const end = scanner.end();
  return { shown: shown + end.text.length, text: end.text, prompt: end.prompt };
}

function timed(run: () => Outcome): { ms: number; outcome: Outcome } {
  const start = performance.now();
  const outcome = run();
  return { ms: performance.now() - start, outcome };
}

export function benchScanner(options: { bytes?: number; runs?: number } = {}): ScannerResult {
  const bytes = options.bytes ?? 1_000_000;
  const runs = options.runs ?? 15;
  const text = realisticReply(bytes);
  // The deltas exist before they are fed (they arrive as strings): splitting is not timed.
  const chars = Array.from({ length: text.length }, (_, i) => text[i]!);

  const reference = feedOne(text);
  if (reference.prompt === null || !reference.prompt.includes("Which database")) {
    throw new Error("scanner bench: the reply's trigger was not found; the bench text or the scanner is broken");
  }
  for (let i = 0; i < 3; i++) {
    feedChars(chars);
    feedOne(text);
  }
  const charMs: number[] = [];
  const chunkMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const char = timed(() => feedChars(chars));
    const chunk = timed(() => feedOne(text));
    if (char.outcome.prompt !== reference.prompt || char.outcome.shown !== reference.shown) {
      throw new Error("scanner bench: one character at a time gave another outcome than one chunk");
    }
    charMs.push(char.ms);
    chunkMs.push(chunk.ms);
  }
  // The floor: the loop and a million calls of a push() that does nothing.
  const noop = { released: 0, push(delta: string): string { this.released += delta.length; return delta; } };
  const floorMs: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const start = performance.now();
    let shown = 0;
    for (let j = 0; j < chars.length; j++) shown += noop.push(chars[j]!).length;
    if (shown !== chars.length) throw new Error("unreachable");
    if (i >= 3) floorMs.push(performance.now() - start);
  }
  // Linearity: the same per-character cost on a quarter of the reply.
  const quarter = chars.slice(0, Math.floor(chars.length / 4));
  const quarterMs: number[] = [];
  for (let i = 0; i < runs; i++) quarterMs.push(timed(() => feedChars(quarter)).ms);

  const charByCharMs = median(charMs);
  const oneChunkMs = median(chunkMs);
  return {
    bytes: text.length,
    runs,
    charByCharMs: round(charByCharMs),
    oneChunkMs: round(oneChunkMs),
    charByCharMinMs: round(Math.min(...charMs)),
    oneChunkMinMs: round(Math.min(...chunkMs)),
    ratio: ratio(charByCharMs, oneChunkMs),
    callFloorMs: round(median(floorMs)),
    floorRatio: ratio(median(floorMs), oneChunkMs),
    nsPerCharQuarter: round((median(quarterMs) * 1e6) / quarter.length, 1),
    nsPerCharFull: round((charByCharMs * 1e6) / chars.length, 1),
  };
}
