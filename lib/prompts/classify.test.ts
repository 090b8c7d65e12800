import { describe, expect, it } from "vitest";
import { classifyPrompt } from "./classify.ts";
import type { PromptSpec } from "./types.ts";

const ask = (body: string) => classifyPrompt(`OpenClaw needs input: ${body}`);

/** Each prompt body must be classified as `kind`. */
function expectKinds(kind: PromptSpec["kind"], ...bodies: string[]) {
  for (const body of bodies) expect(ask(body).kind, body).toBe(kind);
}

describe("classifyPrompt rule 1: JSON form", () => {
  const form = {
    questions: [
      {
        header: "Database",
        question: "Which database?",
        options: [
          { label: "Postgres", description: "needs a server" },
          "SQLite",
          { label: "postgres " },
        ],
      },
      {
        header: "Toppings",
        question: "Which toppings?",
        options: ["Cheese", "Mushrooms"],
        multiSelect: true,
      },
    ],
  };
  const expected = {
    kind: "form",
    questions: [
      {
        header: "Database",
        question: "Which database?",
        multiSelect: false,
        options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }],
      },
      {
        header: "Toppings",
        question: "Which toppings?",
        multiSelect: true,
        options: [{ label: "Cheese" }, { label: "Mushrooms" }],
      },
    ],
  };

  it("reads a bare JSON body on the trigger line", () => {
    expect(ask(JSON.stringify(form))).toEqual(expected);
  });

  it("reads a JSON body on the following lines, in a ```json fence", () => {
    expect(
      classifyPrompt(`Codex needs input:\n\`\`\`json\n${JSON.stringify(form, null, 2)}\n\`\`\`\n`),
    ).toEqual(expected);
  });

  it("reads a JSON body with words around it", () => {
    expect(ask(`Please answer these: ${JSON.stringify(form)} Thanks!`)).toEqual(expected);
  });

  it("defaults header, options and multiSelect", () => {
    expect(ask('{"questions": [{"question": "Name?"}]}')).toEqual({
      kind: "form",
      questions: [{ header: "", question: "Name?", multiSelect: false, options: [] }],
    });
  });

  it("accepts three questions but not four or none", () => {
    const q = { question: "Q?", options: ["A", "B"] };
    expectKinds("form", JSON.stringify({ questions: [q, q, q] }));
    expectKinds(
      "text",
      JSON.stringify({ questions: [q, q, q, q] }),
      JSON.stringify({ questions: [] }),
    );
  });

  it("falls back to the other rules for invalid JSON or an invalid question", () => {
    expectKinds(
      "text",
      '{"questions": [{"question": "Q?"}',
      '{"questions": [{"header": "No question"}]}',
      '{"questions": [{"question": "Q?", "multiSelect": "yes"}]}',
      '{"questions": [{"question": "Q?", "options": [{"description": "no label"}]}]}',
      '{"questions": [{"question": "Q?", "options": [""]}]}',
      '{"questions": "Q?"}',
    );
    // The rules that follow still apply to such a body.
    expectKinds("secret", '{"questions": []}\nPaste your API key');
  });
});

describe("classifyPrompt rule 2: secret", () => {
  it("asks for a credential", () => {
    expect(ask("Please paste your API key")).toEqual({
      kind: "secret",
      header: "",
      question: "Please paste your API key",
    });
    expectKinds(
      "secret",
      "Enter the password for the db",
      "Provide the passphrase for the signing key",
      "Send me a token with repo scope",
      "Paste your private key here",
      "I need the deploy credential",
      "What is the client secret?",
    );
  });

  it("matches credential words in any case and in identifiers", () => {
    expectKinds(
      "secret",
      "Enter your PASSWORD",
      "Set GITHUB_TOKEN for me",
      "I need OPENAI_API_KEY",
      "Paste the api-key",
    );
  });

  it("does not count plurals or longer words", () => {
    expectKinds(
      "text",
      "How many tokens may the summary use?",
      "Should I email your secretary",
      "Which passwords should I rotate",
      "Where are the credentials stored",
      "Is the tokenizer fine",
    );
  });

  it("is not a secret with a yes/no marker, a confirm question, or two numbered options", () => {
    expectKinds(
      "confirm",
      "Store the token in the keychain? (y/n)",
      "Do you want me to rotate the API key?",
    );
    expectKinds("choice", "Which token should I use?\n1. Work\n2. Personal");
  });

  it("is still a secret with one numbered line", () => {
    expectKinds("secret", "Paste your API key\n1. It is under Settings");
  });

  it("splits header and question like any prompt", () => {
    const body = "GitHub access\nPaste a token with repo scope.";
    expect(ask(body)).toEqual({
      kind: "secret",
      header: "GitHub access",
      question: "Paste a token with repo scope.",
    });
  });
});

