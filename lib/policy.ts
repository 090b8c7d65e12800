import type { Ask } from "./ask.ts";
import { parseSessionKey } from "./session-key.ts";

/**
 * Who may be asked at all (docs/ARCHITECTURE.md#routing; docs/SECURITY.md#chat-ownership). Pure: the broker carries out the verdict.
 */
export type Admission =
  | { action: "ask" }
  /** End it at once without a card; `summary` says why (the agent and the history see it). */
  | { action: "refuse"; summary: string };

export type AdmissionContext = {
  /** The chat's recorded owner, or null while nobody has viewed it. */
  chatOwner: string | null;
  owners: ReadonlySet<string>;
};

export function admit(ask: Ask, context: AdmissionContext): Admission {
  const parsed = parseSessionKey(ask.sessionKey);
  if (ask.kind === "approval" && parsed?.isThread) {
    return { action: "refuse", summary: "Denied: approvals are not asked in channel threads" };
  }
  const guestChat = context.chatOwner !== null && !context.owners.has(context.chatOwner);
  if (guestChat && ask.kind === "approval" && ask.source !== "text-prompt") {
    return { action: "refuse", summary: "Denied: this needs the owner's approval" };
  }
  if (guestChat && ask.source === "gateway.secret") {
    return { action: "refuse", summary: "Cancelled: secrets can only be entered by the owner" };
  }
  return { action: "ask" };
}

/** May a user see (and answer) this ask? Owners see everything; others only asks of chats they own. */
export function canSee(
  ask: Pick<Ask, "chatId">,
  userId: string,
  isOwner: boolean,
  chatOwner: string | null,
): boolean {
  if (isOwner) return true;
  return ask.chatId !== null && chatOwner === userId;
}

/** The newest of a chat's viewers (oldest first) who may see the ask: the one its card goes to, or null. */
export function newestWhoMaySee<T extends { userId: string; isOwner: boolean }>(
  viewers: readonly T[],
  ask: Pick<Ask, "chatId">,
  chatOwner: string | null,
): T | null {
  return viewers.findLast((tab) => canSee(ask, tab.userId, tab.isOwner, chatOwner)) ?? null;
}
