import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  cumulative,
  cutAt,
  feedDeltas,
  feedSnapshots,
  referenceSafePrefix,
  referenceScan,
  slices,
} from "../../test/support/prompt-feeds.ts";
import { TRIGGER_PHRASES } from "./phrases.ts";
import { PromptScanner, SNAPSHOT_CHECK_WINDOW } from "./scanner.ts";

const indentation = fc.constantFrom("", " ", "  ", "   ", "    ", "\t", "     ");
const question = fc.constantFrom(
  " Which database?",
  " Which database?  ",
  "",
  " Pick one (multiselect)",
  " Deploy now? (y/n)",
  " האם להמשיך? (כן/לא)",
  " هل تريد المتابعة؟",
  " Please paste your API key",
);
const triggerLine = fc
  .tuple(indentation, fc.constantFrom(...TRIGGER_PHRASES), question)
  .map(([indent, phrase, rest]) => `${indent}${phrase}${rest}`);
const fenceLine = fc.constantFrom(
  "```",
  "```json",
  "~~~",
  "````",
  "~~~~ info",
  "   ```",
  "    ```",
  "```a`b",
  "``",
  "```  ",
);
const partialTrigger = fc.constantFrom(
  "Open",
  "OpenClaw needs input",
  "  Codex need",
  "Opex",
  "Codex",
  "C",
  "O",
  "OpenClaw needs input;",
  "   ",
);
const ordinaryLine = fc.constantFrom(
  "Sure, here is the plan.",
  "1. Postgres - needs a server",
  "2. SQLite",
  "3. Park it",
  "Note: OpenClaw needs input: is how I ask.",
  "שלום עולם, בחר כמה",
  "مرحبا بالعالم؛ اختيار متعدد",
  "emoji 🙂 and \u{1F680}",
  "",
  "\r",
);
const gluedRepeat = fc
  .tuple(fc.constantFrom("3. Park it", "x", ""), fc.constantFrom(...TRIGGER_PHRASES), question)
  .map(([before, phrase, rest]) => `${before}${phrase}${rest}`);
/** A question with options, asked again: glued onto its last option or on a new line, spaced differently. */
const repeatedQuestion = fc
  .tuple(
    fc.constantFrom(...TRIGGER_PHRASES),
    fc.constantFrom(...TRIGGER_PHRASES),
    question,
    fc.constantFrom("", "\n", "\n\n"),
  )
  .map(([first, again, rest, glue]) => {
    const asked = `${rest}\n1. Postgres\n2. SQLite\n3. Park it`;
    return `${first}${asked}${glue}${again}${asked.replaceAll(" ", "  ")}`;
  });
const randomLine = fc.string({
  maxLength: 12,
  unit: fc.constantFrom("O", "C", " ", "`", "~", ":", "\t", "a", "é", "\n"),
});
const indentedLine = fc
  .tuple(indentation, fc.oneof(triggerLine, ordinaryLine))
  .map(([indent, line]) => indent + line);

const line = fc.oneof(
  { weight: 4, arbitrary: ordinaryLine },
  { weight: 2, arbitrary: triggerLine },
  { weight: 2, arbitrary: fenceLine },
  { weight: 2, arbitrary: partialTrigger },
  { weight: 1, arbitrary: gluedRepeat },
  { weight: 1, arbitrary: repeatedQuestion },
  { weight: 2, arbitrary: randomLine },
  { weight: 1, arbitrary: indentedLine },
);

/** A reply: lines of every kind that matters, joined by newlines, with or without a final one. */
const reply = fc
  .tuple(fc.array(line, { maxLength: 14 }), fc.boolean())
  .map(([lines, finalNewline]) => lines.join("\n") + (finalNewline ? "\n" : ""));

/** A reply and random cut points in it. */
const replyWithCuts = reply.chain((text) =>
  fc.tuple(
    fc.constant(text),
    fc.array(fc.nat({ max: Math.max(text.length, 1) }), { maxLength: 20 }),
  ),
);

/** More runs on demand: FC_RUNS=20000 vitest run lib/prompts */
const RUNS = { numRuns: Number(process.env.FC_RUNS ?? 400) };

function withReplays(snapshots: readonly string[], replayEvery: number): string[] {
  return snapshots.flatMap((snapshot, i) => {
    const older = snapshots[Math.max(0, i - 2)] ?? "";
    return i % replayEvery === 0 ? [snapshot, snapshot, older] : [snapshot];
  });
}

