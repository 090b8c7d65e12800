/**
 * Characters a name shown to people (a chat's title, a user's name, a device's name) never keeps.
 * Replaced by a space: controls (C0, DEL, C1) and the line and paragraph separators. Removed: the
 * bidirectional formatting characters (the embeddings, overrides and isolates U+202A-U+202E and
 * U+2066-U+2069, and the marks LRM, RLM and ALM, which a name shown in its own direction does not
 * need) and the invisible ones that make two names look alike (zero-width space, word joiner and
 * invisible operators, the deprecated format characters). The zero-width joiner and non-joiner stay:
 * emoji and several scripts need them.
 */
const NAME_SPACES = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const NAME_INVISIBLES = /[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f]/g;

/** A name as people should read it: NFC, one line, nothing hidden or reordering, white space collapsed, trimmed. */
export function cleanName(text: string): string {
  return text
    .normalize("NFC")
    .replace(NAME_INVISIBLES, "")
    .replace(NAME_SPACES, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** `cleanName`, then at most `max` characters (code points), a longer one cut with an ellipsis. */
export function displayText(text: string, max: number): string {
  const clean = cleanName(text);
  const points = [...clean];
  return points.length <= max ? clean : `${points.slice(0, max - 1).join("")}…`;
}
