import { describe, expect, it } from "vitest";
import { displayText } from "./display-text.ts";

describe("displayText", () => {
  it("keeps a title's words, in NFC, on one line", () => {
    expect(displayText("  Q3\treport:\n<b>draft</b>  ", 80)).toBe("Q3 report: <b>draft</b>");
    expect(displayText("Cafe\u0301", 80)).toBe("Café");
    expect(displayText("שלום עולם", 80)).toBe("שלום עולם");
  });

  it("drops control characters and the bidi controls that could disguise it", () => {
    expect(displayText("Owner\u202e's phone\u202c", 80)).toBe("Owner 's phone");
    expect(displayText("a\u0000b\u0007c\u2066d\u2069", 80)).toBe("a b c d");
  });

  it("cuts a long one with an ellipsis, never inside a character", () => {
    expect(displayText("x".repeat(300), 10)).toBe(`${"x".repeat(9)}…`);
    expect(displayText("😀".repeat(20), 5)).toBe("😀😀😀😀…");
  });
});