describe("PromptScanner properties: the outcome does not depend on chunking", () => {
  it("matches the whole-text reference for one chunk, single characters and 7-character slices", () => {
    fc.assert(
      fc.property(reply, (text) => {
        const expected = referenceScan(text);
        const want = { visible: expected.visible, prompt: expected.prompt };
        expect(feedDeltas([text])).toEqual(want);
        expect(feedDeltas(text.split(""))).toEqual(want);
        expect(feedDeltas([...text])).toEqual(want); // whole code points
        expect(feedDeltas(slices(text, 7))).toEqual(want);
      }),
      RUNS,
    );
  });

  it("matches the reference for random chunkings, as deltas and as cumulative snapshots", () => {
    fc.assert(
      fc.property(replyWithCuts, ([text, cuts]) => {
        const expected = referenceScan(text);
        const want = { visible: expected.visible, prompt: expected.prompt };
        const deltas = cutAt(text, cuts);
        expect(feedDeltas(deltas)).toEqual(want);
        expect(feedSnapshots(cumulative(deltas))).toEqual(want);
      }),
      RUNS,
    );
  });

  it("matches the reference for cumulative snapshots with replays (the same or an older one again)", () => {
    fc.assert(
      fc.property(replyWithCuts, fc.integer({ min: 1, max: 4 }), ([text, cuts], every) => {
        const expected = referenceScan(text);
        const want = { visible: expected.visible, prompt: expected.prompt };
        expect(feedSnapshots(withReplays(cumulative(text.split("")), every))).toEqual(want);
        expect(feedSnapshots(withReplays(cumulative(cutAt(text, cuts)), every))).toEqual(want);
      }),
      RUNS,
    );
  });

  it("shows a reply without a trigger exactly as it came", () => {
    const noTrigger = reply.filter((text) => referenceScan(text).prompt === null);
    fc.assert(
      fc.property(noTrigger, (text) => {
        expect(feedDeltas(text.split(""))).toEqual({ visible: text, prompt: null });
      }),
      RUNS,
    );
  });

  it("shown text before the trigger + the prompt is the reply up to its next trigger phrase", () => {
    fc.assert(
      fc.property(reply, (text) => {
        const { visible, prompt } = feedDeltas(slices(text, 3));
        if (prompt === null) return;
        const { shownAfter } = referenceScan(text);
        const captured = visible.slice(0, visible.length - shownAfter.length) + prompt;
        expect(text.startsWith(captured)).toBe(true);
        const rest = text.slice(captured.length);
        expect(rest === "" || TRIGGER_PHRASES.some((phrase) => rest.startsWith(phrase))).toBe(true);
      }),
      RUNS,
    );
  });
});

describe("PromptScanner properties: releasing as early as possible", () => {
  it("after every character, shows exactly what can no longer be part of a trigger", () => {
    fc.assert(
      fc.property(reply, (text) => {
        const scanner = new PromptScanner();
        let visible = "";
        for (let i = 0; i < text.length; i++) {
          visible += scanner.push(text[i] ?? "");
          expect(visible).toBe(referenceSafePrefix(text.slice(0, i + 1)));
        }
      }),
      RUNS,
    );
  });
});

describe("PromptScanner properties: a replacing snapshot", () => {
  /** Two replies sharing a prefix of random length, so they diverge anywhere. */
  const replacement = fc
    .tuple(reply, reply, reply, fc.nat(), fc.nat())
    .map(([shared, first, second, cutFirst, cutSecond]) => {
      const old = shared + first;
      return {
        old: old.slice(0, old.length - (cutFirst % (first.length + 1))),
        next: shared + second.slice(0, second.length - (cutSecond % (second.length + 1))),
      };
    });

  it("never takes back shown text, shows the new text from the divergence, and finds the new text's prompt", () => {
    fc.assert(
      fc.property(replacement, fc.boolean(), ({ old, next }, asDeltas) => {
        const scanner = new PromptScanner();
        let shownBefore = "";
        if (asDeltas) for (const ch of old.split("")) shownBefore += scanner.push(ch);
        else
          for (const snapshot of cumulative(slices(old, 5)))
            shownBefore += scanner.pushSnapshot(snapshot);
        const after = scanner.pushSnapshot(next);
        const end = scanner.end();

        if (agreesOnCheckWindow(old, next)) {
          // Taken as the same reply continuing (or replayed): what `old + the rest of next` gives.
          const continued = old + next.slice(old.length);
          expect({ visible: shownBefore + after + end.text, prompt: end.prompt }).toEqual(
            feedDeltas([continued]),
          );
          return;
        }
        const divergence = commonPrefixLength(old, next);
        const resumeAt = Math.min(shownBefore.length, divergence);
        const expected = referenceScan(next);
        const beforeTrigger = expected.triggerStart < 0 ? next.length : expected.triggerStart;
        const newlyShown = resumeAt < beforeTrigger ? next.slice(resumeAt, beforeTrigger) : "";
        expect(shownBefore + after + end.text).toBe(shownBefore + newlyShown + expected.shownAfter);
        expect(end.prompt).toBe(expected.prompt);
      }),
      RUNS,
    );
  });
});

function commonPrefixLength(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** The scanner's documented rule for "this snapshot continues (or replays) what was seen". */
function agreesOnCheckWindow(old: string, next: string): boolean {
  const overlap = Math.min(old.length, next.length);
  const from = Math.max(0, overlap - SNAPSHOT_CHECK_WINDOW);
  return old.slice(from, overlap) === next.slice(from, overlap);
}