describe("classifyPrompt rule 3: numbered options", () => {
  it("makes one option per numbered line, with `1.` or `1)`", () => {
    expect(ask("Which database?\n1. Postgres\n2) SQLite\n  3. DuckDB")).toEqual({
      kind: "choice",
      header: "",
      question: "Which database?",
      multiSelect: false,
      options: [{ label: "Postgres" }, { label: "SQLite" }, { label: "DuckDB" }],
    });
  });

  it("splits `label - description` at a hyphen, en dash or em dash with spaces around", () => {
    const spec = ask(
      "Which?\n1. Postgres - needs a server\n2. SQLite – a file\n3. DuckDB — for analytics\n4. Mid-size",
    );
    expect(spec.kind === "choice" && spec.options).toEqual([
      { label: "Postgres", description: "needs a server" },
      { label: "SQLite", description: "a file" },
      { label: "DuckDB", description: "for analytics" },
      { label: "Mid-size" },
    ]);
  });

  it("takes an indented line under an option as more of its description", () => {
    const spec = ask(
      "Which?\n1. Postgres\n   Needs a server.\n   - Good for production\n2. SQLite - a file\n   zero setup",
    );
    expect(spec.kind === "choice" && spec.options).toEqual([
      { label: "Postgres", description: "Needs a server. Good for production" },
      { label: "SQLite", description: "a file zero setup" },
    ]);
  });

  it("collapses duplicate options (case-insensitive, trimmed) before counting them", () => {
    const spec = ask("Which?\n1. Postgres\n2.  postgres \n3. SQLite");
    expect(spec.kind === "choice" && spec.options).toEqual([
      { label: "Postgres" },
      { label: "SQLite" },
    ]);
    expectKinds("text", "Which?\n1. Postgres\n2. POSTGRES");
  });

  it("needs two options, and a space after the number", () => {
    expectKinds("text", "Which?\n1. Postgres", "Size?\n1.5 GB\n2.5 GB");
  });

  it("wins over a confirm question", () => {
    expectKinds("choice", "Do you want to proceed?\n1. Yes\n2. No");
  });

  it.each([
    "Pick toppings (multiselect)",
    "Pick toppings (multi-select)",
    "Pick toppings (MultiSelect)",
    "Pick toppings [multi-select]",
    "Pick toppings. Select all that apply.",
    "Pick toppings (SELECT ALL THAT APPLY)",
    "בחר כמה תוספות",
    "תוספות (בחירה מרובה)",
    "اختر كل ما ينطبق",
    "الإضافات (اختيار متعدد)",
  ])("is multi-select with the marker in %j", (line) => {
    const spec = ask(`${line}\n1. Cheese\n2. Mushrooms`);
    expect(spec.kind === "choice" && spec.multiSelect).toBe(true);
  });

  it("removes the multi-select marker from what is shown", () => {
    expect(ask("Which toppings? (select all that apply)\n1. Cheese\n2. Mushrooms")).toMatchObject({
      question: "Which toppings?",
      multiSelect: true,
    });
    expect(
      ask("Toppings\nWhich ones? Select all that apply.\n1. Cheese\n2. Mushrooms"),
    ).toMatchObject({
      header: "Toppings",
      question: "Which ones?",
    });
    expect(ask("Pizza (multiselect)\nWhich toppings?\n1. Cheese\n2. Olives")).toMatchObject({
      header: "Pizza",
      question: "Which toppings?",
    });
    expect(ask("תוספות (בחירה מרובה)\n1. גבינה\n2. זיתים")).toMatchObject({ question: "תוספות" });
  });

  it("is single-choice without a marker", () => {
    const spec = ask("Which one?\n1. Cheese\n2. Mushrooms");
    expect(spec.kind === "choice" && spec.multiSelect).toBe(false);
  });
});

