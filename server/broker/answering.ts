import { mapAnswer } from "../../lib/answers.ts";
import type { Ask, AskStatus } from "../../lib/ask.ts";
import { errorMessage } from "../../lib/error-message.ts";
import { ANSWERED_ELSEWHERE } from "../../lib/outcomes.ts";
import { type AnswerAck, fail, type SecretOutcome, type TabAnswer } from "../../lib/protocol.ts";
import { VIEW_ONLY_WIDGET } from "../../lib/wording.ts";
import { type AskStore, unavailable } from "../store/store.ts";
import type { Cards } from "./cards.ts";
import type { ChatAccess } from "./chat-access.ts";
import { AskAlreadyEnded, type AskChannel, type Outcome, type Tab } from "./ports.ts";
import type { TrackedAsks } from "./tracked-asks.ts";

/**
 * A tab's answer to an ask. Once it is decided (this instance holds the store's claim and the source
 * took it) the ack goes to `acknowledge` at once, and only then is the ask finished: its card closed,
 * its end stored, the dashboards and the push notifier told. The returned promise settles with the
 * same ack when that is done, so a failure there reaches the caller's boundary. While the answer is
 * delivered the ask's entry is `answering` (tracked-asks.ts): another answer is refused, and an end
 * from the source waits (it is applied if the answer fails). A step over the table, as cards.ts is.
 */

export type AnsweringContext = {
  asks: TrackedAsks;
  store: AskStore;
  source: AskChannel;
  instanceId: string;
  access: ChatAccess;
  cards: Cards;
};

export type AnswerRequest = {
  tab: Tab;
  askId: string;
  answer: TabAnswer;
  acknowledge?: (ack: AnswerAck) => void;
};

const ANSWERED_FIRST = "another answer to this ask was given first";

export async function answerAsk(
  context: AnsweringContext,
  { tab, askId, answer, acknowledge }: AnswerRequest,
): Promise<AnswerAck> {
  const { asks, store, source, instanceId, access, cards } = context;
  const ask = asks.listed(askId);
  if (!ask) {
    const ended = await store.get(askId);
    if (!ended || !(await access.visibleTo(tab, ended))) return fail("NOT_FOUND", "no such ask");
    return ended.status === "expired"
      ? fail("EXPIRED", "this ask has expired")
      : fail("ALREADY_RESOLVED", `this ask is already ${ended.status}`);
  }
  // The same answer as for an id that does not exist: a refusal would confirm that it does.
  if (!(await access.visibleTo(tab, ask))) return fail("NOT_FOUND", "no such ask");
  if (!(await access.mayAct(tab, ask))) return fail("FORBIDDEN", VIEW_ONLY_WIDGET);
  const mapped = mapAnswer(ask, answer);
  if (!mapped.ok) return fail(mapped.code, mapped.message);
  // Only the chat's own widget can put the answer into the chat, as the person's next message.
  if (mapped.chatMessage !== undefined && tab.chatClaim !== ask.chatId)
    return fail("FORBIDDEN", "answer this in its chat: the answer becomes your next message there");
  if (!asks.startAnswer(askId)) return fail("ALREADY_RESOLVED", ANSWERED_FIRST);
  /** The answer failed: the ask is answerable again, and an end that came meanwhile is applied. */
  const undo = async (endedMeanwhile: Outcome | null = null): Promise<void> => {
    const ending = asks.answered(askId).endedMeanwhile ?? endedMeanwhile;
    if (ending) await cards.end(askId, ending);
  };

  let claimed: boolean;
  try {
    claimed = await store.claim(askId, instanceId);
  } catch (error) {
    // The store failed (a full disk, Redis away): the answer fails, and the ask stays answerable.
    await undo();
    const away = unavailable(
      error,
      (why) =>
        `The answer was not taken: ${why}. The card stays; answer again once the status says the server is back.`,
    );
    if (away) return away;
    throw error;
  }
  if (!claimed) {
    await undo();
    return fail("ALREADY_RESOLVED", ANSWERED_FIRST);
  }
  try {
    if (mapped.reply) await source.deliver(ask, mapped.reply);
  } catch (error) {
    await store.release(askId, instanceId);
    if (error instanceof AskAlreadyEnded) {
      await undo(ANSWERED_ELSEWHERE);
      return fail("ALREADY_RESOLVED", "the Gateway already has an answer for this ask");
    }
    await undo();
    // Never echo the source's message for a secret: it could quote the value.
    const detail = ask.kind === "secret" ? "the secret was not accepted" : errorMessage(error);
    return fail("GATEWAY_ERROR", `The Gateway did not take the answer: ${detail}`);
  }
  const ack: AnswerAck = {
    ok: true,
    status: mapped.status,
    ...(ask.kind === "secret" ? { outcome: secretOutcome(ask, mapped.status) } : {}),
    ...(mapped.chatMessage === undefined ? {} : { chatMessage: mapped.chatMessage }),
  };
  try {
    acknowledge?.(ack);
  } finally {
    // The answer is decided whether or not the ack could be sent, so the ask is finished either way.
    // Nothing is awaited from here until finish has taken the ask out of the table.
    const current = asks.answered(askId).ask;
    // The summary stays in the reply whose widget answered.
    const answered =
      current && tab.reply !== null && tab.chatClaim === current.chatId
        ? { ...current, replyId: tab.reply.msg }
        : current;
    const reason = mapped.status === "cancelled" ? "cancelled" : "answered";
    if (answered)
      await cards.finish(
        answered,
        { status: mapped.status, summary: mapped.summary, reason },
        { by: tab.userId, tabId: tab.id },
      );
  }
  return ack;
}

function secretOutcome(ask: Ask, status: AskStatus): SecretOutcome {
  if (status !== "answered") return "cancelled";
  return ask.source === "text-prompt" ? "sent" : "stored";
}
