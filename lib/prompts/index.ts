/**
 * Text prompts: an agent writes a line starting `OpenClaw needs input:` (or `Codex needs input:`)
 * and the person gets a card instead of a wall of text (docs/ARCHITECTURE.md#text-prompts). Pure: no I/O, no clock.
 *
 * - `PromptScanner` finds the prompt in a streaming assistant reply and says what is safe to show.
 * - `classifyPrompt` decides what card it becomes.
 * - `resolveChoiceAnswer` maps a typed answer to option labels.
 * - `promptFallbackText` turns an unanswered prompt back into reply text.
 */
export { resolveChoiceAnswer } from "./answers.ts";
export { classifyPrompt } from "./classify.ts";
export { promptFallbackText } from "./fallback.ts";
export { TRIGGER_PHRASES } from "./phrases.ts";
export { PromptScanner } from "./scanner.ts";
export type { FormQuestion, PromptOption, PromptSpec } from "./types.ts";
export { CONFIRM_OPTIONS } from "./types.ts";
