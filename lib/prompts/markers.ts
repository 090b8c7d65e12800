/**
 * The words and markers that decide a prompt's kind (docs/ARCHITECTURE.md#text-prompts, rules 2-4), in English, Hebrew and
 * Arabic. Latin text matches case-insensitively; Hebrew and Arabic have no case.
 *
 * "Whole word" means not glued to a letter or digit on either side. `_` and `-` separate words,
 * so `GITHUB_TOKEN` and `OPENAI_API_KEY` mention a credential, while `tokens`, `passwords` and
 * `secretary` (plurals, longer words) do not.
 */

const NOT_AFTER_WORD_CHAR = String.raw`(?<![\p{L}\p{N}])`;
const NOT_BEFORE_WORD_CHAR = String.raw`(?![\p{L}\p{N}])`;

function wholeWords(alternatives: readonly string[]): RegExp {
  return new RegExp(
    `${NOT_AFTER_WORD_CHAR}(?:${alternatives.join("|")})${NOT_BEFORE_WORD_CHAR}`,
    "iu",
  );
}

const CREDENTIAL = wholeWords([
  "password",
  "passphrase",
  "secret",
  String.raw`api[\s_-]?key`,
  "token",
  "credential",
  String.raw`private[\s_-]?key`,
]);

/** Mentions a credential (asking for one, "paste your API key", is one way of mentioning it). */
export function mentionsCredential(text: string): boolean {
  return CREDENTIAL.test(text);
}

/** `(y/n)`, `[y/n]`, `(yes/no)`, `(כן/לא)`, `(نعم/لا)`; either bracket, spaces allowed inside. */
const YES_NO_SOURCE = String.raw`[(\[]\s*(?:y|yes|כן|نعم)\s*/\s*(?:n|no|לא|لا)\s*[)\]]`;
const YES_NO = new RegExp(YES_NO_SOURCE, "iu");

export function hasYesNoMarker(text: string): boolean {
  return YES_NO.test(text);
}

const CONFIRM_WORD = wholeWords([
  "confirm",
  "proceed",
  "overwrite",
  "delete",
  "remove",
  String.raw`are\s+you\s+sure`,
  String.raw`do\s+you\s+want`,
  "האם",
  // "sure" in Hebrew, with its feminine and plural forms (the masculine alone misses half the users)
  "בטוח",
  "בטוחה",
  "בטוחים",
  "בטוחות",
  "هل",
]);
const QUESTION_MARK = /[?؟]/u;

/** A confirm verb and a question mark (`?` or Arabic `؟`) on the same line. */
export function isConfirmQuestion(line: string): boolean {
  return CONFIRM_WORD.test(line) && QUESTION_MARK.test(line);
}

/** `(multiselect)`, `(multi-select)` (also `[...]` and `multi select`): only in brackets. */
const BRACKETED_MULTI_SELECT = String.raw`[(\[]\s*multi[- ]?select\s*[)\]]`;
/** Markers that count anywhere in the text. */
const MULTI_SELECT_PHRASES = [
  String.raw`select\s+all\s+that\s+apply`,
  // Hebrew "choose several" (masculine, feminine and plural imperative) and "multiple choice"
  String.raw`בחר(?:י|ו)?\s+כמה`,
  String.raw`בחירה\s+מרובה`,
  // Arabic "choose all that apply" and "multiple choice"
  String.raw`اختر\s+كل\s+ما\s+ينطبق`,
  String.raw`اختيار\s+متعدد`,
];
const MULTI_SELECT = new RegExp([BRACKETED_MULTI_SELECT, ...MULTI_SELECT_PHRASES].join("|"), "iu");

export function hasMultiSelectMarker(text: string): boolean {
  return MULTI_SELECT.test(text);
}

/**
 * Removing a marker takes its brackets with it, and for a phrase used as a sentence
 * ("Select all that apply.") its closing punctuation too, so no stray `()` or `.` is left.
 */
const MARKER_REMOVAL = new RegExp(
  [
    YES_NO_SOURCE,
    BRACKETED_MULTI_SELECT,
    ...MULTI_SELECT_PHRASES.map(
      (phrase) => String.raw`[(\[]\s*${phrase}\s*[.!]?\s*[)\]]|${phrase}\s*[.:!،]?`,
    ),
  ].join("|"),
  "giu",
);

/** The line without yes/no and multi-select markers, tidied; untouched when it has none. */
export function removeMarkers(line: string): string {
  const removed = line.replace(MARKER_REMOVAL, "");
  if (removed === line) return line;
  return removed
    .replace(/[ \t]{2,}/gu, " ")
    .replace(/[ \t]+([?؟.,:;!])/gu, "$1")
    .trim();
}
