/**
 * The phrases that open a text prompt (docs/ARCHITECTURE.md#text-prompts). Matched case-sensitively: at the start of a
 * line (after at most 3 spaces) they open a prompt; anywhere inside a prompt they end it.
 */
export const TRIGGER_PHRASES = ["OpenClaw needs input:", "Codex needs input:"] as const;

export type TriggerPhrase = (typeof TRIGGER_PHRASES)[number];

/**
 * The question part of a prompt: what follows its trigger phrase. Whitespace before the phrase
 * (the trigger line's indentation) is ignored. Text that does not start with a trigger phrase is
 * returned from its first non-blank character, so callers may pass a bare question too.
 */
export function questionBody(prompt: string): string {
  const start = prompt.search(/\S/u);
  if (start < 0) return "";
  for (const phrase of TRIGGER_PHRASES) {
    if (prompt.startsWith(phrase, start)) return prompt.slice(start + phrase.length);
  }
  return prompt.slice(start);
}

/** Runs of whitespace as one space, ends trimmed: two prompts are "the same" when these agree. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}
