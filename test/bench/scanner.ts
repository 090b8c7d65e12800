import { PromptScanner } from "../../lib/prompts/index.ts";
import { ratio, round } from "./stats.ts";

/**
 * The prompt scanner (docs/BENCHMARK.md#targets), on a realistic 1 MB assistant reply:
 * - linearity: the cost per character, fed one character per `push` (the most calls a reply can
 *   take), is the same for a 250 kB reply as for the 1 MB one (both end with their prompt). A
 *   sample feeds 1 MB either way, the short reply four times over, so both sizes are timed over the
 *   same span and meet the same share of the machine's other load;
 * - cumulative snapshots: the reply fed as 10,000 growing snapshots (`pushSnapshot`, what the
 *   Gateway's `chat` events carry) costs at most 2x the same reply fed as the 10,000 deltas between
 *   them (`push`): each snapshot costs its new suffix, not its whole length.
 * Each pair of measurements alternates run by run after a warm-up, in this process, with nothing
 * else running; a figure is the ratio of the fastest runs: the work is deterministic and CPU-bound,
 * so other load on the machine only adds time, and the fastest run is the one it disturbed least. Deltas and snapshots exist before they are
 * fed, as they arrive as strings: building them is not timed. Single characters are read from the
 * reply as they are fed (one-character strings are not allocated), so the input's own size in
 * memory does not weigh on the larger reply.
 */

export type ScannerResult = {
  bytes: number;
  runs: number;
  /** One character per `push`, per character, for a 250 kB reply and for the 1 MB one. */
  nsPerCharQuarterMB: number;
  nsPerCharMB: number;
  /** nsPerCharMB / nsPerCharQuarterMB: 1 is perfectly flat. */
  linearityRatio: number;
  /** The whole reply as `snapshots` cumulative snapshots, and as the same number of deltas. */
  snapshots: number;
  snapshotsMs: number;
  deltasMs: number;
  /** snapshotsMs / deltasMs. */
  snapshotRatio: number;
  /** Information: the whole reply one character per `push`, and as one `push`. */
  charByCharMs: number;
  oneChunkMs: number;
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

/** Ends the reply: its outcome, counting `shown` characters already released. */
function ended(scanner: PromptScanner, shown: number): Outcome {
  const end = scanner.end();
  return { shown: shown + end.text.length, text: end.text, prompt: end.prompt };
}

// One loop per way of feeding (not one loop with a switch), so each call site stays monomorphic.

/** Feeds `text` one character per `push`, then ends the reply. */
function feedChars(text: string): Outcome {
  const scanner = new PromptScanner();
  let shown = 0;
  for (let i = 0; i < text.length; i++) shown += scanner.push(text[i]!).length;
  return ended(scanner, shown);
}

/** Feeds `deltas` in order, each with `push`, then ends the reply. */
function feedDeltas(deltas: readonly string[]): Outcome {
  const scanner = new PromptScanner();
  let shown = 0;
  for (let i = 0; i < deltas.length; i++) shown += scanner.push(deltas[i]!).length;
  return ended(scanner, shown);
}

/** Feeds growing snapshots of the reply in order, each with `pushSnapshot`, then ends the reply. */
function feedSnapshots(snapshots: readonly string[]): Outcome {
  const scanner = new PromptScanner();
  let shown = 0;
  for (let i = 0; i < snapshots.length; i++) shown += scanner.pushSnapshot(snapshots[i]!).length;
  return ended(scanner, shown);
}

function timed(run: () => Outcome): { ms: number; outcome: Outcome } {
  const start = performance.now();
  const outcome = run();
  return { ms: performance.now() - start, outcome };
}

/** Runs `a` and `b` alternately, `warmup` times untimed then `runs` times; their fastest times. */
function alternate(runs: number, warmup: number, a: () => Outcome, b: () => Outcome, check: (a: Outcome, b: Outcome) => void): { aMs: number; bMs: number } {
  const aMs: number[] = [];
  const bMs: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const first = timed(a);
    const second = timed(b);
    check(first.outcome, second.outcome);
    if (i < warmup) continue;
    aMs.push(first.ms);
    bMs.push(second.ms);
  }
  return { aMs: Math.min(...aMs), bMs: Math.min(...bMs) };
}

/** The text cut into `count` consecutive pieces of (nearly) equal length. */
function pieces(text: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => text.slice(Math.floor((i * text.length) / count), Math.floor(((i + 1) * text.length) / count)));
}

export function benchScanner(options: { bytes?: number; runs?: number; snapshots?: number } = {}): ScannerResult {
  const bytes = options.bytes ?? 1_000_000;
  const runs = options.runs ?? 15;
  const count = options.snapshots ?? 10_000;
  const warmup = 3;
  const text = realisticReply(bytes);
  const quarter = realisticReply(Math.floor(bytes / 4));
  const deltas = pieces(text, count);
  const snapshots: string[] = [];
  for (let i = 0, end = 0; i < deltas.length; i++) snapshots.push(text.slice(0, (end += deltas[i]!.length)));

  const expect = (reply: string) => {
    const reference = feedDeltas([reply]);
    if (reference.prompt === null || !reference.prompt.includes("Which database")) {
      throw new Error("scanner bench: the reply's trigger was not found; the bench text or the scanner is broken");
    }
    return (label: string) => (outcome: Outcome) => {
      if (outcome.prompt !== reference.prompt || outcome.shown !== reference.shown) throw new Error(`scanner bench: ${label} gave another outcome than one chunk`);
    };
  };
  const sameAsReference = expect(text);
  const quarterOk = expect(quarter)("one character at a time (250 kB)");
  const charOk = sameAsReference("one character at a time");
  const chunkOk = sameAsReference("one chunk");
  const char = alternate(runs, warmup, () => feedChars(text), () => feedDeltas([text]), (a, b) => {
    charOk(a);
    chunkOk(b);
  });
  const repeats = Math.round(text.length / quarter.length);
  const fourQuarters = () => {
    let outcome = feedChars(quarter);
    for (let i = 1; i < repeats; i++) outcome = feedChars(quarter);
    return outcome;
  };
  const linear = alternate(runs, warmup, fourQuarters, () => feedChars(text), (a, b) => {
    quarterOk(a);
    charOk(b);
  });
  const deltasOk = sameAsReference("deltas");
  const snapshotsOk = sameAsReference("cumulative snapshots");
  const cumulative = alternate(runs, warmup, () => feedDeltas(deltas), () => feedSnapshots(snapshots), (a, b) => {
    deltasOk(a);
    snapshotsOk(b);
  });

  const nsPerCharQuarterMB = (linear.aMs * 1e6) / (repeats * quarter.length);
  const nsPerCharMB = (linear.bMs * 1e6) / text.length;
  return {
    bytes: text.length,
    runs,
    nsPerCharQuarterMB: round(nsPerCharQuarterMB, 1),
    nsPerCharMB: round(nsPerCharMB, 1),
    linearityRatio: ratio(nsPerCharMB, nsPerCharQuarterMB),
    snapshots: count,
    snapshotsMs: round(cumulative.bMs),
    deltasMs: round(cumulative.aMs),
    snapshotRatio: ratio(cumulative.bMs, cumulative.aMs),
    charByCharMs: round(char.aMs),
    oneChunkMs: round(char.bMs),
  };
}
