import { describe, expect, it } from "vitest";
import type { ScanResult } from "../../test/support/prompt-feeds.ts";
import { cumulative, feedDeltas, feedSnapshots, slices } from "../../test/support/prompt-feeds.ts";
import { PromptScanner } from "./scanner.ts";

/** One chunk, then one UTF-16 unit at a time: unit tests check both. */
function scanBothWays(text: string) {
  const whole = feedDeltas([text]);
  expect(feedDeltas(text.split(""))).toEqual(whole);
  return whole;
}

/** One call on a scanner, and what it must return. */
type Step =
  | { call: "push" | "pushSnapshot"; input: string; returns: string }
  | { call: "end"; returns: ReturnType<PromptScanner["end"]> };
/** Feeds a delta, which must show `shows`. */
const push = (delta: string, shows: string): Step => ({
  call: "push",
  input: delta,
  returns: shows,
});
/** Feeds the whole reply so far, which must show `shows`. */
const snapshot = (reply: string, shows: string): Step => ({
  call: "pushSnapshot",
  input: reply,
  returns: shows,
});
/** Ends the reply, which must release `text` and capture `prompt`. */
const end = (text: string, prompt: string | null): Step => ({
  call: "end",
  returns: { text, prompt },
});

/** Plays the steps, in order, on one new scanner. */
function expectReplay(steps: readonly Step[]) {
  const scanner = new PromptScanner();
  for (const [index, step] of steps.entries()) {
    const returned = step.call === "end" ? scanner.end() : scanner[step.call](step.input);
    expect(returned, `step ${index + 1}: ${JSON.stringify(step)}`).toEqual(step.returns);
  }
}

/** A reply, and what the scanner must show of it and capture as the prompt. */
type Scan = { reply: string } & ScanResult;
/** A reply without a trigger: all of it is shown, and there is no prompt. */
const shownAsIs = (reply: string): Scan => ({ reply, visible: reply, prompt: null });
/** A reply whose trigger line starts right after `shown`: the rest is the prompt. */
const triggered = (shown: string, prompt: string): Scan => ({
  reply: shown + prompt,
  visible: shown,
  prompt,
});

/** Scans each reply both ways. */
function expectScans(scans: readonly Scan[]) {
  for (const { reply, ...expected } of scans)
    expect(scanBothWays(reply), JSON.stringify(reply)).toEqual(expected);
}

describe("PromptScanner: what is a trigger", () => {
  it.each<[string, ...Scan[]]>([
    [
      "shows a reply without a trigger exactly as it came",
      shownAsIs("Sure, here is the plan.\nStep one.\n"),
    ],
    [
      "captures a prompt that starts the reply",
      triggered("", "OpenClaw needs input: Which database?"),
    ],
    [
      "shows the text before the trigger line and captures the rest",
      triggered("Sure.\n", "OpenClaw needs input: Which DB?\n1. Postgres\n2. SQLite\n"),
    ],
    ["recognises the Codex phrase too", triggered("Done.\n", "Codex needs input: Continue?")],
    [
      "is case-sensitive",
      shownAsIs("openclaw needs input: x\nOPENCLAW NEEDS INPUT: y\nOpenClaw Needs Input: z"),
    ],
    [
      "accepts up to 3 spaces before the phrase, and keeps them in the prompt",
      ...["", " ", "  ", "   "].map((indent) =>
        triggered("Hi\n", `${indent}OpenClaw needs input: Go?`),
      ),
    ],
    [
      "treats 4 spaces or a tab before the phrase as indented code",
      ...[
        "    OpenClaw needs input: Go?",
        "\tOpenClaw needs input: Go?",
        "Hi\n     Codex needs input: x",
      ].map(shownAsIs),
    ],
    [
      "treats a mid-line mention as text",
      shownAsIs(
        'Write "OpenClaw needs input: ..." when you need me.\n- Codex needs input: is the other one',
      ),
    ],
    [
      "needs the whole phrase, colon included",
      shownAsIs("OpenClaw needs input\nCodex needs\nOpenClaw needs input;"),
    ],
    [
      "handles CRLF line endings",
      triggered(
        "Sure.\r\n```\r\nOpenClaw needs input: no\r\n```\r\n",
        "OpenClaw needs input: Yes?\r\n",
      ),
    ],
  ])("%s", (_name, ...scans) => expectScans(scans));
});

