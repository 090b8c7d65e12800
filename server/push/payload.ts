import type { Ask, Decision } from "../../lib/ask.ts";
import {
  approvalScopeSummary,
  DECISION_LABELS,
  endingSummary,
  kindLabel,
  originText,
  PUSH_WORDING,
  questionHeading,
} from "../../lib/wording.ts";

/**
 * What a push carries (encrypted end to end by Web Push): what the owner decides on, never a secret
 * value, in the card's words (lib/wording.ts). The service worker shows `title` and `body` under `tag`; the outcome push of the same ask uses
 * the same tag, so it replaces the first notification instead of adding one.
 */

export type PushAction = { action: Decision; title: string; token: string };

export type AskPush = {
  type: "ask";
  tag: string;
  askId: string;
  title: string;
  body: string;
  /** Where a tap opens the dashboard: at this ask. */
  url: string;
  severity: "info" | "warning" | "critical" | null;
  /** Approvals only: Deny first, then Allow once (never Always allow), each with its own token. */
  actions: PushAction[];
};

export type OutcomePush = {
  type: "outcome";
  tag: string;
  askId: string;
  title: string;
  body: string;
  url: string;
};

export type PushPayload = AskPush | OutcomePush;

/** The decisions a notification offers, in this order. */
export const PUSH_DECISIONS: readonly Decision[] = ["deny", "allow-once"];

export const COMMAND_LIMIT = 120;

/** Shortened with an ellipsis, never silently cut. */
export function shorten(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1).trimEnd()}…`;
}

export const tagOf = (askId: string) => `ask:${askId}`;

/** The dashboard, opened at the ask (the page reads `#ask=`). */
const askUrl = (dashboardUrl: string, askId: string) =>
  `${dashboardUrl.replace(/\/+$/, "")}/#ask=${encodeURIComponent(askId)}`;

function timeLeft(ask: Ask, now: number): string | null {
  if (ask.expiresAt === null) return null;
  return PUSH_WORDING.timeLeft(Math.max(0, Math.round((ask.expiresAt - now) / 60_000)));
}

function describe(ask: Ask): { title: string; lines: string[] } {
  switch (ask.kind) {
    case "approval": {
      const { approval } = ask;
      const label = kindLabel(ask);
      if (approval.command)
        return {
          title: PUSH_WORDING.commandApprovalTitle(label),
          lines: [shorten(approval.command, COMMAND_LIMIT)],
        };
      const scope = approval.scope ? [shorten(approvalScopeSummary(approval.scope), 160)] : [];
      return {
        title: PUSH_WORDING.approvalTitle(label, shorten(approval.title, 80)),
        lines: [...scope, shorten(approval.description, 160)].filter(Boolean),
      };
    }
    case "question":
      return {
        title: PUSH_WORDING.questionTitle(ask.questions.length),
        lines: [shorten(questionHeading(ask.questions[0]), 160)],
      };
    case "secret": {
      // The name and reason only: a secret is entered on the dashboard, never in a notification.
      const { name, reason, prompt } = ask.secret;
      return {
        title: PUSH_WORDING.secretTitle(name ? shorten(name, 60) : undefined),
        lines: [shorten(reason ?? prompt, 160)],
      };
    }
  }
}

/** `chatTitle`: Open WebUI's title of the ask's chat, which names it instead of its id. */
export function askPush(
  ask: Ask,
  options: {
    now: number;
    dashboardUrl: string;
    chatTitle?: string;
    tokens: Partial<Record<Decision, string>>;
  },
): AskPush {
  const { title, lines } = describe(ask);
  const chat = PUSH_WORDING.chat(
    ask.chatId === null
      ? null
      : {
          id: ask.chatId,
          ...(options.chatTitle ? { title: shorten(options.chatTitle, 60) } : {}),
        },
  );
  const where = [chat, timeLeft(ask, options.now)].filter(Boolean).join(" · ");
  const origin = originText(ask.origin);
  const actions =
    ask.kind === "approval"
      ? PUSH_DECISIONS.filter(
          (decision) => ask.approval.decisions.includes(decision) && options.tokens[decision],
        ).map((decision) => ({
          action: decision,
          title: DECISION_LABELS[decision],
          token: options.tokens[decision]!,
        }))
      : [];
  return {
    type: "ask",
    tag: tagOf(ask.id),
    askId: ask.id,
    title,
    body: [...lines, ...(origin === null ? [] : [origin]), where].join("\n"),
    url: askUrl(options.dashboardUrl, ask.id),
    severity: ask.kind === "approval" ? ask.approval.severity : null,
    actions,
  };
}

/** The one-line outcome that replaces the ask's notification when it ends, wherever that happened. */
export function outcomePush(ask: Ask, dashboardUrl: string): OutcomePush {
  const { title } = describe(ask);
  // A secret's summary is already the masked "•••• (secret entered)": its value is never stored.
  const summary = endingSummary(ask);
  const body =
    ask.status === "answered"
      ? PUSH_WORDING.answered(ask.kind, shorten(summary, 100))
      : shorten(summary, 100);
  return {
    type: "outcome",
    tag: tagOf(ask.id),
    askId: ask.id,
    title,
    body,
    url: askUrl(dashboardUrl, ask.id),
  };
}
