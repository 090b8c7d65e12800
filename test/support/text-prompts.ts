// Text prompts (docs/ARCHITECTURE.md#text-prompts) for the tests of their whole path: the replies an agent writes, the `chat`
// frames the Gateway streams a reply in (each way it does), and the card each prompt must become. The
// chat watcher's unit test feeds the frames to the watcher; text-prompts.test.ts sends the same frames
// from the fake Gateway to the real server.
import type { ChatEvent } from "@openclaw/gateway-protocol";
import { expect } from "vitest";
import type { Ask, AskQuestion } from "../../lib/ask.ts";
import { agentFromSessionKey } from "./fake-gateway/wire.ts";
import { slices } from "./prompt-feeds.ts";

export const TRIGGER = /OpenClaw needs input:|Codex needs input:/;

/** A reply ending in each kind of prompt. */
export const PROMPTS = {
  text: "Here is the plan.\nOpenClaw needs input: What should the project be called?",
  confirm: "Ready to write the file.\nOpenClaw needs input: Overwrite the existing config? (y/n)",
  choice: "Sure.\nOpenClaw needs input: Which database?\n1. Postgres - needs a server\n2. SQLite",
  multiSelect:
    "Codex needs input: Pizza toppings (select all that apply)\nWhich toppings do you want?\n1. Cheese\n2. Olives\n3. Mushrooms",
  form:
    "Two things first.\nOpenClaw needs input: " +
    JSON.stringify({
      questions: [
        {
          header: "Database",
          question: "Which database?",
          options: [{ label: "Postgres", description: "needs a server" }, "SQLite"],
        },
        {
          header: "Toppings",
          question: "Which toppings?",
          options: ["Cheese", "Olives"],
          multiSelect: true,
        },
      ],
    }),
  secret:
    "I need access to the repository.\nOpenClaw needs input: GitHub token\nPlease paste your GitHub API token so I can open the pull request.",
} as const;
export type PromptKind = keyof typeof PROMPTS;
export const PROMPT_KINDS = Object.keys(PROMPTS) as PromptKind[];

export type Mode =
  | "one character per delta (cumulative message)"
  | "7-character deltas (cumulative message)"
  | "cumulative snapshots with a replay and a replace"
  | "deltaText-only frames"
  | "deltaText-only frames with a replace"
  | "one final snapshot";

/** The matrix's ways; "deltaText-only frames with a replace" is tested on its own. */
export const MODES: Mode[] = [
  "one character per delta (cumulative message)",
  "7-character deltas (cumulative message)",
  "cumulative snapshots with a replay and a replace",
  "deltaText-only frames",
  "one final snapshot",
];

/** A draft the model took back with a `replace`: its own (different) prompt must not be asked. */
export const DRAFT =
  "Let me think.\nOpenClaw needs input: Draft question that must never be asked?\n1. Draft A\n2. Draft B";

/** The Gateway's cumulative `message`: the whole reply so far. */
export function cumulative(text: string) {
  return { role: "assistant", content: [{ type: "text", text }] };
}

/**
 * One whole run as the Gateway streams it: a status frame, the reply in `mode`, then `final`. Deltas
 * carry the cumulative message as the Gateway's do, except "deltaText-only" frames (the schema allows
 * them) and a replayed older snapshot.
 */
