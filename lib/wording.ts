import type {
  ApprovalScope,
  Ask,
  AskKind,
  AskOrigin,
  AskQuestion,
  AskStatus,
  Decision,
  Severity,
} from "./ask.ts";
import type { CommandRisk } from "./command-risk.ts";
import type { CloseReason, SecretOutcome } from "./protocol.ts";

/**
 * How an ask is worded, in one place: the cards, the dashboard and the widget, the server's idle
 * widget page and its push notifications all take their words from here, so a notification says
 * what the card says. Type imports only: the browser bundles import this file, and zod must stay out
 * of them.
 */

export const KIND_LABELS: Record<AskKind, string> = {
  question: "Question",
  secret: "Secret",
  approval: "Approval",
};

export const DECISION_LABELS: Record<Decision, string> = {
  deny: "Deny",
  "allow-once": "Allow once",
  "allow-always": "Always allow",
};

/** How a finished ask ended, in one or a few words (history, the records in a reply). */
export const STATUS_LABELS: Record<AskStatus, string> = {
  pending: "Pending",
  answered: "Answered",
  cancelled: "Cancelled",
  expired: "Expired",
  denied: "Denied",
  "ended-as-text": "Left in the reply as text",
};

/**
 * What a tab shows when an ask closes on it (`ask:close`), when the server sends no summary. A
 * hand-off is not an ending: the ask is still pending, in a newer tab.
 */
export const CLOSE_OUTCOMES: Record<
  Exclude<CloseReason, "handed-off">,
  { status: AskStatus; summary: string }
> = {
  answered: { status: "answered", summary: STATUS_LABELS.answered },
  "answered-elsewhere": { status: "answered", summary: "Answered elsewhere" },
  cancelled: { status: "cancelled", summary: STATUS_LABELS.cancelled },
  expired: { status: "expired", summary: STATUS_LABELS.expired },
  denied: { status: "denied", summary: STATUS_LABELS.denied },
  "ended-as-text": { status: "ended-as-text", summary: STATUS_LABELS["ended-as-text"] },
};

/**
 * The heading of a finished ask's collapsible record in its reply: what it was. A question keeps
 * Open WebUI's name for its tool ("Ask User"); the icon is decoration, the words say it.
 */
export const RECORD_HEADINGS: Record<AskKind, { icon: string; label: string }> = {
  question: { icon: "❓", label: "Ask User" },
  secret: { icon: "🔑", label: "Secret" },
  approval: { icon: "🛡️", label: "Approval" },
};

/** What a secret request is called above its name: the card's eyebrow, a notification's title. */
export const SECRET_REQUESTED = "Secret requested";

/** The approval card's eyebrow. */
export const APPROVAL_NEEDED = "Approval needed";

/** Why an ask was ended on arrival, without a card (lib/policy.ts): the agent and the history see it. */
export const REFUSALS = {
  inThread: "Denied: approvals are not asked in channel threads",
  guestApproval: "Denied: this needs the owner's approval",
  guestSecret: "Cancelled: secrets can only be entered by the owner",
  unvouchedApproval:
    "Denied: no owner started this run in an Open WebUI chat (a temporary chat, a background task or a direct /v1 request)",
  unvouchedSecret:
    "Cancelled: secrets are asked only in runs an owner started, and no owner started this one in an Open WebUI chat",
};

/**
 * A widget without its reply's act token (opened from a share, after a reload, in another tab) shows
 * approvals and secret requests but cannot answer them (docs/SECURITY.md#a-stored-token-never-acts).
 */
export const VIEW_ONLY_WIDGET =
  "only the tab that sent the message can approve this or enter this secret here: answer it on the OpenClaw Asks dashboard";

/** The same, said beside such a widget's approvals and secret requests before anyone presses a button. */
export const OWNERS_POWER_ELSEWHERE =
  "Only the tab that sent the message can approve or enter a secret here: answer these on the OpenClaw Asks dashboard.";

/** Whose run asked, on every card, inbox row and push (null for rows of earlier versions, which do not say). */
export function originText(origin: AskOrigin | undefined): string | null {
  switch (origin?.kind) {
    case undefined:
      return null;
    case "reply":
      return `Asked by ${origin.name || origin.userId} in Open WebUI`;
    case "unvouched":
      return "Asked by a /v1 request no Open WebUI reply vouches for";
    case "session":
      if (origin.channel === "main") return "Asked from OpenClaw's main session (Control UI)";
      if (origin.channel === "openwebui") return "Asked from an Open WebUI chat (the Pipe)";
      return `Asked from OpenClaw's ${origin.channel} session`;
  }
}

