// The words the Open WebUI filter writes too, pinned by the table both read (test/fixtures/wording.json;
// the filter's side is integrations/open-webui/test_wording.py).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { promptFallbackText } from "./prompts/fallback.ts";
import { FORM_AS_TEXT } from "./wording.ts";

type Table = {
  formAsText: { multiSelect: string };
  cases: { name: string; prompt: string; text: string }[];
};
const table = JSON.parse(
  readFileSync(new URL("../test/fixtures/wording.json", import.meta.url), "utf8"),
) as Table;

describe("the wording shared with the Open WebUI filter", () => {
  it("names a multiple choice as the filter does", () => {
    expect(FORM_AS_TEXT.multiSelect).toBe(table.formAsText.multiSelect);
  });

  it.each(table.cases)("$name", ({ prompt, text }) => {
    expect(promptFallbackText(prompt)).toBe(text);
  });
});