describe("PromptScanner: code is a quote, not a trigger", () => {
  it.each<[string, ...Scan[]]>([
    [
      "ignores a trigger inside a closed ``` fence, and finds one after it",
      triggered(
        "Example:\n```text\nOpenClaw needs input: Which DB?\n```\n",
        "OpenClaw needs input: Real?",
      ),
    ],
    [
      "ignores triggers inside a ~~~ fence",
      shownAsIs("~~~\nCodex needs input: quoted\n~~~\nafter"),
    ],
    [
      "ignores triggers inside an unclosed fence, to the end of the reply",
      ...["```", "~~~", "```json", "   ```"].map((fence) =>
        shownAsIs(
          `Look:\n${fence}\nOpenClaw needs input: quoted\n\nCodex needs input: still quoted`,
        ),
      ),
    ],
    [
      "closes a fence only with the same character",
      shownAsIs("```\n~~~\nOpenClaw needs input: still code"),
    ],
    [
      "closes a fence only with a run at least as long",
      shownAsIs("````\n```\nOpenClaw needs input: still code"),
      triggered("````\n`````\n", "OpenClaw needs input: Q"),
    ],
    [
      "does not close a fence with a line that has an info string",
      shownAsIs("```\n```js\nOpenClaw needs input: still code"),
    ],
    [
      "does not open a fence with a backtick run followed by a backtick in the info string",
      triggered("```inline``` code\n", "OpenClaw needs input: Q"),
    ],
    [
      "does not open a fence indented by 4 spaces (that is indented code)",
      triggered("    ```\n", "OpenClaw needs input: Q"),
    ],
    ["needs at least three fence characters", triggered("``\n", "OpenClaw needs input: Q")],
  ])("%s", (_name, ...scans) => expectScans(scans));
});

describe("PromptScanner: holding back only what could still be a trigger", () => {
  it.each<[string, Step[]]>([
    [
      "holds a line start that could still become a trigger",
      [
        push("Hello\nOpen", "Hello\n"),
        push("Claw needs", ""),
        push(" input: Which?", ""),
        end("", "OpenClaw needs input: Which?"),
      ],
    ],
    [
      "releases held text the moment it cannot be a trigger",
      [push("Open", ""), push("x", "Openx"), push(" more", " more")],
    ],
    [
      "holds indentation and a partial Codex phrase",
      [push("  Codex need", ""), push("ed", "  Codex needed")],
    ],
    ["releases a line start at its 4th space", [push("   ", ""), push(" ", "    ")]],
    [
      "releases mid-line text at once, without waiting for the newline",
      [
        push("Hel", "Hel"),
        push("lo", "lo"),
        push(" OpenClaw needs input:", " OpenClaw needs input:"),
      ],
    ],
    ["releases a line that starts with a fence character at once", [push("``", "``")]],
    ["releases nothing held back inside a fence", [push("```\n", "```\n"), push("Open", "Open")]],
    [
      "releases a held line prefix when the reply ends",
      [push("Sure.\nOpenClaw needs input", "Sure.\n"), end("OpenClaw needs input", null)],
    ],
    [
      "shows nothing after the trigger until the reply ends",
      [
        push("OK\nCodex needs input: Pick\n", "OK\n"),
        push("1. A\n2. B\n", ""),
        push("Thanks!", ""),
        end("", "Codex needs input: Pick\n1. A\n2. B\nThanks!"),
      ],
    ],
  ])("%s", (_name, steps) => expectReplay(steps));
});

describe("PromptScanner: repeats and second questions", () => {
  const question = "OpenClaw needs input: Which DB?\n1. Postgres\n2. SQLite\n3. Park it";

  it("cuts the prompt at a repeat glued onto the last option, and drops the repeat", () => {
    expect(scanBothWays(`Sure.\n${question}${question}`)).toEqual({
      visible: "Sure.\n",
      prompt: question,
    });
  });

  it("drops a repeat that differs only in whitespace, or uses the other phrase", () => {
    const spaced = "OpenClaw needs input:  Which DB?\n\n1. Postgres\n2.   SQLite\n3. Park it\n";
    const codex = "Codex needs input: Which DB?\n1. Postgres\n2. SQLite\n3. Park it";
    expect(scanBothWays(`${question}\n${spaced}${codex}`)).toEqual({
      visible: "",
      prompt: `${question}\n`,
    });
  });

  it("shows a different second question as text, its trigger phrase included", () => {
    const text = "OpenClaw needs input: Which DB?\nOpenClaw needs input: Which port?";
    expect(scanBothWays(text)).toEqual({
      visible: "OpenClaw needs input: Which port?",
      prompt: "OpenClaw needs input: Which DB?\n",
    });
  });

  it("cuts at a phrase anywhere, even mid-word, and overlapping a partial one", () => {
    // "OpenCodex needs input:" holds "Codex needs input:" starting at "Codex".
    const text = "OpenClaw needs input: A?\nOpenCodex needs input: B?";
    expect(scanBothWays(text)).toEqual({
      visible: "Codex needs input: B?",
      prompt: "OpenClaw needs input: A?\nOpen",
    });
  });

  it("shows each different later question once, and drops repeats of any of them", () => {
    const a = "OpenClaw needs input: A?\n";
    const b = "OpenClaw needs input: B?\n";
    expect(scanBothWays(`${a}${b}${a}${b}`)).toEqual({ visible: b, prompt: a });
  });

  it("treats a trigger phrase inside the prompt's code fence as a cut too", () => {
    const text = "OpenClaw needs input: Q\n```\nOpenClaw needs input: Q\n```";
    // The phrase inside the fence cuts the prompt; that part asks the same question, so it is dropped.
    expect(scanBothWays(text).prompt).toBe("OpenClaw needs input: Q\n```\n");
  });
});

