import { collapseWhitespace, questionBody } from "./phrases.ts";

/**
 * Splits the part of a reply from its trigger line on into the prompt and what is shown after it.
 *
 * The text from `promptStart` is cut at every later trigger phrase (`phraseStarts`, found
 * anywhere, even mid-line), giving segments that each start with a trigger phrase:
 * - the first segment is the prompt;
 * - a later segment whose question (the text after its phrase, whitespace collapsed) equals the
 *   question of the prompt or of an earlier shown segment is a repeat and is dropped;
 * - any other segment is a different question: it is shown as reply text verbatim, its trigger
 *   phrase included (only the first prompt becomes a card).
 */
export function separateRepeats(
  text: string,
  promptStart: number,
  phraseStarts: readonly number[],
): { prompt: string; shownAfter: string } {
  const bounds = [promptStart, ...phraseStarts, text.length];
  const prompt = text.slice(promptStart, bounds[1]);
  const seenQuestions = new Set([collapseWhitespace(questionBody(prompt))]);
  const shown: string[] = [];
  for (let i = 1; i + 1 < bounds.length; i++) {
    const segment = text.slice(bounds[i], bounds[i + 1]);
    const question = collapseWhitespace(questionBody(segment));
    if (seenQuestions.has(question)) continue;
    seenQuestions.add(question);
    shown.push(segment);
  }
  return { prompt, shownAfter: shown.join("") };
}
