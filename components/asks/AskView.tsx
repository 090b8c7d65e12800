import type { Ask } from "../../lib/ask.ts";
import type { SecretOutcome } from "../../lib/protocol.ts";
import { ApprovalCard } from "./ApprovalCard.tsx";
import { QuestionCard } from "./QuestionCard.tsx";
import { SecretDialog } from "./SecretDialog.tsx";
import type { SubmitAnswer } from "./types.ts";

type Props = {
  ask: Ask;
  onAnswer: SubmitAnswer;
  autoFocus?: boolean;
  headingLevel?: 2 | 3;
  onSecretOutcome?: (outcome: SecretOutcome) => void;
};

/** The card for an ask of any kind. */
export function AskView({ ask, onAnswer, autoFocus, headingLevel, onSecretOutcome }: Props) {
  switch (ask.kind) {
    case "question":
      return <QuestionCard ask={ask} onAnswer={onAnswer} autoFocus={autoFocus} headingLevel={headingLevel} />;
    case "approval":
      return <ApprovalCard ask={ask} onAnswer={onAnswer} autoFocus={autoFocus} headingLevel={headingLevel} />;
    case "secret":
      return <SecretDialog ask={ask} onAnswer={onAnswer} onOutcome={onSecretOutcome} headingLevel={headingLevel} />;
  }
}
