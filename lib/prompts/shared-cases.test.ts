import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cumulative, feedDeltas, feedSnapshots, slices } from "../../test/support/prompt-feeds.ts";
import { promptFallbackText } from "./fallback.ts";
import { PromptScanner } from "./scanner.ts";

/**
 * The table of text-prompt cases the Open WebUI filter's port of these rules runs too
 * (integrations/open-webui/test_openclaw_asks_filter.py): the server finds the prompt it asks, the
 * filter shows the reply without it, and both must agree on every case under any chunking.
 */

type Case = { name: string; reply: string; prompt: string | null; visible: string };
const { cases } = JSON.parse(
  readFileSync(new URL("../../test/fixtures/text-prompts.json", import.meta.url), "utf8"),
) as { cases: Case[] };

/** The reply as shown once its prompt is a card: before it, the prompt as text and the line break that ended it, then what follows. */
function shownReply(reply: string): string {
  const scanner = new PromptScanner();
  const before = scanner.push(reply);
  const { text: after, prompt } = scanner.end();
  return prompt === null
    ? before + after
    : before + promptFallbackText(prompt) + prompt.slice(prompt.trimEnd().length) + after;
}

describe("the text-prompt cases shared with the Open WebUI filter", () => {
  it.each(cases)("$name", ({ reply, prompt, visible }) => {
    expect(shownReply(reply)).toBe(visible);
    const whole = feedDeltas([reply]);
    expect(whole.prompt).toBe(prompt);
    for (const deltas of [
      slices(reply, 1),
      slices(reply, 7),
      slices(reply, 3),
      [reply.slice(0, 5), reply.slice(5)],
    ]) {
      expect(feedDeltas(deltas), `deltas of ${deltas[0]?.length ?? 0}`).toEqual(whole);
      expect(feedSnapshots(cumulative(deltas)), `snapshots of ${deltas[0]?.length ?? 0}`).toEqual(
        whole,
      );
    }
  });

  it("covers both triggers, fences of both kinds, indentation, repeats and JSON forms", () => {
    const replies = cases.map((item) => item.reply).join("\n");
    for (const feature of [
      "OpenClaw needs input:",
      "Codex needs input:",
      "```",
      "~~~",
      "   OpenClaw",
      "    OpenClaw",
      '{"questions"',
      "\r\n",
    ])
      expect(replies).toContain(feature);
    expect(cases.filter((item) => item.prompt !== null).length).toBeGreaterThan(10);
    expect(cases.filter((item) => item.prompt === null).length).toBeGreaterThan(5);
  });
});
