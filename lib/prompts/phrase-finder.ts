import { TRIGGER_PHRASES } from "./phrases.ts";

/**
 * Finds trigger phrases anywhere in a stream of text (inside a prompt, where a second phrase ends
 * it, even mid-line). A small automaton over both phrases (Knuth-Morris-Pratt generalised to two
 * patterns) keeps the whole search state in one number, so the work per character is a single
 * table lookup however the text is chunked, and no text has to be kept or re-read across chunks.
 */

/** The phrases are ASCII; any other character leaves every partial match. */
const ALPHABET_SIZE = 128;

/** The state before any character, or right after a phrase was found. */
export const FINDER_START = 0;

type Automaton = {
  /** next state = transitions[state * ALPHABET_SIZE + charCode] */
  readonly transitions: Uint8Array;
  /** for a state that completes a phrase, that phrase's length; otherwise 0 */
  readonly completedLength: Uint8Array;
};

function buildAutomaton(phrases: readonly string[]): Automaton {
  // A state is a partial match: the longest suffix of the text so far that starts some phrase.
  const stateOf = new Map<string, number>([["", FINDER_START]]);
  for (const phrase of phrases) {
    for (let length = 1; length <= phrase.length; length++) {
      const prefix = phrase.slice(0, length);
      if (!stateOf.has(prefix)) stateOf.set(prefix, stateOf.size);
    }
  }
  const alphabet = new Set(phrases.flatMap((phrase) => [...phrase].map((ch) => ch.charCodeAt(0))));
  const transitions = new Uint8Array(stateOf.size * ALPHABET_SIZE);
  const completedLength = new Uint8Array(stateOf.size);
  for (const [prefix, state] of stateOf) {
    if (phrases.includes(prefix)) completedLength[state] = prefix.length;
    for (const code of alphabet) {
      let candidate = prefix + String.fromCharCode(code);
      while (!stateOf.has(candidate)) candidate = candidate.slice(1);
      transitions[state * ALPHABET_SIZE + code] = stateOf.get(candidate) ?? FINDER_START;
    }
  }
  return { transitions, completedLength };
}

const { transitions, completedLength } = buildAutomaton(TRIGGER_PHRASES);

/**
 * Feeds `text[from:]` to the automaton, starting in `state`. Each phrase found is recorded in
 * `found` by its start position, where position = `offset` + index in `text`. Returns the state
 * to resume from with the next chunk.
 */
export function findTriggerPhrases(
  text: string,
  from: number,
  offset: number,
  state: number,
  found: number[],
): number {
  let current = state;
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    current =
      code < ALPHABET_SIZE
        ? (transitions[current * ALPHABET_SIZE + code] ?? FINDER_START)
        : FINDER_START;
    const length = completedLength[current] ?? 0;
    if (length > 0) {
      found.push(offset + i + 1 - length);
      current = FINDER_START;
    }
  }
  return current;
}
