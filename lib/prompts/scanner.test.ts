import { describe, expect, it } from "vitest";
import { PromptScanner } from "./scanner.ts";
import { cumulative, feedDeltas, feedSnapshots, slices } from "../../test/support/prompt-feeds.ts";

/** One chunk, then one UTF-16 unit at a time: unit tests check both. */
function scanBothWays(text: string) {
  const whole = feedDeltas([text]);
  expect(feedDeltas(text.split(""))).toEqual(whole);
  return whole;
}

describe("PromptScanner: what is a trigger", () => {
  it("shows a reply without a trigger exactly as it came", () => {
    const text = "Sure, here is the plan.\nStep one.\n";
    expect(scanBothWays(text)).toEqual({ visible: text, prompt: null });
  });

  it("captures a prompt that starts the reply", () => {
    const text = "OpenClaw needs input: Which database?";
    expect(scanBothWays(text)).toEqual({ visible: "", prompt: text });
  });

  it("shows the text before the trigger line and captures the rest", () => {
    expect(scanBothWays("Sure.\nOpenClaw needs input: Which DB?\n1. Postgres\n2. SQLite\n")).toEqual({
      visible: "Sure.\n",
      prompt: "OpenClaw needs input: Which DB?\n1. Postgres\n2. SQLite\n",
    });
  });

  it("recognises the Codex phrase too", () => {
    expect(scanBothWays("Done.\nCodex needs input: Continue?")).toEqual({
      visible: "Done.\n",
      prompt: "Codex needs input: Continue?",
    });
  });

  it("is case-sensitive", () => {
    const text = "openclaw needs input: x\nOPENCLAW NEEDS INPUT: y\nOpenClaw Needs Input: z";
    expect(scanBothWays(text)).toEqual({ visible: text, prompt: null });
  });

  it("accepts up to 3 spaces before the phrase, and keeps them in the prompt", () => {
    for (const indent of ["", " ", "  ", "   "]) {
      expect(scanBothWays(`Hi\n${indent}OpenClaw needs input: Go?`)).toEqual({
        visible: "Hi\n",
        prompt: `${indent}OpenClaw needs input: Go?`,
      });
    }
  });

  it("treats 4 spaces or a tab before the phrase as indented code", () => {
    for (const text of ["    OpenClaw needs input: Go?", "\tOpenClaw needs input: Go?", "Hi\n     Codex needs input: x"]) {
      expect(scanBothWays(text)).toEqual({ visible: text, prompt: null });
    }
  });

  it("treats a mid-line mention as text", () => {
    const text = 'Write "OpenClaw needs input: ..." when you need me.\n- Codex needs input: is the other one';
    expect(scanBothWays(text)).toEqual({ visible: text, prompt: null });
  });

  it("needs the whole phrase, colon included", () => {
    const text = "OpenClaw needs input\nCodex needs\nOpenClaw needs input;";
    expect(scanBothWays(text)).toEqual({ visible: text, prompt: null });
  });

  it("handles CRLF line endings", () => {
    expect(scanBothWays("Sure.\r\n```\r\nOpenClaw needs input: no\r\n```\r\nOpenClaw needs input: Yes?\r\n")).toEqual({
      visible: "Sure.\r\n```\r\nOpenClaw needs input: no\r\n```\r\n",
      prompt: "OpenClaw needs input: Yes?\r\n",
    });
  });
});