/** Over a widget's cards while its socket is away: their buttons wait, greyed, until it is back. */
export const CARDS_RECONNECTING =
  "Reconnecting to the server… you can answer as soon as it is back.";

/** An approval's severity as its card's badge names it. */
export const SEVERITY_LABELS: Record<Severity, string> = {
  info: "Info",
  warning: "Warning",
  critical: "Critical",
};

/** An approval that was allowed (once or always), as the history's outcome filter names it. */
export const ALLOWED = "Allowed";

/** How an ask ended when it ended at its source or with its run (lib/outcomes.ts). */
export const ENDED_ELSEWHERE = {
  cancelled: "Cancelled elsewhere",
  stopped: "Stopped: the reply ended before an answer",
  gatewayRestarted: "The agent's run ended when the Gateway restarted",
  decided: (decision: Decision) => `${DECISION_LABELS[decision]} (elsewhere)`,
};

/** The kind an ask is named by where it is listed (an inbox row, a notification): a critical approval says so. */
export function kindLabel(ask: Ask): string {
  return ask.kind === "approval" && ask.approval.severity === "critical"
    ? "Critical approval"
    : KIND_LABELS[ask.kind];
}

/** ` (+2 more)` after the first of `count` questions, nothing after the only one. */
export function moreQuestions(count: number): string {
  return count > 1 ? ` (+${count - 1} more)` : "";
}

/** A question as its card asks it: the question itself, else its header. */
export function questionHeading(question: AskQuestion | undefined): string {
  return question?.question || question?.header || "The agent has a question";
}

/** The one line that names an ask in lists, summaries and notifications. */
export function askTitle(ask: Ask): string {
  switch (ask.kind) {
    case "question": {
      const first = ask.questions[0];
      const base = first ? first.header || first.question : KIND_LABELS.question;
      return `${base}${moreQuestions(ask.questions.length)}`;
    }
    case "secret":
      return ask.secret.name || SECRET_REQUESTED;
    case "approval":
      return ask.approval.title;
  }
}

/** The question text of an ask, for its record in the reply. */
export function askQuestionText(ask: Ask): string {
  switch (ask.kind) {
    case "question":
      return ask.questions.map((question) => question.question || question.header).join("\n");
    case "secret":
      return ask.secret.reason ? `${ask.secret.prompt}\n${ask.secret.reason}` : ask.secret.prompt;
    case "approval":
      return ask.approval.description
        ? `${ask.approval.title}: ${ask.approval.description}`
        : ask.approval.title;
  }
}

/**
 * What an approval would do, in one plain sentence: the facts an owner decides on ("Pay 49.99 EUR to
 * Stripe", "Email to 3 external recipients: …"). The scope is declared by the plugin (or, for an
 * automation's exec approval, by the Gateway); it never changes what the decision allows.
 */
export function approvalScopeSummary(scope: ApprovalScope): string {
  switch (scope.kind) {
    case "payment":
      return `Pay ${scope.amount} ${scope.currency} to ${scope.target}`;
    case "message-send": {
      const what = scope.target.toLowerCase() === "email" ? "Email" : `Message via ${scope.target}`;
      const who = `${scope.recipientCount} ${scope.audience ? `${scope.audience} ` : ""}${scope.recipientCount === 1 ? "recipient" : "recipients"}`;
      const shown = scope.recipients ?? [];
      const more = scope.recipientCount - shown.length;
      const preview =
        shown.length > 0
          ? `: ${[...shown, ...(more > 0 ? [`+${more} more`] : [])].join(", ")}`
          : "";
      return `${what} to ${who}${preview}`;
    }
    case "external-post":
      return scope.visibility === "public"
        ? `Post publicly to ${scope.target}`
        : `Post to ${scope.target} (restricted audience)`;
    case "standing-grant": {
      const term =
        scope.expiresInDays === undefined ? "until revoked" : `for ${scope.expiresInDays} days`;
      return `Always allow lets "${scope.automation}" run ${scope.command} without asking, ${term}`;
    }
  }
}

