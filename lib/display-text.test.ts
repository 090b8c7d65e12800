import { describe, expect, it } from "vitest";
import { displayText } from "./display-text.ts";

describe("displayText", () => {
  it("keeps a title's words, in NFC, on one line", () => {
    expect(displayText("  Q3\treport:\n<b>draft</b>  ", 80)).toBe("Q3 report: <b>draft</b>");
    expect(displayText("Cafe\u0301", 80)).toBe("Café");
    expect(displayText("שלום עולם", 80)).toBe("שלום עולם");
  });

  it("drops control characters, and the bidi controls and invisible characters that could disguise it, as a device name does", () => {
    expect(displayText("Owner\u202e's phone\u202c", 80)).toBe("Owner's phone");
    expect(displayText("a\u0000b\u0007c\u2066d\u2069", 80)).toBe("a b cd");
    expect(displayText("Pay\u200eroll\u200f \u061cQ3\u200b\u2060 report", 80)).toBe(
      "Payroll Q3 report",
    );
    // The zero-width joiner stays: it makes one emoji of several.
    expect(displayText("👩\u200d💻 notes", 80)).toBe("👩\u200d💻 notes");
  });

  it("cuts a long one with an ellipsis, never inside a character", () => {
    expect(displayText("x".repeat(300), 10)).toBe(`${"x".repeat(9)}…`);
    expect(displayText("😀".repeat(20), 5)).toBe("😀😀😀😀…");
  });
});
