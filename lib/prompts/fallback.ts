import { FORM_AS_TEXT } from "../wording.ts";
import { parseForm } from "./form.ts";
import { questionBody } from "./phrases.ts";
import type { FormQuestion } from "./types.ts";

/**
 * The prompt as ordinary reply text, for when it is not answered as a card (cancelled, timed out,
 * no tab): the trigger phrase is removed and the rest kept as written. A JSON form becomes its
 * numbered questions, each with its options as a list:
 *
 *     1. Database: Which database?
 *        - Postgres (needs a server)
 *        - SQLite
 *     2. Toppings: Which toppings? (select all that apply)
 *        - Cheese
 */
export function promptFallbackText(prompt: string): string {
  const body = questionBody(prompt);
  const form = parseForm(body);
  if (form !== null) return formatForm(form);
  // Drop the space after "input:", or, when the trigger line has nothing else, that line and the
  // blank lines after it (keeping the indentation of the first line of the question).
  return body.replace(/^\s*\n|^[ \t]+/u, "").trimEnd();
}

function formatForm(questions: readonly FormQuestion[]): string {
  return questions
    .map((question, index) => {
      const title = FORM_AS_TEXT.question(index + 1, question.header, question.question);
      const multi = question.multiSelect ? FORM_AS_TEXT.multiSelect : "";
      const options = question.options.map(({ label, description }) =>
        FORM_AS_TEXT.option(label, description),
      );
      return [`${title}${multi}`, ...options].join("\n");
    })
    .join("\n");
}
