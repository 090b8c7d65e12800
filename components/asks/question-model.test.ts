import { describe, expect, it } from "vitest";
import type { AskQuestion } from "../../lib/ask.ts";
import { questionAsk } from "../../test/support/ask-fixtures.ts";
import {
  buildAnswer,
  confirmAnswer,
  draftValues,
  EMPTY_DRAFT,
  isPicked,
  isRecommended,
  pickOption,
  questionMode,
  toggleTypedNumber,
  typeOther,
} from "./question-model.ts";

const question = (over: Partial<AskQuestion> = {}): AskQuestion => ({
  id: "db",
  header: "Database",
  question: "Which database?",
  options: [
    { label: "Postgres", description: "needs a server" },
    { label: "SQLite" },
    { label: "MySQL" },
  ],
  multiSelect: false,
  allowOther: true,
  ...over,
});

describe("question model", () => {
  it("picks one option, and a typed Other answer replaces it", () => {
    const q = question();
    let draft = pickOption(q, "choice", EMPTY_DRAFT, 1);
    expect(draftValues(q, "choice", draft)).toEqual(["SQLite"]);
    draft = typeOther(q, "choice", draft, " MariaDB ");
    expect(draftValues(q, "choice", draft)).toEqual(["MariaDB"]);
    draft = pickOption(q, "choice", draft, 0);
    expect(draftValues(q, "choice", draft)).toEqual(["Postgres"]);
  });

  it("toggles checkboxes in option order for multi-select", () => {
    const q = question({ multiSelect: true, allowOther: false });
    let draft = pickOption(q, "choice", EMPTY_DRAFT, 2);
    draft = pickOption(q, "choice", draft, 0);
    expect(draftValues(q, "choice", draft)).toEqual(["Postgres", "MySQL"]);
    draft = pickOption(q, "choice", draft, 2);
    expect(draftValues(q, "choice", draft)).toEqual(["Postgres"]);
  });

  it("builds a questions answer, or says which question is missing", () => {
    const a = questionAsk([
      question(),
      question({ id: "cache", header: "Cache", options: [{ label: "Redis" }, { label: "None" }] }),
    ]);
    expect(buildAnswer(a, { db: pickOption(a.questions[0]!, "choice", EMPTY_DRAFT, 0) })).toEqual({
      ok: false,
      missing: 1,
    });
    const drafts = {
      db: pickOption(a.questions[0]!, "choice", EMPTY_DRAFT, 0),
      cache: typeOther(a.questions[1]!, "choice", EMPTY_DRAFT, "Memcached"),
    };
    expect(buildAnswer(a, drafts)).toEqual({
      ok: true,
      answer: { type: "questions", answers: { db: ["Postgres"], cache: ["Memcached"] } },
    });
  });

  it("sends a text prompt's typed multi-select as typed text", () => {
    const q = question({ multiSelect: true });
    const a = questionAsk([q], {
      source: "text-prompt",
      textPrompt: { fallbackText: "x", form: "choice", continues: "run" },
    });
    expect(questionMode(a, q)).toBe("typed-multi");
    let draft = pickOption(q, "typed-multi", EMPTY_DRAFT, 2);
    draft = pickOption(q, "typed-multi", draft, 0);
    expect(draft.other).toBe("1, 3");
    expect(isPicked(q, "typed-multi", draft, 2)).toBe(true);
    expect(isPicked(q, "typed-multi", draft, 1)).toBe(false);
    expect(buildAnswer(a, { db: draft })).toEqual({
      ok: true,
      answer: { type: "text", text: "1, 3" },
    });
  });

  it("keeps typed words when toggling numbers", () => {
    expect(toggleTypedNumber("Cheese 2", 3)).toBe("Cheese, 2, 3");
    expect(toggleTypedNumber("3, 1", 2)).toBe("1, 2, 3");
    expect(toggleTypedNumber("1, 2", 2)).toBe("1");
  });

  it("answers a confirmation with its own Yes/No option, or the word", () => {
    const plain = questionAsk([question({ options: [] })], {
      source: "text-prompt",
      textPrompt: { fallbackText: "x", form: "confirm", continues: "run" },
    });
    expect(questionMode(plain, plain.questions[0]!)).toBe("confirm");
    expect(confirmAnswer(plain, false)).toEqual({ type: "text", text: "No" });
    const withOptions = questionAsk([question({ options: [{ label: "Yes" }, { label: "No" }] })], {
      textPrompt: { fallbackText: "x", form: "confirm", continues: "run" },
    });
    expect(confirmAnswer(withOptions, true)).toEqual({
      type: "questions",
      answers: { db: ["Yes"] },
    });
  });

  it("tags the first option Recommended unless its label already says so", () => {
    expect(isRecommended(question(), 0)).toBe(true);
    expect(isRecommended(question(), 1)).toBe(false);
    expect(
      isRecommended(
        question({ options: [{ label: "Postgres (Recommended)" }, { label: "SQLite" }] }),
        0,
      ),
    ).toBe(false);
  });
});
