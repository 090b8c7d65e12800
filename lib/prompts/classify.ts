import { parseForm } from "./form.ts";
import {
  hasMultiSelectMarker,
  hasYesNoMarker,
  isConfirmQuestion,
  mentionsCredential,
  removeMarkers,
} from "./markers.ts";
import { parseOptionLines } from "./options.ts";
import { questionBody } from "./phrases.ts";
import type { PromptSpec } from "./types.ts";

/** A first line longer than this is not a header (it is part of the question). */
const MAX_HEADER_LENGTH = 80;

/**
 * What kind of card a text prompt becomes (docs/ARCHITECTURE.md#text-prompts; the first rule that matches wins):
 * 1. a JSON body `{"questions": [...]}` with 1-3 valid questions → `form`;
 * 2. it mentions a credential, with no yes/no marker, no confirm question and fewer than two
 *    numbered options → `secret`;
 * 3. two or more numbered options (after duplicates collapse) → `choice`, multi-select when a
 *    multi-select marker appears anywhere;
 * 4. a yes/no marker, or a confirm verb and a question mark on one line → `confirm`;
 * 5. anything else → `text`.
 *
 * `prompt` is the prompt as the scanner captured it, trigger line included.
 */
export function classifyPrompt(prompt: string): PromptSpec {
  const body = questionBody(prompt);
  const form = parseForm(body);
  if (form !== null) return { kind: "form", questions: form };

  // The trigger line's rest starts after "input:", usually with a space that is not indentation.
  const lines = body.replace(/^[ \t]+/u, "").split("\n");
  const { options, otherLines } = parseOptionLines(lines);
  const yesNo = hasYesNoMarker(body);
  const confirmQuestion = lines.some(isConfirmQuestion);

  if (mentionsCredential(body) && !yesNo && !confirmQuestion && options.length < 2) {
    return { kind: "secret", ...headerAndQuestion(lines) };
  }
  if (options.length >= 2) {
    return {
      kind: "choice",
      ...headerAndQuestion(otherLines),
      multiSelect: hasMultiSelectMarker(body),
      options,
    };
  }
  if (yesNo || confirmQuestion) return { kind: "confirm", ...headerAndQuestion(lines) };
  return { kind: "text", ...headerAndQuestion(lines) };
}

/**
 * Splits the prompt's text lines (for a choice: the lines that are not options) into what a card
 * shows, with markers removed. The header is the first non-empty line when there is more text
 * after it and it is at most 80 characters; otherwise there is no header ("") and everything is the
 * question, so a one-line prompt shows its question once, not twice.
 */
export function headerAndQuestion(lines: readonly string[]): { header: string; question: string } {
  const cleaned = trimBlankLines(lines.map((line) => removeMarkers(line).trimEnd()));
  const [first = "", ...rest] = cleaned;
  const remaining = trimBlankLines(rest);
  if (remaining.length > 0 && [...first.trim()].length <= MAX_HEADER_LENGTH) {
    return { header: first.trim(), question: formatQuestion(remaining) };
  }
  return { header: "", question: formatQuestion(cleaned) };
}

function trimBlankLines(lines: readonly string[]): string[] {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]?.trim() === "") start++;
  while (end > start && lines[end - 1]?.trim() === "") end--;
  return lines.slice(start, end);
}

/** Lines joined, common indentation removed, runs of blank lines kept to one. */
function formatQuestion(lines: readonly string[]): string {
  const indents = lines
    .filter((line) => line.trim() !== "")
    .map((line) => /^[ \t]*/u.exec(line)?.[0].length ?? 0);
  const common = indents.reduce((least, indent) => Math.min(least, indent), indents[0] ?? 0);
  return lines
    .map((line) => line.slice(common))
    .join("\n")
    .replace(/\n{3,}/gu, "\n\n");
}