describe("PromptScanner: snapshots", () => {
  const text =
    "Sure.\n```\nOpenClaw needs input: no\n```\nOpenClaw needs input: Which DB?\n1. A\n2. B";

  it("gives the same result for cumulative snapshots as for deltas", () => {
    expect(feedSnapshots(cumulative(text.split("")))).toEqual(feedDeltas([text]));
    expect(feedSnapshots(cumulative(slices(text, 7)))).toEqual(feedDeltas([text]));
  });

  it.each<[string, Step[]]>([
    [
      "ignores a replayed snapshot: the same one again, or an older one",
      [
        snapshot("Hello wor", "Hello wor"),
        snapshot("Hello wor", ""),
        snapshot("Hello", ""),
        snapshot("Hello world", "ld"),
        end("", null),
      ],
    ],
    [
      "mixes push and pushSnapshot",
      [
        push("Hi\n", "Hi\n"),
        snapshot("Hi\nOpen", ""),
        push("Claw needs input: Q", ""),
        snapshot("Hi\nOpenClaw needs input: Q?", ""),
        end("", "OpenClaw needs input: Q?"),
      ],
    ],
    [
      "never takes back shown text when a replace diverges inside it, and shows the new text from there",
      [
        snapshot("Hello world\n", "Hello world\n"),
        // Diverges at 6 ("world" → "there"): shown text stays; the new text from there on follows.
        snapshot("Hello there\nOpenClaw needs input: Which?", "there\n"),
        end("", "OpenClaw needs input: Which?"),
      ],
    ],
    [
      "rescans the prompt when a replace diverges inside it",
      [
        snapshot("Ok\nOpenClaw needs input: Pick\n1. A", "Ok\n"),
        snapshot("Ok\nOpenClaw needs input: Choose\n1. X\n2. Y", ""),
        end("", "OpenClaw needs input: Choose\n1. X\n2. Y"),
      ],
    ],
    [
      "shows the text when a replace removes the trigger",
      [
        snapshot("Ok\nOpenClaw needs input: Pick", "Ok\n"),
        snapshot("Ok\nNever mind.", "Never mind."),
        end("", null),
      ],
    ],
    [
      "rescans fence state when a replace diverges before a fence",
      [
        snapshot("x\n```\n", "x\n```\n"),
        // "```" became "~~": no fence any more, so the trigger line counts.
        snapshot("x\n~~\nOpenClaw needs input: Q", "~~\n"),
        end("", "OpenClaw needs input: Q"),
      ],
    ],
    [
      "handles a replace by a shorter, different snapshot",
      [snapshot("Hello world", "Hello world"), snapshot("Help", "p"), end("", null)],
    ],
  ])("%s", (_name, steps) => expectReplay(steps));

  it("rescans held-back text when a replace diverges inside it", () => {
    expectReplay([
      snapshot("Sure.\nOpen", "Sure.\n"),
      snapshot("Sure.\nOk, done", "Ok, done"),
      end("", null),
    ]);
    expectReplay([
      snapshot("Sure.\nOpen the", "Sure.\nOpen the"),
      snapshot("Sure.\nOpenClaw needs input: Go?", ""),
      // "Open the" was shown before the replace and stays shown; the prompt is the new text's.
      end("", "OpenClaw needs input: Go?"),
    ]);
  });
});

describe("PromptScanner: lifecycle and cost", () => {
  it("returns nothing for an empty delta", () => {
    expectReplay([push("", ""), snapshot("", ""), end("", null)]);
  });

  it("refuses input after the reply ended", () => {
    const scanner = new PromptScanner();
    scanner.end();
    expect(() => scanner.push("x")).toThrow(/ended/u);
    expect(() => scanner.pushSnapshot("x")).toThrow(/ended/u);
    expect(() => scanner.end()).toThrow(/ended/u);
  });

  it("never hands a character to the state machine twice, however the reply is chunked", () => {
    const line = "Some text, then a quote:\n```\nOpenClaw needs input: no\n```\n  Open the door.\n";
    const text = `${line.repeat(200)}OpenClaw needs input: Which?\n1. A\n2. B\n`;
    const chunkings = [[text], text.split(""), slices(text, 7), slices(text, 1000)];
    for (const deltas of chunkings) {
      const scanner = new PromptScanner();
      for (const delta of deltas) scanner.push(delta);
      expect(scanner.charactersScanned).toBeLessThanOrEqual(text.length);
      const snapshots = new PromptScanner();
      for (const reply of cumulative(deltas)) snapshots.pushSnapshot(reply);
      expect(snapshots.charactersScanned).toBeLessThanOrEqual(text.length);
    }
  });
});
