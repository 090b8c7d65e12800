import { optionKey } from "./options.ts";
import type { PromptOption } from "./types.ts";

/** Commas separate a multi-select answer's parts; Arabic writes `،`. */
const PART_SEPARATOR = /[,،]/u;
/** An option number as the card shows it: 1-based, no sign, no leading zero. */
const OPTION_NUMBER = /^[1-9]\d*$/u;

/**
 * What the agent receives for an answer typed into a choice card (docs/ARCHITECTURE.md#text-prompts). The result is trimmed
 * of surrounding whitespace; an empty (or all-whitespace) answer gives "" (no answer).
 *
 * Single choice: exactly an option's number or label (any case, whitespace-insensitive) becomes
 * that option's label; anything else is sent as typed. A number is read as a number first, so
 * with options labelled `2` and `1`, typing `1` picks the first option.
 *
 * Multi-select: option numbers and labels, separated by commas and/or whitespace (`1, 3`, `1 3`,
 * `1,3`, `extra cheese, 2`), give the chosen labels in option order, joined with ", ", each once.
 * Each comma-separated part is a label or a number; a part that is neither is split at whitespace
 * and each word must then be a number or a one-word label. Labels with spaces therefore need
 * commas around them. Anything that is not only option numbers and labels (`1 and 3`, `1, 5` with
 * 3 options, `0`, `all`) is sent as typed.
 */
export function resolveChoiceAnswer(
  typed: string,
  options: readonly PromptOption[],
  multiSelect: boolean,
): string {
  const answer = typed.trim();
  if (answer === "") return "";
  // The whole answer as one option first: a label may itself contain commas or spaces.
  const whole = optionIndex(answer, options);
  if (whole !== null) return options[whole]?.label ?? answer;
  if (!multiSelect) return answer;

  const chosen = new Set<number>();
  const parts = answer.split(PART_SEPARATOR).map((part) => part.trim());
  for (const part of parts) {
    if (part === "") continue; // `1, 3,` or `1,,3`
    const indexes = partIndexes(part, options);
    if (indexes === null) return answer;
    for (const index of indexes) chosen.add(index);
  }
  if (chosen.size === 0) return answer;
  return [...chosen]
    .sort((a, b) => a - b)
    .map((index) => options[index]?.label ?? "")
    .join(", ");
}

/** The options one comma-separated part names, or null when it names something else. */
function partIndexes(part: string, options: readonly PromptOption[]): number[] | null {
  const whole = optionIndex(part, options);
  if (whole !== null) return [whole];
  const indexes: number[] = [];
  for (const word of part.split(/\s+/u)) {
    const index = optionIndex(word, options);
    if (index === null) return null;
    indexes.push(index);
  }
  return indexes;
}

/** The index of the option `text` is the number or label of, or null. */
function optionIndex(text: string, options: readonly PromptOption[]): number | null {
  if (OPTION_NUMBER.test(text)) {
    const number = Number(text);
    if (number <= options.length) return number - 1;
  }
  const key = optionKey(text);
  const index = options.findIndex((option) => optionKey(option.label) === key);
  return index >= 0 ? index : null;
}