describe("classifyPrompt rule 4: yes/no", () => {
  it.each([
    "Deploy now? (y/n)",
    "Deploy now [y/n]",
    "Deploy now (Y/N)",
    "Deploy now (yes/no)",
    "Deploy now [Yes / No]",
    "לפרוס עכשיו (כן/לא)",
    "النشر الآن (نعم/لا)",
  ])("is a confirm with the marker in %j", (line) => {
    expectKinds("confirm", line);
  });

  it.each([
    "Should I proceed?",
    "Can you confirm the plan?",
    "Overwrite main.ts?",
    "Delete the old branch?",
    "Remove the lock file?",
    "Are you sure you want this?",
    "Do you want the long version?",
    "האם להמשיך?",
    "אתה בטוח?",
    "את בטוחה?",
    "هل تريد المتابعة؟",
    "هل نبدأ?",
  ])("is a confirm for the confirm question %j", (line) => {
    expectKinds("confirm", line);
  });

  it("needs the verb and the question mark on the same line", () => {
    expectKinds("text", "I will proceed with the plan.\nWhat should it be called?");
  });

  it("matches confirm verbs as whole words only", () => {
    expectKinds("text", "Was that confirmed?", "Which proceeds go where?");
  });

  it("removes the marker from what is shown", () => {
    expect(ask("Deploy now? (y/n)")).toEqual({
      kind: "confirm",
      header: "",
      question: "Deploy now?",
    });
    expect(ask("Deploy\nShip it to production [Y/n] ?")).toEqual({
      kind: "confirm",
      header: "Deploy",
      question: "Ship it to production?",
    });
    expect(ask("להמשיך? (כן/לא)")).toEqual({ kind: "confirm", header: "", question: "להמשיך?" });
  });
});

describe("classifyPrompt rule 5 and header/question split", () => {
  it("is a typed answer for anything else, a single line shown once as the question", () => {
    const question = "What should the project be called?";
    expect(ask(question)).toEqual({ kind: "text", header: "", question });
  });

  it("uses the first line as the header when more text follows", () => {
    const body = "Naming\nWhat should the project be called?\nKeep it short.";
    expect(ask(body)).toEqual({
      kind: "text",
      header: "Naming",
      question: "What should the project be called?\nKeep it short.",
    });
  });

  it("takes the question from the lines after an empty trigger line", () => {
    const prompt = "OpenClaw needs input:\n\nNaming\n  What should it be called?\n";
    expect(classifyPrompt(prompt)).toEqual({
      kind: "text",
      header: "Naming",
      question: "What should it be called?",
    });
  });

  it("has no header when the first line is longer than 80 characters", () => {
    const long = "x".repeat(81);
    expect(ask(`${long}\nmore`)).toEqual({ kind: "text", header: "", question: `${long}\nmore` });
    const exact = "y".repeat(80);
    expect(ask(`${exact}\nmore`)).toEqual({ kind: "text", header: exact, question: "more" });
  });

  it("keeps relative indentation and single blank lines in the question", () => {
    expect(ask("Config\nUse this?\n\n\n\n  port: 80\n    host: a")).toMatchObject({
      question: "Use this?\n\n  port: 80\n    host: a",
    });
  });

  it("keeps a lone numbered line in a non-choice question", () => {
    expect(ask("Steps\n1. Open the settings")).toEqual({
      kind: "text",
      header: "Steps",
      question: "1. Open the settings",
    });
  });

  it("handles a trigger with nothing after it, and a prompt with leading indentation", () => {
    expect(classifyPrompt("OpenClaw needs input:")).toEqual({
      kind: "text",
      header: "",
      question: "",
    });
    expect(classifyPrompt("   Codex needs input: Name?\r\n")).toEqual({
      kind: "text",
      header: "",
      question: "Name?",
    });
  });
});
