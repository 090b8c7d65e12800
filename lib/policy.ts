import type { Ask, AskOrigin } from "./ask.ts";
import { isOpenAiEndpointRun, parseSessionKey, sessionChannel } from "./session-key.ts";
import { REFUSALS } from "./wording.ts";

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
  /** ALLOW_UNVOUCHED_RUNS: runs on the Gateway's `/v1` that no reply start vouches for are asked too. */
  allowUnvouched?: boolean;
};

/**
 * Deny by default (docs/SECURITY.md#whose-run-asks): approvals and secret requests are asked only in a
 * run an owner started. A reply the filter announced is judged by who started it; a `/v1` run no reply
 * start vouches for (a temporary chat, a task, a request with its own `user`) by nobody, so it is refused;
 * any other session (the Gateway's own channels, its Control UI, the Pipe) by its chat's recorded user.
 * Questions and text prompts are asked in every run: they grant nothing.
 */
export function admit(ask: Ask, context: AdmissionContext): Admission {
  const parsed = parseSessionKey(ask.sessionKey);
  if (ask.kind === "approval" && parsed?.isThread) {
    return { action: "refuse", summary: REFUSALS.inThread };
  }
  if (!usesOwnersPower(ask)) return { action: "ask" };
  const isApproval = ask.kind === "approval";
  const origin = ask.origin;
  if (origin?.kind === "unvouched" && !context.allowUnvouched) {
    return {
      action: "refuse",
      summary: isApproval ? REFUSALS.unvouchedApproval : REFUSALS.unvouchedSecret,
    };
  }
  const runBy = origin?.kind === "reply" ? origin.userId : context.chatOwner;
  if (runBy !== null && !context.owners.has(runBy)) {
    return {
      action: "refuse",
      summary: isApproval ? REFUSALS.guestApproval : REFUSALS.guestSecret,
    };
  }
  return { action: "ask" };
}

/**
 * Approving a tool call (the Gateway's approvals) and entering a secret (its secret store) act with the
 * owner's power; a question's or a text prompt's answer is what the person could type into the chat.
 */
export function usesOwnersPower(ask: Pick<Ask, "kind" | "source">): boolean {
  return (
    (ask.kind === "approval" && ask.source !== "text-prompt") || ask.source === "gateway.secret"
  );
}

/**
 * Whose run an ask is, from its session and the reply start noted for its reply (`starter`, null
 * when none was): decided once, when it arrives.
 */
export function originOf(
  ask: Pick<Ask, "sessionKey" | "runId" | "chatId" | "replyId">,
  starter: ReplyStarter | null,
): AskOrigin {
  if (!isOpenAiEndpointRun(ask.sessionKey, ask.runId))
    return { kind: "session", channel: sessionChannel(ask.sessionKey) };
  if (starter === null) return { kind: "unvouched" };
  return { kind: "reply", ...starter };
}

/** Who started a reply, as the filter's reply start says (the server keeps it a day). */
export type ReplyStarter = { userId: string; name?: string };

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