export function chatFrames(
  sessionKey: string,
  runId: string,
  reply: string,
  mode: Mode,
): ChatEvent[] {
  const agentId = agentFromSessionKey(sessionKey);
  const run = { runId, sessionKey, ...(agentId === undefined ? {} : { agentId }) };
  const frames: ChatEvent[] = [{ ...run, state: "status", phase: "starting_model", seq: 1 }];
  let seq = 1;
  let text = "";
  const delta = (deltaText: string, options: { replace?: boolean; replay?: string } = {}) => {
    text = options.replace ? deltaText : text + deltaText;
    const message = cumulative(options.replay ?? text);
    frames.push({
      ...run,
      state: "delta",
      message,
      deltaText,
      ...(options.replace ? { replace: true } : {}),
      seq: ++seq,
    });
  };
  const final = (last = "") => {
    text += last;
    frames.push({
      ...run,
      state: "final",
      ...(text === "" ? {} : { message: cumulative(text) }),
      seq,
    });
  };
  // With `replace`, `deltaText` is the whole new reply so far, not a suffix (docs/ARCHITECTURE.md#the-openclaw-gateway).
  const bare = (deltaText: string, replace = false) =>
    frames.push({
      ...run,
      state: "delta",
      deltaText,
      ...(replace ? { replace: true } : {}),
      seq: ++seq,
    });
  const bareFinal = () => frames.push({ ...run, state: "final", seq: ++seq });
  switch (mode) {
    case "one character per delta (cumulative message)":
      for (const char of reply) delta(char);
      final();
      break;
    case "7-character deltas (cumulative message)":
      for (const part of slices(reply, 7)) delta(part);
      final();
      break;
    case "cumulative snapshots with a replay and a replace": {
      const a = Math.floor(reply.length / 3);
      const b = Math.floor((2 * reply.length) / 3);
      delta(DRAFT);
      delta(reply.slice(0, a), { replace: true });
      delta(reply.slice(a, b));
      // An older snapshot arrives again (a replay): it changes nothing.
      delta("", { replay: reply.slice(0, a) });
      delta(reply.slice(b));
      final();
      break;
    }
    case "deltaText-only frames":
      for (const part of slices(reply, 3)) bare(part);
      bareFinal();
      break;
    case "deltaText-only frames with a replace": {
      const a = Math.floor(reply.length / 2);
      for (const part of slices(DRAFT, 5)) bare(part);
      bare(reply.slice(0, a), true);
      for (const part of slices(reply.slice(a), 5)) bare(part);
      bareFinal();
      break;
    }
    case "one final snapshot":
      final(reply);
      break;
  }
  return frames;
}

/** What a card shows as its question: header and question together (a one-line prompt has no header). */
export function shownQuestion(q: { header: string; question: string }): string {
  return [q.header, q.question].filter((part) => part !== "").join("\n");
}

export function questionsOf(ask: Ask): AskQuestion[] {
  if (ask.kind !== "question") throw new Error(`expected a question card, got ${ask.kind}`);
  return ask.questions;
}

export function onlyQuestion(ask: Ask): AskQuestion {
  const questions = questionsOf(ask);
  expect(questions).toHaveLength(1);
  return questions[0]!;
}

/** The card a `kind` prompt of PROMPTS must become (docs/ARCHITECTURE.md#text-prompts). */
export function expectCard(kind: PromptKind, ask: Ask): void {
  switch (kind) {
    case "text": {
      const q = onlyQuestion(ask);
      expect(shownQuestion(q)).toBe("What should the project be called?");
      expect(q).toMatchObject({ options: [], multiSelect: false, allowOther: true });
      return;
    }
    case "confirm": {
      const q = onlyQuestion(ask);
      // The marker is removed from what the card shows.
      expect(shownQuestion(q)).toBe("Overwrite the existing config?");
      expect(q.options).toEqual([{ label: "Yes" }, { label: "No" }]);
      expect(q.multiSelect).toBe(false);
      return;
    }
    case "choice": {
      const q = onlyQuestion(ask);
      expect(shownQuestion(q)).toBe("Which database?");
      expect(q.options).toEqual([
        { label: "Postgres", description: "needs a server" },
        { label: "SQLite" },
      ]);
      expect(q).toMatchObject({ multiSelect: false, allowOther: true });
      return;
    }
    case "multiSelect": {
      const q = onlyQuestion(ask);
      expect(q.header).toBe("Pizza toppings");
      expect(q.question).toBe("Which toppings do you want?");
      expect(q.options).toEqual([{ label: "Cheese" }, { label: "Olives" }, { label: "Mushrooms" }]);
      expect(q.multiSelect).toBe(true);
      return;
    }
    case "form": {
      const questions = questionsOf(ask);
      expect(
        questions.map(({ header, question, options, multiSelect }) => ({
          header,
          question,
          options,
          multiSelect,
        })),
      ).toEqual([
        {
          header: "Database",
          question: "Which database?",
          options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }],
          multiSelect: false,
        },
        {
          header: "Toppings",
          question: "Which toppings?",
          options: [{ label: "Cheese" }, { label: "Olives" }],
          multiSelect: true,
        },
      ]);
      expect(new Set(questions.map((q) => q.id)).size).toBe(2);
      return;
    }
    case "secret": {
      expect(ask.kind).toBe("secret");
      if (ask.kind !== "secret") return;
      expect(ask.secret.prompt).toContain("Please paste your GitHub API token");
      expect(JSON.stringify(ask.secret)).not.toMatch(TRIGGER);
      expect(ask).not.toHaveProperty("questions");
      return;
    }
  }
}