/** An exec approval's title: "Run git push". */
export function runCommandTitle(headline: string): string {
  return `Run ${headline}`;
}

/** An exec approval's description: where it runs, then what it would do ("It deploys."). */
export function runCommandDescription(
  place: { host?: string | null; cwd?: string | null },
  consequence: string | null,
): string {
  const where = [place.host && `on ${place.host}`, place.cwd && `in ${place.cwd}`]
    .filter(Boolean)
    .join(" ");
  const wants = where
    ? `The agent wants to run a command ${where}.`
    : "The agent wants to run a command.";
  return consequence ? `${wants} ${consequence}` : wants;
}

/** How each risk of a command reads in a sentence ("It deletes files and deploys."). */
const COMMAND_RISK_WORDS: Record<CommandRisk, string> = {
  deletes: "deletes files or data",
  overwrites: "overwrites files",
  pushes: "pushes or publishes",
  deploys: "deploys",
  "pipes-to-shell": "pipes into a shell",
};

/** What a command would do, for an exec approval's description: "It deletes files or data and deploys.", or null when nothing stands out. */
export function commandConsequence(risks: readonly CommandRisk[]): string | null {
  const words = risks.map((risk) => COMMAND_RISK_WORDS[risk]);
  if (words.length === 0) return null;
  return `It ${words.length > 1 ? `${words.slice(0, -1).join(", ")} and ${words.at(-1)}` : words[0]}.`;
}

/** How a finished ask ended, as its record shows it: the resolution's summary (never a secret's value), else its status. */
export function endingSummary(ask: Pick<Ask, "status" | "resolution">): string {
  return ask.resolution?.summary ?? STATUS_LABELS[ask.status];
}

/**
 * What goes before a record's summary: "Answer: " for an answer, the status ("Expired: ") when the
 * summary does not already start with it, nothing when it does ("Cancelled (nothing entered)").
 */
export function summaryPrefix(status: AskStatus | undefined, summary: string): string {
  if (!status || status === "answered") return "Answer: ";
  const label = STATUS_LABELS[status];
  return summary.toLowerCase().startsWith(label.toLowerCase()) ? "" : `${label}: `;
}

const SECRET_OUTCOME_TOASTS: Record<SecretOutcome, string> = {
  stored: "Secret stored",
  sent: "Secret sent to the agent",
  cancelled: "Secret request cancelled",
};

/** The toast a page shows when a secret request ends on it. */
export function secretOutcomeToast(outcome: SecretOutcome): string {
  return SECRET_OUTCOME_TOASTS[outcome];
}

/**
 * A push notification's words (server/push/payload.ts shortens the pieces to fit): its title, the
 * line of where the ask is and how long it has left, and the line that replaces it once it ended.
 */
export const PUSH_WORDING = {
  commandApprovalTitle: (label: string) => `${label}: run a command`,
  approvalTitle: (label: string, title: string) => `${label}: ${title}`,
  questionTitle: (count: number) => `${KIND_LABELS.question}${moreQuestions(count)}`,
  secretTitle: (name: string | undefined) =>
    name ? `${SECRET_REQUESTED}: ${name}` : SECRET_REQUESTED,
  chat: (chat: { title?: string; id: string } | null) =>
    chat === null ? "No chat" : `Chat ${chat.title ?? chat.id}`,
  timeLeft: (minutes: number) => (minutes >= 1 ? `${minutes} min left` : "less than a minute left"),
  /** An ask answered: "Decided: Allow once" for an approval, "Answered: SQLite" otherwise. */
  answered: (kind: AskKind, summary: string) =>
    `${kind === "approval" ? "Decided" : "Answered"}: ${summary}`,
};

/**
 * A JSON form prompt left in its reply as text (lib/prompts/fallback.ts): numbered questions, each
 * option on its own line. The Open WebUI filter writes the same text; test/fixtures/wording.json pins
 * the two together.
 */
export const FORM_AS_TEXT = {
  multiSelect: " (select all that apply)",
  question: (index: number, header: string, question: string) =>
    `${index}. ${header === "" ? question : `${header}: ${question}`}`,
  option: (label: string, description?: string) =>
    description === undefined ? `   - ${label}` : `   - ${label} (${description})`,
};
