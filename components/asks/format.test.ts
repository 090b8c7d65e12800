import { describe, expect, it } from "vitest";
import { formatCountdown, formatSpan, textDirection } from "./format.ts";

describe("format helpers", () => {
  it("detects right-to-left text by its first strong character", () => {
    expect(textDirection("באיזה מסד נתונים?")).toBe("rtl");
    expect(textDirection("هل تريد المتابعة؟")).toBe("rtl");
    expect(textDirection("Which database?")).toBe("ltr");
    expect(textDirection("", undefined, "1. Postgres")).toBe("ltr");
    expect(textDirection("12: מסד")).toBe("rtl");
  });

  it("formats countdowns and spans", () => {
    expect(formatCountdown(65_000)).toBe("1:05");
    expect(formatCountdown(3_723_000)).toBe("1:02:03");
    expect(formatCountdown(-5)).toBe("0:00");
    expect(formatSpan(2_000)).toBe("just now");
    expect(formatSpan(40_000)).toBe("40 s");
    expect(formatSpan(125 * 60_000)).toBe("2 h 5 min");
  });
});
