import { describe, expect, it } from "vitest";
import { promptFallbackText } from "./fallback.ts";

describe("promptFallbackText", () => {
  it("removes the trigger phrase and keeps the question as written", () => {
    expect(promptFallbackText("OpenClaw needs input: Which DB?\n1. Postgres\n2. SQLite")).toBe(
      "Which DB?\n1. Postgres\n2. SQLite",
    );
    expect(promptFallbackText("Codex needs input: Deploy now? (y/n)\n")).toBe("Deploy now? (y/n)");
  });

  it("keeps markers, descriptions and duplicates: it is the agent's text", () => {
    const body = "Toppings (multiselect)\n1. Cheese - the usual\n2. cheese";
    expect(promptFallbackText(`OpenClaw needs input: ${body}`)).toBe(body);
  });

  it("drops an empty trigger line and the blank lines after it, keeping the question's indentation", () => {
    expect(promptFallbackText("OpenClaw needs input:\n\n  Which DB?\n  1. Postgres")).toBe(
      "  Which DB?\n  1. Postgres",
    );
  });

  it("handles the trigger line's indentation", () => {
    expect(promptFallbackText("   OpenClaw needs input:   Name?")).toBe("Name?");
  });

  it("turns a JSON form into its numbered questions with their options", () => {
    const form = {
      questions: [
        {
          header: "Database",
          question: "Which database?",
          options: [{ label: "Postgres", description: "needs a server" }, "SQLite"],
        },
        {
          header: "Toppings",
          question: "Which toppings?",
          options: ["Cheese", "Mushrooms"],
          multiSelect: true,
        },
        { question: "Anything else?" },
      ],
    };
    expect(
      promptFallbackText(`OpenClaw needs input:\n\`\`\`json\n${JSON.stringify(form)}\n\`\`\``),
    ).toBe(
      [
        "1. Database: Which database?",
        "   - Postgres (needs a server)",
        "   - SQLite",
        "2. Toppings: Which toppings? (select all that apply)",
        "   - Cheese",
        "   - Mushrooms",
        "3. Anything else?",
      ].join("\n"),
    );
  });

  it("keeps an invalid JSON body as written", () => {
    expect(promptFallbackText('OpenClaw needs input: {"questions": []}')).toBe('{"questions": []}');
  });
});
