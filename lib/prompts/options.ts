import { displayText } from "../display-text.ts";
import type { PromptOption } from "./types.ts";

/** The longest option label a card offers (code points): its answer becomes a chat message as it is. */
export const OPTION_LABEL_LENGTH = 120;
/** Markup tags: Open WebUI renders a chat message as markdown, so a tag could hide what is sent. */
const TAG = /<\/?[A-Za-z][^<>]*>/gu;

/** `1. Postgres` or `2) SQLite`, any indentation; a space must follow the marker (`1.5 GB` is text). */
const OPTION_LINE = /^\s*\d{1,3}[.)]\s+(\S.*?)\s*$/u;
/** `Postgres - needs a server`, also with an en dash or em dash; spaces around the dash required. */
const LABEL_AND_DESCRIPTION = /^(.+?)\s+[-–—]\s+(.+)$/u;
/** A description written on its own indented line may be a bullet: `   - needs a server`. */
const BULLET = /^[-*•]\s+/u;

/** The form an option label is compared in: case-insensitive, whitespace-insensitive. */
export function optionKey(label: string): string {
  return label.replace(/\s+/gu, " ").trim().toLowerCase();
}

/** The option an option line's text describes: `Label - description` splits at the first dash. */
export function parseOption(text: string): PromptOption {
  const match = LABEL_AND_DESCRIPTION.exec(text.trim());
  if (match?.[1] === undefined || match[2] === undefined) return { label: text.trim() };
  return { label: match[1].trim(), description: match[2].trim() };
}

/**
 * An option's label as the card shows it and its answer sends it: one plain line (no line breaks,
 * control characters or markup tags), at most OPTION_LABEL_LENGTH, so what is submitted is what the
 * person saw. Empty when nothing is left.
 */
export function plainLabel(label: string): string {
  return displayText(label.replace(TAG, " "), OPTION_LABEL_LENGTH);
}

/**
 * The options a card offers: each label made plain (those left empty dropped); options with the
 * same label (case-insensitive) collapse into the first one.
 */
export function dedupeOptions(options: readonly PromptOption[]): PromptOption[] {
  const seen = new Set<string>();
  return options.flatMap((option) => {
    const label = plainLabel(option.label);
    const key = optionKey(label);
    if (label === "" || seen.has(key)) return [];
    seen.add(key);
    return [{ ...option, label }];
  });
}

/**
 * Separates a prompt's numbered option lines from its other lines. An indented line right after an
 * option (or after such a line) continues that option's description, since agents often write
 * `1. Postgres` and, below it, `   Needs a server.`; a blank line ends that.
 */
export function parseOptionLines(lines: readonly string[]): {
  options: PromptOption[];
  otherLines: string[];
} {
  const options: PromptOption[] = [];
  const otherLines: string[] = [];
  let current: PromptOption | null = null;
  for (const line of lines) {
    const optionText = OPTION_LINE.exec(line)?.[1];
    if (optionText !== undefined) {
      current = parseOption(optionText);
      options.push(current);
    } else if (current !== null && /^\s/u.test(line) && line.trim() !== "") {
      const more = line.trim().replace(BULLET, "");
      current.description =
        current.description === undefined ? more : `${current.description} ${more}`;
    } else {
      current = null;
      otherLines.push(line);
    }
  }
  return { options: dedupeOptions(options), otherLines };
}
