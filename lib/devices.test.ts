import { describe, expect, it } from "vitest";
import { DeviceName } from "./devices.ts";

const normalized = (name: string) => {
  const parsed = DeviceName.safeParse(name);
  return parsed.success ? parsed.data : `refused: ${parsed.error.issues[0]?.message}`;
};

describe("device names", () => {
  it("22.10 are NFC, without controls, line separators, bidi formatting or invisible spaces, trimmed, 1-60 characters", () => {
    expect(normalized("Cafe\u0301")).toBe("Café");
    expect(normalized("Alice's\r\nphone\u2028\ttablet")).toBe("Alice's phone tablet");
    expect(normalized("\u202eenohp s'ecilA\u202c")).toBe("enohp s'ecilA");
    expect(normalized("\u2067Owner\u2069\u200e \u200fphone\u061c")).toBe("Owner phone");
    expect(normalized("Ow\u200bner\u2060's\u00a0phone\ufeff")).toBe("Owner's phone");
    expect(normalized("\u0000\u0085\u009f")).toBe("refused: must name the device");
    // Emoji sequences and scripts that need the joiners keep them.
    expect(normalized("👩\u200d💻 laptop")).toBe("👩\u200d💻 laptop");
    expect(normalized("می\u200cخواهم")).toBe("می\u200cخواهم");
    expect(normalized("טלפון של אליס")).toBe("טלפון של אליס");
    expect(normalized("📱".repeat(60))).toBe("📱".repeat(60));
    expect(normalized("é".repeat(61))).toBe("refused: must be at most 60 characters");
  });
});
