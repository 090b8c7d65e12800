import { dedupeOptions } from "./options.ts";
import type { FormQuestion, PromptOption } from "./types.ts";

const MAX_FORM_QUESTIONS = 3;
/** The first fenced block (```json, ``` or ~~~), to its closing fence or the end of the text. */
const FENCED_BLOCK = /(`{3,}|~{3,})[^\n]*\n([\s\S]*?)(?:\n[ \t]*\1[`~]*[ \t]*(?:\n|$)|$)/u;

/**
 * The questions of a JSON form prompt body, `{"questions": [...]}` with 1-3 valid questions,
 * written bare or in a code fence, possibly with words around it; null when it is not one.
 *
 * A valid question has a non-empty string `question`; `header` (default "") must be a string,
 * `options` (default []) an array of non-empty strings or `{label, description?}` objects with a
 * non-empty string label, `multiSelect` (default false) a boolean. One invalid question makes the
 * whole body "not a form", so it is classified as ordinary text.
 */
export function parseForm(body: string): FormQuestion[] | null {
  for (const candidate of jsonCandidates(body)) {
    const questions = formQuestions(parseJson(candidate));
    if (questions !== null) return questions;
  }
  return null;
}

function jsonCandidates(body: string): string[] {
  const candidates: string[] = [];
  const fenced = FENCED_BLOCK.exec(body)?.[2];
  if (fenced !== undefined) candidates.push(fenced);
  const open = body.indexOf("{");
  const close = body.lastIndexOf("}");
  if (open >= 0 && close > open) candidates.push(body.slice(open, close + 1));
  return candidates;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function formQuestions(json: unknown): FormQuestion[] | null {
  if (!isRecord(json) || !Array.isArray(json.questions)) return null;
  const items: unknown[] = json.questions;
  if (items.length < 1 || items.length > MAX_FORM_QUESTIONS) return null;
  const questions: FormQuestion[] = [];
  for (const item of items) {
    const question = formQuestion(item);
    if (question === null) return null;
    questions.push(question);
  }
  return questions;
}

function formQuestion(item: unknown): FormQuestion | null {
  if (!isRecord(item)) return null;
  const { header = "", question, options = [], multiSelect = false } = item;
  if (typeof question !== "string" || question.trim() === "") return null;
  if (typeof header !== "string" || typeof multiSelect !== "boolean" || !Array.isArray(options))
    return null;
  const parsedOptions: PromptOption[] = [];
  for (const option of options as unknown[]) {
    const parsed = formOption(option);
    if (parsed === null) return null;
    parsedOptions.push(parsed);
  }
  return {
    header: header.trim(),
    question: question.trim(),
    multiSelect,
    options: dedupeOptions(parsedOptions),
  };
}

function formOption(option: unknown): PromptOption | null {
  if (typeof option === "string") return option.trim() === "" ? null : { label: option.trim() };
  if (!isRecord(option)) return null;
  const { label, description } = option;
  if (typeof label !== "string" || label.trim() === "") return null;
  if (description === undefined || description === null) return { label: label.trim() };
  if (typeof description !== "string") return null;
  return description.trim() === ""
    ? { label: label.trim() }
    : { label: label.trim(), description: description.trim() };
}
