export type PromptOption = { label: string; description?: string };

/** One question of a JSON form (and the shape a numbered-options prompt takes as a card). */
export type FormQuestion = {
  header: string;
  question: string;
  multiSelect: boolean;
  options: PromptOption[];
};

export type PromptSpec =
  | { kind: "text" | "secret" | "confirm"; header: string; question: string }
  | {
      kind: "choice";
      header: string;
      question: string;
      multiSelect: boolean;
      options: PromptOption[];
    }
  | { kind: "form"; questions: FormQuestion[] };

/** The options a `confirm` prompt is answered with; the agent receives the label. */
export const CONFIRM_OPTIONS: readonly PromptOption[] = Object.freeze([
  Object.freeze({ label: "Yes" }),
  Object.freeze({ label: "No" }),
]);
