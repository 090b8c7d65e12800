import { describe, expect, it } from "vitest";
import { resolveChoiceAnswer } from "./answers.ts";

const options = [
  { label: "Postgres", description: "needs a server" },
  { label: "SQLite" },
  { label: "Park it" },
];
const toppings = [{ label: "Extra cheese" }, { label: "Mushrooms" }, { label: "Olives" }];

describe("resolveChoiceAnswer: single choice", () => {
  it("turns an option's number into its label", () => {
    expect(resolveChoiceAnswer("1", options, false)).toBe("Postgres");
    expect(resolveChoiceAnswer(" 3 ", options, false)).toBe("Park it");
  });

  it("turns an option's label in any case into the label", () => {
    expect(resolveChoiceAnswer("sqlite", options, false)).toBe("SQLite");
    expect(resolveChoiceAnswer("  PARK   IT ", options, false)).toBe("Park it");
  });

  it("sends anything else as typed, trimmed", () => {
    expect(resolveChoiceAnswer("  MySQL, please ", options, false)).toBe("MySQL, please");
    expect(resolveChoiceAnswer("4", options, false)).toBe("4");
    expect(resolveChoiceAnswer("0", options, false)).toBe("0");
    expect(resolveChoiceAnswer("01", options, false)).toBe("01");
    expect(resolveChoiceAnswer("1, 2", options, false)).toBe("1, 2");
    expect(resolveChoiceAnswer("Postgres - needs a server", options, false)).toBe(
      "Postgres - needs a server",
    );
  });

  it("reads a number as a number before a label", () => {
    expect(resolveChoiceAnswer("1", [{ label: "2" }, { label: "1" }], false)).toBe("2");
    expect(resolveChoiceAnswer("20", [{ label: "10" }, { label: "20" }], false)).toBe("20");
  });

  it("gives no answer for an empty or blank one", () => {
    expect(resolveChoiceAnswer("", options, false)).toBe("");
    expect(resolveChoiceAnswer(" \n\t", options, false)).toBe("");
  });
});

describe("resolveChoiceAnswer: multi-select", () => {
  it.each([
    ["1, 3", "Extra cheese, Olives"],
    ["1 3", "Extra cheese, Olives"],
    ["1,3", "Extra cheese, Olives"],
    ["3,1", "Extra cheese, Olives"],
    ["  3 ,  1  ", "Extra cheese, Olives"],
    ["1 2 3", "Extra cheese, Mushrooms, Olives"],
    ["mushrooms", "Mushrooms"],
    ["2", "Mushrooms"],
    ["olives, EXTRA CHEESE", "Extra cheese, Olives"],
    ["extra cheese, 2", "Extra cheese, Mushrooms"],
    ["olives 2", "Mushrooms, Olives"],
    ["1, 1, extra cheese", "Extra cheese"],
    ["1, 3,", "Extra cheese, Olives"],
    ["2، 3", "Mushrooms, Olives"],
  ])("resolves %j to %j", (typed, expected) => {
    expect(resolveChoiceAnswer(typed, toppings, true)).toBe(expected);
  });

  it.each([
    "1 and 3",
    "1, 5",
    "0",
    "all",
    "extra cheese mushrooms",
    "1, 2, pineapple",
    ",",
    "1.3",
    "-1",
  ])("sends %j as typed", (typed) => {
    expect(resolveChoiceAnswer(typed, toppings, true)).toBe(typed);
  });

  it("trims what it sends as typed", () => {
    expect(resolveChoiceAnswer("  1 and 3 ", toppings, true)).toBe("1 and 3");
  });

  it("matches a label that contains a comma as a whole", () => {
    expect(
      resolveChoiceAnswer("salt, pepper", [{ label: "Salt, pepper" }, { label: "None" }], true),
    ).toBe("Salt, pepper");
  });

  it("gives no answer for an empty or blank one", () => {
    expect(resolveChoiceAnswer("   ", toppings, true)).toBe("");
  });
});
