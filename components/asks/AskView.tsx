import type { Ask } from "../../lib/ask.ts";
import type { SecretOutcome } from "../../lib/protocol.ts";
import { ApprovalCard } from "./ApprovalCard.tsx";
import { QuestionCard } from "./QuestionCard.tsx";
import { SecretDialog } from "./SecretDialog.tsx";
import type { NumberPick, SubmitAnswer } from "./types.ts";

type Props = {
  ask: Ask;
  onAnswer: SubmitAnswer;
  autoFocus?: boolean;
  headingLevel?: 2 | 3;
  onSecretOutcome?: (outcome: SecretOutcome) => void;
  /** A number key pressed on the card's row (the dashboard's inbox); a secret's dialog takes none. */
  pick?: NumberPick;
};

/** The card for an ask of any kind. */
export function AskView({ ask, onAnswer, autoFocus, headingLevel, onSecretOutcome, pick }: Props) {
  switch (ask.kind) {
    case "question":
      return (
        <QuestionCard
          ask={ask}
          onAnswer={onAnswer}
          autoFocus={autoFocus}
          headingLevel={headingLevel}
          pick={pick}
        />
      );
    case "approval":
      return (
        <ApprovalCard
          ask={ask}
          onAnswer={onAnswer}
          autoFocus={autoFocus}
          headingLevel={headingLevel}
          pick={pick}
        />
      );
    case "secret":
      return (
        <SecretDialog
          ask={ask}
          onAnswer={onAnswer}
          onOutcome={onSecretOutcome}
          headingLevel={headingLevel}
        />
      );
  }
}
