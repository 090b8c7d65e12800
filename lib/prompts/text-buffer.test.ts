import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TextBuffer } from "./text-buffer.ts";

describe("TextBuffer", () => {
  it("reads back what was appended, in short and long deltas, across block boundaries", () => {
    const buffer = new TextBuffer();
    const deltas = [
      "a",
      "bc",
      "x".repeat(100),
      ..."y".repeat(5000).split(""),
      "z".repeat(64),
      "\u{1F680}",
      "\uD800",
    ];
    for (const delta of deltas) buffer.append(delta);
    const text = deltas.join("");
    expect(buffer.length).toBe(text.length);
    expect(buffer.slice(0, text.length)).toBe(text);
    expect(buffer.slice(text.length - 10, text.length)).toBe(text.slice(-10));
    expect(buffer.slice(50, 4200)).toBe(text.slice(50, 4200));
    expect(buffer.toString()).toBe(text);
  });

  it("keeps lone surrogates and split surrogate pairs exact", () => {
    const buffer = new TextBuffer();
    const text = "\u{1F680}\uDC00x\uD83D";
    for (const unit of text.split("")) buffer.append(unit);
    expect(buffer.toString()).toBe(text);
  });

  it("slices like String.prototype.slice for any appends and any range", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 80, unit: "binary" }), { maxLength: 40 }),
        fc.nat(),
        fc.nat(),
        (deltas, a, b) => {
          const buffer = new TextBuffer();
          for (const delta of deltas) buffer.append(delta);
          const text = deltas.join("");
          const from = Math.min(a, b) % (text.length + 1);
          const to = Math.min(Math.max(a, b), text.length);
          expect(buffer.slice(from, to)).toBe(text.slice(from, to));
          expect(buffer.toString()).toBe(text);
        },
      ),
    );
  });

  it("starts over on reset", () => {
    const buffer = new TextBuffer();
    buffer.append("old text");
    buffer.reset("new");
    buffer.append("er");
    expect(buffer.toString()).toBe("newer");
    expect(buffer.length).toBe(5);
  });
});