describe("PromptScanner: code is a quote, not a trigger", () => {
  it("ignores a trigger inside a closed ``` fence, and finds one after it", () => {
    const text = "Example:\n```text\nOpenClaw needs input: Which DB?\n```\nOpenClaw needs input: Real?";
    expect(scanBothWays(text)).toEqual({
      visible: "Example:\n```text\nOpenClaw needs input: Which DB?\n```\n",
      prompt: "OpenClaw needs input: Real?",
    });
  });

  it("ignores triggers inside a ~~~ fence", () => {
    const text = "~~~\nCodex needs input: quoted\n~~~\nafter";
    expect(scanBothWays(text)).toEqual({ visible: text, prompt: null });
  });

  it("ignores triggers inside an unclosed fence, to the end of the reply", () => {
    for (const fence of ["```", "~~~", "```json", "   ```"]) {
      const text = `Look:\n${fence}\nOpenClaw needs input: quoted\n\nCodex needs input: still quoted`;
      expect(scanBothWays(text)).toEqual({ visible: text, prompt: null });
    }
  });

  it("closes a fence only with the same character", () => {
    const text = "```\n~~~\nOpenClaw needs input: still code";
    expect(scanBothWays(text)).toEqual({ visible: text, prompt: null });
  });

  it("closes a fence only with a run at least as long", () => {
    const inside = "````\n```\nOpenClaw needs input: still code";
    expect(scanBothWays(inside)).toEqual({ visible: inside, prompt: null });
    const closed = "````\n`````\nOpenClaw needs input: Q";
    expect(scanBothWays(closed)).toEqual({ visible: "````\n`````\n", prompt: "OpenClaw needs input: Q" });
  });

  it("does not close a fence with a line that has an info string", () => {
    const text = "```\n```js\nOpenClaw needs input: still code";
    expect(scanBothWays(text)).toEqual({ visible: text, prompt: null });
  });

  it("does not open a fence with a backtick run followed by a backtick in the info string", () => {
    const text = "```inline``` code\nOpenClaw needs input: Q";
    expect(scanBothWays(text)).toEqual({ visible: "```inline``` code\n", prompt: "OpenClaw needs input: Q" });
  });

  it("does not open a fence indented by 4 spaces (that is indented code)", () => {
    const text = "    ```\nOpenClaw needs input: Q";
    expect(scanBothWays(text)).toEqual({ visible: "    ```\n", prompt: "OpenClaw needs input: Q" });
  });

  it("needs at least three fence characters", () => {
    const text = "``\nOpenClaw needs input: Q";
    expect(scanBothWays(text)).toEqual({ visible: "``\n", prompt: "OpenClaw needs input: Q" });
  });
});

describe("PromptScanner: holding back only what could still be a trigger", () => {
  it("holds a line start that could still become a trigger", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("Hello\nOpen")).toBe("Hello\n");
    expect(scanner.push("Claw needs")).toBe("");
    expect(scanner.push(" input: Which?")).toBe("");
    expect(scanner.end()).toEqual({ text: "", prompt: "OpenClaw needs input: Which?" });
  });

  it("releases held text the moment it cannot be a trigger", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("Open")).toBe("");
    expect(scanner.push("x")).toBe("Openx");
    expect(scanner.push(" more")).toBe(" more");
  });

  it("holds indentation and a partial Codex phrase", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("  Codex need")).toBe("");
    expect(scanner.push("ed")).toBe("  Codex needed");
  });

  it("releases a line start at its 4th space", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("   ")).toBe("");
    expect(scanner.push(" ")).toBe("    ");
  });

  it("releases mid-line text at once, without waiting for the newline", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("Hel")).toBe("Hel");
    expect(scanner.push("lo")).toBe("lo");
    expect(scanner.push(" OpenClaw needs input:")).toBe(" OpenClaw needs input:");
  });

  it("releases a line that starts with a fence character at once", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("``")).toBe("``");
  });

  it("releases nothing held back inside a fence", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("```\n")).toBe("```\n");
    expect(scanner.push("Open")).toBe("Open");
  });

  it("releases a held line prefix when the reply ends", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("Sure.\nOpenClaw needs input")).toBe("Sure.\n");
    expect(scanner.end()).toEqual({ text: "OpenClaw needs input", prompt: null });
  });

  it("shows nothing after the trigger until the reply ends", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("OK\nCodex needs input: Pick\n")).toBe("OK\n");
    expect(scanner.push("1. A\n2. B\n")).toBe("");
    expect(scanner.push("Thanks!")).toBe("");
    expect(scanner.end()).toEqual({ text: "", prompt: "Codex needs input: Pick\n1. A\n2. B\nThanks!" });
  });
});

