/**
 * Text from users shown as a name (a chat's title): one line, in NFC, without control characters or the
 * bidirectional embeddings, overrides and isolates that could make it read as something else (U+202A
 * to U+202E, U+2066 to U+2069), whitespace collapsed, at most `max` characters (code points).
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

export function displayText(text: string, max: number): string {
  const clean = text.normalize("NFC").replace(UNSAFE, " ").replace(/\s+/gu, " ").trim();
  const points = [...clean];
  return points.length <= max ? clean : `${points.slice(0, max - 1).join("")}…`;
}
