import type { ClientFailure } from "../../client/socket.ts";
import type { AnswerAck, TabAnswer } from "../../lib/protocol.ts";

/** What a card gets back from sending an answer: the server's ack, or a failure the browser saw. */
export type AnswerResult = AnswerAck | ClientFailure;

/** Sends one answer for the card's ask. Cards never talk to the socket themselves. */
export type SubmitAnswer = (answer: TabAnswer) => Promise<AnswerResult>;

/**
 * A number key pressed on the card's closed row in the dashboard's inbox, for the card to take as if
 * it had been pressed on the card. Each press is a new object; `taken` tells the inbox the card has it.
 */
export type NumberPick = { digit: number; taken(): void };