describe("PromptScanner: repeats and second questions", () => {
  const question = "OpenClaw needs input: Which DB?\n1. Postgres\n2. SQLite\n3. Park it";

  it("cuts the prompt at a repeat glued onto the last option, and drops the repeat", () => {
    expect(scanBothWays(`Sure.\n${question}${question}`)).toEqual({ visible: "Sure.\n", prompt: question });
  });

  it("drops a repeat that differs only in whitespace, or uses the other phrase", () => {
    const spaced = "OpenClaw needs input:  Which DB?\n\n1. Postgres\n2.   SQLite\n3. Park it\n";
    const codex = "Codex needs input: Which DB?\n1. Postgres\n2. SQLite\n3. Park it";
    expect(scanBothWays(`${question}\n${spaced}${codex}`)).toEqual({ visible: "", prompt: `${question}\n` });
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
  const text = "Sure.\n```\nOpenClaw needs input: no\n```\nOpenClaw needs input: Which DB?\n1. A\n2. B";

  it("gives the same result for cumulative snapshots as for deltas", () => {
    expect(feedSnapshots(cumulative(text.split("")))).toEqual(feedDeltas([text]));
    expect(feedSnapshots(cumulative(slices(text, 7)))).toEqual(feedDeltas([text]));
  });

  it("ignores a replayed snapshot: the same one again, or an older one", () => {
    const scanner = new PromptScanner();
    expect(scanner.pushSnapshot("Hello wor")).toBe("Hello wor");
    expect(scanner.pushSnapshot("Hello wor")).toBe("");
    expect(scanner.pushSnapshot("Hello")).toBe("");
    expect(scanner.pushSnapshot("Hello world")).toBe("ld");
    expect(scanner.end()).toEqual({ text: "", prompt: null });
  });

  it("mixes push and pushSnapshot", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("Hi\n")).toBe("Hi\n");
    expect(scanner.pushSnapshot("Hi\nOpen")).toBe("");
    expect(scanner.push("Claw needs input: Q")).toBe("");
    expect(scanner.pushSnapshot("Hi\nOpenClaw needs input: Q?")).toBe("");
    expect(scanner.end()).toEqual({ text: "", prompt: "OpenClaw needs input: Q?" });
  });

  it("never takes back shown text when a replace diverges inside it, and shows the new text from there", () => {
    const scanner = new PromptScanner();
    expect(scanner.pushSnapshot("Hello world\n")).toBe("Hello world\n");
    // Diverges at 6 ("world" → "there"): shown text stays; the new text from there on follows.
    expect(scanner.pushSnapshot("Hello there\nOpenClaw needs input: Which?")).toBe("there\n");
    expect(scanner.end()).toEqual({ text: "", prompt: "OpenClaw needs input: Which?" });
  });

  it("rescans held-back text when a replace diverges inside it", () => {
    const scanner = new PromptScanner();
    expect(scanner.pushSnapshot("Sure.\nOpen")).toBe("Sure.\n");
    expect(scanner.pushSnapshot("Sure.\nOk, done")).toBe("Ok, done");
    expect(scanner.end()).toEqual({ text: "", prompt: null });

    const again = new PromptScanner();
    expect(again.pushSnapshot("Sure.\nOpen the")).toBe("Sure.\nOpen the");
    expect(again.pushSnapshot("Sure.\nOpenClaw needs input: Go?")).toBe("");
    // "Open the" was shown before the replace and stays shown; the prompt is the new text's.
    expect(again.end()).toEqual({ text: "", prompt: "OpenClaw needs input: Go?" });
  });

  it("rescans the prompt when a replace diverges inside it", () => {
    const scanner = new PromptScanner();
    expect(scanner.pushSnapshot("Ok\nOpenClaw needs input: Pick\n1. A")).toBe("Ok\n");
    expect(scanner.pushSnapshot("Ok\nOpenClaw needs input: Choose\n1. X\n2. Y")).toBe("");
    expect(scanner.end()).toEqual({ text: "", prompt: "OpenClaw needs input: Choose\n1. X\n2. Y" });
  });

  it("shows the text when a replace removes the trigger", () => {
    const scanner = new PromptScanner();
    expect(scanner.pushSnapshot("Ok\nOpenClaw needs input: Pick")).toBe("Ok\n");
    expect(scanner.pushSnapshot("Ok\nNever mind.")).toBe("Never mind.");
    expect(scanner.end()).toEqual({ text: "", prompt: null });
  });

  it("rescans fence state when a replace diverges before a fence", () => {
    const scanner = new PromptScanner();
    expect(scanner.pushSnapshot("x\n```\n")).toBe("x\n```\n");
    // "```" became "~~": no fence any more, so the trigger line counts.
    expect(scanner.pushSnapshot("x\n~~\nOpenClaw needs input: Q")).toBe("~~\n");
    expect(scanner.end()).toEqual({ text: "", prompt: "OpenClaw needs input: Q" });
  });

  it("handles a replace by a shorter, different snapshot", () => {
    const scanner = new PromptScanner();
    expect(scanner.pushSnapshot("Hello world")).toBe("Hello world");
    expect(scanner.pushSnapshot("Help")).toBe("p");
    expect(scanner.end()).toEqual({ text: "", prompt: null });
  });
});

describe("PromptScanner: lifecycle and cost", () => {
  it("returns nothing for an empty delta", () => {
    const scanner = new PromptScanner();
    expect(scanner.push("")).toBe("");
    expect(scanner.pushSnapshot("")).toBe("");
    expect(scanner.end()).toEqual({ text: "", prompt: null });
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
      for (const snapshot of cumulative(deltas)) snapshots.pushSnapshot(snapshot);
      expect(snapshots.charactersScanned).toBeLessThanOrEqual(text.length);
    }
  });
});
