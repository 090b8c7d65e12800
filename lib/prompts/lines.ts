/** Line and prefix arithmetic on the prompt scanner's hot path (scanner.ts): char codes, no regexes. */

export function hasNewline(text: string): boolean {
  // `includes` costs several times more than this on one-character strings, the hot case.
  return text.length === 1 ? text.charCodeAt(0) === 0x0a : text.includes("\n");
}

export function commonPrefixLength(a: string, b: string): number {
  const limit = Math.min(a.length, b.length);
  let i = 0;
  while (i < limit && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** The start of the line that holds position `at`. */
export function lineStartAt(text: string, at: number): number {
  return at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
}
